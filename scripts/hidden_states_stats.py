"""Per-layer statistics, token clusters and the compositional test of one model (rule hidden_states_stats)."""

import json

from depthwidth.hidden_states.section import model_statistics
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
s = sm.params.stats
table, groups, sample, summary = model_statistics(
    sm.input[0],
    sm.wildcards.model,
    middle=tuple(s["middle"]),
    quantiles=tuple(s["quantiles"]),
    n_components=s["n_components"],
    max_distance=s["max_robust_distance"],
    n_clusters=s["n_clusters"],
    improvement_fraction=s["improvement_fraction"],
    early_depth=s["early_depth"],
    sample_tokens=s["sample_tokens"],
    seed=s["seed"],
)
table.to_csv(sm.output.layers, index=False)
groups.to_csv(sm.output.groups, index=False)
sample.to_parquet(sm.output.sample, index=False)
with open(sm.output.summary, "w") as f:
    json.dump(summary, f, indent=2, default=float)
log.info("%s: %d tokens, smooth bulk %.2f %%", sm.wildcards.model, summary["n_tokens"], 100 * summary["bulk_share"])
