"""Trace every fact in one model (rule causal_tracing_trace)."""

import torch

from depthwidth.causal_tracing.trace import causal_tracing_trace
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
torch.set_num_threads(max(1, sm.threads))
causal_tracing_trace(
    sm.input.model.removesuffix("manifest.json"),
    list(zip(sm.output.summaries, sm.output.matrices, strict=True)),
    sm.params.trace,
    model_name=sm.wildcards.model,
    batch_rows=int(sm.params.speed["batch_rows"]),
)
