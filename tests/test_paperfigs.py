"""The figure reader (round trip through a matplotlib PDF), the fit notebook's parser, and the readings of
the superposition paper's Figs. 4b, 6e and 8a (with the data mirror)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _helpers import SHARED_DATA, needs_shared_data

from depthwidth.paperfigs.axes import calibrate, find_frames
from depthwidth.paperfigs.marks import find_errorbars, find_markers, to_table
from depthwidth.paperfigs.vector import read_page

FIGS = SHARED_DATA / "superposition_paper" / "figures"
NOTEBOOK = SHARED_DATA / "superposition_paper" / "LLMs" / "nonlinearfit-3.ipynb"


@pytest.fixture(scope="module")
def roundtrip_pdf(tmp_path_factory):
    """Two panels: log-log with four marker shapes at alpha 0.4, linear with diamonds and error bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    truth = {
        "log": [
            (3.0, 0.02, "o", "circle"),
            (12.0, 0.3, "s", "square"),
            (40.0, 0.05, "^", "triangle_up"),
            (150.0, 4.0, "v", "triangle_down"),
        ],
        "lin": [(0.1, 1.5, 0.2), (0.4, -0.5, 0.3), (0.7, 0.8, 0.1)],
    }
    # matplotlib's defaults (C0, C1 and frames as shipped), whatever theme an earlier test applied
    with plt.style.context("default"):
        fig, (a, b) = plt.subplots(1, 2, figsize=(7, 3))
        for x, y, mk, _ in truth["log"]:
            a.scatter([x], [y], marker=mk, alpha=0.4, color="C1")
        a.set_xscale("log")
        a.set_yscale("log")
        a.set_xlim(1, 1000)
        a.set_ylim(1e-2, 10)
        xs, ys, es = zip(*truth["lin"])
        b.errorbar(xs, ys, yerr=es, fmt="D", color="C0")
        b.set_xlim(0, 1)
        b.set_ylim(-1, 2)
        path = tmp_path_factory.mktemp("rt") / "roundtrip.pdf"
        fig.savefig(path)
        plt.close(fig)
    return path, truth


def test_roundtrip_reads_points_shapes_opacity_and_error_bars(roundtrip_pdf):
    path, truth = roundtrip_pdf
    shapes = read_page(path)
    frames = find_frames(shapes)
    assert len(frames) == 2
    left, right = sorted(frames)
    # log panel: axes from the text labels (10^k), minor ticks enter the residual
    xa, ya = calibrate(shapes, left, "bottom", "log"), calibrate(shapes, left, "left", "log")
    assert xa.n_ticks > 20 and ya.n_ticks > 20  # majors and 2…9 × 10^k minors
    assert xa.residual_pt < 1e-3 and ya.residual_pt < 1e-3
    rows = to_table(find_markers(shapes, left), xa, ya)
    assert len(rows) == 4
    for (x, y, _, shape), r in zip(truth["log"], sorted(rows, key=lambda r: r["x"])):
        assert r["shape"] == shape
        assert r["x"] == pytest.approx(x, rel=1e-6) and r["y"] == pytest.approx(y, rel=1e-6)
        assert r["fill_alpha"] == pytest.approx(0.4)
        assert r["fill_color"] == "#ff7f0e"
    # linear panel with error bars
    xa, ya = calibrate(shapes, right, "bottom", "linear"), calibrate(shapes, right, "left", "linear")
    marks = find_markers(shapes, right)
    rows = sorted(to_table(marks, xa, ya, find_errorbars(shapes, right, marks)), key=lambda r: r["x"])
    assert [r["shape"] for r in rows] == ["diamond"] * 3
    for (x, y, e), r in zip(truth["lin"], rows):
        assert r["x"] == pytest.approx(x, rel=1e-6) and r["y"] == pytest.approx(y, rel=1e-6)
        assert r["y_hi"] - r["y"] == pytest.approx(e, rel=1e-6) and r["y"] - r["y_lo"] == pytest.approx(
            e, rel=1e-6
        )
        assert r["fill_alpha"] == 1.0 and r["fill_color"] == "#1f77b4"


def test_given_labels_must_match_the_major_ticks(roundtrip_pdf):
    path, _ = roundtrip_pdf
    shapes = read_page(path)
    frame = sorted(find_frames(shapes))[0]
    with pytest.raises(ValueError, match="major ticks found"):
        calibrate(shapes, frame, "bottom", "log", labels=[1.0, 10.0])


