"""Depth exponents of the depth toy: the test loss of students of depth ℓ is fitted as L = c · ℓ^(−α_ℓ) by
least squares on log L vs log ℓ (``depthwidth.laws.loglog.power_law_fit``; all replicates pooled). The standard
error of α_ℓ is the OLS one, so it includes the scatter between replicates and around the power law.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from depthwidth.laws.loglog import power_law_fit


def fit_depth_exponent(depths, losses) -> dict:
    """L = c · ℓ^(−α) on (depth, loss) points. Returns the columns of exponents.csv: alpha, alpha_se (NaN with
    fewer than 3 distinct depths), log_c, n_points, n_depths. Non-positive losses are an error."""
    fit = power_law_fit(depths, losses)
    return {
        "alpha": fit["exponent"],
        "alpha_se": fit["stderr"],
        "log_c": fit["log_c"],
        "n_points": fit["n_points"],
        "n_depths": fit["n_x"],
    }


def exponents(runs: pd.DataFrame, by: tuple[str, ...] = ()) -> pd.DataFrame:
    """α_ℓ ± SE per (kind, variant, temperature, *by) from ``runs`` (columns RUN_COLUMNS, plus ``by``)."""
    rows = []
    keys = ["kind", "variant", "temperature", *by]
    key = runs.assign(temperature=runs["temperature"].fillna(-1.0))
    for (kind, variant, temp, *extra), grp in key.groupby(keys, sort=True):
        fit = fit_depth_exponent(grp["depth"], grp["test_loss"])
        rows.append(
            {
                "kind": kind,
                "variant": variant,
                "temperature": np.nan if temp < 0 else temp,
                **dict(zip(by, extra)),
                "replicates": grp["replicate"].nunique(),
                **fit,
            }
        )
    return pd.DataFrame(rows)


def exponent_trajectory(curves: pd.DataFrame) -> pd.DataFrame:
    """α_ℓ ± SE per (kind, variant, temperature) at every evaluated training step, from ``curves`` with
    columns kind, variant, temperature, replicate, depth, step, test_loss (every student's test curve).
    Shows whether the exponent has settled: a student far from convergence has a rising α_ℓ."""
    cols = ["kind", "variant", "temperature", "step", "alpha", "alpha_se"]
    if curves.empty:
        return pd.DataFrame(columns=cols)
    ex = exponents(curves, by=("step",))
    return ex.loc[ex["n_depths"] >= 2, cols].reset_index(drop=True)


def combined_exponent(ex: pd.DataFrame, kind: str, variant: str) -> tuple[float, float, int]:
    """Inverse-variance weighted mean α_ℓ over the temperatures of (kind, variant), with its SE and the
    number of fits (one fit without SE: its value and NaN)."""
    sel = ex[(ex["kind"] == kind) & (ex["variant"] == variant) & np.isfinite(ex["alpha"])]
    if sel.empty:
        return float("nan"), float("nan"), 0
    se = sel["alpha_se"].to_numpy()
    if len(sel) == 1 or not np.isfinite(se).all() or (se <= 0).any():
        a = sel["alpha"].to_numpy()
        err = float(a.std(ddof=1) / np.sqrt(len(a))) if len(a) > 1 else float(se[0])
        return float(a.mean()), err, len(sel)
    w = 1 / se**2
    return float((w * sel["alpha"]).sum() / w.sum()), float(1 / np.sqrt(w.sum())), len(sel)
