"""Next-token loss of one model on one corpus, resumable (rule lm_head_loss)."""

from pathlib import Path

import torch

from depthwidth.lm_head.loss import lm_head_loss
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
torch.set_num_threads(sm.threads)
lm_head_loss(
    Path(sm.input.model).parent,
    sm.input.corpus,
    sm.wildcards.corpus,
    max_tokens=sm.params.max_tokens,
    dtype=sm.params.dtype,
    checkpoint_every=sm.params.speed["checkpoint_every"],
    texts_path=sm.output.texts,
    summary_path=sm.output.summary,
    logger=log,
)
