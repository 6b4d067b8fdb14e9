"""The depth toy's tables from the per-student files (rule depth_toy_tables)."""

from __future__ import annotations

import json
import logging

import numpy as np
import pandas as pd

from depthwidth.depth_toy.exponents import exponent_trajectory, exponents
from depthwidth.files import atomic_write_csv

log = logging.getLogger("depthwidth.depth_toy")

RUN_COLUMNS = ["kind", "variant", "temperature", "replicate", "depth", "steps", "final_train_loss", "test_loss"]
CURVE_COLUMNS = ["kind", "variant", "temperature", "replicate", "depth", "step", "test_loss"]


def _read_students(student_paths: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per student (RUN_COLUMNS) and one per evaluated step of each student (CURVE_COLUMNS)."""
    rows, curve_rows = [], []
    for p in student_paths:
        with open(p) as f:
            r = json.load(f)
        rows.append({k: r[k] for k in RUN_COLUMNS})
        curve_rows += [{**{k: r[k] for k in CURVE_COLUMNS[:5]}, "step": int(step), "test_loss": float(loss)}
                       for step, loss in r["test_curve"]]
    runs = pd.DataFrame(rows, columns=RUN_COLUMNS).sort_values(["kind", "variant", "temperature", "replicate",
                                                                 "depth"])
    return runs, pd.DataFrame(curve_rows, columns=CURVE_COLUMNS)


def mean_update_angle(angles: pd.DataFrame, model: str = "teacher") -> pd.DataFrame:
    """Mean over layers of angle_update_deg and angle_state_deg (degrees) per kind and depth of ``model``."""
    sel = angles[angles["model"] == model]
    return sel.groupby(["kind", "depth"], as_index=False)[["angle_update_deg", "angle_state_deg"]].mean()


def depth_toy_tables(student_paths: list[str], angle_paths: list[str], runs_out: str, exponents_out: str,
                     angles_out: str, trajectory_out: str, teacher_angles_out: str) -> pd.DataFrame:
    """Rule depth_toy_tables: runs.csv (one row per student, RUN_COLUMNS), exponents.csv (α_ℓ ± SE per kind,
    variant, T), all angle tables stacked, ``trajectory_out`` (α_ℓ at every evaluated step of training) and
    ``teacher_angles_out`` (the teachers' angles averaged over layers)."""
    runs, curves = _read_students(student_paths)
    atomic_write_csv(runs_out, runs)
    ex = exponents(runs)
    atomic_write_csv(exponents_out, ex)
    angles = pd.concat([pd.read_csv(p) for p in angle_paths], ignore_index=True)
    atomic_write_csv(angles_out, angles)
    atomic_write_csv(teacher_angles_out, mean_update_angle(angles, "teacher"))
    atomic_write_csv(trajectory_out, exponent_trajectory(curves))
    for _, e in ex.iterrows():
        t = "" if not np.isfinite(e["temperature"]) else f" T={e['temperature']:.4g}"
        log.info("alpha_l %s/%s%s = %.3f ± %.3f", e["kind"], e["variant"], t, e["alpha"], e["alpha_se"])
    return ex
