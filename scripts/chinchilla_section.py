"""Report section of the Chinchilla stage (rule chinchilla_section)."""

from depthwidth.chinchilla.section import chinchilla_section
from depthwidth.logs import setup_logging

setup_logging(snakemake.log[0])  # noqa: F821
sm = snakemake  # noqa: F821
chinchilla_section(dict(sm.input.items()), dict(sm.output.items()))
