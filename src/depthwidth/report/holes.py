"""Files a finished report was built from that are now missing.

Snakemake deletes the outputs of a job that fails, and a plain run does not remake a missing file whose
consumers are all present and up to date: it answers "Nothing to be done" (Snakemake 9.27 counts missing
output only for target jobs and for the dependencies of jobs that run). After a failed ``--forcerun`` the
cells of the failed jobs would stay missing while the report still shows the results made from them.
``missing_upstream`` finds those files by walking the rules backwards from the report's inputs, as
Snakemake builds its DAG, and keeps those that Snakemake's records (``.snakemake/metadata``) list as an
input of a present output (not those whose producing job left a log: Snakemake deletes a job's old log
when the job starts, so a job killed in its first second leaves none). ``remake_command`` gives the one
command that remakes them and then the sections and the report that use them (missing target files make their jobs run, and every job
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


LEFTOVER_SCRIPT = Path(".snakemake") / "move_leftover_outputs.sh"


def _seal(path: str) -> str:
    """The seal beside ``path`` (``depthwidth.integrity.seal_path``: ``.<name>.seal.json``)."""
    p = Path(path)
    return str(p.with_name(f".{p.name}.seal.json"))


def leftover_moves(leftovers: dict[str, str], dest: str = "$dest") -> list[str]:
    """One shell command per leftover file: make its folder under ``dest`` and move the file there, with its
    seal where it has one, keeping its path relative to the working folder."""
    out = []
    for f in sorted(leftovers):
        folder = os.path.dirname(f)
        target = f'"{dest}"/{shlex.quote(folder)}' if folder else f'"{dest}"'
        files = [f] + ([_seal(f)] if os.path.exists(_seal(f)) else [])
        out.append(f"mkdir -p {target} && mv -- {' '.join(map(shlex.quote, files))} {target}/")
    return out


def write_leftover_script(leftovers: dict[str, str], path: str | Path = LEFTOVER_SCRIPT) -> Path:
    """A shell script that moves every leftover file and its seal into a folder given as its argument
    (default ``../old_results``), keeping their paths: ``sh <path> [DEST]``, run in the working folder."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        "#!/bin/sh",
        f"# Moves the {len(leftovers)} file(s) that no rule of this workflow makes now, each with its seal,",
        "# out of the working folder into DEST (default ../old_results), keeping their paths.",
        "# Run it in the working folder: sh " + str(path) + " [DEST]",
        "set -e",
        'dest="${1:-../old_results}"',
        *leftover_moves(leftovers),
        'echo "moved ' + str(len(leftovers)) + ' file(s) and their seals to $dest"',
    ]
    tmp = path.with_name(f".{path.name}.partial-{os.getpid()}")
    tmp.write_text("\n".join(lines) + "\n")
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)
    return path


def leftover_message(leftovers: dict[str, str], shown: int = 10, script: str | Path = LEFTOVER_SCRIPT) -> str:
    """The warning that names the leftover files, their seals and the command that moves them all
    (``sh <script>``, written by :func:`write_leftover_script`)."""
    files = sorted(leftovers)

    def line(f):
        seal = f"; seal {_seal(f)}" if os.path.exists(_seal(f)) else ""
        return f"  - {f} (rule {leftovers[f]}{seal})"

    lines = "\n".join(line(f) for f in files[:shown]) + (
        f"\n  - … and {len(files) - shown} more" if len(files) > shown else ""
    )
    moves = leftover_moves(leftovers, "../old_results")
    return (
        f"{len(files)} file(s) were made by a rule of an earlier version that no rule of this workflow "
        f"makes now (an upgrade renamed or moved its outputs):\n{lines}\n"
        "Nothing reads them and the report does not show them; their numbers are not this version's. "
        "Delete them with their seals, or move them out of the working folder to keep them (each with "
        f"its seal, keeping its path):\n  sh {script} ../old_results\n"
        + (
            "which runs:\n" + "\n".join(f"  {m}" for m in moves)
            if len(moves) <= 3
            else f"which runs one such line per file, e.g.\n  {moves[0]}"
        )
    )


def missing_upstream(
    inputs: list[str], outputs: list[str], rules, metadata: str | Path = METADATA
) -> dict[str, str]:
    """Every file that is missing now, that a job made before, and that is read by a job whose outputs all
    exist (so Snakemake would neither run that job nor remake the file): among ``inputs`` when all of
    ``outputs`` (the report's) exist, and among the inputs of every job upstream of them.

    "Made before" is read from Snakemake's own records (``metadata``, ``.snakemake/metadata``): the file is
    among the inputs recorded for an output that is present (``recorded_inputs``), so a present result was
    built from it. Snakemake writes those records when a job ends and keeps them when a later job that
    makes the file fails or is killed (it deletes only the records of that job's own outputs), whereas it
    deletes a job's old log when the job starts: a job killed before its script opened the log leaves no log
    but the records of the files made from its outputs. A file of a job that never ran (a cell just added
    to a grid) is in no record and is left to Snakemake. Only where no record of a present output can be
    read (a folder copied without ``.snakemake/``) does the producing job's log stand in for the records.
    ``rules``: Snakemake ``Rule`` objects (``workflow.rules``). Returns file -> the rule that makes it."""
    missing = {
        path: (rule, wildcards)
        for path, rule, wildcards, consumer_done, _ in walk_upstream(inputs, rules, all_exist(outputs))
        if consumer_done and not os.path.exists(path)
    }
    if not missing:
        return {}
    built_from = recorded_inputs(metadata)
    if built_from is None:
        return {h: r.name for h, (r, w) in missing.items() if all_exist(r.expand_log(w))}
    return {h: r.name for h, (r, _) in missing.items() if h in built_from}


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
