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
