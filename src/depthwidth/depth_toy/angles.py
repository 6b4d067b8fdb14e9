"""Hidden-state angles of the depth toy's teachers and students: the LLM stage's metrics
(depthwidth.hidden_states.metrics.geometry) on the toy's hidden states, reported in degrees.

A random walk (independent teacher blocks) has successive updates near 90° apart; smooth dynamics (tied
blocks) has them nearly parallel.
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
        rows.append(
            {
                **meta,
                "layer": layer,
                "relative_layer": (layer + 0.5) / L,
                "angle_state_deg": float(theta[layer]),
                "angle_update_deg": float(theta_dh[layer]) if layer < L - 1 else float("nan"),
            }
        )
    return rows


@torch.no_grad()
def angle_table(
    teacher: Teacher | list[Teacher], records: list[dict], meta: dict, n_samples: int, seed: int = 0
) -> pd.DataFrame:
    """Per-layer angles (degrees) of the teacher and of every trained student (``records`` from
    train_students) on one batch of ``n_samples`` N(0, I) inputs. ``teacher``: one, or a list of one per
    student row (``teacher_per_task``; its rows then carry that row's temperature). Columns: model
    (teacher/student), the ``meta`` coordinates, temperature, depth, layer, relative_layer, angle_state_deg,
    angle_update_deg (angle between the update of this layer and the next; NaN for the last layer)."""
    teachers = [teacher] if isinstance(teacher, Teacher) else list(teacher)
    width = teachers[0].fc_w.shape[1]
    x = torch.randn(n_samples, width, generator=torch.Generator().manual_seed(seed))
    x = x.to(teachers[0].fc_w.device)
    rows = []
    if all(t is teachers[0] for t in teachers):
        teacher_rows = [(teachers[0], np.nan)]
    else:
        temp_of_row = {r["row"]: r["temperature"] for r in records}
        teacher_rows = [
            (t, np.nan if temp_of_row[i] is None else temp_of_row[i]) for i, t in enumerate(teachers)
        ]
    for t, temp in teacher_rows:
        _, t_states = teacher_forward(t, x, hidden=True)
        rows += _angle_rows(t_states, {"model": "teacher", **meta, "temperature": temp, "depth": t.depth})
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
            rows += _angle_rows(
                states,
                {"model": "student", **meta, "temperature": np.nan if t is None else t, "depth": g.depth},
            )
    return pd.DataFrame(rows)
