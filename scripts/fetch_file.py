"""Fetch one checksum-pinned file: mirrors first, then its URLs (rule fetch_file)."""

from depthwidth.fetch import fetch, resolve_mirrors
from depthwidth.logs import setup_logging

setup_logging(snakemake.log[0])  # noqa: F821
data = snakemake.config["data"]  # noqa: F821
# Where a pinned file comes from does not change its bytes, so the mirror list is deliberately read
# here rather than passed as a param: editing it must not rerun anything downstream.
fetch(
    snakemake.wildcards.raw_path,  # noqa: F821
    snakemake.output[0],  # noqa: F821
    resolve_mirrors(data["mirrors"], snakemake.scriptdir + "/.."),  # noqa: F821
    timeout=data.get("timeout_s", 30),
    allow_network=data.get("allow_network", True),
)
