"""Report section of the LM-head stage: overlap vs width, row norms, loss vs width and the fitted α_m,
and the token frequencies of real text (α − 1, the weak-superposition α_m, beside the measured α_m).

It only renders: every comparison with the paper comes from ``results/lm_head/comparisons.csv`` (rule
lm_head_compare, ``depthwidth.lm_head.compare``). Figures go to the section's figure folder
(``depthwidth.sections.Figures``); ``render`` returns the section body and its headline rows;
``lm_head_section`` is rule lm_head_section.
"""

from __future__ import annotations

import html
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from depthwidth.integrity import check_sealed, read_json, read_table
from depthwidth.lm_head.tables import LOSS_COLUMNS
from depthwidth.lm_head.token_frequencies import rank_frequency
from depthwidth.lm_head.width_fit import width_law
from depthwidth.verdicts import read_comparisons
from depthwidth.papers import ALPHA_M_LLM, TOKEN_FREQUENCY_ALPHA
from depthwidth.sections import (
    Figures,
    comparisons_html,
    fmt_pm,
    headline_records,
    plain_log_ticks,
    table_html,
    write_section,
)

TITLE = "LM-head geometry and loss vs width (Liu, Liu & Gore 2025)"
# The geometry table in two parts that each fit the page: the rows' norms, and their overlaps.
NORM_COLUMNS = {
    "model": "Model",
    "family": "Family",
    "matrix": "Matrix",
    "V": "Rows V",
    "m": "Width m",
    "norm_mean": "Mean norm",
    "norm_std": "Norm sd",
    "norm_min": "Min norm",
    "norm_max": "Max norm",
    "frac_near_zero": "Near zero (share)",
}
OVERLAP_COLUMNS = {
    "model": "Model",
    "m": "Width m",
    "mean_sq_overlap": "Mean sq. overlap",
    "m_times_mean_sq_overlap": "m × mean sq. overlap",
    "m_times_mean_sq_overlap_centered": "same, mean row removed",
    "mean_overlap": "Mean overlap (signed)",
    "mean_abs_overlap": "Mean |overlap|",
    "mean_abs_overlap_random": "Mean |overlap|, random",
}
LOSS_HEADERS = {
    "model": "Model",
    "family": "Family",
    "width": "Width",
    "n_layers": "Layers",
    "corpus": "Corpus",
    "n_texts": "Texts",
    "tokens": "Tokens",
    "loss_nats": "Loss (nats/token)",
    "max_tokens": "Max tokens per text",
}
TOKEN_HEADERS = {
    "tokenizer": "Tokenizer",
    "corpus": "Corpus",
    "n_docs": "Documents",
    "n_tokens": "Tokens",
    "n_distinct": "Distinct tokens",
    "ranks": "Fitted ranks",
    "alpha": "α",
    "alpha_lower": "α, lower half",
    "alpha_upper": "α, upper half",
    "weak_alpha_m": "α − 1",
}


def _readable(df: pd.DataFrame, headers: dict[str, str]) -> pd.DataFrame:
    """``df``'s columns named in ``headers``, in that order, renamed to them."""
    return df[[c for c in headers if c in df.columns]].rename(columns=headers)


def _record(comparisons: pd.DataFrame, key: str) -> dict | None:
    hit = comparisons[comparisons["key"] == key]
    return None if hit.empty else hit.iloc[0].to_dict()


def _shown(rec: dict | None) -> str:
    """A record's value ± error as text, or its words where it has no number."""
    if rec is None:
        return "–"
    if pd.isna(rec.get("value")):
        return str(rec.get("value_text") or "–")
    return fmt_pm(float(rec["value"]), None if pd.isna(rec.get("err")) else float(rec["err"]))


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
    for axis, (lo, hi) in (("x", ax.get_xlim()), ("y", ax.get_ylim())):
        if hi < 10 * lo:  # less than a decade: plain numbers, not 4×10⁰
            plain_log_ticks(ax, axis)


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
    ax.plot(mm, 1 / mm, "k--", lw=1, label="$1/m$ (random directions)")
    _log_log(
        ax,
        "LM-head width $m$ (columns)",
        r"mean squared overlap $\langle(\hat w_i \cdot \hat w_j)^2\rangle$, $i \neq j$ (dimensionless)",
    )
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
    ax.set_xlabel(r"row norm $\|w_i\|$ / median row norm (dimensionless)")
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
    _log_log(ax, "model width $m$ (hidden size)", "next-token loss (nats per token)", legend_size=7)

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
    _log_log(ax, "token rank $i$ (most frequent = 1)", "frequency $p_i$ (fraction of tokens)", legend_size=7)
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
    threshold = (
        f"; the dotted line is the near-zero threshold ({dead_fraction:g} × median)" if dead_fraction else ""
    )
    parts = [
        figures.html(
            fig_overlap(geo),
            "overlap_vs_width",
            "Mean squared overlap of the normalised LM-head rows against the LM-head width m, log-log axes, "
            "filled markers. The dashed line is 1/m, the value for random directions; strong superposition "
            "sits on or near it. Computed exactly from the m×m Gram matrix: (‖ŴᵀŴ‖²_F − V)/(V(V−1)). Open "
            "markers: the same after subtracting the mean row, which removes a direction shared by all tokens "
            "(anisotropy).",
        ),
        figures.html(
            fig_norms(norms, dead_fraction),
            "row_norms",
            "Distribution of LM-head row norms, each model's norms divided by its median (log density). In "
            f"weak superposition most rows would sit near zero{threshold}.",
        ),
        table_html(
            _readable(geo, NORM_COLUMNS),
            "LM-head row norms per model (geometry.csv). Width m: columns of the LM head; near zero: the "
            "share of rows with a norm below the threshold times the median norm.",
        ),
        table_html(
            _readable(geo, OVERLAP_COLUMNS),
            "LM-head overlaps per model (geometry.csv): of the normalised rows ŵᵢ, i ≠ j. Random directions "
            "give m × mean squared overlap = 1. Mean overlap (signed) is positive where the rows share a "
            "direction; 'mean row removed': the rows minus their mean row. Mean |overlap| is sampled (its error "
            "is in geometry.csv) unless configured exact; 'random' is its value for isotropic random "
            "directions, √(2/(πm)) for large m.",
        ),
    ]
    return "\n".join(parts)


