"""The log-log line on replicated points (several seeds per width): its exponent's bootstrap over a named
unit and the lack-of-fit F-test of the line against the means at each x. The line itself is
``depthwidth.laws.loglog``; these live apart so that the fits that do not need them keep their code."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def power_law_bootstrap(x, y, unit, n_resamples: int, seed: int = 0) -> np.ndarray:
    """The exponent of the log-log line refitted on ``n_resamples`` resamples over ``unit`` (a label per
    point, e.g. the seed of each cell: every point of a drawn label comes along,
    ``depthwidth.laws.resample.resample_indices``). Invalid points are left out as with
    ``drop_invalid``; a resample with fewer than 2 distinct x gives NaN."""
    from depthwidth.laws.resample import resample_indices

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    x, y, unit = x[ok], y[ok], np.asarray(unit)[ok]
    lx, ly = np.log(x), np.log(y)
    rng = np.random.default_rng(seed)
    out = np.full(n_resamples, np.nan)
    for b in range(n_resamples):
        i = resample_indices(len(x), rng, unit)
        xi = lx[i]
        if np.unique(xi).size < 2:
            continue
        xc = xi - xi.mean()
        out[b] = -float((xc * (ly[i] - ly[i].mean())).sum() / (xc * xc).sum())
    return out


def lack_of_fit(x, y) -> dict:
    """The F-test of the log-log line against one mean per distinct x (replicates, e.g. seeds, give the
    pure error): F = (SS_lack / (k − 2)) / (SS_pure / (N − k)), k distinct x, N points; its p-value, and
    the exponent and OLS standard error of the line fitted to the k means of log y (the width means).
    NaN where k < 3 or there are no replicates."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    lx, ly = np.log(x[ok]), np.log(y[ok])
    out = {
        "lof_F": math.nan,
        "lof_p": math.nan,
        "lof_df": (0, 0),
        "means_exponent": math.nan,
        "means_stderr": math.nan,
    }
    xs, inv = np.unique(lx, return_inverse=True)
    k, n = len(xs), len(lx)
    if k < 3:
        return out
    means = np.bincount(inv, weights=ly) / np.bincount(inv)
    res_m = stats.linregress(xs, means)
    out["means_exponent"], out["means_stderr"] = float(-res_m.slope), float(res_m.stderr)
    if n <= k:
        return out
    res = stats.linregress(lx, ly)
    ss_resid = float(((ly - (res.intercept + res.slope * lx)) ** 2).sum())
    ss_pure = float(((ly - means[inv]) ** 2).sum())
    ss_lack = ss_resid - ss_pure
    df1, df2 = k - 2, n - k
    if ss_pure <= 0:
        return out
    F = (ss_lack / df1) / (ss_pure / df2)
    out.update({"lof_F": float(F), "lof_p": float(stats.f.sf(F, df1, df2)), "lof_df": (df1, df2)})
    return out
