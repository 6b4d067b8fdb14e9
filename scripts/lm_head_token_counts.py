"""Token-id counts of one tokenizer over the first >= min_tokens tokens of one corpus (rule lm_head_token_counts)."""

from pathlib import Path

from depthwidth.lm_head.token_frequencies import lm_head_token_counts
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
lm_head_token_counts(
    Path(sm.input.model).parent,
    sm.params.spec,
    list(sm.input.corpus),
    sm.wildcards.corpus,
    min_tokens=sm.params.min_tokens,
    counts_path=sm.output.counts,
    summary_path=sm.output.summary,
    logger=log,
    sources=sm.params.sources,
)
