"""Writing a job's per-student files and collecting them into the stage's tables."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth.depth_toy.analysis import RUN_COLUMNS, angle_table, exponent_trajectory, exponents
from depthwidth.depth_toy.model import Teacher
from depthwidth.depth_toy.pipeline import temp_label

log = logging.getLogger("depthwidth.depth_toy")


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_job_outputs(records: list[dict], teacher: Teacher, kind: str, variant: str, rep: int,
                      student_paths: list[str], angles_path: str, angle_samples: int) -> None:
    """One JSON per student at its path (matched by T and depth in the path), and the job's angle table.
    Every path the rule declares must be produced by a trained student, or this raises."""
    by_path = {}
    for r in records:
        name = f"T{temp_label(r['temperature'])}/depth{r['depth']}.json"
        by_path[name] = r
    angles = angle_table(teacher, records, {"kind": kind, "variant": variant, "replicate": rep}, angle_samples)
    for p in map(Path, student_paths):
        key = f"{p.parent.name}/{p.name}"
        if key not in by_path:
            raise RuntimeError(f"no trained student for output {p}; trained: {sorted(by_path)}")
        r = by_path[key]
        out = {"kind": kind, "variant": variant, "replicate": rep,
               **{k: v for k, v in r.items() if not k.startswith("_") and k not in ("group", "row")}}
        p.parent.mkdir(parents=True, exist_ok=True)
        _write_atomic(p, json.dumps(out, indent=1))
    Path(angles_path).parent.mkdir(parents=True, exist_ok=True)
    angles.to_csv(angles_path, index=False)
    log.info("wrote %d student files and %s", len(student_paths), angles_path)


def collect_tables(student_paths: list[str], angle_paths: list[str], runs_out: str, exponents_out: str,
                   angles_out: str, trajectory_out: str) -> pd.DataFrame:
    """runs.csv (one row per student, RUN_COLUMNS), exponents.csv (α_ℓ ± SE per kind, variant, T), all
    angle tables stacked, and ``trajectory_out``: α_ℓ at every evaluated step of training."""
    rows, curve_rows = [], []
    for p in student_paths:
        with open(p) as f:
            r = json.load(f)
        rows.append({k: r[k] for k in RUN_COLUMNS})
        curve_rows += [{**{k: r[k] for k in ("kind", "variant", "temperature", "replicate", "depth")},
                        "step": int(step), "test_loss": float(loss)} for step, loss in r.get("test_curve", [])]
    runs = pd.DataFrame(rows, columns=RUN_COLUMNS).sort_values(["kind", "variant", "temperature", "replicate",
                                                                 "depth"])
    runs.to_csv(runs_out, index=False)
    ex = exponents(runs)
    ex.to_csv(exponents_out, index=False)
    angles = pd.concat([pd.read_csv(p) for p in angle_paths], ignore_index=True)
    angles.to_csv(angles_out, index=False)
    curves = pd.DataFrame(curve_rows, columns=["kind", "variant", "temperature", "replicate", "depth", "step",
                                               "test_loss"])
    exponent_trajectory(curves).to_csv(trajectory_out, index=False)
    for _, e in ex.iterrows():
        t = "" if not np.isfinite(e["temperature"]) else f" T={e['temperature']:.4g}"
        log.info("alpha_l %s/%s%s = %.3f ± %.3f", e["kind"], e["variant"], t, e["alpha"], e["alpha_se"])
    return ex
