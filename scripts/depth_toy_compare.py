"""The depth toy's comparisons with the paper (rule depth_toy_compare)."""

from depthwidth.depth_toy.compare import depth_toy_compare
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
depth_toy_compare(sm.input.exponents, sm.input.convergence, sm.output.comparisons, sm.params.headline_variant)
