"""Superposition toy model (Liu, Liu, Gore, arXiv 2505.10465).

- ``pipeline``: config → rule params and cell lists (the only module rules/superposition.smk imports).
- ``grid``, ``data``: feature-frequency laws and an exact sparse sampler of the toy inputs.
- ``batch``: one sparse input batch and the trainer's scratch memory.
- ``fused`` (with ``kernel.c`` and ``native``): the compiled kernel, built once per machine into a user
  cache and called through argument-checking wrappers.
- ``grads``: exact loss and gradients by the 'hidden' and 'features' routes.
- ``train``: the batched sparse trainer, checkpoints, the superposition_train rule's entry points.
- ``reference``: the paper's plain training loop (the ground truth of tests and the benchmark).
- ``analysis``: per-cell metrics (represented fraction, overlaps, ETF).
- ``tables``: cells.csv and exponents.csv; ``section``: the report section.
"""
