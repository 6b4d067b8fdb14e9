# Chinchilla: reconstruct (N, D, d_model, n_layers, loss) and fit the decomposed law.
# Paths and inputs: depthwidth.chinchilla.pipeline; params, threads and resources: its RULES table.
from depthwidth.chinchilla import pipeline as chinchilla_pipeline

RULES.add(chinchilla_pipeline)


wildcard_constraints:
    sweep="[A-Za-z0-9_.-]+",


rule chinchilla_points:
    input:
        points="data/raw/chinchilla/svg_extracted_data.csv",
        table="data/raw/chinchilla/chinchilla_table_a9.csv",
    output:
        points="results/chinchilla/points.csv",
        summary="results/chinchilla/reconstruction.json",
    log:
        "logs/chinchilla/points.log",
    benchmark:
        "benchmarks/chinchilla/points.tsv"
    conda:
        "../envs/depthwidth.yaml"
    threads: RULES.threads("chinchilla_points")
    resources:
        **RULES.resources("chinchilla_points"),
    params:
        **RULES.params("chinchilla_points"),
    script:
        "../scripts/chinchilla_points.py"


rule chinchilla_fit:
    input:
        points="results/chinchilla/points.csv",
    output:
        fit="results/chinchilla/fit.json",
        bootstrap="results/chinchilla/bootstrap.csv",
    log:
        "logs/chinchilla/fit.log",
    benchmark:
        "benchmarks/chinchilla/fit.tsv"
    conda:
        "../envs/depthwidth.yaml"
    threads: RULES.threads("chinchilla_fit")
    resources:
        **RULES.resources("chinchilla_fit"),
    params:
        **RULES.params("chinchilla_fit"),
    script:
        "../scripts/chinchilla_fit.py"


# The paper's appendix: refit leaving out the k highest-loss points, for each k of chinchilla.drop_scan.
rule chinchilla_drop_scan:
    input:
        points="results/chinchilla/points.csv",
    output:
        scan="results/chinchilla/drop_scan.csv",
    log:
        "logs/chinchilla/drop_scan.log",
    benchmark:
        "benchmarks/chinchilla/drop_scan.tsv"
    conda:
        "../envs/depthwidth.yaml"
    threads: RULES.threads("chinchilla_drop_scan")
    resources:
        **RULES.resources("chinchilla_drop_scan"),
    params:
        **RULES.params("chinchilla_drop_scan"),
    script:
        "../scripts/chinchilla_drop_scan.py"


# The decomposed law with the Huber loss (chinchilla.huber over chinchilla.fit): the fit on all points
# and at each k of the scan.
rule chinchilla_huber:
    input:
        points="results/chinchilla/points.csv",
    output:
        fit="results/chinchilla/fit_huber.json",
        bootstrap="results/chinchilla/bootstrap_huber.csv",
        scan="results/chinchilla/drop_scan_huber.csv",
        deltas="results/chinchilla/delta_scan_huber.csv",
        leverage="results/chinchilla/leverage.csv",
    log:
        "logs/chinchilla/huber.log",
    benchmark:
        "benchmarks/chinchilla/huber.tsv"
    conda:
        "../envs/depthwidth.yaml"
    threads: RULES.threads("chinchilla_huber")
    resources:
        **RULES.resources("chinchilla_huber"),
    params:
        **RULES.params("chinchilla_huber"),
    script:
        "../scripts/chinchilla_huber.py"


# The Chinchilla law L = E + A/N^alpha + B/D^beta: Besiroglu et al.'s replication procedure and the
# fitting core's fits of the same law to the Chinchilla points.
rule chinchilla_law:
    input:
        points="results/chinchilla/points.csv",
    output:
        law="results/chinchilla/chinchilla_law.json",
    log:
        "logs/chinchilla/chinchilla_law.log",
    benchmark:
        "benchmarks/chinchilla/chinchilla_law.tsv"
    conda:
        "../envs/depthwidth.yaml"
    threads: RULES.threads("chinchilla_law")
    resources:
        **RULES.resources("chinchilla_law"),
    params:
        **RULES.params("chinchilla_law"),
    script:
        "../scripts/chinchilla_law.py"


# Sweeps (chinchilla.sweeps): each named table of runs, loaded and checked, then the law fitted with its
# identifiability (profile likelihood, correlations, tokens tied to size). The chinchilla sweep repeats
# the main fit's points; fit.json above stays the stage's main fit.
rule chinchilla_sweep_points:
    input:
        chinchilla_pipeline.sweep_input_function(config),
    output:
        runs="results/chinchilla/sweeps/{sweep}/runs.csv",
    log:
        "logs/chinchilla/sweeps/{sweep}/points.log",
    benchmark:
        "benchmarks/chinchilla/sweeps/{sweep}/points.tsv"
    conda:
        "../envs/depthwidth.yaml"
    threads: RULES.threads("chinchilla_sweep_points")
    resources:
        **RULES.resources("chinchilla_sweep_points"),
    params:
        **RULES.params("chinchilla_sweep_points"),
    script:
        "../scripts/chinchilla_sweep_points.py"


rule chinchilla_sweep_identify:
    input:
        runs="results/chinchilla/sweeps/{sweep}/runs.csv",
    output:
        identify="results/chinchilla/sweeps/{sweep}/identify.json",
        profile="results/chinchilla/sweeps/{sweep}/profile.csv",
    log:
        "logs/chinchilla/sweeps/{sweep}/identify.log",
    benchmark:
        "benchmarks/chinchilla/sweeps/{sweep}/identify.tsv"
    conda:
        "../envs/depthwidth.yaml"
    threads: RULES.threads("chinchilla_sweep_identify")
    resources:
        **RULES.resources("chinchilla_sweep_identify"),
    params:
        **RULES.params("chinchilla_sweep_identify"),
    script:
        "../scripts/chinchilla_sweep_identify.py"


rule chinchilla_section:
    input:
        points="results/chinchilla/points.csv",
        summary="results/chinchilla/reconstruction.json",
        fit="results/chinchilla/fit.json",
        bootstrap="results/chinchilla/bootstrap.csv",
        scan="results/chinchilla/drop_scan.csv",
        fit_huber="results/chinchilla/fit_huber.json",
        scan_huber="results/chinchilla/drop_scan_huber.csv",
        deltas="results/chinchilla/delta_scan_huber.csv",
        leverage="results/chinchilla/leverage.csv",
        law="results/chinchilla/chinchilla_law.json",
        sweeps=chinchilla_pipeline.sweep_targets(config),
    output:
        html="results/chinchilla/section.html",
        headline="results/chinchilla/headline.json",
        shape="results/chinchilla/optimal_shape.csv",
        sweeps="results/chinchilla/sweeps.csv",
        robustness="results/chinchilla/robustness.csv",
        figures=report(
            directory("results/chinchilla/figures"),
            patterns=["{name}.png"],
            caption="../report/captions/chinchilla.rst",
            category="chinchilla",
        ),
    log:
        "logs/chinchilla/section.log",
    benchmark:
        "benchmarks/chinchilla/section.tsv"
    conda:
        "../envs/depthwidth.yaml"
    threads: RULES.threads("chinchilla_section")
    resources:
        **RULES.resources("chinchilla_section"),
    params:
        **RULES.params("chinchilla_section"),
    script:
        "../scripts/chinchilla_section.py"
