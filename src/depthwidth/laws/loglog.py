"""The log-log line: y = c · x^(−exponent) fitted by ordinary least squares on (log x, log y), with the OLS
standard error of the slope. The fit of every exponent read off a straight line on log-log axes
(superposition's α_m, the depth toy's α_ℓ, the LM-head overlaps and the token frequencies)."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


class LogLogLine:
    """log y = log_c − exponent · log x by OLS (``scipy.stats.linregress``). ``fit`` returns
    ``{"exponent", "stderr", "log_c", "n_points", "n_x", "x_min", "x_max"}``."""

    name = "loglog"
    params = ("exponent", "log_c")

    def predict(self, v: dict, x) -> np.ndarray:
        """y = exp(log_c) · x^(−exponent)."""
        return np.exp(v["log_c"]) * np.asarray(x, dtype=np.float64) ** (-v["exponent"])

    def fit(self, x, y, drop_invalid: bool = False) -> dict:
        """``stderr`` is the OLS standard error of the slope (NaN with fewer than 3 distinct x), ``n_x`` the
        number of distinct x. Points with a non-positive or non-finite x or y are an error naming them,
        unless ``drop_invalid`` (then they are left out and not counted). Fewer than 2 distinct x give NaN
        exponent and log_c."""
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


LOGLOG = LogLogLine()


def power_law_fit(x, y, drop_invalid: bool = False) -> dict:
    """The log-log line fitted to (x, y): ``LOGLOG.fit``."""
    return LOGLOG.fit(x, y, drop_invalid)


def linear_r2(y, columns) -> float:
    """R² of the OLS regression of ``y`` on ``columns`` (a list of arrays, the first a constant where an
    intercept is wanted): 1 − Σ resid² / Σ (y − ȳ)², NaN where y is constant."""
    X = np.column_stack(columns)
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ coef
    ss = float(((y - y.mean()) ** 2).sum())
    return 1.0 - float((resid**2).sum()) / ss if ss > 0 else float("nan")