def test_a_page_is_parsed_once_and_again_when_its_file_changes(roundtrip_pdf, tmp_path, monkeypatch):
    import shutil

    from depthwidth.paperfigs import vector

    src, _ = roundtrip_pdf
    pdf = tmp_path / "page.pdf"
    shutil.copy(src, pdf)
    calls = []
    parse = vector._parse_page
    monkeypatch.setattr(vector, "_parse_page", lambda *a: calls.append(a) or parse(*a))
    first = vector.read_page(pdf)
    paths = vector.filled_paths(pdf)
    again = vector.read_page(pdf)
    assert len(calls) == 1 and again == first and again is not first and len(first) > 50 and paths
    again.clear()  # a caller's list is its own
    assert len(vector.read_page(pdf)) == len(first) and len(calls) == 1
    # another file at the same path (a new size): parsed again, and its shapes are the new file's
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, 1])
    fig.savefig(pdf)
    plt.close(fig)
    other = vector.read_page(pdf)
    assert len(calls) == 2 and len(other) != len(first)


def test_notebook_parser_rejects_another_notebook(tmp_path):
    from depthwidth.paperfigs.notebook import read_fit_notebook

    nb = tmp_path / "x.ipynb"
    nb.write_text(
        json.dumps({"cells": [{"cell_type": "code", "source": "model_names = ['a']", "outputs": []}]})
    )
    with pytest.raises(ValueError, match="alpha"):
        read_fit_notebook(nb)


@needs_shared_data
def test_notebook_parser_reads_the_printed_fit():
    from depthwidth.paperfigs.notebook import read_fit_notebook

    nb = read_fit_notebook(NOTEBOOK)
    assert len(nb["model_names"]) == 27
    assert nb["alpha"] == 0.9098 and nb["A"] == 476.0763
    assert len(nb["B"]) == 16 and nb["groups"][0] == "opt / wikitext" and nb["B"]["opt / wikitext"] == 2.2074
    assert nb["B"]["pythia / bookcorpus"] == 2.2415
    assert nb["err_slope"] == pytest.approx(0.03599, abs=1e-5)


@needs_shared_data
def test_fig8a_circles_sit_at_published_widths():
    from depthwidth.paperfigs.fig8 import overlap_fits, read_fig8a

    df, s = read_fig8a(FIGS / "Fig-8-2.pdf")
    assert s["found"] == 25 and sorted(s["missing"]) == ["EleutherAI/pythia-160m", "EleutherAI/pythia-70m"]
    assert s["x_axis"]["residual_pt"] < 1e-3 and s["y_axis"]["residual_pt"] < 1e-3
    # every circle's x is 1/m of a published width to 1e-4 relative: the axis map and the widths agree
    assert s["max_inv_m_rel_err"] < 1e-4
    assert df.groupby("family").size().to_dict() == {"Qwen": 7, "gpt2": 4, "opt": 8, "pythia": 6}
    fits = overlap_fits(df, n_boot=300).set_index("subset")
    assert fits.loc["all", "slope"] == pytest.approx(1.255, abs=0.01)
    assert fits.loc["all", "boot_lo"] < 1.0 < fits.loc["all", "boot_hi"]


@needs_shared_data
def test_fig4b_heat_map_and_fig6e_points_agree_where_both_draw():
    from depthwidth.paperfigs.fig4 import read_fig4b
    from depthwidth.paperfigs.fig6 import read_fig6e

    f4, s4 = read_fig4b(FIGS / "Fig-4-3.pdf")
    f6, s6 = read_fig6e(FIGS / "Fig-6-3.pdf")
    assert s4["found"] == 170 and s4["max_color_dist"] < 0.02
    assert (
        s6["found"] == 60 and s6["with_error_bar"] == 60 and s6["max_gamma_snap_dist"] < 2 * s6["gamma_step"]
    )
    # error bars are symmetric about their circles (a check that bar and circle were paired right)
    assert np.max(np.abs((f6["alpha_m_hi"] - f6["alpha_m"]) - (f6["alpha_m"] - f6["alpha_m_lo"]))) < 1e-3
    f6 = f6.assign(alpha=(f6["alpha"] / 0.125).round() * 0.125)
    both = f6.merge(f4, on=["gamma", "alpha"], suffixes=("_6e", "_4b"))
    assert len(both) == 60
    assert np.max(np.abs(both["alpha_m_6e"] - both["alpha_m_4b"])) < 0.03


