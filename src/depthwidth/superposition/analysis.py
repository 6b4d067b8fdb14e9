"""Per-cell measurements of a trained toy model and the loss-vs-width fits.

Definitions (stated in the report):
- final loss: mean of the per-step training loss over the last ``window`` steps (the paper averages
  the end of its loss curves; every step sees fresh data, so this is a test loss).
- feature i is *represented* when its row norm ‖W_i‖ exceeds ``norm_threshold`` (default 0.5). With
  weight decay γ > 0 the norms split into ≈ 1 (kept) and ≈ 0 (dropped), so any threshold between
  0.2 and 0.8 gives the same count; with γ < 0 all norms are pulled to 1.
- mean squared overlap: mean over pairs i ≠ j of represented features of (Ŵ_i · Ŵ_j)², Ŵ = W_i/‖W_i‖;
  random unit vectors in R^m give 1/m.
- ETF closeness of the top k = min(etf_factor·m, n) most frequent features: their largest |Ŵ_i·Ŵ_j|
  over the Welch bound √((k−m)/(m(k−1))), which every set of k unit vectors in R^m reaches or exceeds
  (ratio 1 ⇔ equiangular tight frame), and their mean squared overlap over its tight-frame value
  (k−m)/(m(k−1)).
"""

from __future__ import annotations

import math

import numpy as np


def welch_bound_sq(k: int, m: int) -> float:
    """Squared Welch bound (k − m) / (m (k − 1)): the smallest possible max squared overlap of k unit
    vectors in R^m (k > m); equiangular tight frames reach it."""
    if k <= m:
        return 0.0
    return (k - m) / (m * (k - 1))


def final_loss(losses: np.ndarray, window: int) -> tuple[float, float]:
    """(mean, standard error) of the last ``window`` per-step losses. The standard error treats
    blocks of 10 steps as independent (Adam's momentum correlates neighbouring steps)."""
    tail = np.asarray(losses[-window:], dtype=np.float64)
    blocks = tail[: len(tail) // 10 * 10].reshape(-1, 10).mean(1) if len(tail) >= 20 else tail
    err = float(blocks.std(ddof=1) / math.sqrt(len(blocks))) if len(blocks) > 1 else float("nan")
    return float(tail.mean()), err


def row_norms(W: np.ndarray) -> np.ndarray:
    """‖W_i‖ for the n rows of W (n, m)."""
    return np.linalg.norm(np.asarray(W, dtype=np.float64), axis=1)


def represented_fraction(W: np.ndarray, norm_threshold: float = 0.5) -> float:
    """Fraction of the n features whose row norm exceeds ``norm_threshold``."""
    return float((row_norms(W) > norm_threshold).mean())


def _unit_rows(W: np.ndarray) -> np.ndarray:
    W = np.asarray(W, dtype=np.float64)
    return W / np.maximum(np.linalg.norm(W, axis=1, keepdims=True), 1e-30)


def mean_sq_overlap(W: np.ndarray, norm_threshold: float = 0.5) -> float:
    """Mean of (Ŵ_i·Ŵ_j)² over pairs i ≠ j of represented rows; nan if fewer than two are represented."""
    U = _unit_rows(W[row_norms(W) > norm_threshold])
    k = U.shape[0]
    if k < 2:
        return float("nan")
    G = U @ U.T
    return float(((G**2).sum() - k) / (k * (k - 1)))  # diagonal entries are exactly 1


def etf_closeness(W: np.ndarray, etf_factor: float = 2.0) -> dict:
    """ETF measures of the top k = min(etf_factor·m, n) rows (features sorted by frequency).

    Returns {'etf_k', 'max_overlap', 'welch_bound', 'coherence_ratio' (max |overlap| / Welch bound,
    ≥ 1, = 1 for an ETF), 'frame_ratio' (mean squared overlap / its tight-frame value, ≥ 1)}."""
    n, m = W.shape
    k = int(min(max(round(etf_factor * m), m + 1), n))
    U = _unit_rows(W[:k])
    G = U @ U.T
    off = ~np.eye(k, dtype=bool)
    wb2 = welch_bound_sq(k, m)
    max_ov = float(np.abs(G[off]).max()) if k > 1 else float("nan")
    msq = float((G[off] ** 2).mean()) if k > 1 else float("nan")
    wb = math.sqrt(wb2) if wb2 > 0 else float("nan")
    return {
        "etf_k": k,
        "max_overlap": max_ov,
        "welch_bound": wb,
        "coherence_ratio": max_ov / wb if wb2 > 0 else float("nan"),
        "frame_ratio": msq / wb2 if wb2 > 0 else float("nan"),
    }


def cell_metrics(
    W: np.ndarray, losses: np.ndarray, window: int, norm_threshold: float = 0.5, etf_factor: float = 2.0
) -> dict:
    """Every per-cell number of cells.csv for one trained W (n, m) and its loss curve (steps,)."""
    fl, fe = final_loss(losses, window)
    out = {
        "final_loss": fl,
        "final_loss_err": fe,
        "represented_fraction": represented_fraction(W, norm_threshold),
        "mean_sq_overlap": mean_sq_overlap(W, norm_threshold),
        "mean_row_norm": float(row_norms(W).mean()),
    }
    out.update(
        {f"etf_{k}" if not k.startswith("etf") else k: v for k, v in etf_closeness(W, etf_factor).items()}
    )
    return out


def theory_exponent(alpha: float | None, gamma: float) -> float:
    """The paper's prediction: 1 in strong superposition (γ < 0), α − 1 in weak superposition
    (γ > 0, power-law frequencies only; nan otherwise). γ = 0 sits between the regimes: nan."""
    if gamma < 0:
        return 1.0
    if gamma > 0 and alpha is not None:
        return alpha - 1.0
    return float("nan")
