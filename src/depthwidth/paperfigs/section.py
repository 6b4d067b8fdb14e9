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
from depthwidth.paperfigs.fig1 import RTOL, losses_line
from depthwidth.paperfigs.outputs import COMPARED
from depthwidth.paperfigs.regimes import load as load_regimes
from depthwidth.paperfigs.regimes import regimes_html
from depthwidth.paperfigs.toy import points_line, summary_line
from depthwidth.sections import Figures, comparisons_html, table_html, write_section
from depthwidth.verdicts import read_comparisons

TITLE = "The superposition paper's figures, read off its vector PDFs"
# The families in four distinct colours of the report's one palette (seaborn's colour-blind set, whose C1 and
# C3 are two oranges; the paper's own figure uses matplotlib's C0–C3)
FAMILY_COLORS = {"opt": "C0", "Qwen": "C1", "gpt2": "C2", "pythia": "C4"}
SOURCE = "paperfigs"


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
            yerr=2 * o["ours_err"].fillna(0),
            fmt="s",
            color=col,
            mec="k",
            ms=6,
            label=f"ours, γ = {', '.join(f'{v:g}' for v in sorted(o['gamma'].unique()))}",
        )
    ax.set_xlabel("data exponent α")
    ax.set_ylabel(r"model exponent $\alpha_m$")
    ax.legend(fontsize=7)
    return fig


