"""Depth exponents, hidden-state angles, tables and the report section of the depth toy.

Exponent: the test loss of students of depth ℓ is fitted as L = c · ℓ^(−α_ℓ) by least squares on
log L vs log ℓ (all replicates pooled); the standard error of α_ℓ is the OLS one, so it includes the
scatter between replicates and around the power law. Angles: the LLM stage's metrics
(depthwidth.hidden_states.metrics.geometry) on the toy's hidden states, reported in degrees.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import torch

from depthwidth.depth_toy.model import StudentGroup, Teacher, teacher_forward

try:  # the LLM stage's metric definitions, so that toy and LLM angles are the same quantity
    from depthwidth.hidden_states.metrics import geometry as _geometry
except ImportError:  # pragma: no cover - only when the hidden_states stage is absent
    _geometry = None

RUN_COLUMNS = ["kind", "variant", "temperature", "replicate", "depth", "steps", "final_train_loss", "test_loss"]


def _angle(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    cos = (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1)).clamp_min(1e-12)
    return cos.clamp(-1.0, 1.0).acos()


def state_angles(states: list[torch.Tensor]) -> tuple[np.ndarray, np.ndarray]:
    """Mean angles (degrees) over samples from L + 1 hidden states, each (N, D):
    ``theta`` (L,): angle(h_l, h_{l+1}); ``theta_dh`` (L − 1,): angle(Δh_l, Δh_{l+1}), Δh_l = h_{l+1} − h_l."""
    if _geometry is not None:
        g = _geometry(states)
        theta, theta_dh = g["theta"], g["theta_dh"]
    else:
        theta = torch.stack([_angle(a, b) for a, b in zip(states[:-1], states[1:])], 1)
        d = [b - a for a, b in zip(states[:-1], states[1:])]
        theta_dh = torch.stack([_angle(a, b) for a, b in zip(d[:-1], d[1:])], 1)
    deg = 180.0 / math.pi
    return theta.mean(0).cpu().numpy() * deg, theta_dh.mean(0).cpu().numpy() * deg


def _angle_rows(states, meta: dict) -> list[dict]:
    theta, theta_dh = state_angles(states)
    L = len(theta)
    rows = []
    for layer in range(L):
        rows.append({**meta, "layer": layer, "relative_layer": (layer + 0.5) / L,
                     "angle_state_deg": float(theta[layer]),
                     "angle_update_deg": float(theta_dh[layer]) if layer < L - 1 else float("nan")})
    return rows


@torch.no_grad()
def angle_table(teacher: Teacher, records: list[dict], meta: dict, n_samples: int = 512, seed: int = 0) -> pd.DataFrame:
    """Per-layer angles (degrees) of the teacher and of every trained student (``records`` from
    train_students) on one batch of ``n_samples`` N(0, I) inputs. Columns: model (teacher/student), the
    ``meta`` coordinates, temperature, depth, layer, relative_layer, angle_state_deg, angle_update_deg
    (angle between the update of this layer and the next; NaN for the last layer)."""
    width = teacher.fc_w.shape[1]
    x = torch.randn(n_samples, width, generator=torch.Generator().manual_seed(seed))
    dev = teacher.fc_w.device
    x = x.to(dev)
    _, t_states = teacher_forward(teacher, x, hidden=True)
    rows = _angle_rows(t_states, {"model": "teacher", **meta, "temperature": np.nan, "depth": teacher.depth})
    seen = set()
    for r in records:
        g: StudentGroup = r["_group"]
        if id(g) in seen:
            continue
        seen.add(id(g))
        _, s_states = g(x, hidden=True)
        for rec in (rr for rr in records if rr["_group"] is g):
            states = [h[rec["row"]] for h in s_states]
            t = rec["temperature"]
            rows += _angle_rows(states, {"model": "student", **meta,
                                         "temperature": np.nan if t is None else t, "depth": g.depth})
    return pd.DataFrame(rows)


def fit_power_law(depths, losses) -> dict:
    """Fit L = c · ℓ^(−α) by OLS on (log ℓ, log L). Returns alpha, alpha_se, log_c, n_points, n_depths.
    ``alpha_se`` is NaN with fewer than 3 points; points with non-positive loss are an error."""
    d = np.asarray(depths, dtype=float)
    y = np.asarray(losses, dtype=float)
    if (y <= 0).any() or not np.isfinite(y).all():
        raise ValueError(f"losses must be positive and finite to fit a power law, got {y}")
    n, n_depths = len(d), len(np.unique(d))
    if n_depths < 2:
        return {"alpha": np.nan, "alpha_se": np.nan, "log_c": np.nan, "n_points": n, "n_depths": n_depths}
    X = np.column_stack([np.ones(n), np.log(d)])
    coef, *_ = np.linalg.lstsq(X, np.log(y), rcond=None)
    se = np.nan
    if n > 2:
        resid = np.log(y) - X @ coef
        s2 = resid @ resid / (n - 2)
        se = float(np.sqrt(s2 * np.linalg.inv(X.T @ X)[1, 1]))
    return {"alpha": float(-coef[1]), "alpha_se": se, "log_c": float(coef[0]), "n_points": n, "n_depths": n_depths}


def exponents(runs: pd.DataFrame, by: tuple[str, ...] = ()) -> pd.DataFrame:
    """α_ℓ ± SE per (kind, variant, temperature, *by) from ``runs`` (columns RUN_COLUMNS, plus ``by``)."""
    rows = []
    keys = ["kind", "variant", "temperature", *by]
    key = runs.assign(temperature=runs["temperature"].fillna(-1.0))
    for (kind, variant, temp, *extra), grp in key.groupby(keys, sort=True):
        fit = fit_power_law(grp["depth"], grp["test_loss"])
        rows.append({"kind": kind, "variant": variant, "temperature": np.nan if temp < 0 else temp,
                     **dict(zip(by, extra)), "replicates": grp["replicate"].nunique(), **fit})
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


def mean_update_angle(angles: pd.DataFrame, model: str = "teacher") -> pd.DataFrame:
    """Mean over layers of angle_update_deg and angle_state_deg per kind (and depth for students)."""
    sel = angles[angles["model"] == model]
    return (sel.groupby(["kind", "depth"], as_index=False)[["angle_update_deg", "angle_state_deg"]].mean())


__all__ = ["RUN_COLUMNS", "angle_table", "combined_exponent", "exponent_trajectory", "exponents", "fit_power_law",
           "mean_update_angle", "state_angles"]
