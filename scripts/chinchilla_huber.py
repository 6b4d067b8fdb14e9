"""The decomposed law fitted with the Huber loss, and its dropped-points scan (rule chinchilla_huber)."""

from depthwidth.chinchilla.robust import chinchilla_huber
from depthwidth.logs import setup_logging

setup_logging(snakemake.log[0])  # noqa: F821
sm = snakemake  # noqa: F821
chinchilla_huber(
    sm.input.points,
    sm.params.fit,
    sm.output.fit,
    sm.output.bootstrap,
    sm.output.scan,
    sm.output.deltas,
    sm.output.leverage,
)
