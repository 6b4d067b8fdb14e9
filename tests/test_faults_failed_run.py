"""A run never ends green with a hole in it: after a forced run whose jobs crash (a kernel library whose
every entry point dies of SIGBUS, as a damaged build did before the cache checked its libraries),
Snakemake has deleted the failed jobs' outputs; the next plain command stops before any job, naming the
missing files and the command that remakes them, and that command, run as printed, brings the folder
back to the results of an uninterrupted run."""

from __future__ import annotations

import json
import shlex

import pandas as pd
import pytest
from _pipeline import copy_work_folder, dry_run, run

from depthwidth.superposition import native

pytestmark = pytest.mark.workflow

# a compiler that builds a kernel library whose every entry point dies of SIGBUS
CRASH_CC = r"""#!/bin/sh
case "$1" in --version) echo "crashcc 1.0"; exit 0;; esac
out=""; prev=""
for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
printf '#include <signal.h>\n%s\n' \
  'void fused_step(void){raise(SIGBUS);} void group_grads(void){raise(SIGBUS);}' \
  'void adam_group(void){raise(SIGBUS);} void set_sgemm(void){raise(SIGBUS);}' \
  'double gemm_seconds(void){raise(SIGBUS); return 0;}' | {CC} -x c -shared -fPIC -o "$out" -
"""


def _cells(wd):
    return sorted(p.relative_to(wd) for p in (wd / "results" / "superposition" / "cells").rglob("*.json"))


def test_a_failed_forced_run_is_stopped_then_remade_by_the_printed_command(completed_run, tmp_path):
    try:
        real_cc = native.find_compiler()
    except RuntimeError as e:
        pytest.skip(str(e))
    cc = tmp_path / "crashcc"
    cc.write_text(CRASH_CC.replace("{CC}", real_cc))
    cc.chmod(0o755)
    wd = copy_work_folder(completed_run, tmp_path / "wd")
    cells = _cells(wd)
    crash_env = {"CC": str(cc), native.CACHE_ENV: str(tmp_path / "cache"), "DEPTHWIDTH_FUSED": "1"}
    p = run(
        wd,
        "--cores",
        "2",
        "results/report.html",
        "--forcerun",
        "superposition_train",
        check=False,
        extra_env=crash_env,
    )
    assert p.returncode != 0, (p.stdout + p.stderr)[-3000:]
    assert "superposition_train" in p.stdout + p.stderr
    missing = [c for c in cells if not (wd / c).exists()]
    assert 1 <= len(missing) < len(cells), missing  # Snakemake deleted the outputs of the jobs that died

    # the plain command (as a dry run and as a run) stops, naming each missing file and the fix
    for args in (("-n", "--cores", "1"), ("--cores", "2")):
        q = run(wd, *args, check=False)
        text = q.stdout + q.stderr
        assert q.returncode != 0 and "Nothing to be done" not in text, text[-3000:]
        assert all(str(m) in text for m in missing), text[-3000:]
    fix = next(line.strip() for line in text.splitlines() if line.strip().startswith("snakemake --cores all"))
    assert all(str(m) in shlex.split(fix) for m in missing)

    run(wd, *shlex.split(fix)[1:], timeout=900)  # as printed (-s, -d and --configfile added)
    assert dry_run(wd) == {}
    assert _cells(wd) == cells
    for name in ("headline.csv", "superposition/cells.csv", "superposition/exponents.csv"):
        assert pd.read_csv(wd / "results" / name).equals(pd.read_csv(completed_run / "results" / name)), name


def test_a_new_input_after_an_upgrade_is_made_not_stopped_on(completed_run, tmp_path):
    """An upgrade that gives a rule a new output and its consumer a new input leaves that file missing in an
    old work folder, while the job that will make it has a log. Snakemake's records say no present output
    was built from it, so the plain command plans its job and the consumer's (its input set changed)
    instead of stopping. The same missing file that the consumer's record lists stops the run."""
    wd = copy_work_folder(completed_run, tmp_path / "wd")
    cell = next(c for c in _cells(wd) if c.name == "train.json")  # an output (not its seal)
    (wd / cell).unlink()
    q = run(wd, "-n", "--cores", "1", check=False)
    assert q.returncode != 0 and str(cell) in q.stdout + q.stderr  # built from it, now missing: a hole
    meta = wd / ".snakemake" / "metadata"
    stripped = 0
    for f in meta.rglob("*"):
        if f.is_file():
            record = json.loads(f.read_text())
            if str(cell) in (record.get("input") or []):
                record["input"].remove(str(cell))
                f.write_text(json.dumps(record))
                stripped += 1
    assert stripped >= 1  # the consumer's records, as the version before the new input wrote them
    planned = dry_run(wd)
    assert planned.get("superposition_train", 0) >= 1 and planned.get("superposition_tables") == 1, planned


def test_a_job_killed_before_it_opened_its_log_leaves_no_silent_hole(completed_run, tmp_path):
    """A job killed in its first second (before its script opened the log; Snakemake deletes the old log
    when a job starts, and the outputs of a job that fails): a fit cell's fit.json, bootstrap.csv and log
    are gone while the section and the report made from them are present. The plain command stops naming
    both files (from Snakemake's record of the section's inputs, not from the log), and the printed
    command brings back the cell with the numbers it had."""
    wd = copy_work_folder(completed_run, tmp_path / "wd")
    cell = "results/chinchilla/fits/decomposed/squared"
    gone = [f"{cell}/fit.json", f"{cell}/bootstrap.csv"]
    before = {f: pd.read_csv(wd / f) if f.endswith(".csv") else (wd / f).read_text() for f in gone}
    for f in [*gone, "logs/chinchilla/fits/decomposed/squared/fit.log"]:
        (wd / f).unlink()
    q = run(wd, "-n", "--cores", "1", check=False)
    text = q.stdout + q.stderr
    assert q.returncode != 0 and "Nothing to be done" not in text, text[-3000:]
    assert "2 file(s) that results/report.html was built from are missing" in text, text[-3000:]
    fix = next(line.strip() for line in text.splitlines() if line.strip().startswith("snakemake --cores all"))
    assert shlex.split(fix)[-2:] == gone, fix
    run(wd, *shlex.split(fix)[1:], timeout=900)  # as printed (-s, -d and --configfile added)
    assert dry_run(wd) == {}
    assert pd.read_csv(wd / gone[1]).equals(before[gone[1]])
    fit_now, fit_then = json.loads((wd / gone[0]).read_text()), json.loads(before[gone[0]])
    assert fit_now["params"] == fit_then["params"], (fit_now["params"], fit_then["params"])
    assert pd.read_csv(wd / "results/headline.csv").equals(
        pd.read_csv(completed_run / "results/headline.csv")
    )
