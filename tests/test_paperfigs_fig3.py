"""Fig. 3 of the superposition paper (represented fraction φ_1/2 against weight decay γ) read off its vector
PDF: panel a's 60 circles, panel b's 170 heat-map cells, the (α, m) the two panels are drawn at, and our
cells judged against both."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _helpers import SHARED_DATA, needs_shared_data

FIG3 = SHARED_DATA / "superposition_paper" / "figures" / "Fig-3-2.pdf"
GAMMAS = np.round(np.linspace(-1.0, 1.0, 10), 6)


@pytest.fixture(scope="module")
def fig3():
    from depthwidth.paperfigs.fig3 import read_fig3

    return read_fig3(FIG3)


def _synthetic_paper():
    """Panel a at α = 1 (φ = 1 for γ < 0, 0.05 above, 0.6 at m = 39, γ = −1/9) and panel b at m = 39."""
    from depthwidth.paperfigs.fig3 import ALPHAS_B, M_GRID

    a = pd.DataFrame(
        [(g, int(m), 1.0 if g < 0 else 0.05) for m in M_GRID for g in GAMMAS],
        columns=["gamma", "m", "phi_half"],
    )
    a.loc[(a["m"] == 39) & np.isclose(a["gamma"], -1 / 9), "phi_half"] = 0.6
    b = pd.DataFrame(
        [(g, a_, 1.0 if g < 0 else 0.02) for g in GAMMAS for a_ in ALPHAS_B],
        columns=["gamma", "alpha", "phi_half"],
    )
    return a.assign(alpha=1.0), b.assign(m=39)


def test_comparison_judges_cells_on_either_panel_and_flags_off_grid_gamma():
    """A cell at α = 1, m = 39 is judged on both panels; at φ + 0.05 it agrees, at φ + 0.3 it does not unless
    its seeds scatter (std 0.2 → tolerance 0.4); γ = 0.3 is put on 1/3 and flagged; m = 40 (off the paper's
    grid) and α = 1.1 at m = 10 are drawn by neither panel."""
    from depthwidth.paperfigs.fig3 import compare_fig3, fig3_line

    pa, cb = _synthetic_paper()
    rows = [
        (1.0, -1 / 9, 39, 0, 0.65),  # a: paper 0.6 → agree; b: paper 1.0 → disagree
        (1.0, 0.3, 15, 0, 0.05),  # a at γ = 1/3, flagged
        (1.5, -1 / 9, 39, 0, 0.7),  # b only: paper 1.0, |Δ| = 0.3 …
        (1.5, -1 / 9, 39, 1, 1.1),  # … seeds 0.7 and 1.1: std 0.28, tolerance 0.57 → agree
        (1.25, 1.0, 39, 0, 0.32),  # b: paper 0.02, one seed, |Δ| = 0.3 → disagree
        (1.0, 1.0, 40, 0, 0.05),  # m off the grid
        (1.1, 1.0, 10, 0, 0.05),  # α not panel a's, m not panel b's
    ]
    cells = pd.DataFrame(rows, columns=["alpha", "gamma", "m", "seed", "represented_fraction"])
    cmp = compare_fig3(cells, pa, cb, alpha_a=1.0, m_b=39, summed=False)
    assert len(cmp) == 5
    key = {(r.panel, r.alpha, r.m, round(r.paper_gamma, 4)): r for r in cmp.itertuples()}
    assert key[("a", 1.0, 39, -0.1111)].agree and not key[("b", 1.0, 39, -0.1111)].agree
    flagged = key[("a", 1.0, 15, 0.3333)]
    assert flagged.agree and not flagged.gamma_on_grid and flagged.paper == pytest.approx(0.05)
    spread = key[("b", 1.5, 39, -0.1111)]
    assert spread.seeds == 2 and spread.ours == pytest.approx(0.9)
    assert spread.tolerance == pytest.approx(2 * np.std([0.7, 1.1], ddof=1)) and spread.agree
    assert not key[("b", 1.25, 39, 1.0)].agree and key[("b", 1.25, 39, 1.0)].tolerance == 0.1
    summary = {"a": {"found": 60, "expected": 60}, "b": {"found": 170, "expected": 170}}
    summary["match"] = {"alpha_a": 1.0, "m_b": 39}
    line = fig3_line(cmp, summary)
    assert line.startswith("Fig. 3 (represented fraction φ_1/2 vs weight decay γ): 3 of 5 of our cells agree")
    assert "a: 2/2, b: 1/3" in line and "γ = 0.3 compared with the nearest paper γ" in line
    assert "none of our cells" in fig3_line(cmp.iloc[:0], summary)


@needs_shared_data
def test_fig3a_reads_sixty_circles_with_m_from_the_colour_bar(fig3):
    """6 m × 10 γ circles (the PNG shows six colours at each of ten γ); two dash pieces left out; every γ
    within 1e-4 of linspace(−1, 1, 10); ln m decoded within one colour-bar row of ln of the unfloored
    exp(linspace(ln 10, ln 100, 6)); a circle read against the figure: m = 10 at γ = −1/3 sits at 0.625."""
    pa, _, s = fig3
    a = s["a"]
    assert a["expected"] == 60 and a["found"] == 60 and a["dash_pieces_left_out"] == 2
    assert a["by_m"] == {10: 10, 15: 10, 25: 10, 39: 10, 63: 10, 100: 10}
    assert set(a["by_gamma"].values()) == {6} and len(a["by_gamma"]) == 10
    assert a["x_axis"]["residual_pt"] < 1e-3 and a["y_axis"]["residual_pt"] < 1e-3
    assert a["colorbar"]["n_ticks"] == 5 and a["colorbar"]["residual_pt"] < 1e-3
    assert a["colorbar"]["vmax_at_top"] == pytest.approx(np.log(100), abs=0.01)
    assert a["max_gamma_snap_dist"] < 1e-4 and a["max_m_color_dist"] < 0.02
    assert a["max_ln_m_unfloored_dist"] < a["ln_m_step"]
    assert pa["phi_half"].between(0, 1.001).all()
    p = pa[(pa["m"] == 10) & np.isclose(pa["gamma"], -1 / 3)]["phi_half"].item()
    assert p == pytest.approx(0.625, abs=0.005)
    # every curve is 1 at γ = −1 and below 0.11 at γ = 1
    assert (pa[pa["gamma"] == -1.0]["phi_half"] > 0.99).all() and (
        pa[pa["gamma"] == 1.0]["phi_half"] < 0.11
    ).all()


@needs_shared_data
def test_fig3b_heat_map_decodes_170_cells(fig3):
    """17 α × 10 γ cells (the raster's own boundaries: rows of 9 pixels, columns of 17), colour distance
    under 0.02, φ_1/2 = 1 over γ ≤ −5/9 and under 0.05 at γ = 1, α = 2."""
    _, cb, s = fig3
    b = s["b"]
    assert b["expected"] == 170 and b["found"] == 170
    assert (b["raster_grid"]["rows"], b["raster_grid"]["cols"]) == (17, 10)
    assert b["x_axis"]["residual_pt"] < 1e-3 and b["y_axis"]["residual_pt"] < 1e-3
    assert b["colorbar"]["n_ticks"] == 6 and b["colorbar"]["residual_pt"] < 1e-3
    assert b["max_color_dist"] < 0.02 and b["max_cell_spread"] < 0.02
    assert (cb[cb["gamma"] < -0.5]["phi_half"] > 0.99).all()
    assert cb[(cb["gamma"] == 1.0) & (cb["alpha"] == 2.0)]["phi_half"].item() < 0.05


@needs_shared_data
def test_panel_a_is_drawn_at_alpha_1_and_panel_b_at_m_39(fig3):
    """Panel a's m = 39 curve equals panel b's α = 1 row to the decoding precision; no other m comes within
    ten times that."""
    pa, cb, s = fig3
    mt = s["match"]
    assert mt["alpha_a"] == 1.0 and mt["m_b"] == 39
    assert mt["rms"] < 0.01 and mt["max_abs"] < 2 * s["b"]["value_step"]
    assert mt["best_other_m"]["rms"] > 10 * mt["rms"] and mt["runner_up"]["rms"] > 5 * mt["rms"]
    a = pa[pa["m"] == 39].set_index("gamma")["phi_half"]
    b = cb[cb["alpha"] == 1.0].set_index("gamma")["phi_half"]
    assert np.max(np.abs(a - b.loc[a.index])) < 0.01
    assert (pa["alpha"] == 1.0).all() and (cb["m"] == 39).all()
    assert 0 < s["paper_jitter"] < 0.1


@needs_shared_data
def test_our_cells_at_the_paper_points_agree_and_the_plot_draws_both(fig3):
    """Cells of ours placed on the paper's values agree; the plot draws the paper's 60 circles and ours."""
    import matplotlib

    matplotlib.use("Agg")
    from depthwidth.paperfigs.fig3 import compare_fig3, plot_fig3

    pa, cb, s = fig3
    sel = pa[pa["gamma"].isin([-1.0, 1.0])]
    cells = pd.DataFrame(
        {
            "alpha": 1.0,
            "gamma": sel["gamma"],
            "m": sel["m"],
            "seed": 0,
            "represented_fraction": sel["phi_half"],
        }
    )
    cmp = compare_fig3(cells, pa, cb, s["match"]["alpha_a"], s["match"]["m_b"], False)
    assert len(cmp) == 12 + 2 and cmp["agree"].all() and cmp["gamma_on_grid"].all()
    assert (cmp.loc[cmp["panel"] == "a", "diff"].abs() < 1e-9).all()
    fig = plot_fig3(pa, cb, cells, summed=False)
    ax = fig.axes[0]
    open_circles = sum(len(line.get_xdata()) for line in ax.lines if line.get_marker() == "o")
    assert open_circles == 60
    assert len(fig.axes) == 4  # panels a, b and their colour bars
