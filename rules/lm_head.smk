# LM-head geometry and loss vs width (Liu, Liu & Gore 2025, "Superposition yields robust neural scaling").
# Package: depthwidth.lm_head (pipeline: config -> params and inputs; geometry, corpus, loss, width_fit,
# section). Models come from rules/models.smk, FineWeb shards from rules/download.smk (fineweb_shards).
from depthwidth.lm_head import pipeline as lm_head_pipeline

RULES.add(lm_head_pipeline)

# Model names and corpus keys are checked together before any job starts.
if stage_enabled("lm_head"):
    lm_head_pipeline.check_config(config)


localrules:
    lm_head_corpus,
    lm_head_token_counts,


wildcard_constraints:
    corpus="[A-Za-z0-9][A-Za-z0-9._+-]*",


# The first n_texts non-empty texts of a corpus, in one parquet file (text_index, text).
rule lm_head_corpus:
    input:
        lm_head_pipeline.corpus_input_function(config, fineweb_shard_paths()),
    output:
        "data/corpora/{corpus}.parquet",
    log:
        "logs/lm_head/corpus_{corpus}.log",
    benchmark:
        "benchmarks/lm_head/corpus_{corpus}.tsv"
    conda:
        "../envs/depthwidth.yaml"
    params:
        **RULES.params("lm_head_corpus"),
    script:
        "../scripts/lm_head_corpus.py"


rule lm_head_geometry:
    input:
        model="data/models/{model}/manifest.json",
    output:
        row="results/lm_head/geometry/{model}.json",
        norms="results/lm_head/geometry/{model}_norms.npy",
    log:
        "logs/lm_head/geometry_{model}.log",
    benchmark:
        "benchmarks/lm_head/geometry_{model}.tsv"
    conda:
        "../envs/depthwidth.yaml"
    threads: RULES.threads("lm_head_geometry")
    resources:
        **RULES.resources("lm_head_geometry"),
    params:
        **RULES.params("lm_head_geometry"),
    script:
        "../scripts/lm_head_geometry.py"


rule lm_head_loss:
    input:
        model="data/models/{model}/manifest.json",
        corpus="data/corpora/{corpus}.parquet",
    output:
        texts="results/lm_head/loss/{corpus}/{model}.csv",
        summary="results/lm_head/loss/{corpus}/{model}.json",
    log:
        "logs/lm_head/loss_{corpus}_{model}.log",
    benchmark:
        "benchmarks/lm_head/loss_{corpus}_{model}.tsv"
    # on the critical path after the model fetch (a schedule preference; changes no result)
    priority: 10
    conda:
        "../envs/depthwidth.yaml"
    threads: RULES.threads("lm_head_loss")
    resources:
        **RULES.resources("lm_head_loss"),
    params:
        **RULES.params("lm_head_loss"),
    script:
        "../scripts/lm_head_loss.py"


rule lm_head_width_fit:
    input:
        **lm_head_pipeline.fit_inputs(config),
    output:
        geometry="results/lm_head/geometry.csv",
        loss="results/lm_head/loss.csv",
        fit="results/lm_head/width_fit.json",
    log:
        "logs/lm_head/width_fit.log",
    benchmark:
        "benchmarks/lm_head/width_fit.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("lm_head_width_fit"),
    params:
        **RULES.params("lm_head_width_fit"),
    script:
        "../scripts/lm_head_width_fit.py"


# Token-id counts of one tokenizer on one corpus: the first >= min_tokens tokens in stream order, as the
# paper's LLMs/token-freq-0.py. A local rule like lm_head_corpus: hub corpora are streamed.
rule lm_head_token_counts:
    input:
        model="data/models/{model}/manifest.json",
        corpus=lm_head_pipeline.corpus_input_function(config, fineweb_shard_paths(), "token_frequencies"),
    output:
        counts="results/lm_head/token_counts/{corpus}/{model}.parquet",
        summary="results/lm_head/token_counts/{corpus}/{model}.json",
    log:
        "logs/lm_head/token_counts_{corpus}_{model}.log",
    benchmark:
        "benchmarks/lm_head/token_counts_{corpus}_{model}.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("lm_head_token_counts"),
    params:
        **RULES.params("lm_head_token_counts"),
    script:
        "../scripts/lm_head_token_counts.py"


# p_i ~ i^-alpha over the configured rank range, per (tokenizer, corpus); alpha - 1 is the weak-regime alpha_m.
rule lm_head_token_fit:
    input:
        **lm_head_pipeline.token_fit_inputs(config),
    output:
        fit="results/lm_head/token_frequency_fit.csv",
    log:
        "logs/lm_head/token_fit.log",
    benchmark:
        "benchmarks/lm_head/token_fit.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("lm_head_token_fit"),
    params:
        **RULES.params("lm_head_token_fit"),
    script:
        "../scripts/lm_head_token_fit.py"


# Every comparison of the stage with the paper, as data (results/lm_head/comparisons.csv); the section renders it.
rule lm_head_compare:
    input:
        **lm_head_pipeline.compare_inputs(config),
    output:
        comparisons="results/lm_head/comparisons.csv",
    log:
        "logs/lm_head/compare.log",
    benchmark:
        "benchmarks/lm_head/compare.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("lm_head_compare"),
    params:
        **RULES.params("lm_head_compare"),
    script:
        "../scripts/lm_head_compare.py"


rule lm_head_section:
    input:
        **lm_head_pipeline.section_inputs(config),
    output:
        html="results/lm_head/section.html",
        headline="results/lm_head/headline.json",
        figures=report(
            directory("results/lm_head/figures"),
            patterns=["{name}.png"],
            caption="../report/captions/lm_head.rst",
            category="lm head",
        ),
    log:
        "logs/lm_head/section.log",
    benchmark:
        "benchmarks/lm_head/section.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("lm_head_section"),
    params:
        **RULES.params("lm_head_section"),
    script:
        "../scripts/lm_head_section.py"
