"""The paper-figures stage's report section: the LLM rows tested on the paper's Fig. 8 points, our toy
exponents over Figs. 4b, 6e and 5b, our toy losses over Fig. 1b/1d, our cells over the regime figures (3, 7;
``regimes``), and the figure concordance (the readings: ``readings``).

- ``paperfigs_section``: rule paperfigs_section, the report section and its headline rows.
"""

from __future__ import annotations

import html

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from depthwidth.integrity import read_json, read_table
from depthwidth.paperfigs.concordance import CONCORDANCE
from depthwidth.paperfigs.fig1 import RTOL, compare_losses, compare_slopes, losses_line
from depthwidth.paperfigs.fig6 import GAMMA_GRID
from depthwidth.paperfigs.regimes import load as load_regimes
from depthwidth.paperfigs.regimes import regimes_html
from depthwidth.paperfigs.toy import compare_exponents, compare_points, points_line, summary_line
from depthwidth.papers import ALPHA_M_LLM
from depthwidth.sections import Figures, agree_within, headline_row, table_html, write_section

TITLE = "The superposition paper's figures, read off its vector PDFs"
SOURCE = "paperfigs"
# The paper draws the overlap line with slope 1.0 and states no error; a slope within this of 1 agrees.
SLOPE_TOLERANCE = 0.1


def _fig_toy(cmp: pd.DataFrame, fig4b: pd.DataFrame, fig6e: pd.DataFrame):
    fig, ax = plt.subplots(figsize=(5.6, 4))
    gammas = sorted(cmp["paper_gamma"].unique())
    for i, g in enumerate(gammas):
        col = f"C{i}"
        p = fig4b[fig4b["gamma"] == g].sort_values("alpha")
        ax.plot(p["alpha"], p["alpha_m"], "-", color=col, alpha=0.6, label=f"paper Fig. 4b, γ = {g:.3g}")
        e = fig6e[np.isclose(fig6e["gamma"], g, atol=1e-3)]
        if len(e):
            ax.errorbar(
                e["alpha"],
                e["alpha_m"],
                yerr=e["alpha_m_err"],
                fmt="o",
                color=col,
                alpha=0.5,
                ms=4,
                label=f"paper Fig. 6e, γ = {g:.3g}",
            )
        o = cmp[cmp["paper_gamma"] == g]
        ax.errorbar(
            o["alpha"],
            o["ours"],
            yerr=2 * o["ours_se"],
            fmt="s",
            color=col,
            mec="k",
            ms=6,
            label=f"ours, γ = {', '.join(f'{v:g}' for v in sorted(o['gamma'].unique()))}",
        )
    ax.set_xlabel("data exponent α")
    ax.set_ylabel("model exponent α_m")
    ax.legend(fontsize=7)
    return fig


