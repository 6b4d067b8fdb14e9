# LM-head geometry and loss vs width (Liu, Liu & Gore 2025, "Superposition yields robust neural scaling").
# Package: depthwidth.lm_head (science) and depthwidth.lm_head_report (section). Models come from
# rules/models.smk, FineWeb shards from rules/download.smk (fineweb_shards).
localrules:
    lm_head_corpus,


wildcard_constraints:
    corpus="[A-Za-z0-9][A-Za-z0-9._-]*",


# The first n_texts non-empty texts of a corpus, in one parquet file (text_index, text).
rule lm_head_corpus:
    input:
        lm_head_corpus_input,
    output:
        "data/corpora/{corpus}.parquet",
    log:
        "logs/lm_head/corpus_{corpus}.log",
    benchmark:
        "benchmarks/lm_head/corpus_{corpus}.tsv"
    conda:
        "../envs/depthwidth.yaml"
    params:
        spec=lm_head_corpus_params,
        n_texts=config["lm_head"]["loss"]["n_texts"],
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
    threads: 2
    resources:
        mem_mb=8000,
        runtime=60,
    params:
        geometry=dict(sorted(config["lm_head"]["geometry"].items())),
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
    conda:
        "../envs/depthwidth.yaml"
    threads: 2
    resources:
        mem_mb=8000,
        runtime=240,
        gpu=config["lm_head"]["loss"]["gpus"],
    params:
        max_tokens=config["lm_head"]["loss"]["max_tokens"],
        dtype=config["lm_head"]["loss"]["dtype"],
    script:
        "../scripts/lm_head_loss.py"


rule lm_head_width_fit:
    input:
        unpack(lm_head_fit_inputs),
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
        mem_mb=1000,
        runtime=10,
    params:
        fit=dict(sorted(config["lm_head"]["fit"].items())),
    script:
        "../scripts/lm_head_width_fit.py"


rule lm_head_section:
    input:
        unpack(lm_head_section_inputs),
    output:
        html="results/lm_head/section.html",
        headline="results/lm_head/headline.json",
    log:
        "logs/lm_head/section.log",
    benchmark:
        "benchmarks/lm_head/section.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        dead_norm_fraction=config["lm_head"]["geometry"]["dead_norm_fraction"],
    script:
        "../scripts/lm_head_section.py"
