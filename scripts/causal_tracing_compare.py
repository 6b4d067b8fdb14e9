"""The causal-tracing tables and comparisons with the paper, as data (rule causal_tracing_compare)."""

from depthwidth.causal_tracing.compare import causal_tracing_compare
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
causal_tracing_compare(
    list(sm.input.summaries),
    list(sm.input.matrices),
    min_p_clean=sm.params.min_p_clean,
    pairs_csv=sm.output.pairs,
    peaks_csv=sm.output.peaks,
    comparisons_csv=sm.output.comparisons,
)
