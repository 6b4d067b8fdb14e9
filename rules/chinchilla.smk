# Chinchilla: reconstruct (N, D, d_model, n_layers, loss) and fit the decomposed law.
# Paths and inputs: depthwidth.chinchilla.pipeline; params, threads and resources: its RULES table.
from depthwidth.chinchilla import pipeline as chinchilla_pipeline

RULES.add(chinchilla_pipeline)

if stage_enabled("chinchilla"):
    chinchilla_pipeline.check(config, sys.argv[1:])


wildcard_constraints:
    sweep="[A-Za-z0-9_.-]+",
    law="|".join(chinchilla_pipeline.LAWS),
    loss="|".join(chinchilla_pipeline.LOSSES),


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


# The fit grid (chinchilla_pipeline.LAWS x LOSSES): each law fitted with each loss, the cell's settings
# drawn from the config by chinchilla_pipeline.cell. The decomposed law's squared cell is the paper's fit.
rule chinchilla_fit:
    input:
        points="results/chinchilla/points.csv",
    output:
        fit="results/chinchilla/fits/{law}/{loss}/fit.json",
        bootstrap="results/chinchilla/fits/{law}/{loss}/bootstrap.csv",
    log:
        "logs/chinchilla/fits/{law}/{loss}/fit.log",
    benchmark:
        "benchmarks/chinchilla/fits/{law}/{loss}/fit.tsv"
    conda:
        "../envs/depthwidth.yaml"
    threads: RULES.threads("chinchilla_fit")
    resources:
        **RULES.resources("chinchilla_fit"),
    params:
        **RULES.params("chinchilla_fit"),
    script:
        "../scripts/chinchilla_fit.py"


# The paper's appendix: refit a cell of the decomposed law leaving out the k highest-loss points, for each k
# of chinchilla.drop_scan.
rule chinchilla_drop_scan:
    input:
        points="results/chinchilla/points.csv",
    output:
        scan="results/chinchilla/fits/{law}/{loss}/drop_scan.csv",
    log:
        "logs/chinchilla/fits/{law}/{loss}/drop_scan.log",
    benchmark:
        "benchmarks/chinchilla/fits/{law}/{loss}/drop_scan.tsv"
    wildcard_constraints:
        law="|".join(chinchilla_pipeline.SCANNED_LAWS),
    conda:
        "../envs/depthwidth.yaml"
    threads: RULES.threads("chinchilla_drop_scan")
    resources:
        **RULES.resources("chinchilla_drop_scan"),
    params:
        **RULES.params("chinchilla_drop_scan"),
    script:
        "../scripts/chinchilla_drop_scan.py"


# Why the cut moves α_ℓ: the Huber cell's fit at each δ of chinchilla.huber.delta_scan and with least
# squares, and every run's leverage.
rule chinchilla_leverage:
    input:
        points="results/chinchilla/points.csv",
        fit=chinchilla_pipeline.fit_target("decomposed", "huber"),
    output:
        deltas="results/chinchilla/delta_scan.csv",
        leverage="results/chinchilla/leverage.csv",
    log:
        "logs/chinchilla/leverage.log",
    benchmark:
        "benchmarks/chinchilla/leverage.tsv"
    conda:
        "../envs/depthwidth.yaml"
    threads: RULES.threads("chinchilla_leverage")
    resources:
        **RULES.resources("chinchilla_leverage"),
    params:
        **RULES.params("chinchilla_leverage"),
    script:
        "../scripts/chinchilla_leverage.py"


# The Chinchilla law L = E + A/N^alpha + B/D^beta as Besiroglu et al. fit it: their replication procedure
# and their notebook's other estimators (the grid's chinchilla cells are the fitting core's fits of it).
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
# the main fit's points; the squared cell above stays the stage's main fit.
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


# Every comparison of the stage with the papers, as data (depthwidth.verdicts): the headline rows and the
# section's tables come from comparisons.csv; with it the robustness and optimal-shape tables.
rule chinchilla_compare:
    input:
        points="results/chinchilla/points.csv",
        fit=chinchilla_pipeline.fit_target("decomposed", "squared"),
        bootstrap=chinchilla_pipeline.fit_target("decomposed", "squared", "bootstrap.csv"),
        scan=chinchilla_pipeline.fit_target("decomposed", "squared", "drop_scan.csv"),
        fit_huber=chinchilla_pipeline.fit_target("decomposed", "huber"),
        bootstrap_huber=chinchilla_pipeline.fit_target("decomposed", "huber", "bootstrap.csv"),
        scan_huber=chinchilla_pipeline.fit_target("decomposed", "huber", "drop_scan.csv"),
        sweeps=chinchilla_pipeline.sweep_targets(config),
        runs=chinchilla_pipeline.sweep_targets(config, "runs.csv"),
    output:
        comparisons="results/chinchilla/comparisons.csv",
        shape="results/chinchilla/optimal_shape.csv",
        robustness="results/chinchilla/robustness.csv",
        fit_points="results/chinchilla/fit_points.csv",
    log:
        "logs/chinchilla/compare.log",
    benchmark:
        "benchmarks/chinchilla/compare.tsv"
    conda:
        "../envs/depthwidth.yaml"
    threads: RULES.threads("chinchilla_compare")
    resources:
        **RULES.resources("chinchilla_compare"),
    params:
        **RULES.params("chinchilla_compare"),
    script:
        "../scripts/chinchilla_compare.py"


rule chinchilla_section:
    input:
        comparisons="results/chinchilla/comparisons.csv",
        shape="results/chinchilla/optimal_shape.csv",
        robustness="results/chinchilla/robustness.csv",
        fit_points="results/chinchilla/fit_points.csv",
        points="results/chinchilla/points.csv",
        summary="results/chinchilla/reconstruction.json",
        fit=chinchilla_pipeline.fit_target("decomposed", "squared"),
        bootstrap=chinchilla_pipeline.fit_target("decomposed", "squared", "bootstrap.csv"),
        scan=chinchilla_pipeline.fit_target("decomposed", "squared", "drop_scan.csv"),
        fit_huber=chinchilla_pipeline.fit_target("decomposed", "huber"),
        deltas="results/chinchilla/delta_scan.csv",
        leverage="results/chinchilla/leverage.csv",
        law="results/chinchilla/chinchilla_law.json",
        law_fits=chinchilla_pipeline.law_targets("chinchilla"),
        sweeps=chinchilla_pipeline.sweep_targets(config),
    output:
        html="results/chinchilla/section.html",
        headline="results/chinchilla/headline.json",
        sweeps="results/chinchilla/sweeps.csv",
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
