# Hidden states of LLMs on FineWeb (Liu et al. 2026, "Inverse depth scaling"): per-token, per-layer
# metrics on a GPU (bf16) or CPU (fp32), then per-model statistics and the report section.
# Package: depthwidth.hidden_states (pipeline, metrics, extract, stats, section); FineWeb shards come
# from rules/download.smk (fineweb_shards), models from rules/models.smk.
from depthwidth.hidden_states import pipeline as hidden_states_pipeline

RULES.add(hidden_states_pipeline)

if stage_enabled("hidden_states"):
    hidden_states_pipeline.check(config)


rule hidden_states_extract:
    input:
        shards=fineweb_shard_paths(),
        model="data/models/{model}/manifest.json",
    output:
        "results/hidden_states/{model}/token_metrics.safetensors",
    log:
        "logs/hidden_states/extract_{model}.log",
    benchmark:
        "benchmarks/hidden_states/extract_{model}.tsv"
    # on the critical path after the model fetch (a schedule preference; changes no result)
    priority: 10
    conda:
        "../envs/depthwidth.yaml"
    threads: RULES.threads("hidden_states_extract")
    resources:
        **RULES.resources("hidden_states_extract"),
    params:
        **RULES.params("hidden_states_extract"),
    script:
        "../scripts/hidden_states_extract.py"


rule hidden_states_stats:
    input:
        "results/hidden_states/{model}/token_metrics.safetensors",
    output:
        layers="results/hidden_states/{model}/layer_stats.csv",
        groups="results/hidden_states/{model}/token_groups.csv",
        sample="results/hidden_states/{model}/token_sample.parquet",
        summary="results/hidden_states/{model}/summary.json",
    log:
        "logs/hidden_states/stats_{model}.log",
    benchmark:
        "benchmarks/hidden_states/stats_{model}.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("hidden_states_stats"),
    params:
        **RULES.params("hidden_states_stats"),
    script:
        "../scripts/hidden_states_stats.py"


# Every comparison of the stage with the paper, as data (results/hidden_states/comparisons.csv); the
# section renders it.
rule hidden_states_compare:
    input:
        **hidden_states_pipeline.compare_inputs(config),
    output:
        comparisons="results/hidden_states/comparisons.csv",
    log:
        "logs/hidden_states/compare.log",
    benchmark:
        "benchmarks/hidden_states/compare.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("hidden_states_compare"),
    params:
        **RULES.params("hidden_states_compare"),
    script:
        "../scripts/hidden_states_compare.py"


rule hidden_states_section:
    input:
        **hidden_states_pipeline.section_inputs(config),
    output:
        html="results/hidden_states/section.html",
        headline="results/hidden_states/headline.json",
        layers="results/hidden_states/layer_stats.csv",
        models="results/hidden_states/models.csv",
        figures=report(
            directory("results/hidden_states/figures"),
            patterns=["{name}.png"],
            caption="../report/captions/hidden_states.rst",
            category="hidden states",
        ),
    log:
        "logs/hidden_states/section.log",
    benchmark:
        "benchmarks/hidden_states/section.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("hidden_states_section"),
    params:
        **RULES.params("hidden_states_section"),
    script:
        "../scripts/hidden_states_section.py"
