"""Results know the code that made them: every rule's params hold the fingerprint of the package modules its
script runs (``depthwidth.codeprint``), so a plain run reruns exactly the jobs whose code changed, also in a
work folder made by an older checkout; the seals record it and the report's provenance block shows it.

The "older checkout" here is a copy of this checkout's workflow with one stage module changed as a
previous version had it (the depth-toy section writing "no" where the data cannot decide)."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
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

_headline_row = headline_row


def headline_row(*args, **kwargs):  # noqa: F811 - the older version's verdicts
    row = _headline_row(*args, **kwargs)
    return {**row, "agree": False if row["agree"] is None else row["agree"]}
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
    assert len(held) == 39 and {s: f for s, f in held.items() if f} == {}
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
    shutil.copy2(record, meta / base64.urlsafe_b64encode(old.encode()).decode())
    text = _snakemake(REPO, wd, "-n", "--cores", "1")
    assert planned_jobs(text) == {}, text[-3000:]
    assert f"1 file(s) were made by a rule of an earlier version that {LEFTOVER_WARNING}" in text, text[
        -3000:
    ]
    assert f"{old} (rule chinchilla_fit)" in text and f"mv {old} ../old_results/" in text
    assert new not in text.split(LEFTOVER_WARNING)[1].split("Nothing reads them")[0]
    assert (wd / old).exists() and (wd / new).exists()
