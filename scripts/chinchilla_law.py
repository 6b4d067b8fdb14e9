"""The Chinchilla law: Besiroglu et al.'s replication and the fitting core's fits (rule chinchilla_law)."""

from depthwidth.chinchilla.replication import chinchilla_law
from depthwidth.logs import setup_logging

setup_logging(snakemake.log[0])  # noqa: F821
sm = snakemake  # noqa: F821
chinchilla_law(sm.input.points, sm.params.cfg, sm.output.law)
