"""Every paper figure's comparisons in one file (rule paperfigs_comparisons)."""

from depthwidth.logs import setup_logging
from depthwidth.paperfigs.gather import paperfigs_comparisons

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
paperfigs_comparisons(list(sm.input), sm.output.comparisons)
