"""The exponent alpha of p_i ~ i^-alpha for each (tokenizer, corpus) (rule lm_head_token_fit)."""

from depthwidth.lm_head.token_frequencies import lm_head_token_fit
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
lm_head_token_fit(
    list(sm.input.counts),
    list(sm.input.summaries),
    fit_ranks=sm.params.fit_ranks,
    fit_csv=sm.output.fit,
    logger=log,
)
