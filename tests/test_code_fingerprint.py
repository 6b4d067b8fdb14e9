"""Results know the code that made them: every rule's params hold the fingerprint of the package modules its
script runs (``depthwidth.codeprint``), so a plain run reruns exactly the jobs whose code changed, also in a
work folder made by an older checkout; the seals record it and the report's provenance block shows it.

The "older checkout" here is a copy of this checkout's workflow with one stage module changed as a
previous version had it (the depth-toy section writing "no" where the data cannot decide)."""

from __future__ import annotations

import base64
import json
import os
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
from _pipeline import BASE_CONFIGS, SNAKEMAKE, copy_work_folder, env, planned_jobs

from _helpers import REPO
from depthwidth import codeprint
from depthwidth.integrity import seal_path
from depthwidth.provenance import result_code

SCRIPTS = sorted((REPO / "scripts").glob("*.py"))
REPORT = {"report": 1, "all": 1}
TRAIN = ("depth_toy_train", "superposition_train")
WORKFLOW = ("Snakefile", "rules", "scripts", "src", "schemas", "config.yaml", "config", "envs", "profiles")
# what an older version of the depth-toy section did: "no" where this version says "not tested"
OLD_DEPTH_TOY_SECTION = """

_write_section = write_section


def write_section(html_out, headline_out, stage, title, body, rows):  # noqa: F811 - the older verdicts
    old = [{**r, "verdict": "no", "verdict_text": "no"} if r["verdict"] == "not tested" else r for r in rows]
    return _write_section(html_out, headline_out, stage, title, body, old)
"""


# the start of the warning about outputs no rule makes now (depthwidth.report.holes.leftover_message)
LEFTOVER_WARNING = "no rule of this workflow makes now"


