# Hidden states of LLMs on FineWeb (Liu et al. 2026, "Inverse depth scaling"): per-token, per-layer
# metrics on a GPU (bf16) or CPU (fp32), then per-model statistics and the report section.
# Package: depthwidth.hidden_states (metrics, extract, stats, section) and depthwidth.fineweb.


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
    conda:
        "../envs/depthwidth.yaml"
    threads: 2
    resources:
        gpu=HIDDEN_STATES["gpu"]["gpus"],
        mem_mb=grow_with_attempt(HIDDEN_STATES["gpu"]["mem_mb"]),
        runtime=grow_with_attempt(HIDDEN_STATES["gpu"]["runtime"]),
    params:
        extract=hs_settings.extract_params(HIDDEN_STATES),
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
        mem_mb=hidden_states_stats_mem,
        runtime=60,
    params:
        stats=hs_settings.stats_params(HIDDEN_STATES),
    script:
        "../scripts/hidden_states_stats.py"


rule hidden_states_section:
    input:
        unpack(hidden_states_section_inputs),
    output:
        html="results/hidden_states/section.html",
        headline="results/hidden_states/headline.json",
        layers="results/hidden_states/layer_stats.csv",
        models="results/hidden_states/models.csv",
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
        models=hidden_states_models(),
    script:
        "../scripts/hidden_states_section.py"
