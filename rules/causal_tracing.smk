# Causal tracing (Liu et al. 2026, Fig. 6; after Meng et al. 2022): where in depth a decoder recalls a fact.
# One job per model (it loads the model once and traces every fact), then the report section. Package: depthwidth.causal_tracing.
from depthwidth.causal_tracing import pipeline as causal_tracing_pipeline

RULES.add(causal_tracing_pipeline)

if causal_tracing_pipeline.enabled(config):
    causal_tracing_pipeline.check(config)


rule causal_tracing_trace:
    input:
        model="data/models/{model}/manifest.json",
    output:
        **causal_tracing_pipeline.job_files(config),
    log:
        "logs/causal_tracing/trace_{model}.log",
    benchmark:
        "benchmarks/causal_tracing/trace_{model}.tsv"
    # on the critical path after the model fetch (a schedule preference; changes no result)
    priority: 10
    conda:
        "../envs/depthwidth.yaml"
    threads: RULES.threads("causal_tracing_trace")
    resources:
        **RULES.resources("causal_tracing_trace"),
    params:
        **RULES.params("causal_tracing_trace"),
    script:
        "../scripts/causal_tracing_trace.py"


# The pairs and peak-depth tables and every comparison with the paper, as data; the section renders them.
rule causal_tracing_compare:
    input:
        **causal_tracing_pipeline.compare_inputs(config),
    output:
        pairs="results/causal_tracing/pairs.csv",
        peaks="results/causal_tracing/peak_depths.csv",
        comparisons="results/causal_tracing/comparisons.csv",
    log:
        "logs/causal_tracing/compare.log",
    benchmark:
        "benchmarks/causal_tracing/compare.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("causal_tracing_compare"),
    params:
        **RULES.params("causal_tracing_compare"),
    script:
        "../scripts/causal_tracing_compare.py"


rule causal_tracing_section:
    input:
        **causal_tracing_pipeline.section_inputs(config),
    output:
        html="results/causal_tracing/section.html",
        headline="results/causal_tracing/headline.json",
        figures=report(
            directory("results/causal_tracing/figures"),
            patterns=["{name}.png"],
            caption="../report/captions/causal_tracing.rst",
            category="causal tracing",
        ),
    log:
        "logs/causal_tracing/section.log",
    benchmark:
        "benchmarks/causal_tracing/section.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("causal_tracing_section"),
    params:
        **RULES.params("causal_tracing_section"),
    script:
        "../scripts/causal_tracing_section.py"
