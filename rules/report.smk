# The report: every enabled stage's section, the headline table and provenance in one HTML file.
# It reads only the files it declares (depthwidth.report.pipeline.inputs) and hashes exactly those.
RULES.add(report_pipeline)


rule report:
    input:
        unpack(report_sections),
    output:
        html="results/report.html",
        headline="results/headline.csv",
        sweeps="results/your_sweeps.csv",
    log:
        "logs/report.log",
    benchmark:
        "benchmarks/report.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        **RULES.resources("report"),
    params:
        **RULES.params("report", reduced=reduced_stages()),
    script:
        "../scripts/report.py"


rule report_screenshot:
    input:
        html="results/report.html",
        headline="results/headline.csv",
    output:
        "results/report_top.png",
    log:
        "logs/report_screenshot.log",
    benchmark:
        "benchmarks/report_screenshot.tsv"
    conda:
        "../envs/depthwidth.yaml"
    params:
        **RULES.params("report_screenshot"),
    script:
        "../scripts/report_screenshot.py"
