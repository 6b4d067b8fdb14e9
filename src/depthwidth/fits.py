"""One power-law fit for every stage: y = c · x^(−exponent), ordinary least squares on (log x, log y)."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def power_law_fit(x, y, drop_invalid: bool = False) -> dict:
    """Fit log y = log_c − exponent · log x by OLS (``scipy.stats.linregress``).

    Returns ``{"exponent", "stderr", "log_c", "n_points", "n_x", "x_min", "x_max"}``: ``stderr`` is the
    OLS standard error of the slope (NaN with fewer than 3 distinct x), ``n_x`` the number of distinct x.
    Points with a non-positive or non-finite x or y are an error naming them, unless ``drop_invalid``
    (then they are left out and not counted). Fewer than 2 distinct x give NaN exponent and log_c.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape:
        raise ValueError(f"power_law_fit: x has shape {x.shape} but y has {y.shape}")
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    if not ok.all():
        if not drop_invalid:
            raise ValueError(
                "a power law needs positive, finite values; got "
                f"x={x[~ok].tolist()} y={y[~ok].tolist()} at positions {np.flatnonzero(~ok).tolist()}"
            )
        x, y = x[ok], y[ok]
    n_x = int(np.unique(x).size)
    out = {
        "exponent": math.nan,
        "stderr": math.nan,
        "log_c": math.nan,
        "n_points": int(x.size),
        "n_x": n_x,
        "x_min": float(x.min()) if x.size else math.nan,
        "x_max": float(x.max()) if x.size else math.nan,
    }
    if n_x < 2:
        return out
    res = stats.linregress(np.log(x), np.log(y))
    out["exponent"], out["log_c"] = float(-res.slope), float(res.intercept)
    if n_x >= 3:
        out["stderr"] = float(res.stderr)
    return out
