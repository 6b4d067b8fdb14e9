"""Load and check one sweep of training runs (rule chinchilla_sweep_points)."""

from depthwidth.chinchilla.sweeps import chinchilla_sweep_points
from depthwidth.logs import setup_logging

setup_logging(snakemake.log[0])  # noqa: F821
sm = snakemake  # noqa: F821
chinchilla_sweep_points(sm.params.spec, sm.output.runs, sm.params.sources)
