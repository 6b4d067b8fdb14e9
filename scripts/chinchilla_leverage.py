"""The Huber cell's δ-sensitivity and every run's leverage (rule chinchilla_leverage)."""

from depthwidth.chinchilla.robustness import chinchilla_leverage
from depthwidth.logs import setup_logging

setup_logging(snakemake.log[0])  # noqa: F821
sm = snakemake  # noqa: F821
chinchilla_leverage(sm.input.points, sm.input.fit, sm.params.cfg, sm.output.deltas, sm.output.leverage)
