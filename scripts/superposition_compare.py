"""Our exponents against the paper's stated and drawn values (rule superposition_compare)."""

from depthwidth.logs import setup_logging
from depthwidth.superposition.compare import superposition_compare

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
superposition_compare(
    sm.input.exponents,
    sm.params.tolerance,
    sm.output.comparisons,
    sm.input.get("fig4b"),
    sm.input.get("fig5b"),
)
