"""Config → params, job lists and resources of the hidden-states rules (rules/hidden_states.smk).

Plain functions of the validated config: the schema's defaults (``schemas/hidden_states.schema.yaml``)
are already filled in by ``depthwidth.config.validate_config``. Keys that change speed but not results
(:data:`SPEED_KEYS`) are kept out of the rerun-triggering params (``depthwidth.config.result_params``)
and reach the extraction through :func:`speed_params` (``depthwidth.config.speed_params``, the one way
every stage passes its speed knobs).
"""

from __future__ import annotations

from depthwidth.config import ConfigError, result_params
from depthwidth.config import speed_params as config_speed_params

SPEED_KEYS = ("batch_tokens", "max_batch_docs", "loss_chunk_tokens", "checkpoint_every_s")
# Keys of the section that are not settings of the extraction itself.
_NOT_EXTRACTION = ("corpus", "models", "gpu", "stats")

SECTION_FILES = (
    ("layers", "layer_stats.csv"),
    ("groups", "token_groups.csv"),
    ("sample", "token_sample.parquet"),
    ("summary", "summary.json"),
)


def check(config: dict) -> None:
    """A model name missing from ``models:`` (a typo) stops here, naming the key, rather than later as a
    MissingInputException about files of a model that can never exist."""
    from depthwidth.download.pipeline import local_file_errors

    known = config.get("models") or {}
    unknown = [m for m in config["hidden_states"]["models"] if m not in known]
    if unknown:
        raise ConfigError(
            f"config key 'hidden_states.models' names {', '.join(map(repr, unknown))}, which is not in the "
            f"models section (known: {', '.join(known) or 'none'}). Fix: add it under models: or remove it."
        )
    errors = local_file_errors(config)
    if errors:
        raise ConfigError("Invalid configuration (nothing was run):\n  - " + "\n  - ".join(errors))


def models(config: dict) -> list[str]:
    return list(config["hidden_states"]["models"])


def extract_params(config: dict) -> dict:
    """Settings that change the per-token metrics (``n_docs`` from the corpus), keys sorted."""
    hs = config["hidden_states"]
    sub = {k: v for k, v in hs.items() if k not in _NOT_EXTRACTION}
    return result_params({**sub, "n_docs": hs["corpus"]["n_docs"]}, SPEED_KEYS)


def speed_params(config: dict):
    """The speed-only settings of the extraction (batch sizes, decoding chunk, checkpoint interval) as
    the rule's ``speed`` params function (``depthwidth.config.speed_params``): tuning them reruns nothing."""
    return config_speed_params(config["hidden_states"], SPEED_KEYS, "hidden_states")


def gpu_resources(config: dict) -> dict:
    """``gpus``, ``mem_mb`` and ``runtime`` of the extraction rule on a cluster."""
    return config["hidden_states"]["gpu"]


def stats_params(config: dict) -> dict:
    return result_params(config["hidden_states"]["stats"])


def stats_mem_mb(wildcards, input) -> int:
    """Host memory of the statistics (a resource function): about five times the per-token file
    (float64 copies, quantiles)."""
    return max(4000, int(5 * input.size_mb))


def section_inputs(config: dict) -> dict:
    """The per-model statistics files the section reads, keyed ``<kind>_<model>``."""
    return {
        f"{key}_{m}": f"results/hidden_states/{m}/{name}"
        for m in models(config)
        for key, name in SECTION_FILES
    }
