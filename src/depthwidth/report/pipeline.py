"""Config → the report rule's inputs and params (``RULES``, ``rules/report.smk``).

The report reads only what it declares: each enabled stage's section fragment, headline rows and
figure folder, the fits the synthesis combines, the manifests of the models the enabled stages use,
and the benchmark file of every job upstream of those (``upstream_benchmarks``). The report rule
(``depthwidth.report.page.report``) hashes exactly these files for the provenance block.
"""

from __future__ import annotations

from depthwidth.report.upstream import walk_upstream
from depthwidth.rules import Call, Key, Rule


def section_inputs(config: dict) -> dict[str, str]:
    """``<stage>_html``, ``<stage>_headline``, ``<stage>_figures`` of every enabled stage (report order),
    and the fits the synthesis combines where their stages run."""
    out = {}
    for stage in config["stages"]:
        out[f"{stage}_html"] = f"results/{stage}/section.html"
        out[f"{stage}_headline"] = f"results/{stage}/headline.json"
        out[f"{stage}_figures"] = f"results/{stage}/figures"
    # The synthesis combines α_ℓ (the Chinchilla fit grid's squared cell, the paper's fit) with α_m (LLM
    # widths) where those stages run.
    if "chinchilla" in config["stages"]:
        out["synthesis_chinchilla"] = "results/chinchilla/fits/decomposed/squared/fit.json"
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


def upstream_benchmarks(targets: list[str], rules) -> list[str]:
    """The benchmark file of every job that ``targets`` depend on (:func:`walk_upstream`).

    Snakemake treats a benchmark file as a product of its job, so the report may take it as an input:
    the report then runs after every job it summarises, and a deleted benchmark file reruns its job."""
    return [
        str(rule.expand_benchmark(wildcards))
        for _, rule, wildcards, _, first in walk_upstream(targets, rules)
        if first and rule.benchmark
    ]


def inputs(config: dict, rules) -> dict:
    """Every file the report rule reads, named for ``unpack``: sections, figures, synthesis fits, the
    model manifests, and the benchmark files of every job upstream of them (lists)."""
    out = {**section_inputs(config), "manifests": model_manifests(config)}
    out["benchmarks"] = upstream_benchmarks([f for v in out.values() for f in _as_list(v)], rules)
    return out


def _as_list(value) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def reduced_params(config: dict, wildcards: dict, reduced: dict) -> dict:
    """Stage -> True where the run's section differs from the papers' (``reduced=`` of the rule)."""
    return dict(reduced)


def whole_config(config: dict, wildcards: dict, **_) -> dict:
    """The whole validated config, which the provenance block records (so editing any key refreshes it)."""
    return config


# The report's settings: title, the enabled stages in order, which ran a reduced config, the whole config.
PARAMS = {"title": Key("report.title"), "stages": Key("stages"), "reduced": Call(reduced_params)}
RULES = {
    "report": Rule(params=PARAMS | {"config": Call(whole_config)}, mem_mb=1000, runtime=10),
    "report_screenshot": Rule(),
}
