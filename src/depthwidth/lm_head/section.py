"""Report section of the LM-head stage: overlap vs width, row norms, loss vs width and the fitted α_m,
and the token frequencies of real text (α − 1, the weak-superposition α_m, beside the measured α_m).

Figures go to the section's figure folder (``depthwidth.sections.Figures``); ``render`` returns the
section body and its headline rows; ``lm_head_section`` is rule lm_head_section.
"""

from __future__ import annotations

import html
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from depthwidth.laws.loglog import power_law_fit
from depthwidth.integrity import check_sealed, read_json, read_table
from depthwidth.lm_head.tables import LOSS_COLUMNS
from depthwidth.lm_head.token_frequencies import rank_frequency
from depthwidth.lm_head.width_fit import width_law
from depthwidth.papers import ALPHA_M_LLM, TOKEN_FREQUENCY_ALPHA
from depthwidth.sections import Figures, agree_within, fmt_pm, headline_row, table_html, write_section

TITLE = "LM-head geometry and loss vs width (Liu, Liu & Gore 2025)"
SOURCE = "Liu, Liu & Gore 2025 (arXiv 2505.10465), LLM validation"
GEOMETRY_COLUMNS = [
    "model",
    "family",
    "matrix",
    "V",
    "m",
    "width",
    "norm_mean",
    "norm_std",
    "norm_min",
    "norm_max",
    "frac_near_zero",
    "mean_sq_overlap",
    "m_times_mean_sq_overlap",
    "mean_overlap",
    "m_times_mean_sq_overlap_centered",
    "mean_abs_overlap",
    "mean_abs_overlap_random",
]


# ------------------------------------------------------------------------------------------- figures


def _colors(families):
    """One colour of the report's palette (``sections.THEME``) per family."""
    return {f: f"C{i % 10}" for i, f in enumerate(sorted(set(families)))}


