"""The plain power law y = c · x^(−α), fitted by lmfit on the log residual log y − log ŷ with its analytic
Jacobian: the same estimate as the log-log line's OLS (the residual is linear in log c and α), with what
the layer gives every lmfit law (a bootstrap over a named unit, fixed starts)."""

from __future__ import annotations

import lmfit
import numpy as np

from depthwidth.laws.law import FitData
from depthwidth.laws.model import Law


class PlainPowerLaw(Law):
    """y = c · x^(−α) on ``FitData`` m (x) and loss (y); parameters ``log_c`` and ``alpha``, started at the
    line through the extreme points on log-log axes."""

    name = "power"
    params = ("log_c", "alpha")
    scale = "log"
    options = {"ftol": 1e-15, "xtol": 1e-15, "gtol": 1e-15}

    def parameters(self, d: FitData) -> lmfit.Parameters:
        lx, ly = np.log(d.m), np.log(d.loss)
        lo, hi = int(np.argmin(lx)), int(np.argmax(lx))
        slope = (ly[hi] - ly[lo]) / (lx[hi] - lx[lo]) if lx[hi] > lx[lo] else -1.0
        p = lmfit.Parameters()
        p.add("log_c", value=float(ly[lo] - slope * lx[lo]))
        p.add("alpha", value=float(-slope))
        return p

    def predict(self, v: dict, d: FitData) -> np.ndarray:
        return np.exp(v["log_c"]) * d.m ** (-v["alpha"])

    def jacobian(self, p: lmfit.Parameters, d: FitData) -> np.ndarray:
        """∂(log y − log c + α log x)/∂(log c, α) = (−1, log x), columns of the varying parameters."""
        cols = {"log_c": -np.ones(len(d)), "alpha": np.log(d.m)}
        return np.stack([cols[k] for k, q in p.items() if q.vary], axis=1)


POWER = PlainPowerLaw()
