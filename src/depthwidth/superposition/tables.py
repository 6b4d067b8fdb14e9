"""cells.csv and exponents.csv from every trained cell (rule superposition_tables)."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
from safetensors.numpy import load_file

from depthwidth.laws.loglog import power_law_fit
from depthwidth.laws.replicates import lack_of_fit, power_law_bootstrap
from depthwidth.superposition.analysis import cell_metrics, mean_sq_overlap, row_norms, theory_exponent
from depthwidth.superposition.data import feature_probabilities
from depthwidth.integrity import check_sealed, write_table
from depthwidth.superposition.grid import parse_distribution
from depthwidth.superposition.grid import alpha_of, parse_cell_path

log = logging.getLogger("depthwidth.superposition")

#: the rules that write a cell's files and the tables (named in the fix when a consumer finds one damaged)
TRAIN_RULE = "superposition_train"
TABLES_RULE = "superposition_tables"
#: the columns of cells.csv and exponents.csv the section reads (checked with the recorded row counts)
CELL_COLUMNS = (
    "distribution",
    "alpha",
    "gamma",
    "n",
    "m",
    "seed",
    "steps",
    "final_loss",
    "represented_fraction",
)
EXPONENT_COLUMNS = ("distribution", "alpha", "gamma", "n", "exponent", "stderr", "theory", "regime")


def load_cell(path: str) -> dict:
    """A cell's model.safetensors (W, b, loss_curve), after checking the seal rule superposition_train wrote
    (a truncated or damaged file stops the caller with the file and the fix named)."""
    check_sealed(path, TRAIN_RULE)
    return load_file(path)


#: E[x_i² | feature i active] for x_i ~ U(0, 2)
ACTIVE_SECOND_MOMENT = 4.0 / 3.0


def paper_measures(W: np.ndarray, dist: str, norm_threshold: float) -> dict:
    """Measures the paper plots beyond cell_metrics: the strong representation fraction φ_1 (Fig. 6c: rows
    with ‖W_i‖ > 1), the mean square overlap of those strongly represented rows (Fig. 6d: its values equal
    this, not the overlap of all represented rows, on our paper-setting cells) and the loss by unlearned
    features (Fig. 5a: the per-element MSE a model that outputs 0 for every feature with
    ‖W_i‖ ≤ ``norm_threshold`` pays on them, E[x²|active]·Σ_unlearned p_i / n, in the unit of final_loss)."""
    norms = row_norms(W)
    p = feature_probabilities(dist, len(norms)).numpy()
    unlearned = float(p[norms <= norm_threshold].sum())
    return {
        "strong_represented_fraction": float((norms > 1.0).mean()),
        "strong_mean_sq_overlap": mean_sq_overlap(W, 1.0),
        "loss_unlearned": ACTIVE_SECOND_MOMENT * unlearned / len(norms),
    }


def cells_table(model_paths: list[str], analysis: dict) -> pd.DataFrame:
    """cells.csv: one row per trained cell (path fields parsed from the model path)."""
    rows = []
    window = int(analysis["final_window"])
    for p in model_paths:
        c = parse_cell_path(p)
        t = load_cell(p)
        W, losses = t["W"], t["loss_curve"]
        met = cell_metrics(
            W, losses, min(window, len(losses)), analysis["norm_threshold"], analysis["etf_factor"]
        )
        met.update(paper_measures(W, c["dist"], analysis["norm_threshold"]))
        if analysis["loss_summed_over_features"]:  # the paper's exp-17 unit: summed over the n features
            for k in ("final_loss", "final_loss_err", "loss_unlearned"):
                met[k] *= c["n"]
        rows.append(
            {
                "distribution": c["dist"],
                "alpha": alpha_of(c["dist"]),
                "density": parse_distribution(c["dist"]).density,
                "gamma": c["gamma"],
                "n": c["n"],
                "m": c["m"],
                "seed": c["seed"],
                "steps": len(losses),
                **met,
            }
        )
    df = pd.DataFrame(rows)
    return df.sort_values(["distribution", "gamma", "m", "seed"]).reset_index(drop=True)


def min_fit_width(dist: str, analysis: dict) -> int:
    """The smallest width in the fit of law ``dist``: its ``fit_min_width_by_law`` entry, else
    ``fit_min_width`` (null: every width)."""
    by_law = analysis["fit_min_width_by_law"]
    law = parse_distribution(dist).law
    return int(by_law[law]) if law in by_law else int(analysis["fit_min_width"] or 0)


def exponents_table(cells_df: pd.DataFrame, analysis: dict) -> pd.DataFrame:
    """exponents.csv: one loss-vs-width fit per (distribution, gamma, n) over the widths in
    [fit_min_width, fit_max_width] (``fit_min_width_by_law`` overrides the lower end per law), seeds
    pooled, with the theory line for comparison; its bootstrap over seeds (``analysis.n_boot`` resamples:
    sd, percentile 95 % interval; ``boot_*``) and over widths (each width with all its seeds drawn
    together, ``wboot_*``: it carries the line's lack of fit, which resampling seeds does not), the line
    fitted to the width means (its OLS error) and the lack-of-fit F-test of the pooled line against the
    width means (``lof_p``)."""
    hi = analysis["fit_max_width"] or np.inf
    rows = []
    for (dist, gamma, n), g in cells_df.groupby(["distribution", "gamma", "n"], sort=True):
        lo = min_fit_width(dist, analysis)
        sel = g[(g.m >= lo) & (g.m <= hi)]
        fit = power_law_fit(sel.m, sel.final_loss, drop_invalid=True)
        boots = power_law_bootstrap(sel.m, sel.final_loss, sel.seed, int(analysis["n_boot"]), seed=0)
        boots = boots[np.isfinite(boots)]
        # over widths (each width with all its seeds): the error that carries the line's lack of fit
        wboots = power_law_bootstrap(sel.m, sel.final_loss, sel.m, int(analysis["n_boot"]), seed=0)
        wboots = wboots[np.isfinite(wboots)]
        lof = lack_of_fit(sel.m, sel.final_loss)
        alpha = alpha_of(dist)
        rows.append(
            {
                "distribution": dist,
                "alpha": alpha,
                "gamma": gamma,
                "n": n,
                "exponent": fit["exponent"],
                "stderr": fit["stderr"],
                "intercept": fit["log_c"],
                "m_min": fit["x_min"],
                "m_max": fit["x_max"],
                "n_points": fit["n_points"],
                "theory": theory_exponent(alpha, gamma),
                "regime": "strong" if gamma < 0 else ("weak" if gamma > 0 else "mixed"),
                "mean_represented_fraction": float(sel.represented_fraction.mean()),
                "n_seeds": int(sel.seed.nunique()),
                "boot_sd": float(np.std(boots, ddof=1)) if len(boots) > 1 else np.nan,
                "boot_lo": float(np.percentile(boots, 2.5)) if len(boots) else np.nan,
                "boot_hi": float(np.percentile(boots, 97.5)) if len(boots) else np.nan,
                "boot_resamples": int(len(boots)),
                "n_widths": int(sel.m.nunique()),
                "wboot_sd": float(np.std(wboots, ddof=1)) if len(wboots) > 1 else np.nan,
                "wboot_lo": float(np.percentile(wboots, 2.5)) if len(wboots) else np.nan,
                "wboot_hi": float(np.percentile(wboots, 97.5)) if len(wboots) else np.nan,
                "wboot_resamples": int(len(wboots)),
                "means_exponent": lof["means_exponent"],
                "means_stderr": lof["means_stderr"],
                "lof_F": lof["lof_F"],
                "lof_p": lof["lof_p"],
            }
        )
    return pd.DataFrame(rows)


def superposition_tables(model_paths: list[str], analysis: dict, cells_csv: str, exponents_csv: str) -> None:
    """Write cells.csv and exponents.csv for the given cell files."""
    cells = cells_table(model_paths, analysis)
    exps = exponents_table(cells, analysis)
    # sealed with their row counts: rule superposition_section checks them before use
    write_table(cells, cells_csv)
    write_table(exps, exponents_csv)
    log.info("%d cells, %d fits written", len(cells), len(exps))
