# Inputs from the internet: checksum-pinned, mirror first, written atomically (depthwidth.download).
# Download rules are local rules because compute nodes often have no internet.
from depthwidth.download import pipeline as download_pipeline

RULES.add(download_pipeline)


localrules:
    fineweb_shards,


# The files pinned in src/depthwidth/download/manifest.yaml, one job per group (the first folder of their
# path: chinchilla, fineweb, openlm_scaling, superposition_paper).
for _group in download_pipeline.groups():

    rule:
        name:
            f"fetch_pinned_{_group}"
        output:
            download_pipeline.group_outputs(_group),
        log:
            f"logs/download/{_group}.log",
        localrule: True
        conda:
            "../envs/depthwidth.yaml"
        params:
            **RULES.params("fetch_pinned", group=_group),
        script:
            "../scripts/fetch_pinned.py"


# The first n_docs documents of the configured corpus as parquet shards (depthwidth.download.fineweb):
# from the mirrored first documents of the default FineWeb stream when they cover n_docs, else streamed
# from the hub, or from a local corpus file.
rule fineweb_shards:
    input:
        **download_pipeline.fineweb_shards_input(config),
    output:
        fineweb_shard_paths(),
    log:
        "logs/download/fineweb_shards.log",
    benchmark:
        "benchmarks/download/fineweb_shards.tsv"
    conda:
        "../envs/depthwidth.yaml"
    params:
        **RULES.params("fineweb_shards"),
    script:
        "../scripts/fineweb_shards.py"
