# Shared helpers: config validation, mirrors, target lists and input functions.
import re
import sys
from pathlib import Path

# The package holds the science; import it from the checkout when it is not installed.
sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from depthwidth.config import ConfigError, deep_merge, validate_config  # noqa: E402
from depthwidth.fetch import load_manifest  # noqa: E402

# Stop before any job starts when a key is wrong; the error names the key and what is allowed.
validate_config(config, Path(workflow.basedir) / "schemas")

MANIFEST = load_manifest()
PROJECT_DIR = str(Path(workflow.basedir).resolve())


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
    """The section fragment and headline rows of every enabled stage, in report order."""
    out = {}
    for stage in config["stages"]:
        out[f"{stage}_html"] = f"results/{stage}/section.html"
        out[f"{stage}_headline"] = f"results/{stage}/headline.json"
    # The synthesis combines α_ℓ (Chinchilla fit) with α_m (LLM widths) where those stages run.
    if stage_enabled("chinchilla"):
        out["synthesis_chinchilla"] = "results/chinchilla/fit.json"
    if stage_enabled("lm_head"):
        out["synthesis_width"] = "results/lm_head/width_fit.json"
    return out


def pinned_sha256(wildcards):
    """The pinned checksum of a fetched file: a change of pin refetches it."""
    return MANIFEST[wildcards.raw_path]["sha256"]


def chinchilla_fit_params():
    """The fit subtree, with every key spelt out so that editing one reruns only the fit."""
    # Sorted: Snakemake compares params in order, and key order depends on how config files were merged.
    return dict(sorted(config["chinchilla"]["fit"].items()))


def chinchilla_shape_params():
    return dict(sorted(config["chinchilla"].get("shape", {}).items()))


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


def grow_with_attempt(base):
    """A resource that grows on each retry, as the profile's set-resources do: base × attempt, where
    base is a number or a function of the wildcards (a job's own estimate)."""

    def resource(wildcards, attempt):
        return int((base(wildcards) if callable(base) else base) * attempt)

    return resource


# Depth toy (rules/depth_toy.smk; depthwidth.depth_toy.pipeline).
from depthwidth.depth_toy import pipeline as depth_toy_pipeline  # noqa: E402

if stage_enabled("depth_toy"):
    depth_toy_pipeline.check(config["depth_toy"])


def depth_toy_variants():
    return list(config["depth_toy"]["variants"]) if stage_enabled("depth_toy") else []


def depth_toy_student_files(variant):
    """The per-student outputs of one job of ``variant`` (with {kind} and {rep} wildcards)."""
    return depth_toy_pipeline.student_files(config["depth_toy"], variant)


def depth_toy_train_params(variant):
    return depth_toy_pipeline.train_params(config["depth_toy"], variant)


def depth_toy_all_students():
    return depth_toy_pipeline.all_student_files(config["depth_toy"])


def depth_toy_all_angles():
    return depth_toy_pipeline.all_angle_files(config["depth_toy"])


# Models (rules/models.smk; depthwidth.models).
def model_spec_params(wildcards):
    """The config entry of one model, keys sorted: editing it refetches only that model."""
    return dict(sorted(config["models"][wildcards.model].items()))


# LM head (rules/lm_head.smk; depthwidth.lm_head).
from depthwidth.lm_head import check_config as lm_head_check_config  # noqa: E402

# Model names and corpus keys are checked together before any job starts.
if stage_enabled("lm_head"):
    lm_head_check_config(config)


def lm_head_models():
    return list(config["lm_head"]["models"])


def lm_head_decoders():
    """Models with a next-token loss (bert-family encoders have none)."""
    return [m for m in lm_head_models() if config["models"][m]["family"] != "bert"]


def lm_head_corpora():
    return list(config["lm_head"]["loss"]["corpora"])


def lm_head_corpus_params(wildcards):
    return dict(sorted(config["lm_head"]["loss"]["corpora"][wildcards.corpus].items()))


def lm_head_corpus_input(wildcards):
    """FineWeb shards, a pinned raw file (fetch_file, mirrors first), a local file, or nothing (hub)."""
    spec = config["lm_head"]["loss"]["corpora"][wildcards.corpus]
    if spec["source"] == "fineweb":
        return fineweb_shard_paths()
    if spec["source"] == "raw":
        return [f"data/raw/{spec['path']}"]
    if spec["source"] == "local":
        return [spec["path"]]
    return []


def lm_head_fit_inputs(wildcards):
    return {
        "geometry": expand(
            "results/lm_head/geometry/{model}.json", model=lm_head_models()
        ),
        "loss": expand(
            "results/lm_head/loss/{corpus}/{model}.json",
            corpus=lm_head_corpora(),
            model=lm_head_decoders(),
        ),
    }


def lm_head_section_inputs(wildcards):
    return {
        "geometry": "results/lm_head/geometry.csv",
        "loss": "results/lm_head/loss.csv",
        "fit": "results/lm_head/width_fit.json",
        "norms": expand(
            "results/lm_head/geometry/{model}_norms.npy", model=lm_head_models()
        ),
    }


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
