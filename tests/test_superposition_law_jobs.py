"""job_grouping: law trains every (γ, m) cell of a law in one job, on one input stream. Checked through the
pipeline: one job per law instead of one per cell, every cell's weights and loss curve bit-identical to those
of one job per cell, and switching the setting either way retrains nothing (same script, same params)."""

from __future__ import annotations

import pytest
import numpy as np
from _pipeline import BASE_CONFIGS, overlay, planned_jobs, run
from safetensors.numpy import load_file

pytestmark = pytest.mark.workflow

GRID = {
    "n_features": 128,
    "widths": [4, 12],
    "weight_decays": [-1.0, 1.0],
    "alphas": [1.25],
    "seeds": [0],
    "batch_size": 256,
    "steps": 300,
    "warmup_steps": 30,
    "checkpoint_every": 100,
    "threads": 1,
}
TARGET = "results/superposition/cells.csv"


def _cells(wd):
    return {
        str(p.relative_to(wd)): load_file(p)
        for p in sorted((wd / "results/superposition/cells").rglob("model.safetensors"))
    }


def test_law_jobs_give_the_cells_of_cell_jobs(tmp_path):
    cell_cfg = overlay(tmp_path, "cell", {"superposition": {**GRID, "job_grouping": "cell"}})
    law_cfg = overlay(tmp_path, "law", {"superposition": {**GRID, "job_grouping": "law"}})
    a, b = tmp_path / "cell", tmp_path / "law"

    assert (
        planned_jobs(run(a, "--cores", "2", TARGET, configs=[*BASE_CONFIGS, cell_cfg])).get(
            "superposition_train"
        )
        == 4
    )
    # one law, one n, one seed: one job trains the 4 cells
    assert (
        planned_jobs(run(b, "--cores", "2", TARGET, configs=[*BASE_CONFIGS, law_cfg])).get(
            "superposition_train"
        )
        == 1
    )

    ca, cb = _cells(a), _cells(b)
    assert len(ca) == 4 and ca.keys() == cb.keys()
    for path in ca:
        for key in ("W", "b", "loss_curve"):
            assert np.array_equal(ca[path][key], cb[path][key]), f"{path} {key} differs between the modes"
    # the law job's checkpoint is gone once its cells are written
    assert not list((b / "results/superposition/jobs").rglob("checkpoint.pt"))

    # switching the setting is not a change of results: nothing reruns, either way
    for wd, cfg in ((a, law_cfg), (b, cell_cfg)):
        p = run(wd, "-n", "--cores", "2", TARGET, configs=[*BASE_CONFIGS, cfg])
        assert planned_jobs(p) == {}, (p.stdout + p.stderr)[-3000:]