def loss_html(loss: pd.DataFrame, fit: dict, width: dict | None, figures: Figures) -> str:
    if not len(loss):
        return "<p>No decoder model was evaluated, so there is no loss vs width.</p>"
    how = (
        f"Lines: the joint fit L = A/m^α + B_g with α = {_shown(width)} ({width['err_method']})."
        if fit.get("status") == "ok" and width is not None
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
            table_html(_readable(loss, LOSS_HEADERS), "Loss per model and corpus (loss.csv)."),
        ]
    )


def width_exponent_html(fit: dict, width: dict | None) -> str:
    if fit.get("status") == "ok" and width is not None:
        return (
            f"<p><b>Width exponent</b>: α<sub>m</sub> = {html.escape(_shown(width))} "
            f"({html.escape(width['err_method'])}) from {fit['n_points']} points at {fit['n_widths']} widths "
            f"in {len(fit['groups'])} groups; the paper: {ALPHA_M_LLM.text}.</p>"
        )
    return (
        f"<p><b>Width exponent</b>: not fitted: {html.escape(fit.get('reason', ''))}. The default config only "
        "has the models that work offline (packaged in PyPI wheels), which give fewer than three widths; "
        "config/paper.yaml lists the paper's 27 models (needs the hub and a GPU).</p>"
    )


def token_frequencies_html(
    token_fit: pd.DataFrame, counts: dict[str, np.ndarray], width: dict | None, figures: Figures
) -> str:
    llm = (
        f"this run's α<sub>m</sub> = {html.escape(_shown(width))}"
        if width is not None and not pd.isna(width.get("value"))
        else "this run has no α<sub>m</sub>, see above"
    )
    intro = (
        "<h3>Token frequencies: what weak superposition would predict</h3><p>In the weak regime the loss "
        "is the frequency mass of the tokens a model cannot represent, so token frequencies p<sub>i</sub> ∝ "
        "i<sup>−α</sup> give α<sub>m</sub> = α − 1. The paper finds α near "
        f"{TOKEN_FREQUENCY_ALPHA.value:g} for real text, hence α<sub>m</sub> near 0, far from the LLMs' "
        f"{ALPHA_M_LLM.text} ({llm}). Counted as the paper's script does: documents in "
        "stream order, no special tokens, blank documents skipped, the last document counted whole.</p>"
    )
    table = token_fit.assign(ranks=[f"{a}–{b}" for a, b in zip(token_fit["rank_min"], token_fit["rank_max"])])
    return "\n".join(
        [
            intro,
            figures.html(
                fig_rank_frequency(token_fit, counts),
                "token_rank_frequency",
                "Token frequency against rank, log-log axes, one line per (tokenizer, corpus). Dashed: the fit "
                "p_i ∝ i^−α over the shaded rank range. The table's 'lower half' and 'upper half' are the fits "
                "over each half of that range and show how far α depends on it.",
            ),
            table_html(
                _readable(table, TOKEN_HEADERS),
                "Token-frequency exponents (token_frequency_fit.csv; its OLS errors and the fit's constant are "
                "there). α − 1 is the weak-regime width exponent; its comparison with the LLMs' width "
                "exponent is in the table of comparisons below.",
            ),
        ]
    )


COMPARISONS_CAPTION = (
    "Every comparison of this section with the paper (comparisons.csv, rule lm_head_compare): the paper's "
    "statement, this run's value and how its error was made, the test and the verdict."
)


# ------------------------------------------------------------------------------------------- section


def render(
    geo: pd.DataFrame,
    loss: pd.DataFrame,
    fit: dict,
    norms: dict[str, np.ndarray],
    comparisons: pd.DataFrame,
    *,
    figures: Figures,
    dead_fraction: float | None = None,
    token_fit: pd.DataFrame | None = None,
    token_counts: dict[str, np.ndarray] | None = None,
) -> tuple[str, list[dict]]:
    """Returns (section body HTML, headline rows: the comparison records marked headline); the figures
    are written into ``figures``. ``token_fit`` (token_frequency_fit.csv) and ``token_counts``
    ("tokenizer / corpus" -> counts) add the token frequencies."""
    width = _record(comparisons, "alpha_m_width")
    parts = [
        intro_html(),
        geometry_html(geo, norms, dead_fraction, figures),
        loss_html(loss, fit, width, figures),
        width_exponent_html(fit, width),
    ]
    if token_fit is not None and len(token_fit):
        parts.append(token_frequencies_html(token_fit, token_counts, width, figures))
    parts.append("<h3>Comparisons with the paper</h3>" + comparisons_html(comparisons, COMPARISONS_CAPTION))
    return "\n".join(parts), headline_records(comparisons)


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
    comparisons_csv: str,
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
        read_comparisons(comparisons_csv, "lm_head_compare"),
        figures=Figures(figures_dir),
        dead_fraction=dead_norm_fraction,
        token_fit=read_table(token_fit_csv, "lm_head_token_fit"),
        token_counts=_token_counts(token_counts_paths),
    )
    write_section(html_path, headline_path, "lm_head", TITLE, body, rows)
