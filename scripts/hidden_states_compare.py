"""Every comparison of the hidden-states stage with the paper, as data (rule hidden_states_compare)."""

from depthwidth.hidden_states.compare import hidden_states_compare
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
hidden_states_compare(
    {m: sm.input[f"summary_{m}"] for m in sm.params.models}, comparisons_csv=sm.output.comparisons
)
