"""Collect the per-student files into runs.csv, fit exponents.csv (and α_ℓ at every evaluated step,
exponent_vs_step.csv), stack the angle tables and average the teachers' (rule depth_toy_tables)."""

from depthwidth.depth_toy.tables import depth_toy_tables
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
depth_toy_tables(
    list(sm.input.students),
    list(sm.input.angles),
    sm.output.runs,
    sm.output.exponents,
    sm.output.angles,
    sm.output.trajectory,
    sm.output.teacher_angles,
    sm.output.curves,
    sm.output.convergence,
)
