"""Report section of the LM-head stage (rule lm_head_section)."""

from depthwidth.lm_head.section import lm_head_section
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
lm_head_section(
    sm.input.comparisons,
    sm.input.geometry,
    sm.input.loss,
    sm.input.fit,
    list(sm.input.norms),
    sm.input.token_fit,
    list(sm.input.token_counts),
    dead_norm_fraction=sm.params.dead_norm_fraction,
    html_path=sm.output.html,
    headline_path=sm.output.headline,
    figures_dir=sm.output.figures,
)
