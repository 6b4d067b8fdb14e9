"""Fetch a group of checksum-pinned files: each from the mirrors first, then its URLs (rule
fetch_pinned_<group>)."""

from depthwidth.download.fetch import fetch_all
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
src = sm.params.sources
fetch_all(
    list(sm.params.sha256),
    list(sm.output),
    src["mirrors"],
    timeout=src["timeout_s"],
    allow_network=src["allow_network"],
)
