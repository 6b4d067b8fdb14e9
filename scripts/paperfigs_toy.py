"""Fig. 4b's heat map, Figs. 6e's and 5b's points and Fig. 1b/1d's losses read off the paper's PDFs (rule paperfigs_toy)."""

from depthwidth.logs import setup_logging
from depthwidth.paperfigs.readings import paperfigs_toy

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
s = paperfigs_toy(
    sm.input.fig4,
    sm.input.fig6,
    sm.input.fig5,
    sm.input.fig1,
    fig4b_csv=sm.output.fig4b,
    fig6e_csv=sm.output.fig6e,
    fig5b_csv=sm.output.fig5b,
    fig1_csv=sm.output.fig1,
    summary_json=sm.output.summary,
    sources=sm.params.sources,
)
log.info(
    "Fig. 4b: %d cells; Fig. 6e: %d points; Fig. 5b: %d points; Fig. 1b/1d: %d/%d points",
    s["fig4b"]["found"],
    s["fig6e"]["found"],
    s["fig5b"]["found"],
    s["fig1"]["b"]["found"],
    s["fig1"]["d"]["found"],
)
