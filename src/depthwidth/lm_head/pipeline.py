"""Config → rule params (``RULES``), input lists and checks of the LM-head stage: the only module
rules/lm_head.smk imports. Every function is a plain function of the validated ``config`` (defaults filled
in from ``schemas/lm_head.schema.yaml``)."""

from __future__ import annotations

from pathlib import Path

from depthwidth.rules import Key, Keys, Rule, Speed

# keys of lm_head.loss that change how fast a loss job runs, not its numbers (its speed params)
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


def corpus_input(config: dict, corpus: str, fineweb_shards: list[str], section: str = "loss") -> list[str]:
    """The files a corpus is read from: the FineWeb shards, a pinned raw file (rule fetch_pinned_<group>, mirrors
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


def compare_inputs(config: dict) -> dict:
    """Inputs of rule lm_head_compare: the geometry table, the width fit and the token-frequency fit."""
    return {
        "geometry": "results/lm_head/geometry.csv",
        "fit": "results/lm_head/width_fit.json",
        "token_fit": "results/lm_head/token_frequency_fit.csv",
    }


def section_inputs(config: dict) -> dict:
    """Inputs of rule lm_head_section: the tables, the fits, the comparisons, every model's row norms and
    the token counts."""
    return {
        "comparisons": "results/lm_head/comparisons.csv",
        "geometry": "results/lm_head/geometry.csv",
        "loss": "results/lm_head/loss.csv",
        "fit": "results/lm_head/width_fit.json",
        "norms": [f"results/lm_head/geometry/{m}_norms.npy" for m in models(config)],
        "token_fit": "results/lm_head/token_frequency_fit.csv",
        "token_counts": token_count_files(config, "parquet"),
    }


_TOKENS = "lm_head.token_frequencies"
# What each rule takes from the config (depthwidth.rules).
RULES = {
    "lm_head_corpus": Rule(
        params={"spec": Keys("lm_head.loss.corpora.{corpus}"), "n_texts": Key("lm_head.loss.n_texts")},
        sources=True,
    ),
    "lm_head_geometry": Rule(
        params={"geometry": Keys("lm_head.geometry")}, threads=2, mem_mb=8000, runtime=60
    ),
    "lm_head_loss": Rule(
        params={"max_tokens": Key("lm_head.loss.max_tokens"), "dtype": Key("lm_head.loss.dtype")},
        speed=Speed("lm_head.loss", SPEED_KEYS),
        threads=2,
        mem_mb=8000,
        runtime=240,
        gpus="lm_head.loss.gpus",
    ),
    "lm_head_width_fit": Rule(params={"fit": Keys("lm_head.fit")}, mem_mb=1000, runtime=10),
    "lm_head_token_counts": Rule(
        params={"min_tokens": Key(f"{_TOKENS}.min_tokens"), "spec": Keys(_TOKENS + ".corpora.{corpus}")},
        sources=True,
        mem_mb=2000,
        runtime=30,
    ),
    "lm_head_token_fit": Rule(params={"fit_ranks": Key(f"{_TOKENS}.fit_ranks")}, mem_mb=1000, runtime=10),
    "lm_head_compare": Rule(
        params={"fit": Keys("lm_head.fit", ("bootstrap_resamples", "seed"))}, mem_mb=1000, runtime=10
    ),
    "lm_head_section": Rule(
        params={"dead_norm_fraction": Key("lm_head.geometry.dead_norm_fraction")}, mem_mb=2000, runtime=10
    ),
}


# ------------------------------------------------------------------------------------------- checks

_CORPUS_KEYS = {"fineweb": (), "raw": ("path",), "local": ("path",), "hub": ("dataset",)}


def _model_errors(config: dict, key: str, names: list[str]) -> list[str]:
    from depthwidth.models.load import ModelError, model_spec
    from depthwidth.models.pipeline import unknown_model_errors

    known = config.get("models") or {}
    errors = unknown_model_errors(config, key, names)
    for name in (n for n in names if n in known):
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
