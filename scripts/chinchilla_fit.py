"""Fit the decomposed law to the Chinchilla points with one loss of the grid (rule chinchilla_fit)."""

from depthwidth.chinchilla.fit import chinchilla_fit
from depthwidth.logs import setup_logging

setup_logging(snakemake.log[0])  # noqa: F821
sm = snakemake  # noqa: F821
chinchilla_fit(sm.input.points, sm.params.fit, sm.output.fit, sm.output.bootstrap)
