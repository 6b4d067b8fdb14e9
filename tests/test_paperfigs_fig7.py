"""Fig. 7 of the superposition paper (exp-15, loss against activation density): exp-15's density formula,
the reading of both panels off the vector PDF (with the data mirror), the inferred width of panel a and
weight decay of panel b, the slopes of panel b, and the comparison with our cells on synthetic frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _helpers import SHARED_DATA, needs_shared_data

from depthwidth.paperfigs.fig7 import (
    E_GRID,
    GAMMA_GRID,
    LOG_TOL,
    S_GRID,
    compare_fig7,
    exp15_density,
    fig7_line,
    plot_fig7,
    read_fig7,
)

PDF = SHARED_DATA / "superposition_paper" / "figures" / "Fig-7-2.pdf"
needs_fig7 = pytest.mark.skipif(not PDF.is_file(), reason=f"no Fig. 7 PDF at {PDF}")


@pytest.fixture(scope="module")
def fig7():
    if not PDF.is_file():
        pytest.skip(f"no Fig. 7 PDF at {PDF}")
    return read_fig7(PDF)


def test_exp15_density_matches_the_package_law():
    """E = Σ p_i of ``power-a1-s<s>`` (data.feature_probabilities, n = 1000) for each of exp-15's nine s;
    E runs from 1 to the harmonic number H_1000 = 7.48547."""
    from depthwidth.superposition.data import feature_probabilities

    for s in S_GRID:
        name = "power-a1" if s == 0 else f"power-a1-s{s:g}"
        assert exp15_density(s) == pytest.approx(float(feature_probabilities(name, 1000).sum()), rel=1e-12)
    assert E_GRID[0] == 1.0 and E_GRID[-1] == pytest.approx(7.485470860550345, rel=1e-12)
    assert exp15_density(0.5, n=10) == pytest.approx(1 + 0.5 * (sum(1 / i for i in range(1, 11)) - 1))


@needs_shared_data
@needs_fig7
def test_fig7_reads_every_point_with_small_residuals(fig7):
    """Panel a: 90 of 90 circles (10 γ × 9 E, every pair once); panel b: 30 of 30 (5 E × 6 m). Tick
    residuals under 1e-3 pt (colour bars under 0.01 pt); γ decoded within 0.01 of the grid (its spacing is
    0.22), E within 0.05 (spacing 0.81), m within 1e-4; marker colours within 0.005 of matplotlib's
    Spectral / PuOr map at the snapped value."""
    pa, pb, s = fig7
    assert (s["a"]["expected"], s["a"]["found"], s["a"]["distinct_gamma_E"]) == (90, 90, 90)
    assert (s["b"]["expected"], s["b"]["found"], s["b"]["distinct_E_m"]) == (30, 30, 30)
    for p in "ab":
        assert s[p]["x_axis"]["residual_pt"] < 1e-3 and s[p]["y_axis"]["residual_pt"] < 1e-3
        assert s[p]["colour_bar"]["residual_pt"] < 0.01
        assert s[p]["max_cmap_dist"] < 0.005
    assert s["b"]["x_axis"]["n_ticks"] == 11 and s["b"]["y_axis"]["n_ticks"] == 24  # minor ticks checked
    assert s["a"]["max_gamma_snap_dist"] < 0.01 and s["a"]["max_E_snap_dist"] < 1e-3
    assert s["b"]["max_E_snap_dist"] < 0.05 and s["b"]["max_m_snap_rel"] < 1e-4
    assert sorted(pa["gamma"].unique()) == pytest.approx(GAMMA_GRID, abs=1e-6)
    assert sorted(pa["E"].unique()) == pytest.approx(E_GRID)
    assert s["b"]["s"] == [0.0, 0.125, 0.375, 0.625, 1.0]
    for cols, df in (
        (["gamma", "gamma_read", "E", "E_read", "loss", "how"], pa),
        (["E", "m", "loss", "how"], pb),
    ):
        assert set(cols) <= set(df.columns)


@needs_shared_data
@needs_fig7
def test_fig7_values_read_back_as_drawn(fig7):
    """Values one can see in the figure: in a, γ = 1 at E = 7.49 is the top circle, loss ≈ 4.05, and γ = −1
    at E = 1 the lowest, ≈ 0.1; in b, E = 1 at m = 10 ≈ 0.69 and E = 7.49 at m = 10 ≈ 5.7; loss falls with m
    for every E of b and rises with E at each m."""
    pa, pb, _ = fig7
    a = pa.set_index(["gamma", "E"])["loss"]
    assert a[(1.0, E_GRID[-1])] == pytest.approx(4.05, abs=0.05) and a[(1.0, E_GRID[-1])] == pa["loss"].max()
    assert a[(-1.0, 1.0)] == pytest.approx(0.1, abs=0.02)
    b = pb.set_index(["E", "m"])["loss"]
    assert b[(1.0, 10)] == pytest.approx(0.69, abs=0.02)
    assert b[(E_GRID[-1], 10)] == pytest.approx(5.69, abs=0.05)
    for _, g in pb.groupby("E"):
        assert (np.diff(g.sort_values("m")["loss"]) < 0).all()
    for _, g in pb.groupby("m"):
        assert (np.diff(g.sort_values("E")["loss"]) > 0).all()


@needs_shared_data
@needs_fig7
def test_fig7_infers_panel_a_width_and_panel_b_weight_decay(fig7):
    """Panel a's points at (γ = −5/9, E) equal panel b's at (E, m = 63) for all five densities of b (to
    1e-3 in log); the next best (γ, m) pair is off by more than 0.2 in log."""
    _, _, s = fig7
    inf = s["inferred"]
    assert inf["panel_a_m"] == 63 and inf["panel_b_gamma"] == pytest.approx(-5 / 9, abs=1e-5)
    assert inf["match_points"] == 5 and inf["match_max_abs_log_ratio"] < 1e-3
    assert inf["runner_up"]["max_abs_log_ratio"] > 0.2


@needs_shared_data
@needs_fig7
def test_fig7_slopes_labels_and_drawn_lines(fig7):
    """Panel b's five slope labels are text, read in the lines' colours: 1.12±0.06, 1.12±0.08, 1.1±0.1,
    1.1±0.1, 1.1±0.2 in increasing E. The points' own fits give α_m = 1.06, 1.02, 0.99, 0.90, 0.86 (SE
    0.07 to 0.13), each within its label's ± of the label or within 2 SE; the drawn lines are the OLS fit
    of all six m for the three lowest E and of m ≥ 15 for the two highest."""
    _, _, s = fig7
    sl = s["slopes"]
    assert s["b"]["labels_found"] == 5 and s["b"]["lines_found"] == 5
    assert [d["label"] for d in sl] == ["1.12±0.06", "1.12±0.08", "1.1±0.1", "1.1±0.1", "1.1±0.2"]
    assert [round(d["exponent"], 2) for d in sl] == [1.06, 1.02, 0.99, 0.90, 0.86]
    for d in sl:
        assert d["n_points"] == 6 and 0.05 < d["stderr"] < 0.15
        assert abs(d["exponent"] - d["label_value"]) <= 2 * max(d["stderr"], d["label_err"])
    assert [d["line_fit_min_m"] for d in sl] == [10, 10, 10, 15, 15]


#: the cells.csv columns compare_fig7 reads
COLUMNS = ["distribution", "alpha", "density", "gamma", "n", "m", "seed", "final_loss"]


def _cells_from_points(pa, pb, m_a: int, g_b: float, factor: float = 1.0) -> pd.DataFrame:
    """Synthetic cells.csv rows at the paper's points (per-element loss = summed / n), one seed; as in cells.csv,
    a law with a density has no ``alpha``."""
    n = 1000
    rows = []

    def name(s):
        return "power-a1" if s == 0 else f"power-a1-s{s:g}"

    for r in pa.itertuples():
        rows.append((name(r.s), 1.0 if r.s == 0 else np.nan, r.s, r.gamma, n, m_a, 0, factor * r.loss / n))
    for r in pb.itertuples():
        if r.m != m_a:  # panel a already holds (γ_b, E, m_a)
            rows.append((name(r.s), 1.0 if r.s == 0 else np.nan, r.s, g_b, n, r.m, 0, factor * r.loss / n))
    rows.append(("power-a1.5", 1.5, 0.0, g_b, n, 10, 0, 1.0))  # another law: never matched
    return pd.DataFrame(rows, columns=COLUMNS)


@needs_shared_data
@needs_fig7
def test_fig7_comparison_on_the_papers_own_points(fig7):
    """Cells built from the paper's own points (loss / n, per element) all agree: 90 + 30 loss rows with
    |log ratio| < 1e-3, five slope rows equal to the paper's; scaled by 2 none of the losses agree (ln 2 >
    LOG_TOL) while every slope still does; the line counts them."""
    pa, pb, s = fig7
    m_a, g_b = s["inferred"]["panel_a_m"], s["inferred"]["panel_b_gamma"]
    cells = _cells_from_points(pa, pb, m_a, g_b)
    cmp = compare_fig7(cells, pa, pb, False)
    loss, slope = cmp[cmp["kind"] == "loss"], cmp[cmp["kind"] == "slope"]
    assert (loss["panel"] == "a").sum() == 90 and (loss["panel"] == "b").sum() == 30
    # panel b's m = 63 points meet the cells built from panel a's (the same runs, read twice)
    assert loss["agree"].all() and loss["log_ratio"].abs().max() < 1e-3
    assert len(slope) == 5 and slope["agree"].all()
    assert np.allclose(slope["ours"], slope["paper"], atol=1e-3)
    line = fig7_line(cmp, s)
    assert "120 of 120 of our cells agree" in line and "α_m: 5 of 5 densities agree" in line
    assert "not run" not in line

    doubled = compare_fig7(_cells_from_points(pa, pb, m_a, g_b, factor=2.0), pa, pb, False)
    dl = doubled[doubled["kind"] == "loss"]
    assert np.log(2) > LOG_TOL and not dl["agree"].any()
    assert np.allclose(dl["log_ratio"], np.log(2), atol=1e-3)
    assert doubled.loc[doubled["kind"] == "slope", "agree"].all()


@needs_shared_data
@needs_fig7
def test_fig7_line_says_not_run_without_density_cells(fig7):
    """Cells of α = 1 at γ = ±1 only (as in the exp-10 run): two points of panel a (E = 1, m = 63) match and
    agree, none of panel b; the line says the density sweep is not run and gives the command. Cells of
    other laws give an empty table and the same advice."""
    pa, pb, s = fig7
    a = pa.set_index(["gamma", "E"])["loss"]
    rows = [
        ("power-a1", 1.0, 0.0, g, 1000, m, 0, (a[(g, 1.0)] if m == 63 else 1.0) / 1000)
        for g in (-1.0, 1.0)
        for m in (10, 15, 25, 39, 63, 100)
    ]
    cells = pd.DataFrame(rows, columns=COLUMNS)
    cmp = compare_fig7(cells, pa, pb, False)
    assert len(cmp) == 2 and cmp["agree"].all() and set(cmp["panel"]) == {"a"}
    line = fig7_line(cmp, s, cells)
    assert "density sweep not run" in line and "config/paper_exp15_subset.yaml" in line
    assert "2 of 2 of our cells agree" in line
    other = cells.assign(distribution="power-a1.5", alpha=1.5)
    empty = compare_fig7(other, pa, pb, False)
    assert empty.empty
    assert "not run" in fig7_line(empty, s, other)


@needs_shared_data
@needs_fig7
def test_plot_fig7_draws_both_panels(fig7):
    pa, pb, s = fig7
    cells = _cells_from_points(pa, pb, s["inferred"]["panel_a_m"], s["inferred"]["panel_b_gamma"])
    fig = plot_fig7(pa, pb, cells, summed=False)
    a, b = fig.axes[:2]
    assert b.get_xscale() == "log" and b.get_yscale() == "log" and a.get_xscale() == "linear"
    # paper + ours in each panel
    assert len(a.collections) == 2 and len(b.collections) == 2
    assert len(plot_fig7(pa, pb, None, summed=False).axes[0].collections) == 1
