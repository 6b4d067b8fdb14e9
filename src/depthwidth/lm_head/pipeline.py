"""Config → rule params, input lists and checks of the LM-head stage: the only module rules/lm_head.smk
imports. Every function is a plain function of the validated ``config`` (defaults filled in from
``schemas/lm_head.schema.yaml``)."""

from __future__ import annotations

from pathlib import Path

from depthwidth.config import result_params
from depthwidth.config import speed_params as config_speed_params

# keys of lm_head.loss that change how fast a loss job runs, not its numbers (speed_params)
SPEED_KEYS = ("checkpoint_every",)


def models(config: dict) -> list[str]:
    """The models whose LM head is measured (names of the top-level ``models:`` section)."""
    return list(config["lm_head"]["models"])


def decoders(config: dict) -> list[str]:
    """The models with a next-token loss: every family but the encoders (``models.ENCODER_FAMILIES``)."""
    from depthwidth.models.load import ENCODER_FAMILIES

    return [m for m in models(config) if config["models"][m]["family"] not in ENCODER_FAMILIES]


def loss_corpora(config: dict) -> list[str]:
    return list(config["lm_head"]["loss"]["corpora"])


def corpus_spec(config: dict, corpus: str, section: str = "loss") -> dict:
    """``lm_head.<section>.corpora.<corpus>``, keys sorted (rule params: editing one corpus reruns only its jobs)."""
    return result_params(config["lm_head"][section]["corpora"][corpus])


def corpus_input(config: dict, corpus: str, fineweb_shards: list[str], section: str = "loss") -> list[str]:
    """The files a corpus is read from: the FineWeb shards, a pinned raw file (rule fetch_file, mirrors
    first), a local file, or nothing (hub, streamed)."""
    spec = config["lm_head"][section]["corpora"][corpus]
    if spec["source"] == "fineweb":
        return list(fineweb_shards)
    if spec["source"] == "raw":
        return [f"data/raw/{spec['path']}"]
    if spec["source"] == "local":
        return [spec["path"]]
    return []


def corpus_input_function(config: dict, fineweb_shards: list[str], section: str = "loss"):
    """``corpus_input`` as a Snakemake input function of the ``{corpus}`` wildcard."""

    def lm_head_corpus_files(wildcards) -> list[str]:
        return corpus_input(config, wildcards.corpus, fineweb_shards, section)

    return lm_head_corpus_files


def corpus_spec_function(config: dict, section: str = "loss"):
    """``corpus_spec`` as a Snakemake params function of the ``{corpus}`` wildcard."""

    def lm_head_corpus_spec(wildcards) -> dict:
        return corpus_spec(config, wildcards.corpus, section)

    return lm_head_corpus_spec


def n_texts(config: dict) -> int:
    return config["lm_head"]["loss"]["n_texts"]


def geometry_params(config: dict) -> dict:
    return result_params(config["lm_head"]["geometry"])


def loss_params(config: dict) -> dict:
    """What a loss job's numbers depend on besides its model and corpus file: ``max_tokens`` and ``dtype``."""
    sec = config["lm_head"]["loss"]
    return {"max_tokens": sec["max_tokens"], "dtype": sec["dtype"]}


def loss_speed_params(config: dict):
    """The checkpoint interval of a loss job as the rule's ``speed`` params function
    (``depthwidth.config.speed_params``): editing it reruns nothing."""
    return config_speed_params(config["lm_head"]["loss"], SPEED_KEYS, "lm_head.loss")


def loss_gpus(config: dict) -> int:
    return config["lm_head"]["loss"]["gpus"]


def fit_params(config: dict) -> dict:
    return result_params(config["lm_head"]["fit"])


def section_params(config: dict) -> dict:
    return {"dead_norm_fraction": config["lm_head"]["geometry"]["dead_norm_fraction"]}


def fit_inputs(config: dict) -> dict[str, list[str]]:
    """Inputs of rule lm_head_width_fit: every model's geometry row, every (corpus, decoder) loss."""
    return {
        "geometry": [f"results/lm_head/geometry/{m}.json" for m in models(config)],
        "loss": [
            f"results/lm_head/loss/{c}/{m}.json" for c in loss_corpora(config) for m in decoders(config)
        ],
    }


def tokenizers(config: dict) -> list[str]:
    """The models whose tokenizers count token frequencies."""
    return list(config["lm_head"]["token_frequencies"]["tokenizers"])


def token_corpora(config: dict) -> list[str]:
    return list(config["lm_head"]["token_frequencies"]["corpora"])


