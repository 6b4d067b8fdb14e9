"""Fig. 8b read off the paper's PDF and the width law refitted on its points (rule paperfigs_fig8b)."""

from depthwidth.logs import setup_logging
from depthwidth.paperfigs.readings import paperfigs_fig8b

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
s = paperfigs_fig8b(
    sm.input.pdf,
    sm.input.notebook,
    n_boot=sm.params.n_boot,
    seed=sm.params.seed,
    points_csv=sm.output.points,
    fits_csv=sm.output.fits,
    summary_json=sm.output.summary,
    sources=sm.params.sources,
)
log.info(
    "Fig. 8b: %d of %d points read; notebook procedure rerun: alpha %.4f",
    s["read"]["found"],
    s["read"]["expected"],
    s["notebook_rerun"]["alpha"],
)
