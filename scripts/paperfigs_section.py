"""Report section of the paper-figures stage (rule paperfigs_section)."""

from depthwidth.logs import setup_logging
from depthwidth.paperfigs.outputs import REGIMES_TABLES
from depthwidth.paperfigs.section import paperfigs_section

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
paperfigs_section(
    sm.input.points,
    sm.input.fits,
    sm.input.summary,
    sm.input.fig4b,
    sm.input.fig6e,
    sm.input.toy,
    sm.input.get("exponents"),
    sm.input.fig8b_points,
    sm.input.fig8b_fits,
    sm.input.fig8b_summary,
    fig5b_csv=sm.input.fig5b,
    fig1_csv=sm.input.fig1,
    cells_csv=sm.input.get("cells"),
    loss_summed=sm.params.loss_summed,
    regimes_tables={name: sm.input[name] for name in REGIMES_TABLES},
    regimes_json=sm.input.regimes,
    html_path=sm.output.html,
    headline_path=sm.output.headline,
    figures_dir=sm.output.figures,
)
