"""cells.csv and exponents.csv from every trained cell (rule superposition_tables)."""

from depthwidth.logs import setup_logging
from depthwidth.superposition.tables import superposition_tables

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
superposition_tables(list(sm.input.models), dict(sm.params.analysis), sm.output.cells, sm.output.exponents)
