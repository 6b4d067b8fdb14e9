# Inputs from the internet: checksum-pinned, mirror first, written atomically (depthwidth.download).
# Download rules are local rules because compute nodes often have no internet.
from depthwidth.download import pipeline as download_pipeline  # noqa: E402


localrules:
    fetch_file,
    fineweb_shards,


wildcard_constraints:
    # Only files pinned in src/depthwidth/download/manifest.yaml can be fetched.
    raw_path=download_pipeline.raw_path_pattern(),


rule fetch_file:
    output:
        "data/raw/{raw_path}",
    log:
        "logs/download/{raw_path}.log",
    conda:
        "../envs/depthwidth.yaml"
    params:
        sha256=download_pipeline.pinned_sha256,
        # where a file comes from does not change it: not a rerun trigger (data.mirrors, allow_network)
        sources=download_pipeline.sources_params(config, workflow.basedir),
        code=code_fingerprint("fetch_file"),
    script:
        "../scripts/fetch_file.py"


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
        corpus=download_pipeline.corpus_params(config),
        # a damaged pinned sample is fetched again from these; not a rerun trigger (data.mirrors)
        sources=download_pipeline.sources_params(config, workflow.basedir),
        code=code_fingerprint("fineweb_shards"),
    script:
        "../scripts/fineweb_shards.py"
