"""Restart after a hard kill: SIGKILL of the whole Snakemake process group while a training job runs.

The superposition stage with two cells that train for a few seconds each (one job per cell, one core, so
they run one after the other) and a checkpoint every 50 steps. The run is killed once the first cell is
done and the second has written a checkpoint. Then, as a user would: `snakemake --unlock` and the same
command again. Checked: the finished cell is not recomputed (same mtimes), the interrupted job runs again
and resumes from its checkpoint (not step 0), no half-written output survived the kill, and the final
weights equal those of an uninterrupted training of the same cell.
"""

from __future__ import annotations

import pytest
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import torch
from _pipeline import BASE_CONFIGS, merged_config, mtimes, overlay, planned_jobs, run, start_detached
from safetensors.numpy import load_file

from depthwidth.config import validate_config

pytestmark = pytest.mark.workflow

CELL = "results/superposition/cells/power-a1.5/n256/gamma1/m{m}/seed0"
WIDTHS = (8, 16)
OVERLAY = {
    "superposition": {
        "n_features": 256,
        "widths": list(WIDTHS),
        "weight_decays": [1.0],
        "alphas": [1.5],
        "seeds": [0],
        "batch_size": 512,
        "steps": 1000,
        "warmup_steps": 100,
        "checkpoint_every": 50,
        "threads": 1,
    }
}
TARGET = "results/superposition/cells.csv"


def _group_alive(pgid: int) -> list[int]:
    """PIDs of live (not zombie) processes in process group ``pgid``."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            out.append(int(d.name))
    return out


def _kill_when_mid_training(proc: subprocess.Popen, wd: Path, timeout: float = 300) -> int:
    """SIGKILL the process group of ``proc`` once one cell is finished and another has a checkpoint.
    Returns the width of the interrupted cell."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the workflow finished before it could be killed; make the cells longer"
        done = [m for m in WIDTHS if (wd / CELL.format(m=m) / "model.safetensors").exists()]
        running = [m for m in WIDTHS if m not in done and (wd / CELL.format(m=m) / "checkpoint.pt").exists()]
        if done and running:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            return running[0]
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    raise AssertionError(f"no cell finished and no checkpoint appeared within {timeout} s")


def _reference(tmp: Path, m: int) -> dict[str, np.ndarray]:
    """The same cell trained in one go, in this process, through the function the rule calls."""
    from depthwidth.rules import job_params
    from depthwidth.superposition import pipeline
    from depthwidth.superposition.train import superposition_train

    cfg = merged_config([OVERLAY])
    validate_config(cfg)  # fills the schema defaults, as the workflow does
    out = tmp / "reference"
    torch.set_num_threads(1)
    superposition_train(
        "power-a1.5",
        256,
        1.0,
        m,
        0,
        job_params(cfg, pipeline, "superposition_train")["train"],
        str(out / "model.safetensors"),
        str(out / "train.json"),
        threads=1,
    )
    return load_file(out / "model.safetensors")


def test_killed_run_restarts_where_it_stopped(tmp_path):
    wd = tmp_path / "wd"
    wd.mkdir()
    configs = [*BASE_CONFIGS, overlay(tmp_path, "restart", OVERLAY)]
    with open(tmp_path / "first_run.log", "w") as log:
        proc = start_detached(wd, "--cores", "1", TARGET, configs=configs, log=log)
        m_killed = _kill_when_mid_training(proc, wd)
    m_done = next(m for m in WIDTHS if m != m_killed)
    time.sleep(0.5)
    assert not _group_alive(proc.pid), "processes of the killed run survive SIGKILL of its group"

    killed = wd / CELL.format(m=m_killed)
    # no half-written output that looks complete: the interrupted cell has only its checkpoint
    assert not (killed / "model.safetensors").exists() and not (killed / "train.json").exists()
    step_at_kill = int(torch.load(killed / "checkpoint.pt", weights_only=False)["step"])
    assert 0 < step_at_kill < 1000
    before = {k: v for k, v in mtimes(wd).items() if k.startswith(CELL.format(m=m_done))}
    # the finished cell: its two outputs and their seals, none of them rewritten by the restart
    assert set(before) == {
        f"{CELL.format(m=m_done)}/{name}"
        for name in (
            "model.safetensors",
            "train.json",
            ".model.safetensors.seal.json",
            ".train.json.seal.json",
        )
    }

    # the user's restart: the kill left Snakemake's lock behind, so unlock, then the same command
    locked = run(wd, "--cores", "1", TARGET, configs=configs, check=False, timeout=300)
    assert locked.returncode != 0 and "--unlock" in locked.stdout + locked.stderr
    run(wd, "--unlock", configs=configs, timeout=300)
    p = run(wd, "--cores", "1", TARGET, configs=configs, timeout=600)
    ran = planned_jobs(p.stdout + p.stderr)
    assert ran.get("superposition_train") == 1, f"the rerun trained {ran.get('superposition_train')} cells"

    after = mtimes(wd)
    for f, t in before.items():
        assert after[f] == t, f"{f} was recomputed"
    cell_log = (
        wd
        / "logs"
        / "superposition"
        / "train"
        / "power-a1.5"
        / "n256"
        / "gamma1"
        / f"m{m_killed}"
        / "seed0.log"
    ).read_text()
    resumed = [int(s) for s in re.findall(r"resumed from checkpoint \S+ at step (\d+)", cell_log)]
    assert resumed and resumed[-1] >= step_at_kill, (
        f"did not resume from step {step_at_kill}:\n{cell_log[-2000:]}"
    )
    assert not (killed / "checkpoint.pt").exists(), "a finished cell keeps its checkpoint"

    # resumed training gives the numbers of an uninterrupted one (same machine, same threads)
    got, ref = load_file(killed / "model.safetensors"), _reference(tmp_path, m_killed)
    for k in ("W", "b", "loss_curve"):
        np.testing.assert_allclose(got[k], ref[k], rtol=1e-5, atol=1e-7, err_msg=k)
    assert (wd / TARGET).is_file()
