"""Config → the report rule's inputs and params (``rules/report.smk``).

The report reads only what it declares: each enabled stage's section fragment, headline rows and
figure folder, the fits the synthesis combines, the manifests of the models the enabled stages use,
and the benchmark files of the enabled stages' jobs that can be named from the config (see
``benchmark_files``). ``scripts/report.py`` hashes exactly these files for the provenance block.
"""

from __future__ import annotations

import re

_WILDCARD = re.compile(r"\{([^{}:,]+)(?:,[^{}]*)?\}")


def section_inputs(config: dict) -> dict[str, str]:
    """``<stage>_html``, ``<stage>_headline``, ``<stage>_figures`` of every enabled stage (report order),
    and the fits the synthesis combines where their stages run."""
    out = {}
    for stage in config["stages"]:
        out[f"{stage}_html"] = f"results/{stage}/section.html"
        out[f"{stage}_headline"] = f"results/{stage}/headline.json"
        out[f"{stage}_figures"] = f"results/{stage}/figures"
    # The synthesis combines α_ℓ (Chinchilla fit) with α_m (LLM widths) where those stages run.
    if "chinchilla" in config["stages"]:
        out["synthesis_chinchilla"] = "results/chinchilla/fit.json"
    if "lm_head" in config["stages"]:
        out["synthesis_width"] = "results/lm_head/width_fit.json"
    return out


def stage_models(config: dict, stage: str) -> list[str]:
    """The model names an enabled stage lists under ``<stage>.models`` ([] for stages without models)."""
    sub = config[stage] if stage in config["stages"] else None
    return list(sub["models"]) if isinstance(sub, dict) and "models" in sub else []


def used_models(config: dict) -> list[str]:
    """Every model an enabled stage uses, once, in first-use order."""
    return list(dict.fromkeys(m for stage in config["stages"] for m in stage_models(config, stage)))


def model_manifests(config: dict) -> list[str]:
    """Where each used model was fetched from (hub id and revision, wheel, file checksums)."""
    return [f"data/models/{m}/manifest.json" for m in used_models(config)]


def benchmark_files(config: dict, patterns: list[str]) -> list[str]:
    """The benchmark files (``patterns``: every rule's ``benchmark:`` pattern) of the enabled stages'
    jobs that the config names: a pattern under ``benchmarks/<stage>/`` without wildcards, or whose only
    wildcard is ``{model}`` (one job per model of the stage; ``benchmarks/models/`` for every used model).

    Snakemake treats a benchmark file as a product of its job, so another rule may take it as input (a
    missing one reruns its job). Jobs over other wildcards (grid cells, corpora, replicates) are left
    out: naming them needs each stage's job list, and guessing one would add jobs to the run."""
    out = []
    for pattern in sorted(patterns):
        parts = pattern.split("/")
        if len(parts) < 3 or parts[0] != "benchmarks":
            continue
        stage, wildcards = parts[1], set(_WILDCARD.findall(pattern))
        if stage not in config["stages"] and stage != "models":
            continue
        models = used_models(config) if stage == "models" else stage_models(config, stage)
        if not wildcards:
            out.append(pattern)
        elif wildcards == {"model"}:
            out.extend(_WILDCARD.sub(m, pattern) for m in models)
    return list(dict.fromkeys(out))


def inputs(config: dict, benchmark_patterns: list[str]) -> dict:
    """Every file the report rule reads, named for ``unpack``: sections, figures, synthesis fits, then
    ``manifests`` and ``benchmarks`` (lists)."""
    return {
        **section_inputs(config),
        "manifests": model_manifests(config),
        "benchmarks": benchmark_files(config, benchmark_patterns),
    }


def params(config: dict, reduced: dict) -> dict:
    """The report's settings: title, the enabled stages in order, which ran a reduced config, and the
    whole validated config, which the provenance block records (so editing any key refreshes it)."""
    return {
        "title": config["report"]["title"],
        "stages": list(config["stages"]),
        "reduced": dict(reduced),
        "config": config,
    }
