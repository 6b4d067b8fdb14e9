"""Figures across models, tables and headline rows of the hidden-states stage (rule hidden_states_section)."""

from depthwidth.hidden_states.section import hidden_states_section
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
hidden_states_section(
    dict(sm.input.items()),
    sm.params.models,
    html=sm.output.html,
    headline=sm.output.headline,
    layers=sm.output.layers,
    models_csv=sm.output.models,
    figures=sm.output.figures,
)
