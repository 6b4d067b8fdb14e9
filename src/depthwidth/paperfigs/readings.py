"""The rules that read the paper's figures: each reads its pinned files and writes its tables and summary.

- ``paperfigs_fig8``: rule paperfigs_fig8, Fig. 8a's overlaps and their fits, the fit notebook's outputs.
- ``paperfigs_fig8b``: rule paperfigs_fig8b, Fig. 8b's 108 losses and the width law refitted on them.
- ``paperfigs_toy``: rule paperfigs_toy, Fig. 4b's heat map, Figs. 6e's and 5b's points, Fig. 1b/1d's losses.
- ``paperfigs_regimes``: rule paperfigs_regimes, the toy figures of the two regimes: Fig. 3 (represented
  fraction over γ), Fig. 4a (R² of the three frequency laws), Fig. 5a (loss against the loss by unlearned features), Figs. 6c/6d (strong representation
  and overlaps against m), Fig. 7 (activation density).
"""

from __future__ import annotations

import pandas as pd

from depthwidth.download.fetch import check_pinned, load_manifest
from depthwidth.integrity import write_json, write_table
from depthwidth.paperfigs.fig1 import read_fig1
from depthwidth.paperfigs.fig3 import read_fig3
from depthwidth.paperfigs.fig5a import read_fig5a
from depthwidth.paperfigs.fig4 import read_fig4b
from depthwidth.paperfigs.fig4a import read_fig4a
from depthwidth.paperfigs.fig6 import read_fig5b, read_fig6e
from depthwidth.paperfigs.fig6cd import read_fig6c, read_fig6d
from depthwidth.paperfigs.fig7 import read_fig7
from depthwidth.paperfigs.fig8 import overlap_fits, read_fig8a
from depthwidth.paperfigs.fig8b import read_fig8b
from depthwidth.paperfigs.fig8fit import (
    losses,
    notebook_fit,
    refits,
    slope_error_parts,
    stationarity,
    unplottable,
)
from depthwidth.paperfigs.notebook import read_fit_notebook


def check_inputs(paths, rule: str, sources: dict | None) -> None:
    """Check each pinned file a rule reads against its pinned SHA-256 before it is read (a truncated PDF,
    a flipped byte or another valid PDF in its place would otherwise fail deep in the reading, naming
    neither the file nor a fix). A damaged one is fetched again from ``sources`` (the rule's mirrors and
    network settings) and the rule goes on with the pinned bytes; where that fails, ``IntegrityError``
    names the file, the cause and ``snakemake --cores all <your target> --forcerun <rule>``
    (``download.fetch.check_pinned``)."""
    manifest = load_manifest()
    for path in paths:
        check_pinned(path, manifest, rule=rule, sources=sources)


def paperfigs_fig8(
    pdf: str,
    notebook: str,
    *,
    n_boot: int,
    seed: int,
    points_csv: str,
    fits_csv: str,
    summary_json: str,
    sources: dict | None = None,
) -> dict:
    """Rule paperfigs_fig8: Fig. 8a's points, the overlap fits, the notebook's fit, the reading summary.
    The PDF and the notebook are checked against their pins first (``check_inputs``)."""
    check_inputs([pdf, notebook], "paperfigs_fig8", sources)
    df, summary = read_fig8a(pdf)
    fits = overlap_fits(df, n_boot=n_boot, seed=seed)
    nb = read_fit_notebook(notebook)
    summary = {
        "fig8a": summary,
        "notebook": {
            k: nb[k] for k in ("alpha", "A", "B", "err_slope", "final_loss", "iterations", "groups")
        },
        "n_notebook_models": len(nb["model_names"]),
    }
    write_table(df, points_csv)
    write_table(fits, fits_csv)
    write_json(summary_json, summary)
    return summary


def paperfigs_fig8b(
    pdf: str,
    notebook: str,
    *,
    n_boot: int,
    seed: int,
    points_csv: str,
    fits_csv: str,
    summary_json: str,
    sources: dict | None = None,
) -> dict:
    """Rule paperfigs_fig8b: Fig. 8b's 108 points read by the drawing-model fit, their losses (model part +
    the notebook's B_g), the notebook's procedure rerun on them, the converged refits and the stationarity
    check of the printed fit. The PDF and the notebook are checked against their pins first."""
    check_inputs([pdf, notebook], "paperfigs_fig8b", sources)
    nb = read_fit_notebook(notebook)
    pts, read = read_fig8b(pdf, nb["model_classes"], nb["data_names"], prior=(nb["A"], nb["alpha"]))
    df = unplottable(losses(pts, nb["B"]), nb["alpha"], nb["A"], nb["err_slope"])
    shown = df[df["plotted"]]
    fits = refits(shown, n_boot=n_boot, seed=seed)
    # the sensitivity fit: the left-out points at the value the notebook's fit implies for them
    implied = df.assign(
        model_part=df["model_part"].where(df["plotted"], df["implied_model_part"]),
    )
    implied["loss"] = implied["model_part"] + implied["group"].map(nb["B"])
    sens = (
        refits(implied, n_boot=0, seed=seed)
        .iloc[[0]]
        .assign(subset="all, left-out points at their implied value")
    )
    fits = pd.concat([fits, sens], ignore_index=True)
    rerun = notebook_fit(shown, nb["groups"])
    rerun_implied = notebook_fit(implied, nb["groups"])
    stat = stationarity(df, nb["alpha"], nb["A"])
    left_out = df[~df["plotted"]]
    summary = {
        "read": {**read, "plotted": int(len(shown))},
        "notebook_rerun": rerun,
        "notebook_rerun_implied": rerun_implied,
        "printed": {"alpha": nb["alpha"], "A": nb["A"], "final_loss": nb["final_loss"]},
        "stationarity": {
            "groups_within_0.01": int((stat["mean_residual"].abs() <= 0.01).sum()),
            "n_groups": len(stat),
            "by_group": dict(zip(stat["group"], stat["mean_residual"].round(5))),
        },
        "left_out": [
            {
                "model": r.model,
                "dataset": r.dataset,
                "m": int(r.m),
                "read": float(r.model_part),
                "implied": float(r.implied_model_part),
                "why": r.excluded_why,
            }
            for r in left_out.itertuples()
        ],
        "err_slope_parts": {**slope_error_parts(df, nb["alpha"], nb["A"]), "printed": nb["err_slope"]},
    }
    write_table(df, points_csv)
    write_table(fits, fits_csv)
    write_json(summary_json, summary)
    return summary


