"""Collect the per-student files into runs.csv, fit exponents.csv (and α_ℓ at every evaluated step,
exponent_vs_step.csv), and stack the angle tables."""

from depthwidth.depth_toy.io import collect_tables
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
collect_tables(sm.input.students, sm.input.angles, sm.output.runs, sm.output.exponents, sm.output.angles,
               sm.output.trajectory)
