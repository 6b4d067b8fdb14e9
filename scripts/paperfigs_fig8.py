"""Fig. 8a read off the paper's vector PDF, the overlap fits and the fit notebook's outputs (rule paperfigs_fig8)."""

from depthwidth.logs import setup_logging
from depthwidth.paperfigs.readings import paperfigs_fig8

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
summary = paperfigs_fig8(
    sm.input.pdf,
    sm.input.notebook,
    n_boot=sm.params.n_boot,
    seed=sm.params.seed,
    points_csv=sm.output.points,
    fits_csv=sm.output.fits,
    summary_json=sm.output.summary,
    sources=sm.params.sources,
)
log.info("Fig. 8a: %d of %d points read", summary["fig8a"]["found"], summary["fig8a"]["expected"])
