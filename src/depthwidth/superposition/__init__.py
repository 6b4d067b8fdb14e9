"""Superposition toy model (Liu, Liu, Gore, arXiv 2505.10465): data, fast trainer, analyses.

- ``data``: feature-frequency laws and an exact sparse sampler of the toy inputs.
- ``train``: the batched sparse trainer, the paper's plain reference loop, checkpoints.
- ``analysis``: per-cell metrics (represented fraction, overlaps, ETF), loss-vs-width fits.
"""