def _copy_package(dest: Path) -> Path:
    shutil.copytree(codeprint.ROOT, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return dest


def _fingerprints(root: Path) -> dict[str, str]:
    return {s.stem: codeprint.fingerprint_of(tuple(codeprint.imports_of(s)), root) for s in SCRIPTS}


def test_the_fingerprint_is_the_same_in_every_checkout_of_the_same_code(tmp_path):
    """Two copies of the package, one with other modification times, compiled files in __pycache__ and
    Windows line endings in a module, give every rule the fingerprint this checkout gives it."""
    here = _fingerprints(codeprint.ROOT)
    other = _copy_package(tmp_path / "b" / "depthwidth")
    for f in other.rglob("*.py"):
        os.utime(f, (1_000_000_000, 1_000_000_000))
    (other / "__pycache__").mkdir()
    (other / "__pycache__" / "config.cpython-311.pyc").write_bytes(b"\0junk")
    (other / "depth_toy" / "__pycache__").mkdir(exist_ok=True)
    (other / "depth_toy" / "__pycache__" / "section.cpython-311.pyc").write_bytes(b"junk")
    section = other / "depth_toy" / "section.py"
    section.write_bytes(section.read_bytes().replace(b"\n", b"\r\n"))
    assert _fingerprints(other) == here
    assert (
        len(set(here.values())) >= len(here) - 3
    )  # distinct code, distinct fingerprints (the paper-figure rules share a reader)
    assert all(v.startswith("depthwidth code ") and len(v) == 32 for v in here.values())


def test_an_edit_changes_the_fingerprint_of_exactly_the_rules_that_run_it(tmp_path):
    """Editing the depth-toy section changes only the depth_toy_section rule's fingerprint; editing the
    kernel's C source only superposition_train's; editing the shared file-writing module nearly every rule's."""
    root = _copy_package(tmp_path / "depthwidth")
    before = _fingerprints(root)

    def changed_by(path: str, text: str) -> set[str]:
        f = root / path
        old = f.read_text()
        f.write_text(old + text)
        try:
            now = _fingerprints(root)
        finally:
            f.write_text(old)
        return {k for k in now if now[k] != before[k]}

    assert changed_by("depth_toy/section.py", "\n# edited\n") == {"depth_toy_section"}
    assert changed_by("superposition/kernel.c", "\n/* edited */\n") == {"superposition_train"}
    assert changed_by("report/templates/report.css", "\n/* edited */\n") == {"report"}
    shared = changed_by("files.py", "\n# edited\n")
    assert {"superposition_train", "depth_toy_train", "chinchilla_fit", "report"} <= shared
    assert len(shared) >= len(before) - 3
    assert _fingerprints(root) == before


def test_result_code_names_results_made_by_other_code(tmp_path):
    """The provenance table: a result whose seal records this checkout's fingerprint is current, one that
    records another is 'other code', one that records none is 'not recorded'."""
    modules = ["depthwidth.depth_toy.section", "depthwidth.logs"]
    now = codeprint.fingerprint_of(tuple(modules))
    for name, fp, script in (
        ("a.json", now, "depth_toy_section"),
        ("b.json", "depthwidth code 0123456789abcdef", "superposition_section"),
        ("c.json", None, None),
    ):
        (tmp_path / name).write_text("{}")
        record = {"sha256": "x"}
        if fp:
            record["code"] = {"script": script, "modules": modules, "fingerprint": fp}
        seal_path(tmp_path / name).write_text(json.dumps(record))
    table = result_code([tmp_path / n for n in ("a.json", "b.json", "c.json")]).set_index("script")
    assert table.loc["depth_toy_section", "status"] == "current"
    assert table.loc["superposition_section", "status"] == "other code"
    assert table.loc["?", "status"] == "not recorded"
    assert table.loc["depth_toy_section", "this checkout"] == now.removeprefix("depthwidth code ")
    assert codeprint.running_code() is None  # not a Snakemake job


# ------------------------------------------------------------------ end to end


def _checkout(dest: Path) -> Path:
    """A second checkout of this workflow at ``dest`` (files copied with their modification times)."""
    dest.mkdir(parents=True)
    for name in WORKFLOW:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(src, dest / name)
    return dest


def _snakemake(checkout: Path, wd: Path, *args: str) -> str:
    cmd = [SNAKEMAKE, "-s", str(checkout / "Snakefile"), "-d", str(wd), *args, "--configfile"]
    # the checkout's own package, in Snakemake and in its jobs (which put PYTHONPATH before the workflow's src)
    e = {**env(), "PYTHONPATH": str(checkout / "src")}
    p = subprocess.run([*cmd, *map(str, BASE_CONFIGS)], capture_output=True, text=True, env=e, timeout=900)
    assert p.returncode == 0, (p.stdout + p.stderr)[-5000:]
    return p.stdout + p.stderr


def _verdicts(wd: Path, stage: str) -> list[str]:
    h = pd.read_csv(wd / "results" / "headline.csv")
    return list(h.loc[h["stage"] == stage, "verdict"])


def test_no_job_runs_the_rules_modules():
    """No script's code holds a stage's ``pipeline`` module or ``depthwidth.rules`` (the config → params
    plumbing): editing a rule's params, threads or cost estimate changes no job's fingerprint, so it
    retrains nothing. The trainers read their variants, seeds and cell paths from their stage's own
    modules (``depth_toy.variants``, ``superposition.grid``)."""
    plumbing = {"pipeline.py", "rules.py", "plan.py"}
    held = {
        s.stem: sorted(
            f.relative_to(codeprint.ROOT).as_posix()
            for f in codeprint.code_files(tuple(codeprint.imports_of(s)))
            if f.name in plumbing
        )
        for s in SCRIPTS
    }
    assert len(held) == len(SCRIPTS) > 30 and {s: f for s, f in held.items() if f} == {}
    # the training jobs do hold their stage's science modules
    train = {
        s: codeprint.code_files(tuple(codeprint.imports_of(REPO / "scripts" / f"{s}.py"))) for s in TRAIN
    }
    assert codeprint.ROOT / "depth_toy" / "variants.py" in train["depth_toy_train"]
    assert codeprint.ROOT / "superposition" / "grid.py" in train["superposition_train"]


@pytest.mark.workflow
def test_a_stage_module_edit_plans_that_stage_and_the_report(completed_run, tmp_path):
    """A second checkout of the same code plans nothing in a folder the first completed; editing one
    module of the depth-toy stage plans its section and the report, nothing else, and the dry run gives
    the changed params as the reason."""
    other = _checkout(tmp_path / "checkout")
    text = _snakemake(other, completed_run, "-n", "--cores", "1")
    assert planned_jobs(text) == {} and LEFTOVER_WARNING not in text
    section = other / "src" / "depthwidth" / "depth_toy" / "section.py"
    section.write_text(section.read_text() + OLD_DEPTH_TOY_SECTION)
    text = _snakemake(other, completed_run, "-n", "--cores", "1")
    assert planned_jobs(text) == {"depth_toy_section": 1, **REPORT}, text[-3000:]
    assert "reason: Params have changed since last execution" in text and "depthwidth code " in text


@pytest.mark.workflow
def test_a_fresh_clone_plans_nothing_and_a_script_edit_plans_its_rule(completed_run, tmp_path):
    """A fresh clone of the same commit (every file of the checkout written after the results, as `git
    clone` leaves them) pointed at a finished work folder plans no job: the workflow profile leaves out
    Snakemake's script-mtime `code` trigger, and each rule's fingerprint, which covers its script, is
    unchanged. An edit of one script plans that rule and the report, with the changed fingerprint as the
    reason."""
    clone = _checkout(tmp_path / "clone")
    later = time.time() + 3600
    for f in clone.rglob("*"):
        os.utime(f, (later, later))
    script = clone / "scripts" / "depth_toy_section.py"
    assert all(os.path.getmtime(script) > p.stat().st_mtime for p in (completed_run / "results").rglob("*"))
    text = _snakemake(clone, completed_run, "-n", "--cores", "1")
    assert planned_jobs(text) == {} and "Nothing to be done" in text, text[-3000:]
    script.write_text(script.read_text() + "\n# an edit of the script alone\n")
    text = _snakemake(clone, completed_run, "-n", "--cores", "1")
    assert planned_jobs(text) == {"depth_toy_section": 1, **REPORT}, text[-3000:]
    assert "reason: Params have changed since last execution" in text and "depthwidth code " in text


def test_the_code_fingerprint_covers_the_script(tmp_path):
    """A rule's `code` params entry changes with its script's contents, not with its modification time."""
    script = tmp_path / "depth_toy_section.py"
    shutil.copy2(REPO / "scripts" / "depth_toy_section.py", script)
    fp = codeprint.script_fingerprint(script)
    assert fp == codeprint.script_fingerprint(REPO / "scripts" / "depth_toy_section.py")  # by content
    os.utime(script, (1_000_000_000, 1_000_000_000))
    assert codeprint.script_fingerprint(script) == fp
    script.write_text(script.read_text() + "\n# an edit of the script alone\n")
    assert codeprint.script_fingerprint(script) != fp


@pytest.mark.workflow
def test_a_folder_made_by_an_older_checkout_is_current_after_one_plain_run(completed_run, tmp_path):
    """An older checkout (the depth-toy section says "no" where this one says "not tested") brings a
    folder to its own state; then one plain run of this checkout reruns exactly the jobs whose code
    differs, leaves nothing to do, and the headline table equals this checkout's own complete run;
    the report's provenance records this checkout's code for every section, with no warning."""
    old = _checkout(tmp_path / "old")
    section = old / "src" / "depthwidth" / "depth_toy" / "section.py"
    section.write_text(section.read_text() + OLD_DEPTH_TOY_SECTION)
    wd = copy_work_folder(completed_run, tmp_path / "wd")
    assert planned_jobs(_snakemake(old, wd, "--cores", "2")) == {"depth_toy_section": 1, **REPORT}
    assert "no" in _verdicts(wd, "depth_toy") and _verdicts(completed_run, "depth_toy") != _verdicts(
        wd, "depth_toy"
    )

    text = _snakemake(REPO, wd, "--cores", "2")
    assert planned_jobs(text) == {"depth_toy_section": 1, **REPORT}, text[-3000:]
    assert planned_jobs(_snakemake(REPO, wd, "-n", "--cores", "1")) == {}
    assert pd.read_csv(wd / "results" / "headline.csv").equals(
        pd.read_csv(completed_run / "results" / "headline.csv")
    )
    page = (wd / "results" / "report.html").read_text()
    assert "Code that made each result" in page and "results from different code" not in page
    sealed = [wd / "results" / s / "section.html" for s in ("depth_toy", "superposition", "chinchilla")]
    table = result_code(sealed).set_index("script")
    assert set(table["status"]) == {"current"} and len(table) == 3


@pytest.mark.workflow
def test_outputs_an_upgrade_moved_are_named_at_the_start_and_kept(completed_run, tmp_path):
    """A file an earlier version's job recorded as its output at a path no rule makes now (the main
    Chinchilla fit was results/chinchilla/fit.json before the fit grid) is named with the rule that made
    it at the start of a run; the run plans nothing for it and deletes nothing. A complete folder of this
    version has no such file (the first test above)."""
    wd = copy_work_folder(completed_run, tmp_path / "wd")
    new, old = "results/chinchilla/fits/decomposed/squared/fit.json", "results/chinchilla/fit.json"
    meta = wd / ".snakemake" / "metadata"
    record = meta / base64.urlsafe_b64encode(new.encode()).decode()
    assert json.loads(record.read_text())["rule"] == "chinchilla_fit"
    shutil.copy2(wd / new, wd / old)
    seal = "results/chinchilla/.fit.json.seal.json"
    shutil.copy2(wd / "results/chinchilla/fits/decomposed/squared/.fit.json.seal.json", wd / seal)
    shutil.copy2(record, meta / base64.urlsafe_b64encode(old.encode()).decode())
    text = _snakemake(REPO, wd, "-n", "--cores", "1")
    assert planned_jobs(text) == {}, text[-3000:]
    assert f"1 file(s) were made by a rule of an earlier version that {LEFTOVER_WARNING}" in text, text[
        -3000:
    ]
    assert f"{old} (rule chinchilla_fit; seal {seal})" in text and f"mv -- {old} {seal} " in text
    assert new not in text.split(LEFTOVER_WARNING)[1].split("Nothing reads them")[0]
    assert (wd / old).exists() and (wd / new).exists()
    # the printed command, run as printed in the work folder, moves the file and its seal out of it
    command = text.split("\n  sh ")[1].splitlines()[0]
    done = subprocess.run(["sh", *shlex.split(command)], cwd=wd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not (wd / old).exists() and not (wd / seal).exists() and (wd / new).exists()
    assert (tmp_path / "old_results" / old).read_bytes() == (wd / new).read_bytes()
    assert (tmp_path / "old_results" / seal).is_file()
    assert LEFTOVER_WARNING not in _snakemake(REPO, wd, "-n", "--cores", "1")
