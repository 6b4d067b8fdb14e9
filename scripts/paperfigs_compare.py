"""One paper figure's comparisons with our cells (rule paperfigs_compare)."""

from depthwidth.logs import setup_logging
from depthwidth.paperfigs.figures import paperfigs_compare

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
recs = paperfigs_compare(
    sm.wildcards.figure,
    {k: v for k, v in sm.input.items()},
    summed=sm.params.loss_summed,
    compare_csv=sm.output.compare,
    table_csv=sm.output.table,
    extra_csv=sm.output.extra,
)
log.info("%s: %d records", sm.wildcards.figure, len(recs))
