"""Every job the default, test and paper configs plan is the recorded one: same rule, wildcards, inputs,
outputs, log, benchmark, params (as Python values, by name), rerun-triggering params, threads, priority
and resources at attempts 1 and 2. The record (``tests/data/plan_snapshot.json.gz``) is written by
``tests/plan_snapshot.py --write``; rewrite it only for a change that means to change the plan, and say
so in the commit."""

from __future__ import annotations

import gzip
import json

import pytest
from plan_snapshot import CONFIGS, SNAPSHOT, plan_in_child

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="module")
def recorded() -> dict:
    return json.loads(gzip.decompress(SNAPSHOT.read_bytes()))


def gpu_jobs_name_the_gpu_partition(plan: dict) -> dict:
    """The one deliberate change since the record: every job that asks for a GPU names the GPU partition
    (``depthwidth.rules.gpu_resources``); the record has it only where superposition and the depth toy
    set it (profiles/slurm set it for the other GPU rules). Not a rerun trigger."""
    for job in plan.values():
        for res in job["resources"].values():
            if int(res.get("gpu", "0")) > 0:
                res.setdefault("slurm_partition", "'gpu'")
    return plan


@pytest.mark.parametrize("name", list(CONFIGS))
def test_plan_is_the_recorded_one(recorded, name):
    before, after = gpu_jobs_name_the_gpu_partition(recorded[name]), plan_in_child(CONFIGS[name])
    assert sorted(after) == sorted(before), (
        f"{name}: jobs only now {sorted(set(after) - set(before))[:5]}, "
        f"only before {sorted(set(before) - set(after))[:5]}"
    )
    differ = {
        job: {k: (before[job][k], after[job][k]) for k in before[job] if before[job][k] != after[job][k]}
        for job in before
        if before[job] != after[job]
    }
    assert not differ, f"{name}: {len(differ)} of {len(before)} jobs differ, e.g. {list(differ.items())[:3]}"
    assert len(before) > 30  # the config planned real jobs, not an empty DAG


def test_plan_is_the_same_where_the_mirror_folder_is_a_link(recorded, tmp_path):
    """A checkout whose `../shared` (the data mirror of config.yaml's `data.mirrors`) is a symbolic link to
    the folder rather than the folder plans the recorded jobs: the mirror is named by the link's path in
    the download rules' params, not by where the link points."""
    import shutil
    import subprocess
    import sys

    from plan_snapshot import REPO

    shared = REPO.parent / "shared"
    if not shared.is_dir():
        pytest.skip(f"no mirror folder at {shared}")
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    for name in (
        "Snakefile",
        "rules",
        "scripts",
        "src",
        "schemas",
        "config.yaml",
        "config",
        "envs",
        "report",
    ):
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, checkout / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(src, checkout / name)
    (checkout / "tests").mkdir()
    shutil.copy2(REPO / "tests" / "plan_snapshot.py", checkout / "tests" / "plan_snapshot.py")
    (tmp_path / "shared").symlink_to(shared.resolve(), target_is_directory=True)
    p = subprocess.run(
        [sys.executable, str(checkout / "tests" / "plan_snapshot.py"), *CONFIGS["test"]],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "PYTHONPATH": str(checkout / "src")},
        timeout=600,
        cwd=checkout,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    after, before = json.loads(p.stdout), gpu_jobs_name_the_gpu_partition(recorded["test"])
    mirrors = {str(j["params"].get("sources")) for j in after.values() if "sources" in j["params"]}
    assert mirrors and all("<repo>/../shared/data" in m for m in mirrors), mirrors
    assert sorted(after) == sorted(before)
    differ = [job for job in before if before[job] != after[job]]
    assert not differ, f"{len(differ)} of {len(before)} jobs differ, e.g. {differ[:3]}"
