# Superposition toy model (Liu, Liu & Gore 2025): one job per grid cell (distribution, n, gamma, m,
# seed), so adding a grid value adds jobs and reruns nothing; or, with job_grouping: law, one job per
# (distribution, n, seed) that trains all its cells on one input stream (same numbers, about twice as fast
# per cell); then the tables, then the section. Both forms of superposition_train run the same script with
# the same params, so switching between them retrains nothing.
# Config → params and job lists: depthwidth.superposition.pipeline.
from functools import partial

from depthwidth.superposition import pipeline as superposition_pipeline  # noqa: E402

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
        threads: superposition_pipeline.threads(config)
        resources:
            **superposition_pipeline.gpu_partition(config),
            mem_mb=grow_with_attempt(partial(superposition_pipeline.mem_mb, config)),
            runtime=grow_with_attempt(partial(superposition_pipeline.runtime_minutes, config)),
            gpu=superposition_pipeline.gpus(config),
        params:
            train=superposition_pipeline.train_params(config),
            # checkpoint interval and device: not a rerun trigger (depthwidth.config.speed_params)
            speed=superposition_pipeline.speed_params(config),
            code=code_fingerprint("superposition_train"),
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
        threads: superposition_pipeline.threads(config)
        resources:
            **superposition_pipeline.gpu_partition(config),
            mem_mb=grow_with_attempt(partial(superposition_pipeline.mem_mb, config)),
            runtime=grow_with_attempt(partial(superposition_pipeline.runtime_minutes, config)),
            # gpu = 1 with device: cuda; the job then goes to the cluster's GPU partition (profiles/slurm)
            gpu=superposition_pipeline.gpus(config),
        params:
            train=superposition_pipeline.train_params(config),
            # checkpoint interval and device: not a rerun trigger (depthwidth.config.speed_params)
            speed=superposition_pipeline.speed_params(config),
            code=code_fingerprint("superposition_train"),
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
        mem_mb=2000,
        runtime=10,
    params:
        analysis=superposition_pipeline.analysis_params(config),
        code=code_fingerprint("superposition_tables"),
    script:
        "../scripts/superposition_tables.py"


rule superposition_section:
    input:
        cells="results/superposition/cells.csv",
        exponents="results/superposition/exponents.csv",
        models=superposition_pipeline.cell_paths(config),
        infos=superposition_pipeline.cell_paths(config, "train.json"),
    output:
        html="results/superposition/section.html",
        headline="results/superposition/headline.json",
        figures=directory("results/superposition/figures"),
    log:
        "logs/superposition/section.log",
    benchmark:
        "benchmarks/superposition/section.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        mem_mb=2000,
        runtime=10,
    params:
        analysis=superposition_pipeline.analysis_params(config),
        code=code_fingerprint("superposition_section"),
    script:
        "../scripts/superposition_section.py"
