"""The base of a law as one small class: what it declares, and the one generic fit of such a law.

A law declares its ``name`` and ``params``, how lmfit fits it (``method``, ``options``), its parameters
with starts and bounds for given data (``parameters``), its prediction (``predict``) and, where it has
one, the analytic Jacobian of its residual (``jacobian``). The residual is on the scale the law names:
``linear`` (L̂ − L) or ``log`` (log L − log L̂). :func:`fit` runs lmfit on any such law;
:func:`depthwidth.laws.resample.bootstrap` resamples the data over a named unit and refits.

The sums of power laws of :mod:`depthwidth.laws.law` (the decomposed and the Chinchilla law) have their
own fitter, :class:`depthwidth.laws.lawfit.LawFit`, with the same methods (``residual``, ``jacobian``,
``values``, ``stderrs``), multi-start fits, offsets per group, fixed parameters and the Huber loss.
"""

from __future__ import annotations

import lmfit
import numpy as np

from depthwidth.laws.law import FitData

# Log residual of a row whose prediction is not positive and finite (a trial step can leave the domain).
NON_FINITE_RESIDUAL = 1e3


def log_residual(loss: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """log L − log L̂ per row, ``NON_FINITE_RESIDUAL`` where L̂ is not positive and finite (a trial step can
    leave the domain): the residual of every law fitted on the log scale."""
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.log(loss) - np.log(pred)
    return np.where(np.isfinite(r), r, NON_FINITE_RESIDUAL)


class Law:
    """A law fitted with lmfit. Subclass it and set ``name``, ``params``, ``method`` (lmfit's), ``options``
    (keyword arguments of ``lmfit.minimize``) and ``scale`` (``linear`` or ``log`` residual), and write
    ``parameters(d)`` and ``predict(v, d)``; ``jacobian(p, d)`` where the law has an analytic one."""

    name: str = ""
    params: tuple[str, ...] = ()
    method: str = "least_squares"
    options: dict = {}
    scale: str = "linear"

    def parameters(self, d: FitData) -> lmfit.Parameters:
        """lmfit parameters with their starts and bounds for the data ``d``."""
        raise NotImplementedError(f"law {self.name!r} declares no parameters")

    def predict(self, v: dict, d: FitData) -> np.ndarray:
        """The law's value at every row of ``d`` from parameter values ``v`` (by lmfit name)."""
        raise NotImplementedError(f"law {self.name!r} declares no prediction")

    def residual(self, p: lmfit.Parameters, d: FitData) -> np.ndarray:
        """``linear``: L̂ − L; ``log``: log L − log L̂ (:func:`log_residual`)."""
        pred = self.predict({k: q.value for k, q in p.items()}, d)
        return pred - d.loss if self.scale == "linear" else log_residual(d.loss, pred)

    jacobian = None

    def values(self, res, d: FitData) -> dict[str, float]:
        """The fitted value of each of ``params``."""
        return {k: float(res.params[k].value) for k in self.params}

    def stderrs(self, res, d: FitData) -> dict[str, float | None]:
        """lmfit's standard errors from the covariance (None where not estimated)."""
        out = {}
        for k in self.params:
            se = res.params[k].stderr
            out[k] = float(se) if se is not None and np.isfinite(se) else None
        return out


def fit(law: Law, d: FitData, params: lmfit.Parameters | None = None) -> lmfit.minimizer.MinimizerResult:
    """The fit of ``law`` to ``d`` by lmfit (``law.method``, ``law.options``), from ``params`` or the law's
    own starts, with its analytic Jacobian where it has one. The result has ``params`` (values and
    stderr), ``covar``, ``residual``, ``chisqr``, ``redchi`` and ``success``."""
    if law.jacobian is not None and law.method != "least_squares":
        raise ValueError(f"law {law.name!r}: an analytic Jacobian needs method least_squares")
    extra = {"jac": law.jacobian} if law.jacobian is not None else {}
    return lmfit.minimize(
        law.residual,
        params if params is not None else law.parameters(d),
        args=(d,),
        method=law.method,
        **law.options,
        **extra,
    )
