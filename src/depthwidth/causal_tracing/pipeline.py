"""Glue between the ``causal_tracing:`` config section and its rules: job list, paths and params (``RULES``).

One job per (model, fact): ``results/causal_tracing/{model}/{fact}.json`` (summary) and ``.npy`` (the
L × T restored-probability matrix). Adding a fact or a model adds jobs and reruns nothing else; editing a
fact reruns that fact's jobs only (its params are the fact alone). ``batch_rows`` changes speed, not
results: it reaches the jobs as the ``speed`` params.
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


def trace_params(config: dict, wildcards: dict) -> dict:
    """The params of one trace job: the settings that change results, and its fact."""
    return result_params(
        {**{k: section(config)[k] for k in TRACE_KEYS}, "fact": fact(config, wildcards["fact"])}
    )


def job_files(model: str = "{model}", fact_name: str = "{fact}") -> dict[str, str]:
    return {"summary": f"{RESULTS}/{model}/{fact_name}.json", "matrix": f"{RESULTS}/{model}/{fact_name}.npy"}


def section_inputs(config: dict) -> dict[str, list[str]]:
    """Every job's summary and matrix, model-major, in config order."""
    jobs = [job_files(m, f) for m in models(config) for f in facts(config)]
    return {"summaries": [j["summary"] for j in jobs], "matrices": [j["matrix"] for j in jobs]}


RULES = {
    "causal_tracing_trace": Rule(
        params={"trace": Call(trace_params)},
        speed=Speed(STAGE, SPEED_KEYS),
        threads=2,
        mem_mb="causal_tracing.gpu.mem_mb",
        runtime="causal_tracing.gpu.runtime",
        gpus="causal_tracing.gpu.gpus",
    ),
    "causal_tracing_section": Rule(
        params={"min_p_clean": Key("causal_tracing.min_p_clean")}, mem_mb=1000, runtime=10
    ),
}
