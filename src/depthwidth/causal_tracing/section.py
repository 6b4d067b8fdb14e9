"""The causal-tracing report section (rule causal_tracing_section): p_clean and p_corrupt per pair, maps
of restored probability where the model knows the fact, the peak-depth summary, the paper's numbers."""

from __future__ import annotations

import html
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from depthwidth import papers
from depthwidth.causal_tracing.tables import pairs_table, peak_table, read_jobs
from depthwidth.files import atomic_write_csv
from depthwidth.sections import Figures, headline_row, table_html, write_section

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
    ax.set_xlabel("normalised depth (ℓ + 1) / L")
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


def pairs_html(pairs: pd.DataFrame, min_p_clean: float) -> str:
    shown = pairs[["model", "fact", "target_token", "p_clean", "p_corrupt", "knows", "seconds"]].copy()
    shown["knows"] = shown["knows"].map({True: "yes", False: "no: no map"})
    caption = (
        f"p_clean: the target's probability in the clean run; p_corrupt: with noise on the subject. A model "
        f"'knows' a fact when p_clean ≥ {min_p_clean:g}; below that a map of restorations means nothing "
        "and none is drawn. seconds: one job's tracing time (model loading excluded)."
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
    cols = [
        "model",
        "fact",
        "role",
        "token",
        "n_layers",
        "peak_depth",
        "peak_p",
        "half_depth_low",
        "half_depth_high",
    ]
    caption = (
        "Where restoring one token's state helps most, as a fraction of the model's depth: peak_depth is "
        "(ℓ + 1)/L of the largest restored probability; half_depth_low–high is the depth span where the gain "
        "over p_corrupt is at least half the peak gain. Last token: the prediction position."
    )
    return table_html(shown[cols], caption, float_format="{:.3g}")


def prose(pairs: pd.DataFrame) -> str:
    s = pairs.iloc[0]
    return (
        "<p>Causal tracing (Meng et al. 2022) as the depth paper's script runs it: noise of "
        f"{s['noise_sigmas']:g}σ per coordinate (σ: the standard deviation of the input-embedding entries) on the "
        "subject's embeddings, then, for every block ℓ and token j, one run in which block ℓ's clean output at j "
        f"alone is restored. In the paper only Pythia-12B knows its fact (p_clean {papers.CAUSAL_TRACE_P_CLEAN.value:g} "
        f"vs p_corrupt {papers.CAUSAL_TRACE_P_CORRUPT.value:g}); for the smaller Pythias p_clean ≈ p_corrupt and "
        "their maps mean nothing, which is why maps are drawn here only where the model knows the fact. "
        f"Here: {pairs['model'].nunique()} model(s) × {pairs['fact'].nunique()} fact(s), "
        f"{int(s['noise_samples'])} noise draw(s) per pair, {s['dtype']} on {s['device']}.</p>"
    )


def headline(jobs: list[tuple[dict, np.ndarray]]) -> list[dict]:
    """Rows only for the paper's own pair (Pythia-12B, the space-needle sentence), where it was run."""
    rows = []
    for s, _ in jobs:
        if (
            s["model_id"] != papers.CAUSAL_TRACE_MODEL_ID
            or s["text"].lower() != papers.CAUSAL_TRACE_SENTENCE.lower()
        ):
            continue
        for key, paper in (
            ("p_clean", papers.CAUSAL_TRACE_P_CLEAN),
            ("p_corrupt", papers.CAUSAL_TRACE_P_CORRUPT),
        ):
            # p_clean is a deterministic number: it agrees when it rounds to the paper's two digits
            agree = abs(s["p_clean"] - paper.value) <= 0.005 if key == "p_clean" else None
            note = (
                ""
                if key == "p_clean"
                else f"one noise draw in the paper; {s['noise_samples']} here, no error"
            )
            rows.append(
                headline_row(
                    f"causal tracing {key}, {s['model']}", paper.text, s[key], None, agree, paper.source, note
                )
            )
    return rows


def causal_tracing_section(summaries: list[str], matrices: list[str], output, *, min_p_clean: float) -> None:
    """Write the section (``output.html``, ``output.headline``), its tables (``output.pairs``, ``output.peaks``)
    and figures (``output.figures``) from the per-job summaries and matrices."""
    jobs = read_jobs(summaries, matrices)
    pairs, peaks = pairs_table(jobs, min_p_clean), peak_table(jobs)
    atomic_write_csv(output.pairs, pairs)
    atomic_write_csv(output.peaks, peaks)
    figures = Figures(Path(output.figures))
    maps = []
    for model in dict.fromkeys(pairs["model"]):
        known = [(s, m) for s, m in jobs if s["model"] == model and s["p_clean"] >= min_p_clean]
        if known:
            maps.append(model_figure(figures, model, known))
    body = (
        prose(pairs)
        + pairs_html(pairs, min_p_clean)
        + flagged_html(pairs)
        + "".join(maps)
        + peaks_html(peaks, pairs)
    )
    write_section(output.html, output.headline, "causal_tracing", TITLE, body, headline(jobs))
