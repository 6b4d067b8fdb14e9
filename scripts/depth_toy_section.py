"""Report section of the depth toy (rule depth_toy_section)."""

from depthwidth.depth_toy.section import depth_toy_section
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
depth_toy_section(
    {k: f for k, f in sm.input.items() if k != "comparisons"},
    sm.input.comparisons,
    sm.output.html,
    sm.output.headline,
    sm.output.figures,
    sm.params.note,
    sm.params.angle_samples,
    sm.params.variants,
)
