"""The first n_texts non-empty texts of one corpus as parquet (rule lm_head_corpus)."""

import os

import pandas as pd

from depthwidth.lm_head import corpus_texts
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
texts = corpus_texts(sm.params.spec, sm.params.n_texts, input_paths=list(sm.input), name=sm.wildcards.corpus)
tmp = f"{sm.output[0]}.partial-{os.getpid()}"
pd.DataFrame({"text_index": range(len(texts)), "text": texts}).to_parquet(tmp, index=False)
os.replace(tmp, sm.output[0])
log.info("corpus %s: %d texts, %d characters", sm.wildcards.corpus, len(texts), sum(map(len, texts)))
