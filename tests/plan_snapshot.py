"""The plan of a config as data: every job Snakemake plans (all forced, in an empty working folder) with
its rule, wildcards, inputs, outputs, log, benchmark, params, rerun-triggering params, threads and
resources (at attempt 1 and 2). ``tests/test_plan_snapshot.py`` compares it with the recorded plan in
``tests/data/plan_snapshot.json.gz``, so a change of how rules get their params that changes any job, or
any rerun trigger, fails there.

    PYTHONPATH=src python tests/plan_snapshot.py --write     # record the plans of CONFIGS
    PYTHONPATH=src python tests/plan_snapshot.py config.yaml config/test.yaml   # one plan as JSON

Values are recorded as ``repr`` strings, which is how Snakemake records params for its params rerun
trigger (``persistence._params``): equal strings are equal Python values (dict key order included).
Paths of the checkout and of the working folder (and of their parents) are written as ``<repo>`` and
``<workdir>`` (``<repo>/..``, ``<workdir>/..``), so the record holds in a checkout anywhere.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SNAPSHOT = REPO / "tests" / "data" / "plan_snapshot.json.gz"
# name -> config files, in the order Snakemake overlays them
CONFIGS = {
    "default": ["config.yaml"],
    "test": ["config.yaml", "config/test.yaml"],
    "paper": ["config.yaml", "config/paper.yaml"],
}


def _plain(value, repo: str, workdir: str) -> str:
    # The parents too: config's `../shared/data` mirror resolves against both. Longest path first, so a
    # checkout inside the temporary folder's parent (or the other way round) is written the same way.
    names = {
        workdir: "<workdir>",
        str(Path(workdir).parent): "<workdir>/..",
        repo: "<repo>",
        str(Path(repo).parent): "<repo>/..",
    }
    text = repr(value)
    for path in sorted((p for p in names if len(p) > 1), key=len, reverse=True):
        text = text.replace(path, names[path])
    return text


def _job(job, persistence, repo: str, workdir: str) -> dict:
    def p(v):
        return _plain(v, repo, workdir)

    names = dict(job.params._names)
    # The `code` entry (the fingerprint of the package code the rule runs, depthwidth.codeprint) changes
    # with every edit of that code by design; it is tested on its own, so the plan leaves it out.
    code = job.params["code"] if "code" in names else None
    names.pop("code", None)
    params = {name: p(job.params[name]) for name in names}
    params.update(
        {
            f"#{i}": p(v)
            for i, v in enumerate(job.params)
            if i not in {n[0] for n in names.values()} and v != code
        }
    )
    record = {
        "rule": job.rule.name,
        "wildcards": {k: str(v) for k, v in sorted(job.wildcards_dict.items())},
        "input": p(sorted(str(f) for f in job.input)),
        "output": p(sorted(str(f) for f in job.output)),
        "output_names": p(sorted(dict(job.output._names))),
        "log": p([str(f) for f in job.log]),
        "benchmark": p(str(job.benchmark) if job.benchmark else None),
        "params": params,
        "rerun_params": [v for v in persistence._params(job) if code is None or v not in (code, repr(code))],
        "threads": job.threads,
        "priority": job.rule.priority,
        "resources": {},
    }
    for attempt in (1, 2):
        job.attempt = attempt
        job._resources = None
        skip = {"tmpdir"}  # the machine's temporary folder
        record["resources"][attempt] = {
            k: p(v) for k, v in sorted(job.resources.items()) if k not in skip and not k.startswith("_")
        }
    return record


def plan(configs: list[str]) -> dict[str, dict]:
    """Job key ('rule wildcards') -> record, for the Snakefile of this checkout with ``configs`` (paths
    relative to the checkout) overlaid, planned with every job forced in an empty working folder."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import (
        ConfigSettings,
        DAGSettings,
        OutputSettings,
        ResourceSettings,
        StorageSettings,
    )

    with tempfile.TemporaryDirectory() as tmp:
        # one level down, so that the working folder's parent is a fresh folder, never the checkout's
        workdir = str(Path(tmp).resolve() / "work")
        Path(workdir).mkdir()
        with SnakemakeApi(OutputSettings(quiet={"all"})) as api:
            wf = api.workflow(
                snakefile=REPO / "Snakefile",
                workdir=Path(workdir),
                config_settings=ConfigSettings(configfiles=[REPO / c for c in configs]),
                resource_settings=ResourceSettings(cores=2),
                storage_settings=StorageSettings(),
            )
            wf.dag(DAGSettings(forceall=True))
            workflow = wf._workflow
            workflow._prepare_dag(forceall=True, ignore_incomplete=True, lock_warn_only=True, nolock=True)
            workflow._build_dag()
            out = {}
            for job in workflow.dag.jobs:
                key = f"{job.rule.name} " + " ".join(
                    f"{k}={v}" for k, v in sorted(job.wildcards_dict.items())
                )
                out[key] = _job(job, workflow.persistence, str(REPO), workdir)
    return dict(sorted(out.items()))


def plan_in_child(configs: list[str]) -> dict[str, dict]:
    """:func:`plan` in a fresh Python (Snakemake keeps global state; the checkout's package is imported)."""
    p = subprocess.run(
        [sys.executable, __file__, *configs],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "PYTHONPATH": str(REPO / "src")},
        timeout=600,
        cwd=REPO,
    )
    if p.returncode:
        raise RuntimeError(f"planning {configs} failed:\n{p.stderr[-4000:]}")
    return json.loads(p.stdout)


def main(argv: list[str]) -> None:
    if argv == ["--write"]:
        snap = {name: plan_in_child(files) for name, files in CONFIGS.items()}
        # an absolute path left in the record holds only in this checkout's place (a mirror reached through
        # a symlink resolves outside <repo>/..): record from a checkout whose ../shared is a real folder
        absolute = sorted(set(re.findall(r"'(/[^']*)'", json.dumps(snap))))
        if absolute:
            raise SystemExit(
                f"not written: the plans hold absolute paths {absolute[:5]}; see the comment above"
            )
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_bytes(gzip.compress(json.dumps(snap, indent=0).encode(), mtime=0))
        print(f"{SNAPSHOT}: " + ", ".join(f"{k} {len(v)} jobs" for k, v in snap.items()))
    else:
        json.dump(plan(argv), sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
