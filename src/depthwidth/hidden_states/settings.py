"""The ``hidden_states`` config section with the schema's defaults filled in, split into the plain
values each rule passes as ``params`` (so that editing one key reruns only what depends on it).

Keys that change speed but not results (``batch_tokens``, ``max_batch_docs``, ``loss_chunk_tokens``,
``checkpoint_every_s``) are left out of ``params`` on purpose: tuning them on a cluster reruns nothing.
"""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from depthwidth.config import SCHEMA_DIR

SPEED_KEYS = ("batch_tokens", "max_batch_docs", "loss_chunk_tokens", "checkpoint_every_s")


def _fill(value, schema: dict):
    if schema.get("type") == "object" and isinstance(value, dict):
        out = dict(value)
        for key, sub in schema.get("properties", {}).items():
            if key not in out and "default" in sub:
                out[key] = copy.deepcopy(sub["default"])
            if key not in out and sub.get("type") == "object":
                out[key] = {}
            if key in out:
                out[key] = _fill(out[key], sub)
        return out
    return value


def section(config: dict, schema_dir: str | Path = SCHEMA_DIR) -> dict:
    """``config["hidden_states"]`` with every default of ``schemas/hidden_states.schema.yaml`` filled in."""
    schema = yaml.safe_load((Path(schema_dir) / "hidden_states.schema.yaml").read_text())
    return _fill(config.get("hidden_states", {}), schema)


def corpus_params(sec: dict) -> dict:
    """Keys of the FineWeb download, in a fixed order."""
    c = sec["corpus"]
    keys = ("name", "source", "hub_dataset", "hub_config", "hub_revision", "split", "mirror_file", "mirror_docs",
            "local_path", "text_column", "n_docs", "docs_per_shard")
    return {k: c.get(k) for k in keys}


def extract_params(sec: dict) -> dict:
    """Keys that change the per-token metrics, in a fixed order."""
    return {"n_docs": sec["corpus"]["n_docs"], "max_tokens": sec["max_tokens"], "device": sec["device"],
            "dtype": sec["dtype"], "losses": list(sec["losses"]), "loss_stride": sec["loss_stride"],
            "keep_raw_tokens": sec["keep_raw_tokens"]}


def speed_settings(sec: dict) -> dict:
    return {k: sec[k] for k in SPEED_KEYS}


def stats_params(sec: dict) -> dict:
    s = sec["stats"]
    keys = ("middle", "quantiles", "n_components", "max_robust_distance", "n_clusters", "improvement_fraction",
            "early_depth", "sample_tokens", "seed")
    return {k: s[k] for k in keys}
