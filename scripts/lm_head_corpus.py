"""The first n_texts non-empty texts of one corpus as parquet (rule lm_head_corpus)."""

from depthwidth.lm_head.corpus import lm_head_corpus
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
lm_head_corpus(
    sm.params.spec,
    sm.params.n_texts,
    list(sm.input),
    sm.wildcards.corpus,
    sm.output[0],
    logger=log,
    sources=sm.params.sources,
)
