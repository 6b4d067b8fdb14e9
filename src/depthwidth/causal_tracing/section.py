"""The causal-tracing report section (rule causal_tracing_section): p_clean and p_corrupt per pair, maps
of restored probability where the model knows the fact, the peak-depth summary, the paper's numbers. It
only renders: the tables and the comparisons with the paper come from rule causal_tracing_compare
(``.compare``)."""

from __future__ import annotations

import html
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from depthwidth import papers
from depthwidth.causal_tracing.tables import read_jobs
from depthwidth.sections import Figures, comparisons_html, headline_records, table_html, write_section
from depthwidth.verdicts import read_comparisons

TITLE = "Causal tracing: where in depth a model recalls a fact (Liu et al. 2026, Fig. 6)"


def _label(tok: str, i: int, subject: tuple[int, int]) -> str:
    return f"{tok!r}{' *' if subject[0] <= i < subject[1] else ''}"


def heatmap(ax, summary: dict, matrix: np.ndarray):
    """Restored probability, tokens (up to the prediction position) × normalised depth, as the paper draws it."""
    L, last = summary["n_layers"], summary["predict_position"]
    im = ax.imshow(
        matrix[:, : last + 1].T,
        cmap="Greys",
        aspect="auto",
        vmin=0,
        extent=(0.5 / L, (L + 0.5) / L, last + 0.5, -0.5),
    )
    ax.set_yticks(
        range(last + 1), [_label(summary["tokens"][i], i, summary["subject_range"]) for i in range(last + 1)]
    )
    ax.set_xlabel(r"normalised depth $(\ell + 1)/L$")
    ax.grid(False)  # the theme's grid would cross the cells
    ax.set_title(
        f"{summary['fact']}: p({summary['target_token']!r})\nclean {summary['p_clean']:.3f}, "
        f"corrupt {summary['p_corrupt']:.3f}",
        fontsize=9,
    )
    return im


def model_figure(figures: Figures, model: str, jobs: list[tuple[dict, np.ndarray]]) -> str:
    """One figure per model, one panel per fact it knows."""
    fig, axes = plt.subplots(1, len(jobs), figsize=(4.2 * len(jobs), 3.4), squeeze=False)
    for ax, (summary, matrix) in zip(axes[0], jobs, strict=True):
        fig.colorbar(heatmap(ax, summary, matrix), ax=ax, label="restored probability")
    fig.tight_layout()
    caption = (
        f"{model}: probability of the target when block ℓ's clean output at one token is restored into "
        "the run with a noised subject (subject tokens marked *). Dark: restoring that state brings the "
        "answer back."
    )
    return figures.html(fig, f"trace_{model}", caption)


