"""Every comparison of the LM-head stage with the paper, as data (rule lm_head_compare)."""

from depthwidth.lm_head.compare import lm_head_compare
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
lm_head_compare(
    sm.input.geometry,
    sm.input.fit,
    sm.input.token_fit,
    bootstrap_resamples=sm.params.fit["bootstrap_resamples"],
    seed=sm.params.fit["seed"],
    comparisons_csv=sm.output.comparisons,
)
