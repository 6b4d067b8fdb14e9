"""Fit the decomposed law to one sweep and check that it is identified (rule chinchilla_sweep_identify)."""

from depthwidth.chinchilla.identify import chinchilla_sweep_identify
from depthwidth.logs import setup_logging

setup_logging(snakemake.log[0])  # noqa: F821
sm = snakemake  # noqa: F821
chinchilla_sweep_identify(sm.input.runs, sm.params.cfg, sm.output.identify, sm.output.profile)