@needs_shared_data
def test_fig5b_points_are_fig6e_points_and_our_cells_are_judged_by_their_error_bars():
    """Fig. 5b (the weak regime) draws 9 of Fig. 6e's cells: read off the two PDFs independently they give
    the same α_m and error bars; our γ = 0.3 cells are compared with the γ = 1/3 points at the same α."""
    import pandas as pd

    from depthwidth.paperfigs.fig6 import GAMMA_GRID, read_fig5b, read_fig6e
    from depthwidth.paperfigs.toy import compare_points

    f5, s5 = read_fig5b(FIGS / "Fig-5-1.pdf")
    f6, _ = read_fig6e(FIGS / "Fig-6-3.pdf")
    assert s5["found"] == 9 and s5["with_error_bar"] == 9
    assert s5["gammas"] == [0.1111, 0.3333, 0.5556]
    grid = lambda df: df.assign(alpha=(df["alpha"] / 0.125).round() * 0.125)  # noqa: E731
    both = grid(f5).merge(grid(f6), on=["gamma", "alpha"], suffixes=("_5b", "_6e"))
    assert len(both) == 9
    assert np.max(np.abs(both["alpha_m_5b"] - both["alpha_m_6e"])) < 1e-3
    assert np.max(np.abs(both["alpha_m_err_5b"] - both["alpha_m_err_6e"])) < 1e-3
    # a cell on the paper's point agrees; one off by ten error bars does not; γ = −1 has no Fig. 5b point
    p = f5[np.isclose(f5["gamma"], 1 / 3, atol=1e-3) & np.isclose(f5["alpha"], 1.5, atol=1e-2)].iloc[0]
    ours = pd.DataFrame(
        {
            "alpha": [1.5, 1.5, 1.5],
            "gamma": [0.3, 0.3, -1.0],
            "exponent": [p["alpha_m"] + 0.5 * p["alpha_m_err"], p["alpha_m"] + 10 * p["alpha_m_err"], 1.0],
            "stderr": [0.0, 0.0, 0.0],
        }
    )
    cmp = compare_points(ours, f5, GAMMA_GRID)
    assert cmp["agree"].tolist() == [True, False]
    assert not cmp["gamma_on_grid"].any()


def test_concordance_lists_every_figure():
    from depthwidth.paperfigs.concordance import CONCORDANCE

    figs = {(r["paper"], f.strip()) for r in CONCORDANCE for f in r["figure"].split(",")}
    for n in ("1a", "1b", "1c", "1d", "2", "3", "4a", "4b", "5", "6a", "6b", "6c–e", "7", "8a", "8b"):
        assert ("A", n) in figs, n
    for n in ("2a–e", "2f", "3b", "4c", "4a–b", "5", "6", "B.3", "C.3"):
        assert ("B", n) in figs, n


def test_docs_concordance_is_written_from_the_table(tmp_path, capsys):
    """docs/stages/paperfigs.md holds the concordance as ``CONCORDANCE`` writes it; an edited copy is found
    stale, named with the fix, and rewritten equal to the docs page."""
    from depthwidth.paperfigs.concordance import main

    from _helpers import REPO

    page = REPO / "docs" / "stages" / "paperfigs.md"
    assert main(["--check", str(page)]) == 0, "run: python -m depthwidth.paperfigs.concordance " + str(page)
    copy = tmp_path / "page.md"
    copy.write_text(page.read_text().replace("| A | 7 |", "| A | 7 (edited) |"))
    assert main(["--check", str(copy)]) == 1
    assert "python -m depthwidth.paperfigs.concordance" in capsys.readouterr().err
    assert main([str(copy)]) == 0 and copy.read_text() == page.read_text()


