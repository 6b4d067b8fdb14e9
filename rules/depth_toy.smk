# Depth toy (Liu, Kangaslahti, Liu & Gore 2026): students of several depths learn a deeper teacher.
# One training job per (teacher kind, variant, replicate): all its students share one teacher forward
# per step. One rule per variant, because a variant's temperatures and depths fix its outputs.
# Paths and job lists: depthwidth.depth_toy.pipeline; params, threads and resources: its RULES table.
from depthwidth.depth_toy import pipeline as depth_toy_pipeline

RULES.add(depth_toy_pipeline)

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
        threads: RULES.threads("depth_toy_train", variant=_variant)
        resources:
            **RULES.resources("depth_toy_train", variant=_variant),
        params:
            **RULES.params("depth_toy_train", variant=_variant),
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
        **RULES.resources("depth_toy_tables"),
    params:
        **RULES.params("depth_toy_tables"),
    script:
        "../scripts/depth_toy_tables.py"


rule depth_toy_compare:
    input:
        exponents=depth_toy_pipeline.TABLES["exponents"],
        convergence=depth_toy_pipeline.TABLES["convergence"],
    output:
        comparisons="results/depth_toy/comparisons.csv",
    log:
        "logs/depth_toy/compare.log",
    benchmark:
        "benchmarks/depth_toy/compare.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("depth_toy_compare"),
    params:
        **RULES.params("depth_toy_compare"),
    script:
        "../scripts/depth_toy_compare.py"


rule depth_toy_section:
    input:
        **depth_toy_pipeline.TABLES,
        comparisons="results/depth_toy/comparisons.csv",
    output:
        html="results/depth_toy/section.html",
        headline="results/depth_toy/headline.json",
        figures=report(
            directory("results/depth_toy/figures"),
            patterns=["{name}.png"],
            caption="../report/captions/depth_toy.rst",
            category="depth toy",
        ),
    log:
        "logs/depth_toy/section.log",
    benchmark:
        "benchmarks/depth_toy/section.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("depth_toy_section"),
    params:
        **RULES.params("depth_toy_section"),
    script:
        "../scripts/depth_toy_section.py"