def _n(count: int, word: str) -> str:
    """ "1 model", "3 models"."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def pairs_html(pairs: pd.DataFrame, min_p_clean: float) -> str:
    shown = pairs[["model", "fact", "target_token", "p_clean", "p_corrupt", "knows", "seconds"]].copy()
    shown["knows"] = shown["knows"].map({True: "yes", False: "no: no map"})
    shown = shown.rename(
        columns={
            "model": "Model",
            "fact": "Fact",
            "target_token": "Target token",
            "p_clean": "p clean",
            "p_corrupt": "p corrupt",
            "knows": "Knows the fact",
            "seconds": "Seconds",
        }
    )
    caption = (
        f"p clean: the target's probability in the clean run; p corrupt: with noise on the subject. A model "
        f"knows a fact when p clean ≥ {min_p_clean:g}; below that a map of restorations means nothing "
        "and none is drawn. Seconds: one job's tracing time (model loading excluded)."
    )
    return table_html(shown, caption, float_format="{:.4g}")


def flagged_html(pairs: pd.DataFrame) -> str:
    unknown = pairs[~pairs["knows"]]
    if unknown.empty:
        return ""
    items = "".join(
        f"<li>{html.escape(r.model)} / {html.escape(r.fact)}: p_clean {r.p_clean:.3g}, p_corrupt "
        f"{r.p_corrupt:.3g}</li>"
        for r in unknown.itertuples()
    )
    return f"<p>Pairs where the model does not know the answer (no map drawn):</p><ul>{items}</ul>"


def peaks_html(peaks: pd.DataFrame, pairs: pd.DataFrame) -> str:
    known = pairs.loc[pairs["knows"], ["model", "fact"]]
    shown = peaks.merge(known, on=["model", "fact"])
    if shown.empty:
        return "<p>No model knows any configured fact, so there is no peak-depth summary.</p>"
    span = [
        "–" if pd.isna(lo) else f"{lo:.3g}–{hi:.3g}"
        for lo, hi in zip(shown["half_depth_low"], shown["half_depth_high"], strict=True)
    ]
    table = pd.DataFrame(
        {
            "Model": shown["model"],
            "Fact": shown["fact"],
            "Token": [f"{r} {t!r}" for r, t in zip(shown["role"], shown["token"], strict=True)],
            "Layers": shown["n_layers"],
            "Peak depth": shown["peak_depth"],
            "Peak p": shown["peak_p"],
            "Depth span, ≥ half the peak gain": span,
        }
    )
    caption = (
        "Where restoring one token's state helps most, as a fraction of the model's depth: the peak depth is "
        "(ℓ + 1)/L of the largest restored probability; the span is the depth range where the gain over "
        "p corrupt is at least half the peak gain. Last token: the prediction position."
    )
    return table_html(table, caption, float_format="{:.3g}")


def prose(pairs: pd.DataFrame) -> str:
    s = pairs.iloc[0]
    return (
        "<p>Causal tracing (Meng et al. 2022) as the depth paper's script runs it: noise of "
        f"{s['noise_sigmas']:g}σ per coordinate (σ: the standard deviation of the input-embedding entries) on the "
        "subject's embeddings, then, for every block ℓ and token j, one run in which block ℓ's clean output at j "
        f"alone is restored. In the paper only Pythia-12B knows its fact (p_clean {papers.CAUSAL_TRACE_P_CLEAN.value:g} "
        f"vs p_corrupt {papers.CAUSAL_TRACE_P_CORRUPT.value:g}); for the smaller Pythias p_clean ≈ p_corrupt and "
        "their maps mean nothing, which is why maps are drawn here only where the model knows the fact. "
        f"Here: {_n(pairs['model'].nunique(), 'model')} × {_n(pairs['fact'].nunique(), 'fact')}, "
        f"{_n(int(s['noise_samples']), 'noise draw')} per pair, {s['dtype']} on {s['device']}.</p>"
    )


COMPARISONS_CAPTION = (
    "Every comparison of this section with the paper (comparisons.csv, rule causal_tracing_compare): the "
    "paper's statement, this run's value, the test and the verdict."
)


def causal_tracing_section(inputs, output, *, min_p_clean: float) -> None:
    """Write the section (``output.html``, ``output.headline``) and its figures (``output.figures``) from the
    tables and comparisons of rule causal_tracing_compare (``inputs.pairs``, ``.peaks``, ``.comparisons``)
    and every job's summaries and matrices (the maps)."""
    jobs = read_jobs(list(inputs.summaries), list(inputs.matrices))
    pairs, peaks = pd.read_csv(inputs.pairs), pd.read_csv(inputs.peaks)
    comparisons = read_comparisons(inputs.comparisons, "causal_tracing_compare")
    knows = {(r.model, r.fact) for r in pairs.itertuples() if r.knows}
    figures = Figures(Path(output.figures))
    maps = []
    for model in dict.fromkeys(pairs["model"]):
        known = [(s, m) for s, m in jobs if s["model"] == model and (model, s["fact"]) in knows]
        if known:
            maps.append(model_figure(figures, model, known))
    body = (
        prose(pairs)
        + pairs_html(pairs, min_p_clean)
        + flagged_html(pairs)
        + "".join(maps)
        + peaks_html(peaks, pairs)
        + "<h3>Comparisons with the paper</h3>"
        + comparisons_html(comparisons, COMPARISONS_CAPTION)
    )
    write_section(output.html, output.headline, "causal_tracing", TITLE, body, headline_records(comparisons))
