"""The decomposed scaling law L = c_m/m^α_m + c_ℓ/ℓ^α_ℓ + c_D/D^α_D + L0 and the points it is fitted to.

Units follow Liu et al. (2026): m = d_model · width_scale, ℓ = n_layers · depth_scale (100 by default),
D = tokens · tokens_scale (1e-6 by default).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

PARAMS = ("c_m", "alpha_m", "c_l", "alpha_l", "c_D", "alpha_D", "L0")
# Bounds of the fitted exponents α_m, α_ℓ, α_D.
ALPHA_BOUNDS = (1e-3, 10.0)
# Liu et al.'s starting point (their Adam fit starts here; lmfit's first start too).
PAPER_INIT = {
    "c_m": 200.0,
    "alpha_m": 1.0,
    "c_l": 200.0,
    "alpha_l": 1.0,
    "c_D": 10.0,
    "alpha_D": 0.33,
    "L0": 1.69,
}


def decomposed_law(m, ell, D, c_m, alpha_m, c_l, alpha_l, c_D, alpha_D, L0):
    """Loss (nats/token) of the decomposed law; m, ell, D already in fit units (``L0`` may be an array:
    one offset per row)."""
    return c_m * m ** (-alpha_m) + c_l * ell ** (-alpha_l) + c_D * D ** (-alpha_D) + L0


@dataclass
class FitData:
    """Arrays in fit units: m (width), ell (depth), D (tokens), loss (nats/token), all shape (n,)."""

    m: np.ndarray
    ell: np.ndarray
    D: np.ndarray
    loss: np.ndarray

    def take(self, idx) -> "FitData":
        return FitData(self.m[idx], self.ell[idx], self.D[idx], self.loss[idx])

    def __len__(self) -> int:
        return len(self.loss)


def kept_mask(loss: np.ndarray, drop_highest: int) -> np.ndarray:
    """Rows Liu et al. keep when they leave out the ``drop_highest`` = k highest-loss points: loss strictly
    below the k-th largest (so ties at the cut go too; k = 0 keeps every row)."""
    loss = np.asarray(loss, float)
    if drop_highest <= 0:
        return np.ones(len(loss), bool)
    if drop_highest >= len(loss):
        raise ValueError(f"dropping the {drop_highest} highest-loss points leaves none (have {len(loss)})")
    return loss < np.sort(loss)[-drop_highest]


def select_points(
    points: pd.DataFrame,
    drop_highest: int,
    width_scale: float,
    depth_scale: float,
    tokens_scale: float,
    depth_offset: float = 0.0,
) -> FitData:
    """Drop the ``drop_highest`` highest-loss points (``kept_mask``) and convert to fit units.
    ``depth_offset`` = −2 gives the variant without embedding and head layers."""
    loss = points["loss"].to_numpy(float)
    keep = kept_mask(loss, drop_highest)
    layers = points["n_layers"].to_numpy(float)[keep] + depth_offset
    if (layers <= 0).any():
        raise ValueError(f"depth offset {depth_offset} makes some depths non-positive")
    return FitData(
        m=points["d_model"].to_numpy(float)[keep] * width_scale,
        ell=layers * depth_scale,
        D=points["tokens"].to_numpy(float)[keep] * tokens_scale,
        loss=loss[keep],
    )


def law_values(params) -> dict[str, float]:
    """Every parameter's value from lmfit ``Parameters`` whose coefficients are fitted as ``log_c_*``:
    c = exp(log c) computed here, not by lmfit's expression evaluator, which ``valuesdict`` runs again on
    every access (the same number: both are numpy's exp)."""
    v = {k: p.value for k, p in params.items() if p.expr is None}
    for c in ("c_m", "c_l", "c_D"):
        v[c] = np.exp(v[f"log_{c}"])
    return v


def log_residual_jacobian(params, m, ell, D, pred, offset_rows: dict[str, np.ndarray]) -> np.ndarray:
    """Jacobian of the log residual log L − log L̂ of :func:`decomposed_law` with respect to lmfit's varying
    parameters, in their order: (n, n_varying).

    ``params``: the lmfit ``Parameters`` at the current point, with coefficients as ``log_c_m``,
    ``log_c_l``, ``log_c_D`` (c = exp(log c)), exponents ``alpha_*`` and offsets; ``pred``: L̂ at that point
    (rows where it is not positive and finite, which a residual replaces by a constant, get zero rows);
    ``offset_rows``: each offset's lmfit name -> the rows it applies to (bool, or 1.0 for every row).
    With c·x^(−α) the term of one factor: ∂L̂/∂log c = c·x^(−α), ∂L̂/∂α = −c·x^(−α)·log x, ∂L̂/∂L0 = 1 on
    its rows, and ∂(log L − log L̂)/∂θ = −(∂L̂/∂θ)/L̂. Replaces lmfit's two-point differences (one extra
    evaluation per parameter and iteration)."""
    v = law_values(params)
    columns = {}
    for c, a, x in (("c_m", "alpha_m", m), ("c_l", "alpha_l", ell), ("c_D", "alpha_D", D)):
        term = v[c] * x ** (-v[a])
        columns[f"log_{c}"] = term
        columns[a] = -term * np.log(x)
    for name, rows in offset_rows.items():
        columns[name] = np.broadcast_to(np.asarray(rows, float), pred.shape)
    names = [k for k, p in params.items() if p.vary]
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(np.isfinite(pred) & (pred > 0), -1.0 / pred, 0.0)
    return np.stack([columns[k] * scale for k in names], axis=1)


def best_of_starts(residual, param_sets, args: tuple, max_nfev: int = 20000, jac=None):
    """The lowest-χ² lmfit least-squares fit of ``residual`` over the ``param_sets`` (an iterable of
    ``lmfit.Parameters``); a start that fails or ends non-finite is skipped. RuntimeError if every one does.
    ``jac``: the analytic Jacobian, called as ``jac(params, *args)`` (columns in the order of the varying
    parameters, see :func:`log_residual_jacobian`); None: lmfit's two-point differences."""
    import lmfit

    extra = {"jac": jac} if jac is not None else {}
    best = None
    for params in param_sets:
        try:
            res = lmfit.minimize(
                residual,
                params,
                args=args,
                method="least_squares",
                max_nfev=max_nfev,
                ftol=1e-12,
                xtol=1e-12,
                gtol=1e-12,
                **extra,
            )
        except (ValueError, FloatingPointError):
            continue
        if np.isfinite(res.chisqr) and (best is None or res.chisqr < best.chisqr - 1e-14):
            best = res
    if best is None:
        raise RuntimeError("every start of the decomposed-law fit failed")
    return best
