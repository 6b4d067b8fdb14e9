"""Make one configured model loadable from data/models/<name>/ (rule model_fetch)."""

from pathlib import Path

from depthwidth.logs import setup_logging
from depthwidth.models.fetch import fetch_model
from depthwidth.models.load import model_spec

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
src = sm.params.sources
fetch_model(
    model_spec(sm.wildcards.model, sm.params.spec),
    Path(sm.output[0]).parent,
    mirrors=src["mirrors"],
    allow_network=src["allow_network"],
)
