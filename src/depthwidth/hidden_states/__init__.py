"""LLM hidden states on FineWeb: per-token, per-layer geometry and losses, and their statistics.

- :mod:`.pipeline`: config → the rules' params, job lists and resources (the only module the rules import).
- :mod:`.metrics`: what one batch gives (angles, norms, progress, logit-lens and last-block losses),
  computed on the model's device from ``output_hidden_states``, keeping only tokens whose successor is a
  real token.
- :mod:`.extract`: tokenising, length-bucketed batching, checkpointed parts, the per-token file
  (rule ``hidden_states_extract``).
- :mod:`.stats`: per-layer quantiles, middle-layer means, PCA of angle profiles, the smooth bulk, the
  compositional-assembly test (rule ``hidden_states_stats``).
- :mod:`.compare`: the comparisons with the paper, as data (rule ``hidden_states_compare``, comparisons.csv).
- :mod:`.section`: figures across models and the report section, rendered from the statistics and
  comparisons.csv (rule ``hidden_states_section``).
- :mod:`.tiny`: tiny random-weight models of each family and a small tokenizer, built offline.
"""
