"""Fixtures and hooks of the test suite, nothing else: helpers are imported from ``_helpers`` (paths, the
data mirror) and ``_pipeline`` (running Snakemake).

Two speeds. Every test that starts Snakemake carries the ``workflow`` marker, and so do the few science
checks that train or fit at full size (seconds of CPU each), so ``pytest -m "not workflow"`` runs all the
others in under a minute. Marking is checked while the tests run: an unmarked test that starts Snakemake
fails at that moment, naming the marker. A test that uses the ``completed_run`` fixture is marked by
itself."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from _pipeline import is_snakemake, run
from filelock import FileLock

_POPEN = subprocess.Popen


class _UnmarkedPopen(_POPEN):
    """``subprocess.Popen`` while a test without the ``workflow`` marker runs: Snakemake is refused."""

    def __init__(self, args, *rest, **kwargs):
        if is_snakemake(args):
            self._child_created = False  # no process: Popen.__del__ has nothing to clean up
            pytest.fail(
                "this test starts Snakemake but is not marked: decorate it with @pytest.mark.workflow "
                "(or set pytestmark = pytest.mark.workflow in its module), so that "
                "`pytest -m 'not workflow'` leaves it out",
                pytrace=True,
            )
        super().__init__(args, *rest, **kwargs)


# The test files that take longest (a minute or more of a 2-core machine each, by `--durations`): under
# pytest-xdist (a file per worker at a time, handed out in this order: `--no-loadscope-reorder`) they
# start first, so the suite does not end waiting for one of them. The first makes the shared completed
# run (the longest setup); the next files that need it come after files that do not, so no worker waits.
SLOW_FILES = (
    "test_partial_rerun.py",
    "test_faults_workflow.py",
    "test_hidden_states_workflow.py",
    "test_code_fingerprint.py",
    "test_paperfigs_workflow.py",
    "test_superposition_law_jobs.py",
    "test_cluster_slurm.py",
    "test_faults_failed_run.py",
    "test_depth_toy_workflow.py",
    "test_bad_input.py",
    "test_chinchilla_stats.py",
    "test_restart_law.py",
    "test_restart.py",
    "test_models_hub.py",
    "test_restart_recipe.py",
    "test_causal_tracing.py",
)


def pytest_xdist_auto_num_workers(config):
    """``-n auto``: one worker more than the CPUs (the tests wait on Snakemake and its jobs much of the
    time), at most four."""
    from depthwidth.plan import usable_cpus

    return min(4, usable_cpus() + 1)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark every test that reads the shared completed run; runs before ``-m`` selects. Then put the
    ``SLOW_FILES`` first (a stable sort: each file's tests keep their order)."""
    for item in items:
        if "completed_run" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.workflow)
    rank = {name: i for i, name in enumerate(SLOW_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(SLOW_FILES)))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """While an unmarked test is set up, runs and is torn down, starting Snakemake fails it."""
    subprocess.Popen = _POPEN if item.get_closest_marker("workflow") else _UnmarkedPopen
    try:
        yield
    finally:
        subprocess.Popen = _POPEN


@pytest.fixture(scope="session")
def completed_run(tmp_path_factory) -> Path:
    """A folder where the whole test config (config.yaml + config/test.yaml) has run to completion, made
    once per session and shared by the tests that only read it (dry runs, result checks). Tests must not
    write to it: copy what they change into their own ``tmp_path``. Under pytest-xdist the workers share
    one: the first to ask makes it while holding a lock in their common temporary folder, the others wait
    for it (a half-made one, from a worker whose run failed, is made again)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        wd = tmp_path_factory.mktemp("completed-test", numbered=False)
        run(wd, "--cores", "2", timeout=900)
        return wd
    root = tmp_path_factory.getbasetemp().parent
    wd, done = root / "completed-test", root / "completed-test.done"
    with FileLock(str(root / "completed-test.lock")):
        if not done.exists():
            shutil.rmtree(wd, ignore_errors=True)
            wd.mkdir()
            run(wd, "--cores", "2", timeout=900)
            done.touch()
    return wd
