# The report: every enabled stage's section, the headline table and provenance in one HTML file.
# It reads only the files it declares (depthwidth.report.pipeline.inputs) and hashes exactly those.


rule report:
    input:
        unpack(report_sections),
    output:
        html="results/report.html",
        headline="results/headline.csv",
    log:
        "logs/report.log",
    benchmark:
        "benchmarks/report.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        mem_mb=1000,
        runtime=10,
    params:
        **report_pipeline.params(config, reduced_stages()),
        code=code_fingerprint("report"),
    script:
        "../scripts/report.py"


rule report_screenshot:
    input:
        "results/report.html",
    output:
        "results/report_top.png",
    log:
        "logs/report_screenshot.log",
    benchmark:
        "benchmarks/report_screenshot.tsv"
    conda:
        "../envs/depthwidth.yaml"
    params:
        code=code_fingerprint("report_screenshot"),
    script:
        "../scripts/report_screenshot.py"
