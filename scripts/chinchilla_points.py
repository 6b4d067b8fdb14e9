"""Reconstruct the Chinchilla points (rule chinchilla_points)."""

from depthwidth.chinchilla.points import chinchilla_points
from depthwidth.logs import setup_logging

setup_logging(snakemake.log[0])  # noqa: F821
sm = snakemake  # noqa: F821
chinchilla_points(sm.input.points, sm.input.table, sm.output.points, sm.output.summary, sm.params.sources)
