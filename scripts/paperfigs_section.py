"""Report section of the paper-figures stage (rule paperfigs_section)."""

from depthwidth.logs import setup_logging
from depthwidth.paperfigs.section import paperfigs_section

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
paperfigs_section(
    {k: v for k, v in sm.input.items()},
    loss_summed=sm.params.loss_summed,
    html_path=sm.output.html,
    headline_path=sm.output.headline,
    figures_dir=sm.output.figures,
)
