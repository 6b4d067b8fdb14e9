"""The rules that read the paper's figures: each reads its pinned files and writes its tables and summary.

- ``paperfigs_fig8``: rule paperfigs_fig8, Fig. 8a's overlaps and their fits, the fit notebook's outputs.
- ``paperfigs_fig8b``: rule paperfigs_fig8b, Fig. 8b's 108 losses and the width law refitted on them.
- ``paperfigs_toy``: rule paperfigs_toy, Fig. 4b's heat map, Figs. 6e's and 5b's points, Fig. 1b/1d's losses.
"""

from __future__ import annotations

from depthwidth.integrity import write_json, write_table
from depthwidth.paperfigs.fig1 import read_fig1
from depthwidth.paperfigs.fig4 import read_fig4b
from depthwidth.paperfigs.fig6 import read_fig5b, read_fig6e
from depthwidth.paperfigs.fig8 import overlap_fits, read_fig8a
from depthwidth.paperfigs.fig8b import read_fig8b
from depthwidth.paperfigs.fig8fit import losses, notebook_fit, refits, stationarity
from depthwidth.paperfigs.notebook import read_fit_notebook


def paperfigs_fig8(
    pdf: str, notebook: str, *, n_boot: int, seed: int, points_csv: str, fits_csv: str, summary_json: str
) -> dict:
    """Rule paperfigs_fig8: Fig. 8a's points, the overlap fits, the notebook's fit, the reading summary."""
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
    pdf: str, notebook: str, *, n_boot: int, seed: int, points_csv: str, fits_csv: str, summary_json: str
) -> dict:
    """Rule paperfigs_fig8b: Fig. 8b's 108 points read by the drawing-model fit, their losses (model part +
    the notebook's B_g), the notebook's procedure rerun on them, the converged refits and the stationarity
    check of the printed fit."""
    nb = read_fit_notebook(notebook)
    pts, read = read_fig8b(pdf, nb["model_classes"], nb["data_names"], prior=(nb["A"], nb["alpha"]))
    df = losses(pts, nb["B"])
    fits = refits(df, n_boot=n_boot, seed=seed)
    rerun = notebook_fit(df, nb["groups"])
    stat = stationarity(df, nb["alpha"], nb["A"])
    summary = {
        "read": read,
        "notebook_rerun": rerun,
        "printed": {"alpha": nb["alpha"], "A": nb["A"], "final_loss": nb["final_loss"]},
        "stationarity": {
            "groups_within_0.01": int((stat["mean_residual"].abs() <= 0.01).sum()),
            "n_groups": len(stat),
            "by_group": dict(zip(stat["group"], stat["mean_residual"].round(5))),
        },
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
) -> dict:
    """Rule paperfigs_toy: Fig. 4b's heat map decoded, Figs. 6e's and 5b's points read, with the
    cross-checks (4b against 6e; 5b against the 6e points at the same cells), and Fig. 1b/1d's losses."""
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