@needs_shared_data
def test_notebook_procedure_recovers_its_printed_fit_from_consistent_points():
    """The notebook's Adam procedure, rerun on losses made from its printed α, A and B_g at the 108
    (model, dataset) widths, returns the printed digits: the procedure is the notebook's."""
    import pandas as pd

    from depthwidth.paperfigs.fig8 import llm_widths
    from depthwidth.paperfigs.fig8fit import losses, notebook_fit
    from depthwidth.paperfigs.notebook import read_fit_notebook

    nb = read_fit_notebook(NOTEBOOK)
    w = llm_widths()
    pts = pd.DataFrame(
        [
            {
                "family": r["family"],
                "dataset": d,
                "model": r["id"],
                "m": r["m"],
                "model_part": nb["A"] / r["m"] ** nb["alpha"],
            }
            for _, r in w.iterrows()
            for d in nb["data_names"]
        ]
    )
    fit = notebook_fit(losses(pts, nb["B"]), nb["groups"])
    assert fit["alpha"] == pytest.approx(nb["alpha"], abs=5e-4)
    assert fit["A"] == pytest.approx(nb["A"], rel=5e-3)


@pytest.mark.workflow
@needs_shared_data
def test_fig8b_reading_is_consistent_with_the_printed_fit():
    """Fig. 8b read by the drawing-model fit: all 108 points, and at the printed α and A the group means of
    the residuals vanish (a converged fit's condition) for at least 14 of the 16 groups; the refit agrees
    with the paper's 0.91 ± 0.04 within its error."""
    from depthwidth.paperfigs.fig8b import read_fig8b
    from depthwidth.laws.group_offsets import fit_group_offsets
    from depthwidth.paperfigs.fig8fit import losses, stationarity
    from depthwidth.paperfigs.notebook import read_fit_notebook

    nb = read_fit_notebook(NOTEBOOK)
    pts, s = read_fig8b(
        FIGS / "Fig-8-2.pdf", nb["model_classes"], nb["data_names"], prior=(nb["A"], nb["alpha"])
    )
    assert s["found"] == 108 and s["converged"]
    df = losses(pts, nb["B"])
    st = stationarity(df, nb["alpha"], nb["A"])
    assert (st["mean_residual"].abs() <= 0.01).sum() >= 14
    fit = fit_group_offsets(df["m"], df["loss"], df["group"])
    assert abs(fit.alpha - 0.91) <= 2 * np.hypot(fit.alpha_err, 0.04)


@needs_shared_data
def test_notebook_procedure_takes_the_autograd_loops_steps():
    """The written-out gradient and Adam update (numpy, float32) take the notebook's torch autograd steps:
    after 300 steps on the printed law's points α, A and every B_g agree to float32 rounding."""
    import pandas as pd
    import torch

    from depthwidth.paperfigs.fig8 import llm_widths
    from depthwidth.paperfigs.fig8fit import losses, notebook_fit
    from depthwidth.paperfigs.notebook import read_fit_notebook

    nb = read_fit_notebook(NOTEBOOK)
    rng = np.random.default_rng(0)
    pts = pd.DataFrame(
        [
            {
                "family": r["family"],
                "dataset": d,
                "model": r["id"],
                "m": r["m"],
                "model_part": nb["A"] / r["m"] ** nb["alpha"] * np.exp(rng.normal(0, 0.1)),
            }
            for _, r in llm_widths().iterrows()
            for d in nb["data_names"]
        ]
    )
    df, groups = losses(pts, nb["B"]), nb["groups"]
    ours = notebook_fit(df, groups, steps=300)
    # the notebook's loop (its Model.forward sums per group and divides by the point count: the mean)
    g = torch.tensor([groups.index(x) for x in df["group"]])
    m = torch.tensor(df["m"].to_numpy(), dtype=torch.float32)
    y = torch.tensor(df["loss"].to_numpy(), dtype=torch.float32)
    A = torch.nn.Parameter(torch.tensor([500.0]))
    B = torch.nn.Parameter(torch.ones(len(groups)))
    alpha = torch.nn.Parameter(torch.tensor([1.0]))
    opt = torch.optim.Adam(
        [{"params": A, "lr": 1.0}, {"params": B, "lr": 0.001}, {"params": alpha, "lr": 0.001}]
    )
    for _ in range(300):
        opt.zero_grad()
        loss = ((A / m.pow(alpha) + B[g] - y) ** 2).mean()
        loss.backward()
        opt.step()
    assert ours["alpha"] == pytest.approx(alpha.item(), rel=1e-5)
    assert ours["A"] == pytest.approx(A.item(), rel=1e-5)
    assert np.allclose([ours["B"][k] for k in groups], B.detach().numpy(), rtol=0, atol=1e-5)
    assert abs(ours["alpha"] - 1.0) > 0.01  # 300 steps moved the fit: the comparison has power