def _log_log(ax, xlabel: str, ylabel: str, legend_size: float = 8) -> None:
    """The styling every log-log figure of the section shares."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=legend_size)
    ax.grid(alpha=0.3, which="both")


def overlap_slope(m, overlap) -> tuple[float, float] | None:
    """Slope of log(overlap) on log(m) and its standard error (random directions: −1); None with < 3 widths."""
    fit = power_law_fit(m, overlap)
    if fit["n_x"] < 3:
        return None
    return -fit["exponent"], fit["stderr"]


def fig_overlap(geo: pd.DataFrame):
    fig, ax = plt.subplots(figsize=(5.2, 4))
    col = _colors(geo["family"])
    for fam, g in geo.groupby("family"):
        ax.scatter(g["m"], g["mean_sq_overlap"], color=col[fam], label=fam, s=36, zorder=3)
        if "mean_sq_overlap_centered" in g:
            ax.scatter(
                g["m"],
                g["mean_sq_overlap_centered"],
                facecolors="none",
                edgecolors=col[fam],
                s=36,
                zorder=3,
                label=f"{fam}, mean row removed",
            )
        for _, r in g.iterrows():
            ax.annotate(
                r["model"],
                (r["m"], r["mean_sq_overlap"]),
                fontsize=7,
                xytext=(4, 3),
                textcoords="offset points",
            )
    mm = np.geomspace(geo["m"].min() / 1.5, geo["m"].max() * 1.5, 50)
    ax.plot(mm, 1 / mm, "k--", lw=1, label="1/m (random directions)")
    _log_log(ax, "LM-head width m (columns)", "mean squared overlap ⟨(ŵᵢ·ŵⱼ)²⟩, i≠j (dimensionless)")
    return fig


def fig_norms(norms: dict[str, np.ndarray], dead_fraction: float | None):
    fig, ax = plt.subplots(figsize=(5.2, 4))
    for name, v in norms.items():
        med = float(np.median(v))
        ax.hist(v / med, bins=np.linspace(0, 3, 121), histtype="step", density=True, lw=1.3, label=name)
    if dead_fraction:
        ax.axvline(
            dead_fraction, color="k", ls=":", lw=1, label=f"near-zero threshold ({dead_fraction:g}×median)"
        )
    ax.set_xlabel("row norm ‖wᵢ‖ / median row norm (dimensionless)")
    ax.set_ylabel("density (per unit of norm/median)")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return fig


def fig_loss(loss: pd.DataFrame, fit: dict):
    fig, ax = plt.subplots(figsize=(5.2, 4))
    groups = loss["family"] + " / " + loss["corpus"]
    for i, (grp, g) in enumerate(loss.groupby(groups, sort=True)):
        c = f"C{i % 10}"
        ax.scatter(g["width"], g["loss_nats"], color=c, s=30, label=grp, zorder=3)
        if fit.get("status") == "ok" and grp in fit["B"]:
            mm = np.geomspace(g["width"].min() / 1.3, g["width"].max() * 1.3, 60)
            ax.plot(mm, width_law(mm, fit["A"], fit["alpha"], fit["B"][grp]), color=c, lw=1)
    _log_log(ax, "model width m (hidden size)", "next-token loss (nats per token)", legend_size=7)
    return fig


def fig_rank_frequency(token_fit: pd.DataFrame, counts: dict[str, np.ndarray]):
    fig, ax = plt.subplots(figsize=(5.2, 4))
    for i, r in enumerate(token_fit.itertuples()):
        label = f"{r.tokenizer} / {r.corpus}"
        ranks, p = rank_frequency(counts[label])
        ax.plot(ranks, p, color=f"C{i % 10}", lw=1, label=f"{label}: α = {r.alpha:.3f}")
        rr = np.geomspace(r.rank_min, r.rank_max, 20)
        ax.plot(rr, np.exp(r.log_c) * rr**-r.alpha, color="k", ls="--", lw=0.8)
    if len(token_fit):
        ax.axvspan(
            token_fit["rank_min"].min(),
            token_fit["rank_max"].max(),
            color="0.9",
            zorder=0,
            label="fitted ranks",
        )
    _log_log(ax, "token rank i (most frequent = 1)", "frequency p_i (fraction of tokens)", legend_size=7)
    return fig


# --------------------------------------------------------------------------------------------- prose


def intro_html() -> str:
    return (
        "<p>Real language models are in the strong-superposition regime if (i) nearly every row of the LM "
        "head has a sizeable norm (every token is represented) and (ii) the normalised rows overlap as much as "
        "random directions do, ⟨(ŵᵢ·ŵⱼ)²⟩ ≈ 1/m. The paper then predicts a loss falling like 1/m with width; "
        f"it fitted L = A/m<sup>α</sup> + B<sub>family, corpus</sub> to 27 models and found α = "
        f"{ALPHA_M_LLM.text}.</p>"
    )


def geometry_html(
    geo: pd.DataFrame, norms: dict[str, np.ndarray], dead_fraction: float | None, figures: Figures
) -> str:
    parts = [
        figures.html(
            fig_overlap(geo),
            "overlap_vs_width",
            "Mean squared overlap of the normalised LM-head rows against the LM-head width m, log-log axes. "
            "The dashed line is 1/m, the value for random directions; strong superposition sits on or near it. "
            "Computed exactly from the m×m Gram matrix: (‖ŴᵀŴ‖²_F − V)/(V(V−1)). Open markers: the same after "
            "subtracting the mean row, which removes a direction shared by all tokens (anisotropy).",
        ),
        figures.html(
            fig_norms(norms, dead_fraction),
            "row_norms",
            "Distribution of LM-head row norms, each model's norms divided by its median (log density). In weak "
            "superposition most rows would sit near zero; the dotted line is the near-zero threshold.",
        ),
        table_html(
            geo[[c for c in GEOMETRY_COLUMNS if c in geo.columns]],
            "LM-head geometry per model (geometry.csv). m: columns of the LM head; width: hidden "
            "size; mean_overlap: signed mean overlap (a shared direction makes it positive); centered: rows "
            "minus their mean row; mean |overlap| is sampled (error in geometry.csv) unless configured exact; "
            "'random' is its value for isotropic random directions, √(2/(πm)) for large m.",
        ),
    ]
    return "\n".join(parts)


def loss_html(loss: pd.DataFrame, fit: dict, figures: Figures) -> str:
    if not len(loss):
        return "<p>No decoder model was evaluated, so there is no loss vs width.</p>"
    how = (
        f"Lines: the joint fit L = A/m^α + B_g with α = {fit['alpha']:.3f} ± {fit['alpha_err'] or float('nan'):.3f}."
        if fit.get("status") == "ok"
        else f"No fit: {fit.get('reason', '')}."
    )
    return "\n".join(
        [
            figures.html(
                fig_loss(loss, fit),
                "loss_vs_width",
                "Next-token loss (token-weighted mean, nats) against model width, log-log axes, one colour per "
                "(family, corpus) group. " + how,
            ),
            table_html(loss, "Loss per model and corpus (loss.csv)."),
        ]
    )


def width_exponent_html(fit: dict) -> str:
    if fit.get("status") == "ok":
        return (
            f"<p><b>Width exponent</b>: α<sub>m</sub> = {html.escape(fmt_pm(fit['alpha'], fit['alpha_err']))} "
            f"from {fit['n_points']} points at {fit['n_widths']} widths in {len(fit['groups'])} groups; the "
            f"paper: {ALPHA_M_LLM.text}.</p>"
        )
    return (
        f"<p><b>Width exponent</b>: not fitted: {html.escape(fit.get('reason', ''))}. The default config only "
        "has the models that work offline (packaged in PyPI wheels), which give fewer than three widths; "
        "config/paper.yaml lists the paper's 27 models (needs the hub and a GPU).</p>"
    )


def token_frequencies_html(
    token_fit: pd.DataFrame, counts: dict[str, np.ndarray], fit: dict, figures: Figures
) -> str:
    llm = (
        f"this run's α_m = {fmt_pm(fit['alpha'], fit['alpha_err'])}"
        if fit.get("status") == "ok"
        else "this run has no α_m (see above)"
    )
    intro = (
        "<h3>Token frequencies: what weak superposition would predict</h3><p>In the weak regime the loss "
        "is the frequency mass of the tokens a model cannot represent, so token frequencies p<sub>i</sub> ∝ "
        "i<sup>−α</sup> give α<sub>m</sub> = α − 1. The paper finds α near "
        f"{TOKEN_FREQUENCY_ALPHA.value:g} for real text, hence α<sub>m</sub> near 0, far from the LLMs' "
        f"{ALPHA_M_LLM.text} ({html.escape(llm)}). Counted as the paper's script does: documents in "
        "stream order, no special tokens, blank documents skipped, the last document counted whole.</p>"
    )
    table = token_fit.assign(llm_alpha_m=fit["alpha"] if fit.get("status") == "ok" else ALPHA_M_LLM.value)
    return "\n".join(
        [
            intro,
            figures.html(
                fig_rank_frequency(token_fit, counts),
                "token_rank_frequency",
                "Token frequency against rank, log-log axes, one line per (tokenizer, corpus). Dashed: the fit "
                "p_i ∝ i^−α over the shaded rank range. Its error is the OLS error of the slope; alpha_lower and "
                "alpha_upper (table) are the fits over each half of the range and show how far α depends on it.",
            ),
            table_html(
                table,
                "Token-frequency exponents (token_frequency_fit.csv). weak_alpha_m = α − 1, the "
                "weak-regime width exponent; llm_alpha_m: this run's width fit, or the paper's value "
                "when there is none; exhausted: the corpus ended before min_tokens.",
            ),
        ]
    )


# ------------------------------------------------------------------------------------------ headline


def width_headline(fit: dict) -> dict:
    quantity, paper = "α_m (LLM loss vs width)", ALPHA_M_LLM.text
    if fit.get("status") != "ok":
        return headline_row(quantity, paper, "not fitted", None, None, SOURCE, fit.get("reason", ""))
    return headline_row(
        quantity,
        paper,
        fit["alpha"],
        fit["alpha_err"],
        agree_within(fit["alpha"], fit["alpha_err"], ALPHA_M_LLM.value, ALPHA_M_LLM.err),
        SOURCE,
        f"{len(fit.get('models', []))} models, groups: {', '.join(fit['groups'])}",
    )


# The paper states the slope as −1 without an error; a slope within this of −1 agrees.
SLOPE_TOLERANCE = 0.1


def geometry_headlines(geo: pd.DataFrame) -> list[dict]:
    """m·mean_sq_overlap per model, and the slope of log mean_sq_overlap on log m across widths.

    The paper's claim is a scaling, overlaps ∝ 1/m across widths: one model's m·overlap cannot test it
    (the constant is not claimed), so the per-model rows are not verdicts; the slope row tests the
    scaling where three or more widths give a slope with a standard error."""
    rows = []
    slope = overlap_slope(geo["m"], geo["mean_sq_overlap"]) if len(geo) else None
    widths = sorted({int(m) for m in geo["m"]})
    if slope is None:
        why = (
            f"{len(widths)} width{'s' if len(widths) != 1 else ''} ({', '.join(map(str, widths))}): the 1/m "
            "scaling needs a slope over three or more widths"
        )
    else:
        why = "one model; the slope row tests the 1/m scaling across widths"
    for _, r in geo.iterrows():
        x = float(r["m_times_mean_sq_overlap"])
        centered = (
            f"; mean row removed: {float(r['m_times_mean_sq_overlap_centered']):.3g}"
            if "m_times_mean_sq_overlap_centered" in r
            else ""
        )
        rows.append(
            headline_row(
                f"m·mean_sq_overlap, {r['model']}",
                "overlaps ∝ 1/m across widths (random directions: m·overlap = 1)",
                x,
                None,
                None,
                SOURCE,
                f"{r['family']}, V={int(r['V'])}, m={int(r['m'])}{centered}. Not tested: {why}",
            )
        )
    if slope is not None:
        rows.append(
            headline_row(
                "slope of log mean_sq_overlap vs log m",
                "−1",
                slope[0],
                slope[1],
                agree_within(slope[0], slope[1], -1.0, SLOPE_TOLERANCE),
                SOURCE,
                f"{len(geo)} models, {len(widths)} widths; tolerance ±{SLOPE_TOLERANCE:g} on the paper's −1",
            )
        )
    return rows


def token_headlines(token_fit: pd.DataFrame) -> list[dict]:
    """α − 1 beside the LLMs' α_m: 'agree' when they differ by more than twice their combined error, as
    the paper argues (weak superposition does not explain the LLMs' width exponent)."""
    rows = []
    paper = f"≈ {TOKEN_FREQUENCY_ALPHA.value - 1:g} (α ≈ {TOKEN_FREQUENCY_ALPHA.value:g}), not α_m = {ALPHA_M_LLM.text}"
    for r in token_fit.itertuples():
        same = agree_within(r.weak_alpha_m, r.alpha_err, ALPHA_M_LLM.value, ALPHA_M_LLM.err)
        whole = ", whole corpus" if r.exhausted else ""
        rows.append(
            headline_row(
                f"α − 1 from token frequencies (weak-regime α_m), {r.tokenizer} / {r.corpus}",
                paper,
                r.weak_alpha_m,
                r.alpha_err,
                None if same is None else not same,
                TOKEN_FREQUENCY_ALPHA.source,
                f"α = {r.alpha:.3f} over ranks {r.rank_min}–{r.rank_max}, {r.n_tokens} tokens in "
                f"{r.n_docs} documents{whole}; agree = differs from α_m by more than 2σ",
            )
        )
    return rows


# ------------------------------------------------------------------------------------------- section


def render(
    geo: pd.DataFrame,
    loss: pd.DataFrame,
    fit: dict,
    norms: dict[str, np.ndarray],
    *,
    figures: Figures,
    dead_fraction: float | None = None,
    token_fit: pd.DataFrame | None = None,
    token_counts: dict[str, np.ndarray] | None = None,
) -> tuple[str, list[dict]]:
    """Returns (section body HTML, headline rows); the figures are written into ``figures``.
    ``token_fit`` (token_frequency_fit.csv) and ``token_counts`` ("tokenizer / corpus" -> counts) add
    the token frequencies."""
    parts = [
        intro_html(),
        geometry_html(geo, norms, dead_fraction, figures),
        loss_html(loss, fit, figures),
        width_exponent_html(fit),
    ]
    rows = [width_headline(fit), *geometry_headlines(geo)]
    if token_fit is not None and len(token_fit):
        parts.append(token_frequencies_html(token_fit, token_counts, fit, figures))
        rows += token_headlines(token_fit)
    return "\n".join(parts), rows


def _token_counts(paths: list[str]) -> dict[str, np.ndarray]:
    """results/lm_head/token_counts/<corpus>/<tokenizer>.parquet -> {"tokenizer / corpus": counts}."""
    return {
        f"{Path(p).stem} / {Path(p).parent.name}": read_table(p, "lm_head_token_counts", ("count",))[
            "count"
        ].to_numpy()
        for p in paths
    }


def _norms(paths: list[str]) -> dict[str, np.ndarray]:
    """results/lm_head/geometry/<model>_norms.npy -> {model: row norms}, each checked against its seal."""
    out = {}
    for p in paths:
        check_sealed(p, "lm_head_geometry")
        out[Path(p).name.removesuffix("_norms.npy")] = np.load(p)
    return out


def lm_head_section(
    geometry_csv: str,
    loss_csv: str,
    fit_json: str,
    norms_paths: list[str],
    token_fit_csv: str,
    token_counts_paths: list[str],
    *,
    dead_norm_fraction: float,
    html_path: str,
    headline_path: str,
    figures_dir: str,
) -> None:
    """Rule lm_head_section: the section HTML, its headline rows and its figures (PNG + caption)."""
    # every input is checked against the seal its producer wrote (rows, checksum) before anything is drawn
    geo = read_table(geometry_csv, "lm_head_width_fit", ("model", "family", "width"))
    loss = read_table(loss_csv, "lm_head_width_fit", tuple(LOSS_COLUMNS))
    fit = read_json(fit_json, "lm_head_width_fit", ("status",))
    body, rows = render(
        geo,
        loss,
        fit,
        _norms(norms_paths),
        figures=Figures(figures_dir),
        dead_fraction=dead_norm_fraction,
        token_fit=read_table(token_fit_csv, "lm_head_token_fit"),
        token_counts=_token_counts(token_counts_paths),
    )
    write_section(html_path, headline_path, "lm_head", TITLE, body, rows)
