"""LLM hidden states on FineWeb: per-token, per-layer geometry and losses, and their statistics.

- :mod:`.metrics`: what one batch gives (angles, norms, progress, logit-lens losses), computed on the
  model's device from ``output_hidden_states``, keeping only tokens whose successor is a real token.
- :mod:`.extract`: tokenising, length-bucketed batching, checkpointed parts, the per-token file.
- :mod:`.stats`: per-layer quantiles, middle-layer averages, PCA of angle profiles, the smooth bulk,
  the compositional-assembly test.
- :mod:`.section`: figures across models, the report section and headline rows.
"""
