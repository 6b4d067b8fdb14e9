# Models: make every configured model loadable from data/models/<name>/ (depthwidth.models).
# data/models/<name>/manifest.json is what other rules take as input; load it with
# depthwidth.models.load.load_model("data/models/<name>").
from depthwidth.models import pipeline as models_pipeline  # noqa: E402


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
    # first: the model jobs (extraction, LM-head loss, causal traces) wait for it and end the run
    priority: 20
    conda:
        "../envs/depthwidth.yaml"
    resources:
        mem_mb=4000,
        runtime=60,
    params:
        spec=models_pipeline.spec_params(config),
        # where the weights come from does not change them: not a rerun trigger (data.mirrors)
        sources=download_pipeline.sources_params(config, workflow.basedir),
        code=code_fingerprint("model_fetch"),
    script:
        "../scripts/model_fetch.py"
