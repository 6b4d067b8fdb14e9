# Depth toy (Liu, Kangaslahti, Liu & Gore 2026): students of several depths learn a deeper teacher.
# One training job per (teacher kind, variant, replicate): all its students share one teacher forward
# per step. One rule per variant, because a variant's temperatures and depths fix its outputs.
# Config -> params, paths and job lists: depthwidth.depth_toy.pipeline.
from depthwidth.depth_toy import pipeline as depth_toy_pipeline  # noqa: E402

# Errors the schema cannot express (a KL variant without temperatures, ...) stop here, before any job.
if stage_enabled("depth_toy"):
    depth_toy_pipeline.check(config)


for _variant in depth_toy_pipeline.train_variants(config):

    rule:
        name:
            f"depth_toy_train_{_variant}"
        output:
            students=depth_toy_pipeline.student_files(config, _variant),
            angles=depth_toy_pipeline.angle_file(_variant),
        log:
            f"logs/depth_toy/train/{{kind}}/{_variant}/rep{{rep}}.log",
        benchmark:
            f"benchmarks/depth_toy/train/{{kind}}/{_variant}/rep{{rep}}.tsv"
        wildcard_constraints:
            kind="independent|tied",
            rep=r"\d+",
        conda:
            "../envs/depthwidth.yaml"
        threads: depth_toy_pipeline.threads(config)
        resources:
            # a GPU job goes to the partition profiles/slurm names for GPU rules (as superposition_train)
            **depth_toy_pipeline.gpu_partition(config),
            mem_mb=grow_with_attempt(depth_toy_pipeline.mem_mb(config, _variant)),
            runtime=grow_with_attempt(depth_toy_pipeline.estimate_minutes(config, _variant)),
            gpu=depth_toy_pipeline.gpus(config),
        params:
            train=depth_toy_pipeline.train_params(config, _variant),
            speed=depth_toy_pipeline.speed_params(config),
            code=code_fingerprint("depth_toy_train"),
        script:
            "../scripts/depth_toy_train.py"


rule depth_toy_tables:
    input:
        students=depth_toy_pipeline.all_student_files(config),
        angles=depth_toy_pipeline.all_angle_files(config),
    output:
        **depth_toy_pipeline.TABLES,
    log:
        "logs/depth_toy/tables.log",
    benchmark:
        "benchmarks/depth_toy/tables.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        mem_mb=1000,
        runtime=5,
    params:
        code=code_fingerprint("depth_toy_tables"),
    script:
        "../scripts/depth_toy_tables.py"


rule depth_toy_section:
    input:
        **depth_toy_pipeline.TABLES,
    output:
        html="results/depth_toy/section.html",
        headline="results/depth_toy/headline.json",
        figures=directory("results/depth_toy/figures"),
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
        **depth_toy_pipeline.section_params(config),
        code=code_fingerprint("depth_toy_section"),
    script:
        "../scripts/depth_toy_section.py"
