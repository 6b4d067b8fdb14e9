# Superposition toy model (Liu, Liu & Gore 2025): one job per grid cell (distribution, n, gamma, m,
# seed), so adding a grid value adds jobs and reruns nothing; or, with job_grouping: law, one job per
# (distribution, n, seed) that trains all its cells on one input stream (same numbers, about twice as fast
# per cell); then the tables, then the section. Both forms of superposition_train run the same script with
# the same params, so switching between them retrains nothing.
# Job lists: depthwidth.superposition.pipeline; params, threads and resources: its RULES table.
from depthwidth.superposition import pipeline as superposition_pipeline

RULES.add(superposition_pipeline)

if superposition_pipeline.job_grouping(config) == "law":

    rule superposition_train:
        output:
            models=superposition_pipeline.law_job_outputs(config, "model.safetensors"),
            infos=superposition_pipeline.law_job_outputs(config, "train.json"),
        log:
            "logs/superposition/train/{dist}/n{n}/seed{seed}.log",
        benchmark:
            "benchmarks/superposition/train/{dist}/n{n}/seed{seed}.tsv"
        wildcard_constraints:
            dist=r"[a-z]+(-[a-z][0-9.]+)*",
            n=r"\d+",
            seed=r"\d+",
        conda:
            "../envs/depthwidth.yaml"
        threads: RULES.threads("superposition_train")
        resources:
            **RULES.resources("superposition_train"),
        params:
            **RULES.params("superposition_train"),
        script:
            "../scripts/superposition_train.py"

else:

    rule superposition_train:
        output:
            model="results/superposition/cells/{dist}/n{n}/gamma{gamma}/m{m}/seed{seed}/model.safetensors",
            info="results/superposition/cells/{dist}/n{n}/gamma{gamma}/m{m}/seed{seed}/train.json",
        log:
            "logs/superposition/train/{dist}/n{n}/gamma{gamma}/m{m}/seed{seed}.log",
        benchmark:
            "benchmarks/superposition/train/{dist}/n{n}/gamma{gamma}/m{m}/seed{seed}.tsv"
        wildcard_constraints:
            dist=r"[a-z]+(-[a-z][0-9.]+)*",
            gamma=r"-?[0-9][0-9.e+-]*",
            n=r"\d+",
            m=r"\d+",
            seed=r"\d+",
        conda:
            "../envs/depthwidth.yaml"
        threads: RULES.threads("superposition_train")
        resources:
            **RULES.resources("superposition_train"),
        params:
            **RULES.params("superposition_train"),
        script:
            "../scripts/superposition_train.py"


rule superposition_tables:
    input:
        models=superposition_pipeline.cell_paths(config),
    output:
        cells="results/superposition/cells.csv",
        exponents="results/superposition/exponents.csv",
    log:
        "logs/superposition/tables.log",
    benchmark:
        "benchmarks/superposition/tables.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("superposition_tables"),
    params:
        **RULES.params("superposition_tables"),
    script:
        "../scripts/superposition_tables.py"


# Our exponents against the paper's stated values and, where the paper-figures stage runs, its drawn ones.
rule superposition_compare:
    input:
        **superposition_pipeline.compare_inputs(config),
    output:
        comparisons="results/superposition/comparisons.csv",
    log:
        "logs/superposition/compare.log",
    benchmark:
        "benchmarks/superposition/compare.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("superposition_compare"),
    params:
        **RULES.params("superposition_compare"),
    script:
        "../scripts/superposition_compare.py"


rule superposition_section:
    input:
        comparisons="results/superposition/comparisons.csv",
        cells="results/superposition/cells.csv",
        exponents="results/superposition/exponents.csv",
        models=superposition_pipeline.cell_paths(config),
        infos=superposition_pipeline.cell_paths(config, "train.json"),
    output:
        html="results/superposition/section.html",
        headline="results/superposition/headline.json",
        figures=report(
            directory("results/superposition/figures"),
            patterns=["{name}.png"],
            caption="../report/captions/superposition.rst",
            category="superposition",
        ),
    log:
        "logs/superposition/section.log",
    benchmark:
        "benchmarks/superposition/section.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("superposition_section"),
    params:
        **RULES.params("superposition_section"),
    script:
        "../scripts/superposition_section.py"
