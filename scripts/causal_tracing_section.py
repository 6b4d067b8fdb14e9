"""The causal-tracing report section and its figures (rule causal_tracing_section); it only renders."""

from depthwidth.causal_tracing.section import causal_tracing_section
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
causal_tracing_section(sm.input, sm.output, min_p_clean=sm.params.min_p_clean)
