"""Report section of the superposition stage (rule superposition_section)."""

from depthwidth.logs import setup_logging
from depthwidth.superposition.section import superposition_section

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
superposition_section(
    sm.input.comparisons,
    sm.input.cells,
    sm.input.exponents,
    list(sm.input.models),
    list(sm.input.infos),
    dict(sm.params.analysis),
    sm.output.html,
    sm.output.headline,
    sm.output.figures,
)
