"""Fetch one checksum-pinned file: mirrors first, then its URLs (rule fetch_file)."""

from depthwidth.download.fetch import fetch
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
src = sm.params.sources
fetch(
    sm.wildcards.raw_path,
    sm.output[0],
    src["mirrors"],
    timeout=src["timeout_s"],
    allow_network=src["allow_network"],
)
