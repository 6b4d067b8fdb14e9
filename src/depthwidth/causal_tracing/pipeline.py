"""Glue between the ``causal_tracing:`` config section and its rules: job list, paths and params (``RULES``).

One job per model, which loads the model once and traces every fact: ``results/causal_tracing/{model}/
{fact}.json`` (summary) and ``.npy`` (the L × T restored-probability matrix) for each fact. Loading costs
more than tracing a fact on a CPU (about 9 of 12 CPU-s of a one-fact job for SmolLM2-135M), so a job per
model × fact would pay it once per fact. Adding a model adds a job and reruns nothing else; adding or editing a
fact reruns that model's jobs (the facts are in their params). ``batch_rows`` changes speed, not results:
it reaches the jobs as the ``speed`` params.
"""

from __future__ import annotations

from depthwidth.config import ConfigError, result_params
from depthwidth.rules import Call, Key, Rule, Speed

STAGE = "causal_tracing"
RESULTS = "results/causal_tracing"
SPEED_KEYS = ("batch_rows",)
# keys of the section that change every job's result (the fact is added per job)
TRACE_KEYS = ("noise_samples", "seed", "noise_sigmas", "device", "dtype")


def section(config: dict) -> dict:
    """The stage's config section ({} when the config has none)."""
    return config.get(STAGE) or {}


def enabled(config: dict) -> bool:
    return STAGE in config["stages"]


def check(config: dict) -> None:
    """Errors the schema cannot express, raised before any job starts: unknown models, duplicate fact names."""
    from depthwidth.models.load import ENCODER_FAMILIES
    from depthwidth.models.pipeline import unknown_model_errors

    cfg, known = section(config), config.get("models") or {}
    for error in unknown_model_errors(config, "causal_tracing.models", cfg["models"]):
        raise ConfigError(error)
    encoders = [m for m in cfg["models"] if known[m].get("family") in ENCODER_FAMILIES]
    if encoders:
        raise ConfigError(
            f"config key 'causal_tracing.models': {', '.join(map(repr, encoders))} is encoder-only (family "
            f"{', '.join(ENCODER_FAMILIES)}); causal tracing reads a next-token probability and needs a decoder. "
            "Fix: remove it from causal_tracing.models."
        )
    names = [f["name"] for f in cfg["facts"]]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ConfigError(
            f"config key 'causal_tracing.facts': names {dup} are used twice; each fact needs its own name"
        )


def models(config: dict) -> list[str]:
    return list(section(config)["models"]) if enabled(config) else []


def facts(config: dict) -> list[str]:
    return [f["name"] for f in section(config)["facts"]] if enabled(config) else []


def fact(config: dict, name: str) -> dict:
    """One fact as the trace needs it: name, prompt, subject, target (None: the prompt's last word)."""
    f = next(f for f in section(config)["facts"] if f["name"] == name)
    return {"name": f["name"], "prompt": f["prompt"], "subject": f["subject"], "target": f["target"]}


def trace_params(config: dict, wildcards: dict | None = None) -> dict:
    """The params of one model's trace job: the settings that change results, and the facts in config order."""
    return result_params(
        {**{k: section(config)[k] for k in TRACE_KEYS}, "facts": [fact(config, f) for f in facts(config)]}
    )


def job_files(config: dict, model: str = "{model}") -> dict[str, list[str]]:
    """One model's trace outputs: a summary and a matrix per fact, in config order."""
    names = facts(config)
    return {
        "summaries": [f"{RESULTS}/{model}/{f}.json" for f in names],
        "matrices": [f"{RESULTS}/{model}/{f}.npy" for f in names],
    }


def compare_inputs(config: dict) -> dict[str, list[str]]:
    """Every job's summaries and matrices, model-major, facts in config order."""
    jobs = [job_files(config, m) for m in models(config)]
    return {k: [f for j in jobs for f in j[k]] for k in ("summaries", "matrices")}


def section_inputs(config: dict) -> dict:
    """The tables and comparisons of rule causal_tracing_compare, and every job's summaries and matrices
    (the maps)."""
    return {
        "pairs": f"{RESULTS}/pairs.csv",
        "peaks": f"{RESULTS}/peak_depths.csv",
        "comparisons": f"{RESULTS}/comparisons.csv",
        **compare_inputs(config),
    }


RULES = {
    "causal_tracing_trace": Rule(
        params={"trace": Call(trace_params)},
        speed=Speed(STAGE, SPEED_KEYS),
        threads=2,
        mem_mb="causal_tracing.gpu.mem_mb",
        runtime="causal_tracing.gpu.runtime",
        gpus="causal_tracing.gpu.gpus",
    ),
    "causal_tracing_compare": Rule(
        params={"min_p_clean": Key("causal_tracing.min_p_clean")}, mem_mb=1000, runtime=10
    ),
    "causal_tracing_section": Rule(
        params={"min_p_clean": Key("causal_tracing.min_p_clean")}, mem_mb=1000, runtime=10
    ),
}
