"""Assemble results/report.html from every enabled stage's section (rule report)."""

from depthwidth.logs import setup_logging
from depthwidth.report.page import report

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
report(
    title=sm.params.title,
    stages=sm.params.stages,
    reduced=sm.params.reduced,
    config=sm.params.config,
    inputs=dict(sm.input.items()),
    html_path=sm.output.html,
    headline_path=sm.output.headline,
    sweeps_path=sm.output.sweeps,
)
