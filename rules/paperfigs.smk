# The superposition paper's figures read off its vector PDFs (depthwidth.paperfigs). The pinned PDFs and
# the fit notebook come from rules/download.smk (fetch_file); each reading runs once per pinned file.
from depthwidth.paperfigs import section as paperfigs_section  # noqa: E402


rule paperfigs_fig8:
    input:
        **paperfigs_section.inputs(),
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
    params:
        n_boot=config["paperfigs"]["n_boot"],
        seed=config["paperfigs"]["seed"],
    script:
        "../scripts/paperfigs_fig8.py"


rule paperfigs_section:
    input:
        points="results/paperfigs/fig8a_points.csv",
        fits="results/paperfigs/fig8a_fits.csv",
        summary="results/paperfigs/fig8_summary.json",
    output:
        html="results/paperfigs/section.html",
        headline="results/paperfigs/headline.json",
        figures=directory("results/paperfigs/figures"),
    log:
        "logs/paperfigs/section.log",
    benchmark:
        "benchmarks/paperfigs/section.tsv"
    conda:
        "../envs/depthwidth.yaml"
    script:
        "../scripts/paperfigs_section.py"
