# Shared helpers: config validation, target lists and input functions used by several stages.
import re
import sys
from pathlib import Path

# The package holds the science; import it from the checkout when it is not installed.
sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from depthwidth.config import deep_merge, validate_config  # noqa: E402
from depthwidth.download import pipeline as download_pipeline  # noqa: E402

# Stop before any job starts when a key is wrong; the error names the key and what is allowed.
validate_config(config, Path(workflow.basedir) / "schemas")


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


def fineweb_shard_paths():
    """The FineWeb shards (rule fineweb_shards), read by the hidden-states and LM-head stages."""
    return download_pipeline.fineweb_shard_paths(config)


def chinchilla_fit_params():
    """The fit subtree, with every key spelt out so that editing one reruns only the fit."""
    # Sorted: Snakemake compares params in order, and key order depends on how config files were merged.
    return dict(sorted(config["chinchilla"]["fit"].items()))


def chinchilla_shape_params():
    return dict(sorted(config["chinchilla"].get("shape", {}).items()))


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


# LM head (rules/lm_head.smk; depthwidth.lm_head).
from depthwidth.lm_head import check_config as lm_head_check_config  # noqa: E402

# Model names and corpus keys are checked together before any job starts.
if stage_enabled("lm_head"):
    lm_head_check_config(config)


def lm_head_models():
    return list(config["lm_head"]["models"])


def lm_head_decoders():
    """Models with a next-token loss (encoders have none)."""
    return models_pipeline.decoders(config, lm_head_models())


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
