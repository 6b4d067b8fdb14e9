# The superposition paper's figures read off its vector PDFs (depthwidth.paperfigs). The pinned PDFs and
# the fit notebook come from rules/download.smk (fetch_pinned_superposition_paper); each reading runs once per pinned file.
from depthwidth.paperfigs import pipeline as paperfigs_pipeline  # noqa: E402

RULES.add(paperfigs_pipeline)


# Fig. 8a's LM-head overlaps, their fits against 1/m, and the fit notebook's stored outputs.
rule paperfigs_fig8:
    input:
        **paperfigs_pipeline.inputs(),
    output:
        points="results/paperfigs/fig8a_points.csv",
        fits="results/paperfigs/fig8a_fits.csv",
        summary="results/paperfigs/fig8_summary.json",
    log:
        "logs/paperfigs/fig8.log",
    benchmark:
        "benchmarks/paperfigs/fig8.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("paperfigs_fig8"),
    params:
        **RULES.params("paperfigs_fig8"),
    script:
        "../scripts/paperfigs_fig8.py"


# Fig. 8b's 108 losses read by a drawing-model fit, and the width law refitted on them.
rule paperfigs_fig8b:
    input:
        **paperfigs_pipeline.inputs(),
    output:
        points="results/paperfigs/fig8b_points.csv",
        fits="results/paperfigs/fig8b_fits.csv",
        summary="results/paperfigs/fig8b_summary.json",
    log:
        "logs/paperfigs/fig8b.log",
    benchmark:
        "benchmarks/paperfigs/fig8b.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("paperfigs_fig8b"),
    params:
        **RULES.params("paperfigs_fig8b"),
    script:
        "../scripts/paperfigs_fig8b.py"


# Fig. 4b's heat map decoded through its colour bar, Figs. 6e's and 5b's points and error bars, Fig. 1b/1d's
# toy losses.
rule paperfigs_toy:
    input:
        **paperfigs_pipeline.toy_inputs(),
    output:
        fig4b="results/paperfigs/fig4b_cells.csv",
        fig6e="results/paperfigs/fig6e_points.csv",
        fig5b="results/paperfigs/fig5b_points.csv",
        fig1="results/paperfigs/fig1_points.csv",
        summary="results/paperfigs/toy_readings.json",
    log:
        "logs/paperfigs/toy.log",
    benchmark:
        "benchmarks/paperfigs/toy.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("paperfigs_toy"),
    params:
        **RULES.params("paperfigs_toy"),
    script:
        "../scripts/paperfigs_toy.py"


# The toy figures of the two regimes: Fig. 3 (represented fraction over γ), Fig. 4a (R² of three laws), Fig. 5a (loss against the loss by
# unlearned features), Figs. 6c/6d (strong representation, overlaps against m), Fig. 7 (activation density).
rule paperfigs_regimes:
    input:
        **paperfigs_pipeline.regimes_inputs(),
    output:
        **paperfigs_pipeline.REGIMES_TABLES,
        summary=paperfigs_pipeline.REGIMES_SUMMARY,
    log:
        "logs/paperfigs/regimes.log",
    benchmark:
        "benchmarks/paperfigs/regimes.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("paperfigs_regimes"),
    params:
        **RULES.params("paperfigs_regimes"),
    script:
        "../scripts/paperfigs_regimes.py"


# One job per compared figure: its verdict records (compare.csv), its per-cell table and a second table.
rule paperfigs_compare:
    input:
        unpack(paperfigs_compare_inputs),
    output:
        compare="results/paperfigs/{figure}/compare.csv",
        table="results/paperfigs/{figure}/table.csv",
        extra="results/paperfigs/{figure}/extra.csv",
    log:
        "logs/paperfigs/compare/{figure}.log",
    benchmark:
        "benchmarks/paperfigs/compare/{figure}.tsv"
    wildcard_constraints:
        figure="|".join(paperfigs_pipeline.COMPARED),
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("paperfigs_compare"),
    params:
        **RULES.params("paperfigs_compare"),
    script:
        "../scripts/paperfigs_compare.py"


# Every figure's records in one file.
rule paperfigs_comparisons:
    input:
        paperfigs_pipeline.comparisons_inputs(),
    output:
        comparisons="results/paperfigs/comparisons.csv",
    log:
        "logs/paperfigs/comparisons.log",
    benchmark:
        "benchmarks/paperfigs/comparisons.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("paperfigs_comparisons"),
    params:
        **RULES.params("paperfigs_comparisons"),
    script:
        "../scripts/paperfigs_comparisons.py"


rule paperfigs_section:
    input:
        **paperfigs_pipeline.section_inputs(config),
    output:
        html="results/paperfigs/section.html",
        headline="results/paperfigs/headline.json",
        figures=report(
            directory("results/paperfigs/figures"),
            patterns=["{name}.png"],
            caption="../report/captions/paperfigs.rst",
            category="paper figures",
        ),
    log:
        "logs/paperfigs/section.log",
    benchmark:
        "benchmarks/paperfigs/section.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("paperfigs_section"),
    params:
        **RULES.params("paperfigs_section"),
    script:
        "../scripts/paperfigs_section.py"