@needs_shared_data
def test_fig1_reads_eight_widths_per_law_in_both_panels():
    """Fig. 1b/1d: 3 laws × 8 widths (m = 8 … 1024) per panel, tick residuals under 1e-3 pt, every m a power
    of two to 1e-3; panel d's grey LLM circles are read apart."""
    from depthwidth.paperfigs.fig1 import read_fig1

    df, s = read_fig1(FIGS / "Fig-1-2.pdf")
    assert s["b"]["found"] == 24 and s["d"]["found"] == 24
    assert s["by_series"] == {f"{p}/{law}": 8 for p in "bd" for law in ("exponential", "linear", "power")}
    assert s["max_m_snap_rel"] < 1e-3
    for p in "bd":
        assert s[p]["x_axis"]["residual_pt"] < 1e-3 and s[p]["y_axis"]["residual_pt"] < 1e-3
    toy = df[df["series"] != "llm"]
    assert sorted(toy.groupby(["panel", "series"])["m"].apply(tuple).unique()) == [
        tuple(2 ** np.arange(3, 11))
    ]
    assert (df["series"] == "llm").sum() == s["d"]["llm_found"] > 0


@needs_shared_data
def test_fig1_slopes_weak_power_law_and_strong_regime():
    """The weak panel's power-law series (α = 1.2) falls as m^−(α−1) = m^−0.2 over its 8 widths to within
    0.05; the strong panel's power and exponential series fall as about 1/m (within 0.1 over the paper's fit
    range)."""
    from depthwidth.paperfigs.fig1 import read_fig1, series_slopes

    df, _ = read_fig1(FIGS / "Fig-1-2.pdf")
    sl = series_slopes(df).set_index(["panel", "series"])
    weak = sl.loc[("b", "power")]
    assert weak["alpha"] == 1.2
    assert abs(weak["slope_all"] - (-(weak["alpha"] - 1))) < 0.05
    for law in ("power", "exponential"):
        assert abs(sl.loc[("d", law), "slope_fit_range"] + 1.0) < 0.1


@needs_shared_data
def test_fig1_comparison_flags_a_disagreement():
    """Synthetic cells at the paper's n, γ and α: a loss at the paper's value agrees, one at twice it does not
    (tolerance 25 %); a cell at γ = 0.3 is compared with the weak panel's γ = 0.1 and flagged; the
    per-feature loss is put in the paper's unit (× n)."""
    import pandas as pd

    from depthwidth.paperfigs.fig1 import compare_losses, compare_slopes, losses_line, read_fig1

    df, s = read_fig1(FIGS / "Fig-1-2.pdf")
    pb = df[(df["panel"] == "b") & (df["series"] == "power")].set_index("m")["loss"]
    pd_ = df[(df["panel"] == "d") & (df["series"] == "power")].set_index("m")["loss"]
    n = 10240
    rows = []
    for seed in range(2):
        rows.append(("power-a1.2", 1.2, 0.3, n, 64, seed, pb[64] / n))
        rows.append(("power-a1.2", 1.2, 0.3, n, 128, seed, 2 * pb[128] / n))
        rows.append(("power-a1.2", 1.2, -1.0, n, 64, seed, pd_[64] / n))
    cells = pd.DataFrame(rows, columns=["distribution", "alpha", "gamma", "n", "m", "seed", "final_loss"])
    cmp = compare_losses(cells, df, False).set_index(["panel", "m"])
    assert bool(cmp.loc[("b", 64), "agree"]) and not bool(cmp.loc[("b", 128), "agree"])
    assert np.isclose(cmp.loc[("b", 128), "ratio"], 2.0)
    assert not bool(cmp.loc[("b", 64), "gamma_on_paper"]) and bool(cmp.loc[("d", 64), "gamma_on_paper"])
    assert bool(cmp.loc[("d", 64), "agree"])
    line = losses_line(cmp.reset_index(), compare_slopes(cells, df, False), "b", s["b"]["found"])
    assert line.startswith("Fig. 1b (weak regime, loss vs m): 1 of 2 of our cells agree")
