"""The paper-figures stage: Fig. 8 of the superposition paper read off its vector PDF, the fit notebook's
stored outputs, the overlap slope on the paper's own points, and the figure concordance.

- ``paperfigs_fig8``: rule paperfigs_fig8, the readings and fits (tables + JSON).
- ``paperfigs_section``: rule paperfigs_section, the report section and its headline rows.
"""

from __future__ import annotations

import html
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from depthwidth.integrity import read_json, read_table, write_json, write_table
from depthwidth.paperfigs.concordance import CONCORDANCE
from depthwidth.paperfigs.fig8 import overlap_fits, read_fig8a
from depthwidth.paperfigs.notebook import read_fit_notebook
from depthwidth.papers import ALPHA_M_LLM
from depthwidth.report.html import Figures, agree_within, headline_row, table_html, write_section

TITLE = "The superposition paper's figures, read off its vector PDFs"
SOURCE = "paperfigs"
# The paper draws the overlap line with slope 1.0 and states no error; a slope within this of 1 agrees.
SLOPE_TOLERANCE = 0.1


def paperfigs_fig8(
    pdf: str, notebook: str, *, n_boot: int, seed: int, points_csv: str, fits_csv: str, summary_json: str
) -> dict:
    """Rule paperfigs_fig8: Fig. 8a's points, the overlap fits, the notebook's fit, the reading summary."""
    df, summary = read_fig8a(pdf)
    fits = overlap_fits(df, n_boot=n_boot, seed=seed)
    nb = read_fit_notebook(notebook)
    summary = {
        "fig8a": summary,
        "fig8b": {
            "expected": 108,
            "found": 0,
            "status": "not read",
            "reason": "the alpha = 0.3 markers are flattened into about 1,900 fragments of 113 blended colours and two embedded raster patches; no reader for them yet",
        },
        "notebook": {
            k: nb[k] for k in ("alpha", "A", "B", "err_slope", "final_loss", "iterations", "groups")
        },
        "n_notebook_models": len(nb["model_names"]),
    }
    write_table(df, points_csv)
    write_table(fits, fits_csv)
    write_json(summary_json, summary)
    return summary


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


def render(df: pd.DataFrame, fits: pd.DataFrame, summary: dict, figures: Figures) -> tuple[str, list[dict]]:
    s8a, s8b, nb = summary["fig8a"], summary["fig8b"], summary["notebook"]
    all_ = fits[fits["subset"] == "all"].iloc[0]
    intro = (
        "<p>The paper's repository publishes its figures as vector PDFs. Fig. 8a (LM-head overlaps of 27 LLMs "
        "against 1/m) is read off the drawing: axes from the tick marks (the tick labels are glyph outlines, so "
        "the major ticks take the printed values, and every minor tick checks the log map), markers from the "
        f"filled circles. Found {s8a['found']} of {s8a['expected']} points; not in the figure: "
        f"{html.escape(', '.join(s8a['missing']) or 'none')}. Tick residuals: x {s8a['x_axis']['residual_pt']:.1e} pt "
        f"({s8a['x_axis']['n_ticks']} ticks), y {s8a['y_axis']['residual_pt']:.1e} pt ({s8a['y_axis']['n_ticks']} ticks); "
        f"each circle's 1/m equals a published width to {s8a['max_inv_m_rel_err']:.1e} relative.</p>"
        f"<p>Fig. 8b (108 losses): {html.escape(s8b['status'])}; {html.escape(s8b['reason'])}. The fit notebook's "
        f"stored output (parsed, not typed in) gives α = {nb['alpha']}, A = {nb['A']} and {len(nb['B'])} offsets B_g; "
        f"its printed slope error is {nb['err_slope']:.4f}.</p>"
    )
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
        headline_row(
            "LLM loss vs width, α_m (paper's Fig. 8b points)",
            ALPHA_M_LLM.text,
            "not read",
            None,
            None,
            SOURCE,
            f"0 of 108 points read: {s8b['reason']}. The notebook prints α = {nb['alpha']}, A = {nb['A']} "
            f"(parsed from its stored output)",
        ),
    ]
    return body, rows


def concordance_html() -> str:
    df = pd.DataFrame(CONCORDANCE)
    return "<h3>Figure concordance</h3>" + table_html(
        df, "Every figure of both papers, our counterpart, its status and the command that makes it."
    )


def paperfigs_section(
    points_csv: str, fits_csv: str, summary_json: str, *, html_path: str, headline_path: str, figures_dir: str
) -> None:
    """Rule paperfigs_section: the section HTML, its headline rows and its figure."""
    df = read_table(points_csv, "paperfigs_fig8", ("family", "m", "mean_sq_overlap"))
    fits = read_table(fits_csv, "paperfigs_fig8", ("subset", "slope", "slope_se"))
    summary = read_json(summary_json, "paperfigs_fig8", ("fig8a", "fig8b", "notebook"))
    body, rows = render(df, fits, summary, Figures(figures_dir))
    write_section(html_path, headline_path, "paperfigs", TITLE, body, rows)


def inputs() -> dict:
    """The pinned files rule paperfigs_fig8 reads (fetched by rule fetch_file)."""
    root = Path("data/raw/superposition_paper")
    return {"pdf": str(root / "figures/Fig-8-2.pdf"), "notebook": str(root / "LLMs/nonlinearfit-3.ipynb")}
