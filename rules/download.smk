# Inputs from the internet: checksum-pinned, mirror first, written atomically. Download rules are
# local rules because compute nodes often have no internet.


localrules:
    fetch_file,
    fineweb_shards,


rule fetch_file:
    output:
        "data/raw/{raw_path}",
    log:
        "logs/download/{raw_path}.log",
    conda:
        "../envs/depthwidth.yaml"
    params:
        sha256=pinned_sha256,
    script:
        "../scripts/fetch_file.py"


# The first n_docs documents of the configured corpus as parquet shards (depthwidth.fineweb): from the
# mirrored first documents of the default FineWeb stream when they cover n_docs, else streamed from the
# hub, or from a local corpus file.
rule fineweb_shards:
    input:
        unpack(fineweb_shards_input),
    output:
        fineweb_shard_paths(),
    log:
        "logs/download/fineweb_shards.log",
    benchmark:
        "benchmarks/download/fineweb_shards.tsv"
    conda:
        "../envs/depthwidth.yaml"
    params:
        corpus=hs_settings.corpus_params(HIDDEN_STATES),
    script:
        "../scripts/fetch_fineweb.py"
