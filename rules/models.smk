# Models: make every configured model loadable from data/models/<name>/ (depthwidth.models).
# data/models/<name>/manifest.json is what other rules take as input; load it with
# depthwidth.models.load_model("data/models/<name>").


localrules:
    model_fetch,


wildcard_constraints:
    model="|".join(re.escape(m) for m in config.get("models", {})) or "(?!)",


rule model_fetch:
    output:
        "data/models/{model}/manifest.json",
    log:
        "logs/models/{model}.log",
    benchmark:
        "benchmarks/models/model_fetch_{model}.tsv"
    conda:
        "../envs/depthwidth.yaml"
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        spec=model_spec_params,
    script:
        "../scripts/fetch_model.py"
