"""Superposition toy model (Liu, Liu, Gore, arXiv 2505.10465).

- ``pipeline``: config → rule params and cell lists (the only module rules/superposition.smk imports).
- ``grid``, ``data``: feature-frequency laws and an exact sparse sampler of the toy inputs.
- ``train``: the batched sparse trainer, the paper's plain reference loop, one cell's job.
- ``analysis``: per-cell metrics (represented fraction, overlaps, ETF).
- ``tables``: cells.csv and exponents.csv; ``section``: the report section.
"""
