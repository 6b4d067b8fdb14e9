"""The toy figures of the two regimes read off the paper's PDFs: Figs. 3, 4a, 5a, 6c/6d and 7 (rule paperfigs_regimes)."""

from depthwidth.logs import setup_logging
from depthwidth.paperfigs.outputs import REGIMES_TABLES
from depthwidth.paperfigs.readings import paperfigs_regimes

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
s = paperfigs_regimes(
    sm.input.fig3,
    sm.input.fig4,
    sm.input.fig5,
    sm.input.fig6,
    sm.input.fig7,
    tables={name: sm.output[name] for name in REGIMES_TABLES},
    summary_json=sm.output.summary,
    sources=sm.params.sources,
)
for fig, summary in s.items():
    panels = {k: v for k, v in summary.items() if isinstance(v, dict) and "found" in v} or {fig: summary}
    log.info("%s: %s", fig, ", ".join(f"{p} {v['found']} of {v['expected']}" for p, v in panels.items()))
