# Shared helpers: config validation, mirrors, target lists and input functions.
import re
import sys
from pathlib import Path

# The package holds the science; import it from the checkout when it is not installed.
sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from depthwidth.config import ConfigError, deep_merge, validate_config  # noqa: E402
from depthwidth.fetch import load_manifest  # noqa: E402
from depthwidth.plan import check_plan  # noqa: E402
from depthwidth.report import pipeline as report_pipeline  # noqa: E402

# Stop before any job starts when a key is wrong; the error names the key and what is allowed.
validate_config(config, Path(workflow.basedir) / "schemas")
# Then count the jobs the grids imply (stop above max_jobs, naming the keys that multiply up) and check
# that every folder made from a config name stays in the working directory, before the DAG is built.
check_plan(config, ".")

MANIFEST = load_manifest()


wildcard_constraints:
    # Only files pinned in src/depthwidth/manifest.yaml can be fetched.
    raw_path="|".join(re.escape(k) for k in MANIFEST),


def reduced_stages():
    """Stage -> True where this run's section differs from config.yaml overlaid with config/paper.yaml."""
    import yaml

    base = Path(workflow.basedir)
    paper = deep_merge(
        yaml.safe_load((base / "config.yaml").read_text()),
        yaml.safe_load((base / "config" / "paper.yaml").read_text()),
    )
    validate_config(paper, base / "schemas")
    return {s: config.get(s) != paper.get(s) for s in config["stages"]}


def stage_enabled(stage):
    return stage in config["stages"]


def report_sections(wildcards):
    """Every file the report reads: sections, figures, synthesis fits, model manifests, benchmarks."""
    return report_pipeline.inputs(config, workflow.rules)


def pinned_sha256(wildcards):
    """The pinned checksum of a fetched file: a change of pin refetches it."""
    return MANIFEST[wildcards.raw_path]["sha256"]


# Hidden states / FineWeb (rules/download.smk: fineweb_shards; rules/hidden_states.smk).
from depthwidth.fineweb import mirror_covers, shard_names  # noqa: E402
from depthwidth.hidden_states import settings as hs_settings  # noqa: E402

HIDDEN_STATES = hs_settings.section(config, Path(workflow.basedir) / "schemas")
# A model name missing from models: (a typo) stops here, naming the key, rather than later as a
# MissingInputException about files of a model that can never exist.
_hs_unknown = [
    m for m in HIDDEN_STATES["models"] if m not in (config.get("models") or {})
]
if stage_enabled("hidden_states") and _hs_unknown:
    raise ConfigError(
        f"config key 'hidden_states.models' names {', '.join(map(repr, _hs_unknown))}, which is not in the "
        f"models section (known: {', '.join(config.get('models') or {}) or 'none'}). "
        "Fix: add it under models: or remove it."
    )


def fineweb_shard_paths():
    """The parquet shards that hold the configured FineWeb documents."""
    c = HIDDEN_STATES["corpus"]
    return [
        f"data/fineweb/{c['name']}/{s}"
        for s in shard_names(c["n_docs"], c["docs_per_shard"])
    ]


def fineweb_shards_input(wildcards):
    """The mirrored first documents when they cover the request, a local corpus file, or nothing (hub)."""
    c = HIDDEN_STATES["corpus"]
    if c["source"] == "local":
        return {"corpus": c["local_path"]}
    if mirror_covers(c["hub_dataset"], c["hub_config"], c["n_docs"], c["mirror_docs"]):
        return {"mirror": f"data/raw/{c['mirror_file']}"}
    return {}


# Superposition toy model (rules/superposition.smk; depthwidth.superposition.pipeline).
from depthwidth.superposition import pipeline as superposition_pipeline  # noqa: E402

SUPERPOSITION = config.get("superposition") or {}


def superposition_models(name="model.safetensors"):
    """Every cell file of the configured grid (checked at parse time: a bad grid fails before any job)."""
    return (
        superposition_pipeline.cell_paths(SUPERPOSITION, name) if SUPERPOSITION else []
    )


def superposition_train_params():
    return superposition_pipeline.train_params(SUPERPOSITION) if SUPERPOSITION else {}


def superposition_analysis_params():
    return dict(sorted(SUPERPOSITION.get("analysis", {}).items()))


def grow_with_attempt(base):
    """A resource that grows on each retry, as the profile's set-resources do: base × attempt, where
    base is a number or a function of the wildcards (a job's own estimate)."""

    def resource(wildcards, attempt):
        return int((base(wildcards) if callable(base) else base) * attempt)

    return resource


def superposition_runtime(wildcards):
    return superposition_pipeline.estimate_minutes(SUPERPOSITION, int(wildcards.m))


def superposition_mem_mb(wildcards):
    """W and its Adam moments, three (batch × n) float32 blocks (pre-activations and their copies),
    two (active features × n) tables with at most n rows, plus ~400 MB for Python and torch."""
    n, batch = int(wildcards.n), int(SUPERPOSITION["batch_size"])
    return int(400 + (16 * n * int(wildcards.m) + 12 * batch * n + 8 * n * n) / 1e6)


# Models (rules/models.smk; depthwidth.models).
def model_spec_params(wildcards):
    """The config entry of one model, keys sorted: editing it refetches only that model."""
    return dict(sorted(config["models"][wildcards.model].items()))


def hidden_states_models():
    return list(HIDDEN_STATES["models"])


def hidden_states_section_inputs(wildcards):
    out = {}
    for m in hidden_states_models():
        for key, name in (
            ("layers", "layer_stats.csv"),
            ("groups", "token_groups.csv"),
            ("sample", "token_sample.parquet"),
            ("summary", "summary.json"),
        ):
            out[f"{key}_{m}"] = f"results/hidden_states/{m}/{name}"
    return out


def hidden_states_stats_mem(wildcards, input):
    """Host memory of the statistics: about five times the per-token file (float64 copies, quantiles)."""
    return max(4000, int(5 * input.size_mb))