def token_count_params(config: dict) -> dict:
    return {"min_tokens": config["lm_head"]["token_frequencies"]["min_tokens"]}


def token_fit_params(config: dict) -> dict:
    return {"fit_ranks": list(config["lm_head"]["token_frequencies"]["fit_ranks"])}


def token_count_files(config: dict, ext: str) -> list[str]:
    """Every (corpus, tokenizer) output of rule lm_head_token_counts with extension ``ext`` (parquet: the
    counts, json: the summary), corpus-major."""
    return [
        f"results/lm_head/token_counts/{c}/{m}.{ext}"
        for c in token_corpora(config)
        for m in tokenizers(config)
    ]


def token_fit_inputs(config: dict) -> dict[str, list[str]]:
    return {"counts": token_count_files(config, "parquet"), "summaries": token_count_files(config, "json")}


def section_inputs(config: dict) -> dict:
    """Inputs of rule lm_head_section: the tables, the fits, every model's row norms and the token counts."""
    return {
        "geometry": "results/lm_head/geometry.csv",
        "loss": "results/lm_head/loss.csv",
        "fit": "results/lm_head/width_fit.json",
        "norms": [f"results/lm_head/geometry/{m}_norms.npy" for m in models(config)],
        "token_fit": "results/lm_head/token_frequency_fit.csv",
        "token_counts": token_count_files(config, "parquet"),
    }


# ------------------------------------------------------------------------------------------- checks

_CORPUS_KEYS = {"fineweb": (), "raw": ("path",), "local": ("path",), "hub": ("dataset",)}


def _model_errors(config: dict, key: str, names: list[str]) -> list[str]:
    from depthwidth.models.load import ModelError, model_spec

    known = config.get("models") or {}
    errors = []
    for name in names:
        if name not in known:
            errors.append(
                f"config key '{key}' names '{name}', which is not in the models section "
                f"(known: {', '.join(known) or 'none'}). Fix: add it under models: or remove it."
            )
            continue
        try:
            model_spec(name, known[name])
        except ModelError as e:
            errors.append(str(e))
    return errors


def _corpus_errors(key: str, corpora: dict, manifest: dict | None) -> tuple[list[str], dict | None]:
    from depthwidth.download.fetch import load_manifest

    errors = []
    for name, spec in corpora.items():
        for k in _CORPUS_KEYS[spec["source"]]:
            if not spec.get(k):
                errors.append(f"config key '{key}.{name}.{k}' is required for source '{spec['source']}'")
        if spec["source"] == "local" and spec.get("path") and not Path(spec["path"]).expanduser().exists():
            errors.append(
                f"config key '{key}.{name}.path' is '{spec['path']}', which does not exist (relative paths are "
                f"read from the working directory, {Path.cwd()}). Fix: point it at your parquet, JSON or JSONL "
                f"file, or remove corpus '{name}'."
            )
        if spec["source"] == "raw" and spec.get("path"):
            manifest = manifest if manifest is not None else load_manifest()
            if spec["path"] not in manifest:
                errors.append(
                    f"config key '{key}.{name}.path' is '{spec['path']}', which is not "
                    f"pinned in src/depthwidth/download/manifest.yaml (pinned: {', '.join(manifest)}). Fix: use "
                    "one of those, or source: local with a path to your file."
                )
    return errors, manifest


def check_config(config: dict) -> None:
    """Cross-key checks of the ``lm_head`` section that the JSON schema cannot express, run when the
    workflow is parsed (before any job): model and tokenizer names must be in ``models:`` with a valid
    spec, each corpus must have the keys its source needs, and a ``raw`` path must be pinned in the manifest."""
    from depthwidth.config import ConfigError

    sec = config["lm_head"]
    errors = _model_errors(config, "lm_head.models", sec["models"])
    corpus_errors, manifest = _corpus_errors("lm_head.loss.corpora", sec["loss"]["corpora"], None)
    errors += corpus_errors
    if any(c["source"] == "fineweb" for c in sec["loss"]["corpora"].values()):  # the FineWeb shards
        from depthwidth.download.pipeline import local_file_errors

        errors += [e for e in local_file_errors(config) if e not in errors]
    if "token_frequencies" in sec:  # always after validation; callers may check a partial section
        tf = sec["token_frequencies"]
        errors += _model_errors(config, "lm_head.token_frequencies.tokenizers", tf["tokenizers"])
        errors += _corpus_errors("lm_head.token_frequencies.corpora", tf["corpora"], manifest)[0]
    if errors:
        raise ConfigError("Invalid configuration (nothing was run):\n  - " + "\n  - ".join(errors))
