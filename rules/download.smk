# Inputs from the internet: checksum-pinned, mirror first, written atomically. Download rules are
# local rules because compute nodes often have no internet.


localrules:
    fetch_file,


rule fetch_file:
    output:
        "data/raw/{raw_path}",
    params:
        sha256=pinned_sha256,
    log:
        "logs/download/{raw_path}.log",
    script:
        "../scripts/fetch_file.py"