def _fig_overlap(df: pd.DataFrame, fits: pd.DataFrame):
    fig, ax = plt.subplots(figsize=(5.2, 4))
    colors = {"opt": "C0", "Qwen": "C1", "gpt2": "C2", "pythia": "C3"}
    for fam, g in df.groupby("family"):
        ax.scatter(1 / g["m"], g["mean_sq_overlap"], color=colors.get(fam, "k"), label=fam, s=30, zorder=3)
    row = fits[fits["subset"] == "all"].iloc[0]
    x = np.geomspace(1 / df["m"].max(), 1 / df["m"].min(), 50)
    logc = np.mean(np.log(df["mean_sq_overlap"])) - row["slope"] * np.mean(np.log(1 / df["m"]))
    ax.plot(x, np.exp(logc) * x ** row["slope"], "k--", label=f"fit: slope {row['slope']:.2f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("1/m")
    ax.set_ylabel("mean square overlap (read off Fig. 8a)")
    ax.legend(fontsize=8)
    return fig


def toy_html(toy: dict | None, figures: Figures) -> tuple[str, list[str]]:
    """The toy overlays: our exponents over the paper's Fig. 4b / 6e points, and one line per figure."""
    if toy is None:
        return "", []
    s = toy["summary"]
    cmp = toy["compare"]
    x = s["cross_check"]
    intro = (
        "<h3>Toy exponents against the paper's Figs. 4b and 6e</h3><p>Fig. 6e read off the vector PDF: "
        f"{s['fig6e']['found']} circles, {s['fig6e']['with_error_bar']} with error bars, at γ = "
        f"{', '.join(f'{g:.3g}' for g in s['fig6e']['gammas'])} (the figure draws no γ = ±1 point); tick residuals "
        f"{s['fig6e']['x_axis']['residual_pt']:.1e} / {s['fig6e']['y_axis']['residual_pt']:.1e} pt; γ decoded through the colour bar "
        f"to within {s['fig6e']['max_gamma_snap_dist']:.3f} of the paper's grid. Fig. 4b's heat map (a raster) decoded "
        f"through its colour bar: {s['fig4b']['found']} of {s['fig4b']['expected']} cells, RGB distance to the nearest "
        f"colour-bar row ≤ {s['fig4b']['max_color_dist']:.3f}, one row = {s['fig4b']['value_step']:.3f} in α_m. Cross-check on the "
        f"{x['n_cells']} cells both figures show: |Fig. 6e − Fig. 4b| ≤ {x['max_abs_diff']:.3f} (median {x['median_abs_diff']:.3f}), "
        "used as the heat map's decoding error.</p>"
    )
    lines = [summary_line(cmp, "Figs. 4b/6e (α_m over γ, α)")]
    parts = [intro, "<p>" + html.escape(lines[0]) + "</p>"]
    if "fig5b" in toy:
        html5, line5 = fig5b_html(toy, figures)
        parts.append(html5)
        lines.append(line5)
    if "fig1" in toy:
        html1, lines1 = fig1_html(toy, figures)
        parts.append(html1)
        lines.extend(lines1)
    if len(cmp):
        parts.append(
            figures.html(
                _fig_toy(cmp, toy["fig4b"], toy["fig6e"]),
                "toy_alpha_m_overlay",
                "α_m against α: the paper's Fig. 4b rows (lines) and Fig. 6e points (circles with their error bars) at the γ of "
                "our cells, and ours (squares, ± 2 SE).",
            )
        )
        parts.append(
            table_html(
                cmp,
                "Per cell: ours against the paper; agree: |ours − Fig. 4b| ≤ tolerance = 2·sqrt(se² + σ²), σ the Fig. 6e "
                "error bar where drawn, else its median, plus the decoding error.",
            )
        )
    return "\n".join(parts), lines


def fig5b_html(toy: dict, figures: Figures) -> tuple[str, str]:
    """Fig. 5b (the weak regime's α_m against α) with our cells over it, and its one line."""
    s5, cmp = toy["summary"]["fig5b"], toy["compare_5b"]
    x = s5["cross_check_6e"]
    line = points_line(cmp, "Fig. 5b (weak regime, α_m vs α)", s5["found"])
    parts = [
        "<h3>Toy exponents against the paper's Fig. 5b</h3><p>Fig. 5b read off the vector PDF: "
        f"{s5['found']} circles, {s5['with_error_bar']} with error bars, at γ = "
        f"{', '.join(f'{g:.3g}' for g in s5['gammas'])}; tick residuals {s5['x_axis']['residual_pt']:.1e} / "
        f"{s5['y_axis']['residual_pt']:.1e} pt. They are {x['n_cells']} of Fig. 6e's points: values within "
        f"{x['max_abs_diff']:.1e} and error bars within {x['max_err_diff']:.1e} of Fig. 6e's reading.</p>",
        "<p>" + html.escape(line) + "</p>",
    ]
    if len(cmp):
        parts.append(figures.html(_fig_5b(cmp, toy["fig5b"]), "toy_fig5b_overlay", _FIG5B_CAPTION))
        parts.append(
            table_html(
                cmp,
                "Per cell: ours against Fig. 5b's point at the nearest γ of the paper's grid; agree: "
                "|ours − paper| ≤ tolerance = 2·sqrt(se² + σ²), σ the point's error bar.",
            )
        )
    return "\n".join(parts), line


def fig1_html(toy: dict, figures: Figures) -> tuple[str, list[str]]:
    """Fig. 1b/1d (toy loss vs m, weak and strong regime) with our cells over it, and one line per panel."""
    s1, f1, cmp, sl = toy["summary"]["fig1"], toy["fig1"], toy["compare_1"], toy["slopes_1"]
    lines = [losses_line(cmp, sl, p, s1[p]["found"]) for p in ("b", "d")]
    parts = [
        "<h3>Toy losses against the paper's Fig. 1b/1d</h3><p>Fig. 1b and 1d read off the vector PDF: "
        f"{s1['b']['found']} and {s1['d']['found']} markers (8 widths × 3 laws each; {s1['d']['llm_found']} grey LLM "
        f"circles of panel d read apart and not compared); tick residuals b {s1['b']['x_axis']['residual_pt']:.1e} / "
        f"{s1['b']['y_axis']['residual_pt']:.1e} pt, d {s1['d']['x_axis']['residual_pt']:.1e} / "
        f"{s1['d']['y_axis']['residual_pt']:.1e} pt; m within {s1['max_m_snap_rel']:.1e} (relative) of a power of two. "
        "The paper's runs: n = 10240, 40000 steps, γ = 0.1 (weak) and −1 (strong), loss summed over the features "
        "(its exp-17); ours are compared at the same law and m, in the same unit (our per-feature mean × our n), "
        f"flagged where α, γ or n differ. No error bars are drawn: agree = within {RTOL:.0%} of the paper's value "
        "+ 2 SE of ours.</p>",
        *("<p>" + html.escape(line) + "</p>" for line in lines),
    ]
    if len(sl.dropna(subset=["our_slope"])) or len(cmp):
        parts.append(figures.html(_fig_1(f1, toy["ours_1"], sl), "toy_fig1_overlay", _FIG1_CAPTION))
    parts.append(
        table_html(
            sl,
            "Per series: log-log slope of loss on m, the paper's points (all m; m ≥ the paper's "
            "fit range) against ours (every width we ran of the matched law and regime) and the theory.",
        )
    )
    if len(cmp):
        parts.append(
            table_html(
                cmp,
                f"Per point: ours against Fig. 1's value at the same m; agree: |ours − paper| ≤ "
                f"{RTOL:.0%} of the paper's value + 2 SE.",
            )
        )
    return "\n".join(parts), lines


_FIG1_CAPTION = (
    "Fig. 1b (weak superposition, left) and 1d (strong, right): the paper's toy losses (filled markers and dashed "
    "lines, colour = frequency law; n = 10240, 40000 steps) and ours (black open squares, seed mean ± 2 SE, the "
    "matched law and regime, loss summed over our n features; 2000 steps)."
)
_LAW_COLOR = {"linear": "C2", "power": "C1", "exponential": "C0"}


def _fig_1(f1: pd.DataFrame, ours: pd.DataFrame, sl: pd.DataFrame):
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.8))
    for ax, panel in zip(axes, ("b", "d")):
        p = f1[(f1["panel"] == panel) & (f1["series"] != "llm")]
        for law, g in p.groupby("series"):
            g = g.sort_values("m")
            ax.plot(g["m"], g["loss"], "o--", color=_LAW_COLOR.get(law, "k"), label=f"paper, {law}")
        o = ours[ours["panel"] == panel]
        for (a, gm), g in o.groupby(["alpha", "gamma"]):
            ax.errorbar(
                g["m"],
                g["mean"],
                yerr=2 * g["se"],
                fmt="s",
                color="k",
                mfc="none",
                ms=6,
                label=f"ours, α = {a:g}, γ = {gm:g}",
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("width m")
        ax.set_title(f"Fig. 1{panel}: {'weak' if panel == 'b' else 'strong'} superposition")
        ax.legend(fontsize=6)
    axes[0].set_ylabel("loss (summed over features)")
    return fig


_FIG5B_CAPTION = (
    "The weak regime: the paper's Fig. 5b points (circles with their error bars, colour by γ) and the line "
    "α − 1, with ours (squares, ± 2 SE) at the cells we ran."
)


def _fig_5b(cmp: pd.DataFrame, f5: pd.DataFrame):
    fig, ax = plt.subplots(figsize=(5.6, 4))
    for i, (g, p) in enumerate(f5.groupby("gamma")):
        ax.errorbar(
            p["alpha"],
            p["alpha_m"],
            yerr=p["alpha_m_err"],
            fmt="o",
            color=f"C{i}",
            alpha=0.6,
            label=f"paper Fig. 5b, γ = {g:.3g}",
        )
    a = np.linspace(1.0, 2.0, 2)
    ax.plot(a, a - 1, "k--", lw=1, label="α − 1")
    ax.errorbar(
        cmp["alpha"],
        cmp["ours"],
        yerr=2 * cmp["ours_se"],
        fmt="s",
        color="k",
        mfc="none",
        ms=7,
        label=f"ours, γ = {', '.join(f'{v:g}' for v in sorted(cmp['gamma'].unique()))}",
    )
    ax.set_xlabel("data exponent α")
    ax.set_ylabel("model exponent α_m")
    ax.legend(fontsize=7)
    return fig


def alpha_row(b: dict, nb: dict) -> dict:
    """The headline row α_m on the paper's Fig. 8b points."""
    quantity = "LLM loss vs width, α_m (paper's Fig. 8b points)"
    if not b.get("summary"):
        return headline_row(
            quantity, ALPHA_M_LLM.text, "not read", None, None, SOURCE, "Fig. 8b not read in this run"
        )
    s, fits = b["summary"], b["fits"]
    a = fits[fits["subset"] == "all"].iloc[0]
    rr = s["notebook_rerun"]
    st = s["stationarity"]
    return headline_row(
        quantity,
        ALPHA_M_LLM.text,
        float(a["alpha"]),
        float(a["alpha_se"]),
        agree_within(float(a["alpha"]), float(a["alpha_se"]), ALPHA_M_LLM.value, ALPHA_M_LLM.err),
        SOURCE,
        f"{s['read']['found']} of {s['read']['expected']} points read off the figure (drawing-model fit), losses = "
        f"read + the notebook's B_g; converged least squares; bootstrap over models 95 %: [{a['boot_lo']:.2f}, "
        f"{a['boot_hi']:.2f}]; the notebook's own procedure on these points: α = {rr['alpha']:.4f}, A = {rr['A']:.1f} "
        f"(printed: {nb['alpha']}, {nb['A']}); {st['groups_within_0.01']} of {st['n_groups']} group means within 0.01 "
        "of the printed law",
    )


def fig8b_html(b: dict, figures: Figures) -> str:
    s, fits, pts = b["summary"], b["fits"], b["points"]
    r, rr, st = s["read"], s["notebook_rerun"], s["stationarity"]
    text = (
        "<h3>Fig. 8b: the width law on the paper's own points</h3><p>The 108 markers of Fig. 8b are drawn at alpha "
        "0.3 and were flattened by the illustration program (fragments in blended colours and two raster patches), "
        "so they are read by fitting a drawing model: each marker's x, shape, colour, opacity, size and painting "
        "order are known, its y is chosen to best reproduce the rasterised figure "
        f"({r['px_per_pt']} px/pt, one pixel = {r['decades_per_pixel']:.4f} decades; {r['sweeps']} sweeps, "
        f"{r['swaps']} swaps; RMS pixel colour error {r['pixel_rms']:.3f}, {100 * r['pixel_frac_off']:.1f} % of pixels off "
        f"by more than 0.05). Tick residuals: x {r['x_axis']['residual_pt']:.1e} pt, y {r['y_axis']['residual_pt']:.1e} pt. "
        f"Check against the printed fit: a converged fit leaves every group's mean residual at 0; with the printed "
        f"α and A, {st['groups_within_0.01']} of {st['n_groups']} groups have |mean| ≤ 0.01. The notebook's procedure "
        f"(Adam, 20,000 steps) rerun on these points gives α = {rr['alpha']:.4f}, A = {rr['A']:.1f}, loss "
        f"{rr['final_loss']:.5f} (printed: α = {s['printed']['alpha']}, A = {s['printed']['A']}, loss "
        f"{s['printed']['final_loss']:.5f}).</p>"
    )
    return "\n".join(
        [
            text,
            figures.html(
                _fig_loss(pts, fits, s["printed"]),
                "fig8b_width_law",
                "Fig. 8b's points as read (model part L − B_g against m, colour = family, marker = dataset) and "
                "the converged fit of L = A/m^α + B_g on them (dashed), with the paper's printed law (dotted).",
            ),
            table_html(
                fits,
                "L = A/m^α + B_g refitted (lmfit least squares, standard errors from the covariance): all "
                "points with a percentile 95 % bootstrap over models, per family, leaving one family out.",
            ),
        ]
    )


def _fig_loss(pts: pd.DataFrame, fits: pd.DataFrame, printed: dict):
    fig, ax = plt.subplots(figsize=(5.2, 4))
    colors = {"opt": "C0", "Qwen": "C1", "gpt2": "C2", "pythia": "C3"}
    marker = {"wikitext": "o", "c4": "s", "pile": "v", "bookcorpus": "^"}
    for (fam, ds), g in pts.groupby(["family", "dataset"]):
        ax.scatter(
            g["m"], g["model_part"], color=colors.get(fam, "k"), marker=marker.get(ds, "o"), alpha=0.5, s=25
        )
    a = fits[fits["subset"] == "all"].iloc[0]
    m = np.geomspace(500, 1e4, 50)
    ax.plot(m, a["A"] / m ** a["alpha"], "k--", label=f"refit α = {a['alpha']:.3f} ± {a['alpha_se']:.3f}")
    ax.plot(m, printed["A"] / m ** printed["alpha"], "k:", label=f"the notebook's α = {printed['alpha']}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("m")
    ax.set_ylabel("L − B_g (read off Fig. 8b)")
    ax.legend(fontsize=8)
    return fig


def render(
    df: pd.DataFrame,
    fits: pd.DataFrame,
    summary: dict,
    figures: Figures,
    toy: dict | None = None,
    fig8b: dict | None = None,
    regimes: dict | None = None,
    loss_summed: bool = False,
) -> tuple[str, list[dict]]:
    s8a, nb = summary["fig8a"], summary["notebook"]
    b = fig8b or {}
    s8b = b.get("summary")
    all_ = fits[fits["subset"] == "all"].iloc[0]
    intro = (
        "<p>The paper's repository publishes its figures as vector PDFs. Fig. 8a (LM-head overlaps of 27 LLMs "
        "against 1/m) is read off the drawing: axes from the tick marks (the tick labels are glyph outlines, so "
        "the major ticks take the printed values, and every minor tick checks the log map), markers from the "
        f"filled circles. Found {s8a['found']} of {s8a['expected']} points; not in the figure: "
        f"{html.escape(', '.join(s8a['missing']) or 'none')}. Tick residuals: x {s8a['x_axis']['residual_pt']:.1e} pt "
        f"({s8a['x_axis']['n_ticks']} ticks), y {s8a['y_axis']['residual_pt']:.1e} pt ({s8a['y_axis']['n_ticks']} ticks); "
        f"each circle's 1/m equals a published width to {s8a['max_inv_m_rel_err']:.1e} relative.</p>"
        f"<p>The fit notebook's stored output (parsed, not typed in) gives α = {nb['alpha']}, A = {nb['A']} and "
        f"{len(nb['B'])} offsets B_g; its printed slope error is {nb['err_slope']:.4f}.</p>"
    )
    parts8b = [fig8b_html(b, figures)] if s8b else []
    body = "\n".join(
        [
            intro,
            figures.html(
                _fig_overlap(df, fits),
                "fig8a_overlaps",
                "Fig. 8a's points as read off the vector PDF (one circle per model, colour = family) and the OLS "
                "fit of log overlap on log(1/m). The paper draws slope 1.",
            ),
            table_html(
                fits,
                "Slope of log mean square overlap on log(1/m): OLS slope and its standard error; for all models "
                "a percentile 95 % bootstrap over models; per family and leaving one family out.",
            ),
            table_html(
                df[["family", "model", "m", "mean_sq_overlap", "how"]],
                "Fig. 8a points (a '|' names a pair of models of one width that the figure cannot tell apart).",
            ),
            *parts8b,
            toy_html(toy, figures)[0],
            regimes_html(regimes, figures, loss_summed)[0] if regimes else "",
            concordance_html(),
        ]
    )
    rows = [
        headline_row(
            "LM-head overlaps ∝ 1/m (paper's Fig. 8a points)",
            "slope 1 (drawn, no error)",
            float(all_["slope"]),
            float(all_["slope_se"]),
            agree_within(float(all_["slope"]), float(all_["slope_se"]), 1.0, SLOPE_TOLERANCE),
            SOURCE,
            f"{int(all_['n_points'])} of 27 points read off the vector PDF, {int(all_['n_widths'])} widths; bootstrap over "
            f"models 95 %: [{all_['boot_lo']:.2f}, {all_['boot_hi']:.2f}]",
        ),
        alpha_row(b, nb),
    ]
    return body, rows


def concordance_html() -> str:
    df = pd.DataFrame(CONCORDANCE)
    return "<h3>Figure concordance</h3>" + table_html(
        df, "Every figure of both papers, our counterpart, its status and the command that makes it."
    )


def fig1_tables(fig1_csv: str, cells_csv: str | None, loss_summed: bool) -> dict:
    """Fig. 1's points, our cells against them (``compare_1``, ``slopes_1``) and our seed means per panel."""
    from depthwidth.paperfigs.fig1 import _match, _ours

    f1 = read_table(fig1_csv, "paperfigs_toy", ("panel", "series", "m", "loss"))
    cols = ("distribution", "alpha", "gamma", "n", "m", "seed", "final_loss")
    if cells_csv:
        cells = read_table(cells_csv, "superposition_tables", cols)
    else:
        cells = pd.DataFrame(columns=list(cols))
    ours = _ours(cells, loss_summed)
    shown = []
    for (panel, _), g in f1[f1["series"] != "llm"].groupby(["panel", "series"]):
        shown.append(_match(ours, g.iloc[0]).assign(panel=panel))
    shown = pd.concat(shown).drop_duplicates() if shown else ours.assign(panel=[])
    return {
        "fig1": f1,
        "compare_1": compare_losses(cells, f1, loss_summed),
        "slopes_1": compare_slopes(cells, f1),
        "ours_1": shown,
    }


def paperfigs_section(
    points_csv: str,
    fits_csv: str,
    summary_json: str,
    fig4b_csv: str,
    fig6e_csv: str,
    toy_json: str,
    exponents_csv: str | None,
    fig8b_points_csv: str | None = None,
    fig8b_fits_csv: str | None = None,
    fig8b_json: str | None = None,
    *,
    fig5b_csv: str,
    fig1_csv: str | None = None,
    cells_csv: str | None = None,
    loss_summed: bool = False,
    regimes_tables: dict | None = None,
    regimes_json: str | None = None,
    html_path: str,
    headline_path: str,
    figures_dir: str,
) -> None:
    """Rule paperfigs_section: the section HTML, its headline rows and its figures."""
    df = read_table(points_csv, "paperfigs_fig8", ("family", "m", "mean_sq_overlap"))
    fits = read_table(fits_csv, "paperfigs_fig8", ("subset", "slope", "slope_se"))
    summary = read_json(summary_json, "paperfigs_fig8", ("fig8a", "notebook"))
    f4 = read_table(fig4b_csv, "paperfigs_toy", ("gamma", "alpha", "alpha_m"))
    f6 = read_table(fig6e_csv, "paperfigs_toy", ("gamma", "alpha", "alpha_m", "alpha_m_err"))
    ts = read_json(toy_json, "paperfigs_toy", ("fig4b", "fig6e", "cross_check"))
    if exponents_csv:
        ours = read_table(exponents_csv, "superposition_tables", ("alpha", "gamma", "exponent", "stderr"))
    else:
        ours = pd.DataFrame(columns=["alpha", "gamma", "exponent", "stderr"])
    f5 = read_table(fig5b_csv, "paperfigs_toy", ("gamma", "alpha", "alpha_m", "alpha_m_err"))
    cmp = compare_exponents(ours, f4, f6, ts["cross_check"]["max_abs_diff"])
    cmp5 = compare_points(ours, f5, GAMMA_GRID)
    toy = {"summary": ts, "compare": cmp, "fig4b": f4, "fig6e": f6, "fig5b": f5, "compare_5b": cmp5}
    if fig1_csv and "fig1" in ts:
        toy.update(fig1_tables(fig1_csv, cells_csv, loss_summed))
    fig8b = None
    if fig8b_points_csv:
        fig8b = {
            "points": read_table(
                fig8b_points_csv, "paperfigs_fig8b", ("family", "dataset", "m", "model_part", "loss")
            ),
            "fits": read_table(fig8b_fits_csv, "paperfigs_fig8b", ("subset", "alpha", "alpha_se")),
            "summary": read_json(fig8b_json, "paperfigs_fig8b", ("read", "notebook_rerun", "stationarity")),
        }
    regimes = load_regimes(regimes_tables, regimes_json, cells_csv) if regimes_json else None
    body, rows = render(df, fits, summary, Figures(figures_dir), toy, fig8b, regimes, loss_summed)
    write_section(html_path, headline_path, "paperfigs", TITLE, body, rows)