def paperfigs_toy(
    fig4_pdf: str,
    fig6_pdf: str,
    fig5_pdf: str,
    fig1_pdf: str,
    *,
    fig4b_csv: str,
    fig6e_csv: str,
    fig5b_csv: str,
    fig1_csv: str,
    summary_json: str,
    sources: dict | None = None,
) -> dict:
    """Rule paperfigs_toy: Fig. 4b's heat map decoded, Figs. 6e's and 5b's points read, with the
    cross-checks (4b against 6e; 5b against the 6e points at the same cells), and Fig. 1b/1d's losses.
    The PDFs are checked against their pins first."""
    check_inputs([fig4_pdf, fig6_pdf, fig5_pdf, fig1_pdf], "paperfigs_toy", sources)
    f4, s4 = read_fig4b(fig4_pdf)
    f6, s6 = read_fig6e(fig6_pdf)
    f5, s5 = read_fig5b(fig5_pdf)
    f1, s1 = read_fig1(fig1_pdf)
    key = ["gamma", "alpha_grid"]
    on6 = f5.assign(alpha_grid=(f5["alpha"] / 0.125).round() * 0.125).merge(
        f6.assign(alpha_grid=(f6["alpha"] / 0.125).round() * 0.125), on=key, suffixes=("_5b", "_6e")
    )
    s5["cross_check_6e"] = {
        "n_cells": len(on6),
        "max_abs_diff": float((on6["alpha_m_5b"] - on6["alpha_m_6e"]).abs().max()) if len(on6) else None,
        "max_err_diff": float((on6["alpha_m_err_5b"] - on6["alpha_m_err_6e"]).abs().max())
        if len(on6)
        else None,
    }
    # Fig. 6e's α read off the drawing (to ~1e-5) is put on the paper's grid of 0.125 for the cross-check
    key6 = f6.assign(alpha=(f6["alpha"] / 0.125).round() * 0.125)
    both = key6.merge(f4, on=["gamma", "alpha"], suffixes=("_6e", "_4b"))
    if both.empty:
        raise ValueError("Fig. 4b and Fig. 6e share no (γ, α) cell; the readings are not the pinned figures")
    diff = (both["alpha_m_6e"] - both["alpha_m_4b"]).abs()
    summary = {
        "fig4b": s4,
        "fig6e": s6,
        "fig5b": s5,
        "fig1": s1,
        "cross_check": {
            "n_cells": len(both),
            "max_abs_diff": float(diff.max()),
            "median_abs_diff": float(diff.median()),
        },
    }
    write_table(f4, fig4b_csv)
    write_table(f6, fig6e_csv)
    write_table(f5, fig5b_csv)
    write_table(f1, fig1_csv)
    write_json(summary_json, summary)
    return summary


def paperfigs_regimes(
    fig3_pdf: str,
    fig4_pdf: str,
    fig5_pdf: str,
    fig6_pdf: str,
    fig7_pdf: str,
    *,
    tables: dict,
    summary_json: str,
    sources: dict | None = None,
) -> dict:
    """Rule paperfigs_regimes: the points of Figs. 3a/3b, 4a (bars), 5a, 6c/6d and 7a/7b (``tables``: name -> csv path, the
    names of ``outputs.REGIMES_TABLES``) and one summary per figure (counts, tick residuals, decoding
    errors, the panels' inferred settings). The PDFs are checked against their pins first."""
    check_inputs([fig3_pdf, fig4_pdf, fig5_pdf, fig6_pdf, fig7_pdf], "paperfigs_regimes", sources)
    a3, b3, s3 = read_fig3(fig3_pdf)
    b4, s4 = read_fig4a(fig4_pdf)
    p5, s5 = read_fig5a(fig5_pdf)
    c6, s6c = read_fig6c(fig6_pdf)
    d6, s6d = read_fig6d(fig6_pdf)
    a7, b7, s7 = read_fig7(fig7_pdf)
    frames = {
        "fig3a": a3,
        "fig3b": b3,
        "fig4a": b4,
        "fig5a": p5,
        "fig6c": c6,
        "fig6d": d6,
        "fig7a": a7,
        "fig7b": b7,
    }
    for name, df in frames.items():
        write_table(df, tables[name])
    summary = {"fig3": s3, "fig4a": s4, "fig5a": s5, "fig6c": s6c, "fig6d": s6d, "fig7": s7}
    write_json(summary_json, summary)
    return summary
