# Depth toy (Liu, Kangaslahti, Liu & Gore 2026): students of several depths learn a 128-block teacher.
# One training job per (teacher kind, variant, replicate): all its students share one teacher forward
# per step. One rule per variant, because a variant's temperatures and depths fix its outputs.

for _variant in depth_toy_variants():

    rule:
        name:
            f"depth_toy_train_{_variant}"
        output:
            students=depth_toy_student_files(_variant),
            angles=f"results/depth_toy/runs/{{kind}}/{_variant}/rep{{rep}}/angles.csv",
        log:
            f"logs/depth_toy/train/{{kind}}/{_variant}/rep{{rep}}.log",
        benchmark:
            f"benchmarks/depth_toy/train/{{kind}}/{_variant}/rep{{rep}}.tsv"
        wildcard_constraints:
            kind="independent|tied",
            rep=r"\d+",
        conda:
            "../envs/depthwidth.yaml"
        threads: config["depth_toy"]["threads"]
        resources:
            mem_mb=grow_with_attempt(
                depth_toy_pipeline.mem_mb(config["depth_toy"], _variant)
            ),
            runtime=grow_with_attempt(
                depth_toy_pipeline.estimate_minutes(config["depth_toy"], _variant)
            ),
            gpu=0 if config["depth_toy"]["device"] == "cpu" else 1,
        params:
            train=depth_toy_train_params(_variant),
        script:
            "../scripts/depth_toy_train.py"


rule depth_toy_tables:
    input:
        students=depth_toy_all_students(),
        angles=depth_toy_all_angles(),
    output:
        runs="results/depth_toy/runs.csv",
        exponents="results/depth_toy/exponents.csv",
        angles="results/depth_toy/angles.csv",
        trajectory="results/depth_toy/exponent_vs_step.csv",
    log:
        "logs/depth_toy/tables.log",
    benchmark:
        "benchmarks/depth_toy/tables.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    script:
        "../scripts/depth_toy_tables.py"


rule depth_toy_section:
    input:
        runs="results/depth_toy/runs.csv",
        exponents="results/depth_toy/exponents.csv",
        angles="results/depth_toy/angles.csv",
        trajectory="results/depth_toy/exponent_vs_step.csv",
    output:
        html="results/depth_toy/section.html",
        headline="results/depth_toy/headline.json",
    log:
        "logs/depth_toy/section.log",
    benchmark:
        "benchmarks/depth_toy/section.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        headline_variant=config["depth_toy"]["headline_variant"],
        note=config["depth_toy"]["note"],
        angle_samples=config["depth_toy"]["angle_samples"],
    script:
        "../scripts/depth_toy_section.py"
