"""The Chinchilla stage's comparisons with the papers, as data (rule chinchilla_compare)."""

from depthwidth.chinchilla.comparisons import chinchilla_compare
from depthwidth.logs import setup_logging

setup_logging(snakemake.log[0])  # noqa: F821
sm = snakemake  # noqa: F821
chinchilla_compare(dict(sm.input.items()), sm.params.shape["n_params"], dict(sm.output.items()))
