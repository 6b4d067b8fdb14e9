# Hidden states of LLMs on FineWeb (Liu et al. 2026, "Inverse depth scaling"): per-token, per-layer
# metrics on a GPU (bf16) or CPU (fp32), then per-model statistics and the report section.
# Package: depthwidth.hidden_states (pipeline, metrics, extract, stats, section); FineWeb shards come
# from rules/download.smk (fineweb_shards), models from rules/models.smk.
from depthwidth.hidden_states import pipeline as hidden_states_pipeline  # noqa: E402

if stage_enabled("hidden_states"):
    hidden_states_pipeline.check(config)

HIDDEN_STATES_GPU = hidden_states_pipeline.gpu_resources(config)


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
    threads: 2
    resources:
        gpu=HIDDEN_STATES_GPU["gpus"],
        mem_mb=grow_with_attempt(HIDDEN_STATES_GPU["mem_mb"]),
        runtime=grow_with_attempt(HIDDEN_STATES_GPU["runtime"]),
    params:
        extract=hidden_states_pipeline.extract_params(config),
        # batch sizes and checkpoint interval: not a rerun trigger (depthwidth.hidden_states.pipeline)
        speed=hidden_states_pipeline.speed_params(config),
        code=code_fingerprint("hidden_states_extract"),
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
        mem_mb=hidden_states_pipeline.stats_mem_mb,
        runtime=60,
    params:
        stats=hidden_states_pipeline.stats_params(config),
        code=code_fingerprint("hidden_states_stats"),
    script:
        "../scripts/hidden_states_stats.py"


rule hidden_states_section:
    input:
        **hidden_states_pipeline.section_inputs(config),
    output:
        html="results/hidden_states/section.html",
        headline="results/hidden_states/headline.json",
        layers="results/hidden_states/layer_stats.csv",
        models="results/hidden_states/models.csv",
        figures=directory("results/hidden_states/figures"),
    log:
        "logs/hidden_states/section.log",
    benchmark:
        "benchmarks/hidden_states/section.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        models=hidden_states_pipeline.models(config),
        code=code_fingerprint("hidden_states_section"),
    script:
        "../scripts/hidden_states_section.py"
