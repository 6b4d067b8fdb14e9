"""What a validated config asks for, checked before Snakemake builds the DAG (``rules/common.smk`` calls
``check_plan`` right after ``validate_config``):

- ``job_counts``: the jobs each stage's grid implies, with the config keys that multiply up to them,
  counted from the stages' ``pipeline`` modules without listing the jobs. ``check_job_count`` stops a
  config that plans more than ``max_jobs`` jobs (a grid of 10^6 cells otherwise takes minutes and
  gigabytes of memory to plan before any message).
- ``output_folders`` and ``check_outputs_inside``: the folders that config names become part of (models,
  corpora, variants, laws) must stay under the working directory; the schemas' name patterns already
  forbid '/' and '..', this is the second fence.

Light to import (no torch): Snakemake imports it every time it parses the workflow.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

from depthwidth.config import ConfigError


@dataclass
class StageJobs:
    """``count`` jobs of one kind; ``factors`` are (config key, size) pairs whose product is the bulk of it."""

    stage: str
    what: str
    count: int
    factors: list[tuple[str, int]] = field(default_factory=list)

    def describe(self) -> str:
        why = " × ".join(f"{k} ({n:,})" for k, n in self.factors)
        return f"{self.stage}: {self.count:,} {self.what}" + (f" = {why}" if why else "")


def _superposition(sec: dict) -> list[StageJobs]:
    from depthwidth.superposition import pipeline

    factors = [
        ("superposition.alphas + superposition.distributions", len(pipeline.distributions(sec))),
        ("superposition.weight_decays", len(sec["weight_decays"])),
        ("superposition.widths", len(sec["widths"])),
        ("superposition.seeds", len(sec["seeds"])),
    ]
    return [StageJobs("superposition", "training jobs (cells)", math.prod(n for _, n in factors), factors)]


def _depth_toy(sec: dict) -> list[StageJobs]:
    from depthwidth.depth_toy import pipeline

    variants = sec["variants"]
    kinds = max((len(pipeline.variant_kinds(sec, v)) for v in variants), default=0)
    jobs = sum(len(pipeline.variant_kinds(sec, v)) for v in variants) * sec["replicates"]
    students = (
        sum(
            len(pipeline.variant_kinds(sec, v))
            * len(variants[v]["depths"])
            * len(pipeline.variant_temperatures(sec, v))
            for v in variants
        )
        * sec["replicates"]
    )
    return [
        StageJobs(
            "depth_toy",
            "training jobs",
            jobs,
            [
                ("depth_toy.variants", len(variants)),
                ("depth_toy.kinds", kinds),
                ("depth_toy.replicates", sec["replicates"]),
            ],
        ),
        # each student is an output file of its job: they weigh on the DAG like jobs do
        StageJobs(
            "depth_toy",
            "student output files",
            students,
            [
                ("depth_toy.variants.<v>.depths", max(len(v["depths"]) for v in variants.values())),
                (
                    "depth_toy.variants.<v>.temperatures",
                    max(len(pipeline.variant_temperatures(sec, v)) for v in variants),
                ),
            ],
        ),
    ]


def _hidden_states(sec: dict) -> list[StageJobs]:
    corpus = sec["corpus"]
    shards = math.ceil(corpus["n_docs"] / corpus["docs_per_shard"])
    return [
        StageJobs(
            "hidden_states",
            "FineWeb shard files",
            shards,
            [
                ("hidden_states.corpus.n_docs", corpus["n_docs"]),
                ("1 / hidden_states.corpus.docs_per_shard", corpus["docs_per_shard"]),
            ],
        ),
        StageJobs(
            "hidden_states",
            "extraction and statistics jobs",
            2 * len(sec["models"]),
            [("hidden_states.models", len(sec["models"])), ("rules", 2)],
        ),
    ]


def _lm_head(sec: dict) -> list[StageJobs]:
    models, corpora = len(sec["models"]), len(sec["loss"]["corpora"])
    tok = sec["token_frequencies"]
    return [
        StageJobs("lm_head", "geometry jobs", models, [("lm_head.models", models)]),
        StageJobs("lm_head", "corpus jobs", corpora, [("lm_head.loss.corpora", corpora)]),
        StageJobs(
            "lm_head",
            "loss jobs (at most)",
            models * corpora,
            [("lm_head.models", models), ("lm_head.loss.corpora", corpora)],
        ),
        StageJobs(
            "lm_head",
            "token-count jobs",
            len(tok["tokenizers"]) * len(tok["corpora"]),
            [
                ("lm_head.token_frequencies.tokenizers", len(tok["tokenizers"])),
                ("lm_head.token_frequencies.corpora", len(tok["corpora"])),
            ],
        ),
    ]


_STAGES = {
    "superposition": _superposition,
    "depth_toy": _depth_toy,
    "hidden_states": _hidden_states,
    "lm_head": _lm_head,
}


def job_counts(config: dict) -> list[StageJobs]:
    """The jobs (and output files that weigh like jobs) each configured stage implies, from a validated
    config. Every configured section counts, enabled or not: the rules are built from all of them."""
    out = [
        StageJobs(
            "models",
            "model fetch jobs",
            len(config.get("models") or {}),
            [("models", len(config.get("models") or {}))],
        )
    ]
    for stage, count in _STAGES.items():
        if config.get(stage):
            out += count(config[stage])
    return out


def check_job_count(config: dict) -> list[StageJobs]:
    """Raise ``ConfigError`` naming the keys that multiply up when the config plans more than
    ``config['max_jobs']`` jobs in all; return the counts otherwise."""
    counts = job_counts(config)
    total = sum(c.count for c in counts)
    limit = config["max_jobs"]
    if total > limit:
        big = sorted(counts, key=lambda c: -c.count)
        lines = "\n".join(f"  - {c.describe()}" for c in big if c.count > 0)
        raise ConfigError(
            f"This config plans {total:,} jobs and output files, more than max_jobs = {limit:,} (nothing was "
            f"run; planning that many takes minutes and gigabytes before the first job):\n{lines}\n"
            "Fix: shrink the lists above (the largest first), or, if you mean it, raise the top-level key "
            f"max_jobs (e.g. max_jobs: {10 ** math.ceil(math.log10(total + 1))}) in your --configfile."
        )
    return counts


def output_folders(config: dict) -> dict[str, str]:
    """Config key -> a folder (relative to the working directory) that the key's name becomes part of."""
    out = {f"models.{m}": f"data/models/{m}" for m in config.get("models") or {}}
    hs = config.get("hidden_states")
    if hs:
        out["hidden_states.corpus.name"] = f"data/fineweb/{hs['corpus']['name']}"
        out.update({f"hidden_states.models ({m})": f"results/hidden_states/{m}" for m in hs["models"]})
    lm = config.get("lm_head")
    if lm:
        out.update({f"lm_head.models ({m})": f"results/lm_head/geometry/{m}" for m in lm["models"]})
        out.update({f"lm_head.loss.corpora.{c}": f"results/lm_head/loss/{c}" for c in lm["loss"]["corpora"]})
        out.update(
            {
                f"lm_head.token_frequencies.corpora.{c}": f"results/lm_head/token_counts/{c}"
                for c in lm["token_frequencies"]["corpora"]
            }
        )
    dt = config.get("depth_toy")
    if dt:
        out.update({f"depth_toy.variants.{v}": f"results/depth_toy/runs/tied/{v}" for v in dt["variants"]})
    sp = config.get("superposition")
    if sp:
        from depthwidth.superposition import pipeline

        out.update(
            {f"superposition law {d}": f"results/superposition/cells/{d}" for d in pipeline.distributions(sp)}
        )
    return out


