"""Restart after a hard kill in law jobs (``superposition.job_grouping: law``, the default job form): one job
trains both cells of a law on one input stream and checkpoints them together. SIGKILL of the whole
Snakemake process group once that checkpoint holds some steps; then, as a user would, `snakemake --unlock`
and the same command. Checked: no cell output survived the kill, the rerun is one job that resumes from the
checkpoint (not step 0), the checkpoint is gone afterwards, and each cell equals the same cell trained in one
go."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time

import numpy as np
import pytest
import torch
from _pipeline import BASE_CONFIGS, overlay, planned_jobs, run, start_detached
from safetensors.numpy import load_file
from test_restart import CELL, OVERLAY, TARGET, WIDTHS, _group_alive, _reference

pytestmark = pytest.mark.workflow

LAW = {"superposition": {**OVERLAY["superposition"], "job_grouping": "law"}}
CHECKPOINT = "results/superposition/jobs/power-a1.5/n256/seed0/checkpoint.pt"
LOG = "logs/superposition/train/power-a1.5/n256/seed0.log"


def _kill_when_checkpointed(proc: subprocess.Popen, wd, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the law job finished before it could be killed; make it longer"
        seal = (wd / CHECKPOINT).with_name(".checkpoint.pt.seal.json")
        if seal.exists():
            time.sleep(0.3)  # mid-training, between two checkpoints
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            return
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    raise AssertionError(f"no checkpoint of the law job appeared within {timeout} s")


def test_killed_law_job_resumes_from_its_checkpoint(tmp_path):
    wd = tmp_path / "wd"
    wd.mkdir()
    configs = [*BASE_CONFIGS, overlay(tmp_path, "law", LAW)]
    with open(tmp_path / "first_run.log", "w") as log:
        proc = start_detached(wd, "--cores", "1", TARGET, configs=configs, log=log)
        _kill_when_checkpointed(proc, wd)
    time.sleep(0.5)
    assert not _group_alive(proc.pid), "processes of the killed run survive SIGKILL of its group"
    cells = [wd / CELL.format(m=m) for m in WIDTHS]
    assert not any((c / "model.safetensors").exists() or (c / "train.json").exists() for c in cells)
    step_at_kill = int(torch.load(wd / CHECKPOINT, weights_only=False)["step"])
    assert 0 < step_at_kill < 1000

    run(wd, "--unlock", configs=configs, timeout=300)
    p = run(wd, "--cores", "1", TARGET, configs=configs, timeout=600)
    assert planned_jobs(p.stdout + p.stderr).get("superposition_train") == 1
    resumed = [
        int(s) for s in re.findall(r"resumed from checkpoint \S+ at step (\d+)", (wd / LOG).read_text())
    ]
    assert resumed and resumed[-1] >= step_at_kill, (wd / LOG).read_text()[-2000:]
    assert not (wd / CHECKPOINT).exists() and not list((wd / CHECKPOINT).parent.glob(".checkpoint.pt*"))
    for m, cell in zip(WIDTHS, cells):
        got, ref = load_file(cell / "model.safetensors"), _reference(tmp_path / f"ref{m}", m)
        for k in ("W", "b", "loss_curve"):
            np.testing.assert_allclose(got[k], ref[k], rtol=1e-5, atol=1e-7, err_msg=f"m{m} {k}")