def _fig_overlap(df: pd.DataFrame, fits: pd.DataFrame):
    fig, ax = plt.subplots(figsize=(5.2, 4))
    colors = FAMILY_COLORS
    for fam, g in df.groupby("family"):
        ax.scatter(1 / g["m"], g["mean_sq_overlap"], color=colors.get(fam, "k"), label=fam, s=30, zorder=3)
    row = fits[fits["subset"] == "all"].iloc[0]
    x = np.geomspace(1 / df["m"].max(), 1 / df["m"].min(), 50)
    logc = np.mean(np.log(df["mean_sq_overlap"])) - row["slope"] * np.mean(np.log(1 / df["m"]))
    ax.plot(x, np.exp(logc) * x ** row["slope"], "k--", label=f"fit: slope {row['slope']:.2f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"$1/m$")
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
                "our cells, and ours (squares, ± 2 bootstrap standard deviations over seeds).",
            )
        )
        parts.append(
            comparisons_html(
                toy["records"]["fig4b"],
                "Per cell: ours (bootstrap over seeds) against the paper's Fig. 4b value; the paper's σ is the Fig. 6e "
                "error bar where drawn, else its median, plus the heat map's decoding error; test |Δ| ≤ 2·√(σ² + σ_paper²).",
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
            comparisons_html(
                toy["records"]["fig5b"],
                "Per cell: ours (bootstrap over seeds) against Fig. 5b's point at the nearest γ of the paper's grid, "
                "σ_paper its error bar.",
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
    if "our_slope" in sl:
        parts.append(
            table_html(
                sl[
                    [
                        "panel",
                        "series",
                        "slope_all",
                        "slope_fit_range",
                        "theory",
                        "our_alpha",
                        "our_gamma",
                        "our_slope",
                    ]
                ].rename(columns=_SLOPE_HEADERS),
                "Per series: log-log slope of loss on m, the paper's points (all m; m ≥ the paper's "
                "fit range) against ours (every width we ran of the matched law and regime) and the theory.",
            )
        )
    parts.append(
        comparisons_html(
            toy["records"]["fig1"],
            f"Per point: ours against Fig. 1's value at the same m; test |ours − paper| ≤ {RTOL:.0%} of the "
            "paper's value + 2 SE of ours.",
        )
    )
    return "\n".join(parts), lines


_SLOPE_HEADERS = {
    "panel": "Panel",
    "series": "Law",
    "slope_all": "Paper slope, all m",
    "slope_fit_range": "Paper slope, fit range",
    "theory": "Theory",
    "our_alpha": "Our α",
    "our_gamma": "Our γ",
    "our_slope": "Our slope",
}


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
    "α − 1, with ours (squares, ± 2 bootstrap standard deviations over seeds) at the cells we ran."
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
        yerr=2 * cmp["ours_err"].fillna(0),
        fmt="s",
        color="k",
        mfc="none",
        ms=7,
        label=f"ours, γ = {', '.join(f'{v:g}' for v in sorted(cmp['gamma'].unique()))}",
    )
    ax.set_xlabel("data exponent α")
    ax.set_ylabel(r"model exponent $\alpha_m$")
    ax.legend(fontsize=7)
    return fig


def fig8b_html(b: dict, figures: Figures, records: pd.DataFrame | None) -> str:
    s, fits, pts = b["summary"], b["fits"], b["points"]
    r, rr, st = s["read"], s["notebook_rerun"], s["stationarity"]
    left = s.get("left_out", [])
    left_txt = " ".join(
        f"{html.escape(x['model'])} on {html.escape(x['dataset'])} (m = {x['m']}) is not plotted: its model part at the "
        f"notebook's fit is {x['implied']:.4f} (implied by the other points of its group, whose residuals the fitted "
        "offset B_g sums to 0), which a log axis cannot draw; it is left out of the fits below, and the sensitivity "
        "row puts it back at that value."
        for x in left
    )
    parts = s.get("err_slope_parts", {})
    err_txt = (
        f" The paper's ± {parts['printed']:.3f} is the notebook's formula √(Σ (log(L − B_g) − log(A/m^α))² / Σ (log m − "
        f"mean)² / (N − 3)) with the NaN log of that point set to 0 (nan_to_num): recomputed on our points it is "
        f"{parts['err_slope']:.4f}, {100 * parts['nan_share']:.0f} % of its sum of squares is that one term, and without "
        f"it the formula gives {parts['err_slope_without_nan']:.3f}. Each model enters four times (one per dataset), so "
        "the error of α_m is the bootstrap over the 27 models."
        if parts.get("n_nan_terms")
        else ""
    )
    text = (
        "<h3>Fig. 8b: the width law on the paper's own points</h3><p>The markers of Fig. 8b are drawn at alpha "
        "0.3 and were flattened by the illustration program (fragments in blended colours and two raster patches), "
        "so they are read by fitting a drawing model: each marker's x, shape, colour, opacity, size and painting "
        "order are known, its y is chosen to best reproduce the rasterised figure "
        f"({r['px_per_pt']} px/pt, one pixel = {r['decades_per_pixel']:.4f} decades; {r['sweeps']} sweeps, "
        f"{r['swaps']} swaps; RMS pixel colour error {r['pixel_rms']:.3f}, {100 * r['pixel_frac_off']:.1f} % of pixels off "
        f"by more than 0.05). Tick residuals: x {r['x_axis']['residual_pt']:.1e} pt, y {r['y_axis']['residual_pt']:.1e} pt. "
        f"{r.get('plotted', r['found'])} of the {r['expected']} points are plotted. {left_txt} "
        f"Check against the printed fit: a converged fit leaves every group's mean residual at 0; with the printed "
        f"α and A, {st['groups_within_0.01']} of {st['n_groups']} groups have |mean| ≤ 0.01. The notebook's procedure "
        f"(Adam, 20,000 steps) rerun on the plotted points gives α = {rr['alpha']:.4f}, A = {rr['A']:.1f}, loss "
        f"{rr['final_loss']:.5f} (printed: α = {s['printed']['alpha']}, A = {s['printed']['A']}, loss "
        f"{s['printed']['final_loss']:.5f}).{err_txt}</p>"
    )
    shown = pts[pts["plotted"]] if "plotted" in pts else pts
    return "\n".join(
        [
            text,
            figures.html(
                _fig_loss(shown, fits, s["printed"]),
                "fig8b_width_law",
                "Fig. 8b's plotted points as read: model part L − B_g against the width m; colour = model family "
                "(OPT, Qwen2.5, GPT-2, Pythia), marker = dataset (circle WikiText, square C4, triangle down the Pile, "
                "triangle up BookCorpus), as in the paper. Dashed: the converged fit of L = A/m^α + B_g on them "
                "(± the bootstrap over models); dotted: the notebook's printed law.",
            ),
            comparisons_html(records, "Fig. 8b: our α_m on the paper's points against its printed value."),
            table_html(
                fits.rename(columns=_LAW_HEADERS)[[c for c in _LAW_HEADERS.values() if c in fits.rename(columns=_LAW_HEADERS)]],
                "L = A/m^α + B_g refitted (lmfit least squares) on the plotted points: all of them (the bootstrap "
                "over the 27 models: sd and percentile 95 % interval), per family, leaving one family out, and the "
                "sensitivity fit with the left-out point at its implied value. The covariance error treats the rows "
                "as independent; the bootstrap is the error to read.",
            ),
        ]
    )  # fmt: skip


_LAW_HEADERS = {
    "subset": "Points",
    "n_points": "Number",
    "n_models": "Models",
    "alpha": "α_m",
    "alpha_se": "Covariance error",
    "boot_sd": "Bootstrap sd",
    "boot_lo": "Bootstrap 2.5 %",
    "boot_hi": "Bootstrap 97.5 %",
    "A": "A",
}
_FAMILY_LABEL = {"opt": "OPT", "Qwen": "Qwen2.5", "gpt2": "GPT-2", "pythia": "Pythia"}
_DATASET_LABEL = {"wikitext": "WikiText", "c4": "C4", "pile": "the Pile", "bookcorpus": "BookCorpus"}


def _fig_loss(pts: pd.DataFrame, fits: pd.DataFrame, printed: dict):
    from matplotlib.lines import Line2D

    fig, ax = plt.subplots(figsize=(5.6, 4.2))
    colors = FAMILY_COLORS
    marker = {"wikitext": "o", "c4": "s", "pile": "v", "bookcorpus": "^"}
    for (fam, ds), g in pts.groupby(["family", "dataset"]):
        ax.scatter(
            g["m"], g["model_part"], color=colors.get(fam, "k"), marker=marker.get(ds, "o"), alpha=0.5, s=25
        )
    a = fits[fits["subset"] == "all"].iloc[0]
    m = np.geomspace(500, 1e4, 50)
    err = a["boot_sd"] if "boot_sd" in a and np.isfinite(a["boot_sd"]) else np.nan
    lab = f"refit $\\alpha_m$ = {a['alpha']:.3f}" + (f" ± {err:.3f} (bootstrap)" if np.isfinite(err) else "")
    h = [
        ax.plot(m, a["A"] / m ** a["alpha"], "k--", label=lab)[0],
        ax.plot(
            m,
            printed["A"] / m ** printed["alpha"],
            "k:",
            label=f"the notebook's $\\alpha$ = {printed['alpha']}",
        )[0],
    ]
    h += [Line2D([], [], color=colors[f], marker="o", ls="", label=_FAMILY_LABEL[f]) for f in colors]
    h += [Line2D([], [], color="0.4", marker=marker[d], ls="", label=_DATASET_LABEL[d]) for d in marker]
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("width $m$")
    ax.set_ylabel("$L - B_g$ (read off Fig. 8b)")
    ax.legend(handles=h, fontsize=7, ncol=2, loc="upper right")
    return fig


def render(
    df: pd.DataFrame,
    fits: pd.DataFrame,
    summary: dict,
    figures: Figures,
    toy: dict | None,
    fig8b: dict | None,
    regimes: dict | None,
    records: pd.DataFrame,
    loss_summed: bool,
) -> tuple[str, list[dict]]:
    s8a, nb = summary["fig8a"], summary["notebook"]
    b = fig8b or {}
    s8b = b.get("summary")
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
    by_fig = _by_figure(records)
    parts8b = [fig8b_html(b, figures, by_fig.get("fig8b"))] if s8b else []
    body = "\n".join(
        [
            intro,
            figures.html(
                _fig_overlap(df, fits),
                "fig8a_overlaps",
                "Fig. 8a's points as read off the vector PDF (one circle per model, colour = family) and the OLS "
                "fit of log overlap on log(1/m). The paper draws slope 1.",
            ),
            comparisons_html(by_fig.get("fig8a"), "Fig. 8a: our slope against the paper's drawn line."),
            table_html(
                fits.rename(columns=_FIT_HEADERS)[[c for c in _FIT_HEADERS.values() if c in fits.rename(columns=_FIT_HEADERS)]],
                "Slope of log mean square overlap on log(1/m): OLS slope and its standard error; for all models "
                "a percentile 95 % bootstrap over models; per family and leaving one family out.",
            ),
            table_html(
                df[["family", "model", "m", "mean_sq_overlap", "how"]].rename(
                    columns={"family": "Family", "model": "Model", "m": "Width m", "mean_sq_overlap": "Mean square overlap", "how": "How read"}
                ),
                "Fig. 8a points (a '|' names a pair of models of one width that the figure cannot tell apart).",
            ),
            *parts8b,
            toy_html(toy, figures)[0] if toy else "",
            regimes_html(regimes, figures, loss_summed)[0] if regimes else "",
            concordance_html(),
        ]
    )  # fmt: skip
    rows = [
        {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}
        for r in records[records["headline"]].to_dict("records")
    ]
    return body, rows


_FIT_HEADERS = {
    "subset": "Models",
    "n_points": "Points",
    "n_widths": "Widths",
    "slope": "Slope",
    "slope_se": "OLS error",
    "boot_sd": "Bootstrap sd",
    "boot_lo": "Bootstrap 2.5 %",
    "boot_hi": "Bootstrap 97.5 %",
}


def _by_figure(records: pd.DataFrame) -> dict:
    """The records of each figure (their keys start with the figure's name)."""
    fig = records["key"].str.split("/", n=1).str[0]
    return {name: records[fig == name] for name in COMPARED}


def concordance_html() -> str:
    df = pd.DataFrame(CONCORDANCE).rename(columns=str.capitalize)
    return "<h3>Figure concordance</h3>" + table_html(
        df, "Every figure of both papers, our counterpart, its status and the command that makes it."
    )


def fig1_ours(cells_csv: str | None, f1: pd.DataFrame, loss_summed: bool) -> pd.DataFrame:
    """Our seed-mean losses at the laws and regimes Fig. 1 draws (for the overlay)."""
    from depthwidth.paperfigs.fig1 import _match, _ours

    cols = ("distribution", "alpha", "gamma", "n", "m", "seed", "final_loss")
    cells = (
        read_table(cells_csv, "superposition_tables", cols) if cells_csv else pd.DataFrame(columns=list(cols))
    )
    ours = _ours(cells, loss_summed)
    shown = []
    for (panel, _), g in f1[f1["series"] != "llm"].groupby(["panel", "series"]):
        shown.append(_match(ours, g.iloc[0]).assign(panel=panel))
    return pd.concat(shown).drop_duplicates() if shown else ours.assign(panel=[])


def _table(path: str, name: str) -> pd.DataFrame:
    df = read_table(path, "paperfigs_compare")
    return df.iloc[0:0] if list(df.columns) == ["none"] else df


def paperfigs_section(
    inputs: dict,
    *,
    loss_summed: bool,
    html_path: str,
    headline_path: str,
    figures_dir: str,
) -> None:
    """Rule paperfigs_section: the section HTML, its headline rows (the records of comparisons.csv marked
    headline) and its figures. ``inputs``: the rule's named inputs (``pipeline.section_inputs``)."""
    df = read_table(inputs["points"], "paperfigs_fig8", ("family", "m", "mean_sq_overlap"))
    fits = read_table(inputs["fits"], "paperfigs_fig8", ("subset", "slope", "slope_se"))
    summary = read_json(inputs["summary"], "paperfigs_fig8", ("fig8a", "notebook"))
    records = read_comparisons(inputs["comparisons"], "paperfigs_comparisons")
    by_fig = _by_figure(records)
    tables = {name: _table(inputs[f"table_{name}"], name) for name in COMPARED}
    extras = {name: _table(inputs[f"extra_{name}"], name) for name in COMPARED}
    ts = read_json(inputs["toy"], "paperfigs_toy", ("fig4b", "fig6e", "cross_check"))
    toy = {
        "summary": ts,
        "compare": tables["fig4b"],
        "fig4b": read_table(inputs["fig4b"], "paperfigs_toy", ("gamma", "alpha", "alpha_m")),
        "fig6e": read_table(inputs["fig6e"], "paperfigs_toy", ("gamma", "alpha", "alpha_m", "alpha_m_err")),
        "fig5b": read_table(inputs["fig5b"], "paperfigs_toy", ("gamma", "alpha", "alpha_m", "alpha_m_err")),
        "compare_5b": tables["fig5b"],
        "records": by_fig,
    }
    if "fig1" in ts:
        f1 = read_table(inputs["fig1"], "paperfigs_toy", ("panel", "series", "m", "loss"))
        toy.update(
            {
                "fig1": f1,
                "compare_1": tables["fig1"],
                "slopes_1": extras["fig1"],
                "ours_1": fig1_ours(inputs.get("cells"), f1, loss_summed),
            }
        )
    fig8b = {
        "points": read_table(inputs["fig8b_points"], "paperfigs_fig8b", ("family", "dataset", "m", "model_part", "loss")),
        "fits": read_table(inputs["fig8b_fits"], "paperfigs_fig8b", ("subset", "alpha", "alpha_se")),
        "summary": read_json(inputs["fig8b_summary"], "paperfigs_fig8b", ("read", "notebook_rerun", "stationarity")),
    }  # fmt: skip
    regimes = load_regimes(inputs, inputs["regimes"], inputs.get("cells"))
    regimes["tables"] = tables
    regimes["records"] = by_fig
    body, rows = render(df, fits, summary, Figures(figures_dir), toy, fig8b, regimes, records, loss_summed)
    write_section(html_path, headline_path, "paperfigs", TITLE, body, rows)