def check_outputs_inside(config: dict, root: str | Path = ".") -> None:
    """Raise ``ConfigError`` when a folder made from a config name resolves outside ``root`` (the working
    directory), naming the key."""
    root = Path(os.path.realpath(root))
    bad = []
    for key, folder in output_folders(config).items():
        p = Path(os.path.realpath(root / folder))
        if p != root and root not in p.parents:
            bad.append(f"  - config key '{key}': {folder} resolves to {p}, outside {root}")
    if bad:
        raise ConfigError(
            "Output paths outside the working directory (nothing was run):\n"
            + "\n".join(bad)
            + "\nFix: rename these entries to plain names (letters, digits, . _ + -)."
        )


def check_plan(config: dict, root: str | Path = ".") -> list[StageJobs]:
    """Both checks, for ``rules/common.smk`` right after validation."""
    counts = check_job_count(config)
    check_outputs_inside(config, root)
    return counts


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - macOS, Windows
        return os.cpu_count() or 1


def shared_cpu_env(cores: int | None, cpus: int, local: bool, environ: dict[str, str]) -> dict[str, str]:
    """Environment for the jobs when ``--cores`` exceeds the CPUs of this machine (``--cores 8`` on a 2-core
    laptop, the documented command), so that jobs share CPUs.

    Torch's OpenMP threads spin while they wait for each other by default; when the jobs outnumber the
    CPUs, a spinning thread burns the time slice another job needed (``bench/bench_cpu_sharing.py``).
    ``OMP_WAIT_POLICY=PASSIVE`` makes them sleep instead. Results are unchanged: the thread counts and the
    arithmetic are the same. Nothing is set for cluster jobs (``local`` False), when the cores fit the CPUs,
    or when the user set the variable.
    """
    if not local or cores is None or cores <= cpus or "OMP_WAIT_POLICY" in environ:
        return {}
    return {"OMP_WAIT_POLICY": "PASSIVE"}
