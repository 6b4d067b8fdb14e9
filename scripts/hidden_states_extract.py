"""Per-token, per-layer metrics of one model on the FineWeb shards (rule hidden_states_extract)."""

from depthwidth.hidden_states.extract import hidden_states_extract
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
hidden_states_extract(
    sm.input.shards,
    sm.input.model,
    sm.output[0],
    model_name=sm.wildcards.model,
    params=sm.params.extract,
    speed=sm.params.speed,
    threads=sm.threads,
)
