"""Refit one cell of the fit grid leaving out the k highest-loss points, for each k (rule chinchilla_drop_scan)."""

from depthwidth.chinchilla.scan import chinchilla_drop_scan
from depthwidth.logs import setup_logging

setup_logging(snakemake.log[0])  # noqa: F821
sm = snakemake  # noqa: F821
chinchilla_drop_scan(sm.input.points, sm.params.scan, sm.output.scan)
