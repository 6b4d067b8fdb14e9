# Causal tracing (Liu et al. 2026, Fig. 6; after Meng et al. 2022): where in depth a decoder recalls a fact.
# One job per model × fact, then the report section. Package: depthwidth.causal_tracing.
from depthwidth.causal_tracing import pipeline as causal_tracing_pipeline

if causal_tracing_pipeline.enabled(config):
    causal_tracing_pipeline.check(config)


rule causal_tracing_trace:
    input:
        model="data/models/{model}/manifest.json",
    output:
        **causal_tracing_pipeline.job_files(),
    log:
        "logs/causal_tracing/trace_{model}_{fact}.log",
    benchmark:
        "benchmarks/causal_tracing/trace_{model}_{fact}.tsv"
    wildcard_constraints:
        fact="|".join(causal_tracing_pipeline.facts(config)) or "NO_FACT",
    # on the critical path after the model fetch (a schedule preference; changes no result)
    priority: 10
    conda:
        "../envs/depthwidth.yaml"
    threads: 2
    resources:
        mem_mb=grow_with_attempt(causal_tracing_pipeline.resource(config, "mem_mb")),
        runtime=grow_with_attempt(causal_tracing_pipeline.resource(config, "runtime")),
        gpu=causal_tracing_pipeline.gpus(config),
    params:
        trace=causal_tracing_pipeline.trace_params_of(config),
        # batch_rows: not a rerun trigger (depthwidth.config.speed_params)
        speed=causal_tracing_pipeline.speed_params(config),
        code=code_fingerprint("causal_tracing_trace"),
    script:
        "../scripts/causal_tracing_trace.py"


rule causal_tracing_section:
    input:
        **causal_tracing_pipeline.section_inputs(config),
    output:
        html="results/causal_tracing/section.html",
        headline="results/causal_tracing/headline.json",
        pairs="results/causal_tracing/pairs.csv",
        peaks="results/causal_tracing/peak_depths.csv",
        figures=directory("results/causal_tracing/figures"),
    log:
        "logs/causal_tracing/section.log",
    benchmark:
        "benchmarks/causal_tracing/section.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        min_p_clean=causal_tracing_pipeline.min_p_clean(config),
        code=code_fingerprint("causal_tracing_section"),
    script:
        "../scripts/causal_tracing_section.py"
