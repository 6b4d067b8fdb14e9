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
"""

from __future__ import annotations

import os
import shlex

from depthwidth.report.pipeline import _all_exist, walk_upstream


def missing_upstream(inputs: list[str], outputs: list[str], rules) -> dict[str, str]:
    """Every file that a job which ran before made, that is missing now, and that is read by a job whose
    outputs all exist (so Snakemake would neither run that job nor remake the file): among ``inputs`` when
    all of ``outputs`` (the report's) exist, and among the inputs of every job upstream of them. "Ran
    before": the producing job's log file exists (Snakemake keeps the log of a failed job and deletes its
    outputs); a file of a job that never ran (a cell just added to a grid) is left to Snakemake.
    ``rules``: Snakemake ``Rule`` objects (``workflow.rules``). Returns file -> the rule that makes it."""
    return {
        path: rule.name
        for path, rule, wildcards, consumer_done, _ in walk_upstream(inputs, rules, _all_exist(outputs))
        if consumer_done and not os.path.exists(path) and _all_exist(rule.expand_log(wildcards))
    }


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
