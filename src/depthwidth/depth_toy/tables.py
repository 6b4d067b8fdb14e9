"""The depth toy's tables from the per-student files (rule depth_toy_tables)."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth.depth_toy import variants
from depthwidth.depth_toy.exponents import convergence_test, exponent_trajectory, exponents
from depthwidth.integrity import read_json, read_table, write_table

log = logging.getLogger("depthwidth.depth_toy")

RUN_COLUMNS = [
    "kind",
    "variant",
    "temperature",
    "replicate",
    "depth",
    "steps",
    "final_train_loss",
    "test_loss",
]
CURVE_COLUMNS = ["kind", "variant", "temperature", "replicate", "depth", "step", "test_loss"]
ANGLE_COLUMNS = ["kind", "variant", "replicate", "model", "depth", "angle_update_deg", "angle_state_deg"]
#: the rule that writes the tables (named in the fix when a consumer finds one damaged)
TABLES_RULE = "depth_toy_tables"


def train_rule(path: str | Path) -> str:
    """The training rule that wrote a per-student file or a job's angle table (``variants.RUNS``/kind/variant/
    rep<r>/...): the variant is the folder after the kind."""
    parts = Path(path).parts
    runs = Path(variants.RUNS).parts
    i = next(k for k in range(len(parts)) if parts[k : k + len(runs)] == runs)
    return f"depth_toy_train_{parts[i + len(runs) + 1]}"


def _read_students(student_paths: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per student (RUN_COLUMNS) and one per evaluated step of each student (CURVE_COLUMNS)."""
    rows, curve_rows = [], []
    for p in student_paths:
        r = read_json(p, train_rule(p), (*RUN_COLUMNS, "test_curve"))
        rows.append({k: r[k] for k in RUN_COLUMNS})
        curve_rows += [
            {**{k: r[k] for k in CURVE_COLUMNS[:5]}, "step": int(step), "test_loss": float(loss)}
            for step, loss in r["test_curve"]
        ]
    runs = pd.DataFrame(rows, columns=RUN_COLUMNS).sort_values(
        ["kind", "variant", "temperature", "replicate", "depth"]
    )
    return runs, pd.DataFrame(curve_rows, columns=CURVE_COLUMNS)


def mean_update_angle(angles: pd.DataFrame, model: str = "teacher") -> pd.DataFrame:
    """Mean over layers of angle_update_deg and angle_state_deg (degrees) per kind and depth of ``model``."""
    sel = angles[angles["model"] == model]
    return sel.groupby(["kind", "depth"], as_index=False)[["angle_update_deg", "angle_state_deg"]].mean()


def depth_toy_tables(
    student_paths: list[str],
    angle_paths: list[str],
    runs_out: str,
    exponents_out: str,
    angles_out: str,
    trajectory_out: str,
    teacher_angles_out: str,
    curves_out: str | None = None,
    convergence_out: str | None = None,
) -> pd.DataFrame:
    """Rule depth_toy_tables: runs.csv (one row per student, RUN_COLUMNS), exponents.csv (α_ℓ ± SE per kind,
    variant, T), all angle tables stacked, ``trajectory_out`` (α_ℓ at every evaluated step of training) and
    ``teacher_angles_out`` (the teachers' angles averaged over layers), ``curves_out`` (every student's test
    loss at every evaluation, CURVE_COLUMNS) and ``convergence_out`` (``exponents.convergence_test``: how much
    losses and α_ℓ still move over the last 20 % of training)."""
    runs, curves = _read_students(student_paths)
    angles = pd.concat([read_table(p, train_rule(p), ANGLE_COLUMNS) for p in angle_paths], ignore_index=True)
    ex = exponents(runs)
    # sealed with their row counts: rule depth_toy_section checks them before use
    write_table(runs, runs_out)
    write_table(ex, exponents_out)
    write_table(angles, angles_out)
    write_table(mean_update_angle(angles, "teacher"), teacher_angles_out)
    write_table(exponent_trajectory(curves), trajectory_out)
    conv = convergence_test(curves)
    if curves_out:
        write_table(curves.sort_values([*CURVE_COLUMNS[:5], "step"]), curves_out)
    if convergence_out:
        write_table(conv, convergence_out)
    for _, c in conv.iterrows():
        log.info(
            "convergence %s/%s: loss change %.4f (depth %s), alpha %.3f -> %.3f over steps %s-%s: %s",
            c["kind"],
            c["variant"],
            c["loss_change"],
            c["depth_moving"],
            c["alpha_from"],
            c["alpha_last"],
            c["step_from"],
            c["steps"],
            "converged" if c["converged"] else "still moving",
        )
    for _, e in ex.iterrows():
        t = "" if not np.isfinite(e["temperature"]) else f" T={e['temperature']:.4g}"
        log.info("alpha_l %s/%s%s = %.3f ± %.3f", e["kind"], e["variant"], t, e["alpha"], e["alpha_se"])
    return ex
