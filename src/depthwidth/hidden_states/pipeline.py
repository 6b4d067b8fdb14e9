"""Config → params (``RULES``), job lists and checks of the hidden-states rules (rules/hidden_states.smk).

Keys that change speed but not results (:data:`SPEED_KEYS`) are kept out of the rerun-triggering params
and reach the extraction as its ``speed`` params.
"""

from __future__ import annotations

from depthwidth.config import ConfigError, result_params
from depthwidth.rules import Call, Key, Keys, Rule, Speed

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
    from depthwidth.models.pipeline import unknown_model_errors

    for error in unknown_model_errors(config, "hidden_states.models", config["hidden_states"]["models"]):
        raise ConfigError(error)
    errors = local_file_errors(config)
    if errors:
        raise ConfigError("Invalid configuration (nothing was run):\n  - " + "\n  - ".join(errors))


def models(config: dict) -> list[str]:
    return list(config["hidden_states"]["models"])


def extract_params(config: dict, wildcards: dict) -> dict:
    """Settings that change the per-token metrics (``n_docs`` from the corpus), keys sorted."""
    hs = config["hidden_states"]
    sub = {k: v for k, v in hs.items() if k not in _NOT_EXTRACTION}
    return result_params({**sub, "n_docs": hs["corpus"]["n_docs"]}, SPEED_KEYS)


def stats_mem_mb(config: dict, wildcards: dict, input) -> int:
    """Host memory of the statistics (a resource function): about five times the per-token file
    (float64 copies, quantiles)."""
    return max(4000, int(5 * input.size_mb))


def compare_inputs(config: dict) -> dict:
    """The per-model summaries rule hidden_states_compare reads, keyed ``summary_<model>``."""
    return {f"summary_{m}": f"results/hidden_states/{m}/summary.json" for m in models(config)}


def section_inputs(config: dict) -> dict:
    """The per-model statistics files the section reads, keyed ``<kind>_<model>``, and the comparisons."""
    return {
        "comparisons": "results/hidden_states/comparisons.csv",
        **{
            f"{key}_{m}": f"results/hidden_states/{m}/{name}"
            for m in models(config)
            for key, name in SECTION_FILES
        },
    }


RULES = {
    "hidden_states_extract": Rule(
        params={"extract": Call(extract_params)},
        speed=Speed("hidden_states", SPEED_KEYS),
        threads=2,
        mem_mb="hidden_states.gpu.mem_mb",
        runtime="hidden_states.gpu.runtime",
        gpus="hidden_states.gpu.gpus",
    ),
    "hidden_states_stats": Rule(
        params={"stats": Keys("hidden_states.stats")}, mem_mb=stats_mem_mb, runtime=60
    ),
    "hidden_states_compare": Rule(params={"models": Key("hidden_states.models")}, mem_mb=1000, runtime=10),
    "hidden_states_section": Rule(params={"models": Key("hidden_states.models")}, mem_mb=2000, runtime=10),
}
