"""The restart recipe (docs/restarts.md) after a kill between a job writing its outputs and Snakemake recording
them: `snakemake --unlock`, then the same command, must end equal to an
uninterrupted run. Without --rerun-incomplete the rerun stops with IncompleteFilesException;
profiles/default, the workflow profile Snakemake reads by itself, sets it, as profiles/slurm does.

The fault is made for real: Snakemake's own process is SIGKILLed while its job runs, so the job (an
orphan now) finishes and writes its outputs, and nobody records them. The lock and the job's
'incomplete' marker stay behind, as after a lost login session or a node crash."""

from __future__ import annotations

import importlib.util
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from _helpers import REPO
from _pipeline import BASE_CONFIGS, env, overlay, planned_jobs, run, snakemake_cmd
from safetensors.numpy import load_file

CELL = "results/superposition/cells/power-a1.5/n64/gamma-1/m4/seed0"
TARGET = f"{CELL}/model.safetensors"
# long enough that the job is still running when its Snakemake is killed, a few seconds in all
SLOW = {"superposition": {"widths": [4], "weight_decays": [-1.0], "steps": 400, "checkpoint_every": 0}}


def _pids_of_session(sid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] not in ("Z", "X"):
                out.append(int(d.name))
    return out


def _kill_snakemake_leave_job(wd: Path, configs: list[Path], timeout: float = 120) -> None:
    """Start the run, SIGKILL Snakemake itself once its job has started, and let the job finish."""
    proc = subprocess.Popen(
        snakemake_cmd(wd, "--cores", "1", TARGET, configs=configs),
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout
    try:
        while not any((wd / ".snakemake" / "incomplete").rglob("*")) or not (wd / "logs").exists():
            assert proc.poll() is None, "the run ended before its job started"
            assert time.monotonic() < deadline, "the job did not start"
            time.sleep(0.02)
        time.sleep(0.5)  # the job process is up
        os.kill(proc.pid, signal.SIGKILL)  # Snakemake only: its job lives on, as an orphan
        proc.wait(timeout=30)
        while _pids_of_session(proc.pid):  # the orphaned job writes its outputs and exits
            assert time.monotonic() < deadline, "the orphaned job did not finish"
            time.sleep(0.1)
    finally:
        for pid in _pids_of_session(proc.pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.workflow
def test_readme_recipe_after_kill_between_output_and_record(tmp_path):
    cfg = overlay(tmp_path, "slow", SLOW)
    configs = [*BASE_CONFIGS, cfg]
    wd = tmp_path / "wd"
    _kill_snakemake_leave_job(wd, configs)
    assert (wd / TARGET).exists(), "the job should have written its output after Snakemake died"
    assert any((wd / ".snakemake" / "incomplete").rglob("*")), "Snakemake should not have recorded it"
    assert any((wd / ".snakemake" / "locks").iterdir()), "the dead run's lock should remain"
    written = load_file(wd / TARGET)  # what an uninterrupted job computes

    # The fault as it was: without the workflow profile the rerun refuses the unrecorded outputs.
    p = run(
        wd,
        "-n",
        "--cores",
        "1",
        "--workflow-profile",
        "none",
        "--nolock",
        TARGET,
        configs=configs,
        check=False,
        timeout=120,
    )
    assert p.returncode != 0 and "IncompleteFilesException" in p.stdout + p.stderr

    # The recipe: --unlock, then the same command.
    run(wd, "--unlock", configs=configs, timeout=120)
    run(wd, "--cores", "1", TARGET, configs=configs, timeout=180)
    again = load_file(wd / TARGET)
    assert set(again) == set(written)
    for k in written:
        np.testing.assert_array_equal(again[k], written[k], err_msg=k)
    assert not any((wd / ".snakemake" / "incomplete").rglob("*")), "the rerun should have recorded its job"


def test_workflow_profile_sets_only_rerun_incomplete():
    """profiles/default is read for every run, beside --profile profiles/slurm: it must not change
    anything else (executor, cores, resources), and the SLURM profile agrees with it. Besides
    rerun-incomplete it only slows the scheduler's idle timer, with a job-start limit that never binds,
    picks the greedy scheduler (no temp() files for the ILP one to free, and no CBC run per pick), and
    leaves Snakemake's script-mtime `code` trigger out of the rerun triggers (each rule's code fingerprint
    covers its script; docs/restarts.md)."""
    triggers = ["mtime", "params", "input", "software-env"]
    default = yaml.safe_load((REPO / "profiles" / "default" / "config.yaml").read_text())
    assert default == {
        "rerun-incomplete": True,
        "rerun-triggers": triggers,
        "max-jobs-per-timespan": "1000/10s",
        "scheduler": "greedy",
    }
    slurm = yaml.safe_load((REPO / "profiles" / "slurm" / "config.yaml").read_text())
    # the SLURM profile sets rerun-incomplete and the triggers itself, to the same values (a missing key
    # fails here)
    assert slurm.get("rerun-incomplete") is True, "profiles/slurm must set rerun-incomplete: true"
    assert slurm.get("rerun-triggers") == triggers
    # and it leaves the job-rate limit to the workflow profile
    assert "max-jobs-per-timespan" not in slurm


@pytest.mark.workflow
@pytest.mark.skipif(
    importlib.util.find_spec("snakemake_executor_plugin_slurm") is None,
    reason="snakemake-executor-plugin-slurm is not installed (pip install '.[slurm]')",
)
def test_slurm_profile_with_workflow_profile_still_parses(tmp_path):
    """`--profile profiles/slurm` plus the workflow profile: a dry run plans the same jobs as without a
    profile, with the SLURM profile's resources."""
    p = subprocess.run(
        snakemake_cmd(
            tmp_path,
            "--profile",
            str(REPO / "profiles" / "slurm"),
            "-n",
            "results/chinchilla/points.csv",
            configs=BASE_CONFIGS,
        ),
        capture_output=True,
        text=True,
        env=env(),
        timeout=120,
        cwd=REPO,
    )
    text = p.stdout + p.stderr
    assert p.returncode == 0, text[-3000:]
    assert re.search(
        r"Using profiles \S*profiles/slurm and workflow specific profile \S*profiles/default", text
    ), text[:2000]
    # the download of the two Chinchilla files and the points: the same plan as without a profile
    assert planned_jobs(text) == {"fetch_pinned_chinchilla": 1, "chinchilla_points": 1}, text[-3000:]
    # the SLURM profile's own resources reach the job (set-resources: chinchilla_points runtime 10)
    points = text[text.index("rule chinchilla_points:") :]
    assert re.search(r"resources: .*runtime=10\b", points.split("\n\n")[0]), points[:1500]
