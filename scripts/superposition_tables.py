"""cells.csv and exponents.csv from every trained cell (rule superposition_tables)."""

from depthwidth.logs import setup_logging
from depthwidth.superposition.pipeline import cells_table, exponents_table

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
cells = cells_table(list(sm.input.models), dict(sm.params.analysis))
cells.to_csv(sm.output.cells, index=False)
exps = exponents_table(cells, dict(sm.params.analysis))
exps.to_csv(sm.output.exponents, index=False)
log.info("%d cells, %d fits written", len(cells), len(exps))
