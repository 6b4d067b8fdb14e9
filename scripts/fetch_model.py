"""Make one configured model loadable from data/models/<name>/ (rule model_fetch)."""

from pathlib import Path

from depthwidth.fetch import resolve_mirrors
from depthwidth.logs import setup_logging
from depthwidth.models import fetch_model, model_spec

setup_logging(snakemake.log[0])  # noqa: F821
data = snakemake.config["data"]  # noqa: F821
spec = model_spec(snakemake.wildcards.model, snakemake.params.spec)  # noqa: F821
# As in fetch_file: where the weights come from does not change them, so the mirror list is read here
# rather than passed as a param (editing it reruns nothing).
fetch_model(
    spec,
    Path(snakemake.output[0]).parent,  # noqa: F821
    mirrors=resolve_mirrors(data["mirrors"], snakemake.scriptdir + "/.."),  # noqa: F821
    allow_network=data.get("allow_network", True),
)
