"""The rules walked backwards from a file, as Snakemake builds its DAG: which rule makes a file, with which
wildcards, and what that job reads. The report rule's inputs (``pipeline.upstream_benchmarks``) and the
stop on missing files (``holes``) use it. Standard library only: Snakemake imports it while it parses the
workflow.
"""

from __future__ import annotations

import os


def producer(rules, path: str):
    """The rule that makes ``path`` (the most specific one where several match), or None for a source."""
    producers = [r for r in rules if r.is_producer(path)]
    return min(producers, key=lambda r: len(r.wildcard_names)) if producers else None


def all_exist(paths) -> bool:
    paths = [str(p) for p in paths]
    return bool(paths) and all(os.path.exists(p) for p in paths)


def walk_upstream(targets: list[str], rules, targets_done: bool | None = None):
    """Walk the rules backwards from ``targets`` as Snakemake builds its DAG: for each file, the rule that
    makes it, that job's wildcards (from the file's path) and its inputs in turn. Yields ``(path, rule,
    wildcards, consumer_done, first)`` for every file a rule makes: ``consumer_done`` whether the outputs
    of some job that reads it all exist (``targets_done`` for the targets themselves; None throughout,
    and no output checked, where ``targets_done`` is None), ``first`` whether this is the first file met
    of its job. A file is met again when a consumer that is done reads it after one that is not.
    ``rules``: Snakemake ``Rule`` objects (``workflow.rules``)."""
    seen_files: dict[str, bool] = {}
    seen_jobs: set = set()
    stack = [(str(p), targets_done) for p in reversed(targets)]
    while stack:
        path, consumer_done = stack.pop()
        if path in seen_files and (seen_files[path] or not consumer_done):
            continue
        seen_files[path] = consumer_done
        rule = producer(rules, path)
        if rule is None:
            continue
        wildcards = rule.get_wildcards(path)
        job = (rule.name, tuple(sorted(wildcards.items())))
        first = job not in seen_jobs
        seen_jobs.add(job)
        yield path, rule, wildcards, consumer_done, first
        if first:
            done = None if targets_done is None else all_exist(rule.expand_output(wildcards)[0])
            stack.extend((str(f), done) for f in reversed(rule.expand_input(wildcards)[0]))
