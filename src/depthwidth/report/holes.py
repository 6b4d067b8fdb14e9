"""Files a finished report was built from that are now missing.

Snakemake deletes the outputs of a job that fails, and a plain run does not remake a missing file whose
consumers are all present and up to date: it answers "Nothing to be done" (Snakemake 9.27 counts missing
output only for target jobs and for the dependencies of jobs that run). After a failed ``--forcerun`` the
cells of the failed jobs would stay missing while the report still shows the results made from them.
``missing_upstream`` finds those files by walking the rules backwards from the report's inputs, as
Snakemake builds its DAG, and ``remake_command`` gives the one command that remakes them and then the
sections and the report that use them (missing target files make their jobs run, and every job
downstream of a job that runs runs too). ``rules/common.smk`` (``stop_on_missing``) stops the workflow
with both before any job starts.

A missing file that no present output was built from is not a hole: after an upgrade that gives a rule a
new output and its consumer a new input, Snakemake's records (``.snakemake/metadata``) list the inputs
each output was made from; the consumer's record lacks the new file, so Snakemake reruns the consumer
(its set of inputs changed) and makes the file first. ``recorded_inputs`` reads those records.

The converse after an upgrade: a file a job of the earlier version recorded as its output, that no rule
makes now (``leftover_outputs``: the rule was renamed or its outputs moved). Snakemake leaves it in place
and nothing reads it; ``rules/common.smk`` (``warn_on_leftovers``) names those files at the start of a run.
"""

from __future__ import annotations

import base64
import json
import os
import shlex
from pathlib import Path

from depthwidth.report.upstream import all_exist, producer, walk_upstream

METADATA = Path(".snakemake") / "metadata"


def _records(metadata: str | Path = METADATA):
    """``(path, record)`` of every output Snakemake recorded that is present (one JSON record per output,
    named by the output path in URL-safe base64, split into folders where longer than a file name may
    be)."""
    root = Path(metadata)
    if not root.is_dir():
        return
    for f in root.rglob("*"):
        if not f.is_file():
            continue
        try:
            path = base64.urlsafe_b64decode("".join(f.relative_to(root).parts)).decode()
            if not os.path.exists(path):
                continue
            record = json.loads(f.read_text())
        except (ValueError, OSError):  # a name that is not a record, a record being written
            continue
        yield path, record


def recorded_inputs(metadata: str | Path = METADATA) -> set[str] | None:
    """Every input file that Snakemake recorded for an output that is present; None where no record of a
    present output could be read (then nothing is known to have been built from anything)."""
    found, read = set(), 0
    for _, record in _records(metadata):
        read += 1
        found.update(record.get("input") or [])
    return found if read else None


def leftover_outputs(rules, metadata: str | Path = METADATA) -> dict[str, str]:
    """Present files that a job recorded as its output and that no rule of this workflow makes now: the
    outputs of an earlier version whose rule an upgrade renamed, moved or removed. Nothing reads them;
    Snakemake leaves them in place. ``rules``: Snakemake ``Rule`` objects (``workflow.rules``). Returns
    file -> the rule that made it (from its record)."""
    return {
        path: str(record.get("rule") or "?")
        for path, record in _records(metadata)
        if producer(rules, path) is None
    }


def leftover_message(leftovers: dict[str, str], shown: int = 10) -> str:
    files = sorted(leftovers)
    lines = "\n".join(f"  - {f} (rule {leftovers[f]})" for f in files[:shown]) + (
        f"\n  - … and {len(files) - shown} more" if len(files) > shown else ""
    )
    return (
        f"{len(files)} file(s) were made by a rule of an earlier version that no rule of this workflow "
        f"makes now (an upgrade renamed or moved its outputs):\n{lines}\n"
        "Nothing reads them and the report does not show them; their numbers are not this version's. "
        "Delete them, or move them out of the working folder to keep them, e.g.\n"
        f"  mkdir -p ../old_results && mv {' '.join(shlex.quote(f) for f in files[:3])}"
        f"{' …' if len(files) > 3 else ''} ../old_results/"
    )


def missing_upstream(
    inputs: list[str], outputs: list[str], rules, metadata: str | Path = METADATA
) -> dict[str, str]:
    """Every file that a job which ran before made, that is missing now, and that is read by a job whose
    outputs all exist (so Snakemake would neither run that job nor remake the file): among ``inputs`` when
    all of ``outputs`` (the report's) exist, and among the inputs of every job upstream of them. "Ran
    before": the producing job's log file exists (Snakemake keeps the log of a failed job and deletes its
    outputs); a file of a job that never ran (a cell just added to a grid) is left to Snakemake.
    ``rules``: Snakemake ``Rule`` objects (``workflow.rules``). Of those, only the files that some present
    output was recorded as built from (``recorded_inputs`` of ``metadata``; all of them where there are no
    records). Returns file -> the rule that makes it."""
    holes = {
        path: rule.name
        for path, rule, wildcards, consumer_done, _ in walk_upstream(inputs, rules, all_exist(outputs))
        if consumer_done and not os.path.exists(path) and all_exist(rule.expand_log(wildcards))
    }
    built_from = recorded_inputs(metadata) if holes else None
    return holes if built_from is None else {h: r for h, r in holes.items() if h in built_from}


def remake_command(target: str, missing: list[str]) -> str:
    """The command that remakes ``missing`` and then ``target`` from them."""
    return " ".join(["snakemake --cores all", shlex.quote(target), *map(shlex.quote, missing)])


def missing_message(target: str, missing: list[str]) -> str:
    shown = "\n".join(f"  - {f}" for f in missing[:20]) + (
        f"\n  - … and {len(missing) - 20} more" if len(missing) > 20 else ""
    )
    return (
        f"{len(missing)} file(s) that {target} was built from are missing (the outputs of a job that "
        f"failed, which Snakemake deletes, or files removed by hand):\n{shown}\n"
        "A plain run would not remake them while the files made from them are present, and the report "
        "would go on showing results whose inputs are gone. Nothing was run. Fix (remakes them, then "
        f"what was made from them):\n  {remake_command(target, missing)}"
    )
