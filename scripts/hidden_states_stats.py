"""Per-layer statistics, token clusters and the compositional test of one model (rule hidden_states_stats)."""

from depthwidth.hidden_states.stats import hidden_states_stats
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
out = hidden_states_stats(
    sm.input[0],
    sm.wildcards.model,
    sm.params.stats,
    layers=sm.output.layers,
    groups=sm.output.groups,
    sample=sm.output.sample,
    summary=sm.output.summary,
)
log.info("%s: %d tokens, smooth bulk %.2f %%", sm.wildcards.model, out["n_tokens"], 100 * out["bulk_share"])
