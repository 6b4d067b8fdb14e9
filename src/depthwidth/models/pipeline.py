"""Config → params of the model rules (``RULES``), and the configured models other stages select from."""

from __future__ import annotations

from depthwidth.models.load import ENCODER_FAMILIES
from depthwidth.rules import Keys, Rule

# The config entry of one model, keys sorted: editing it refetches only that model. Where the weights come
# from (sources) does not change them: not a rerun trigger.
RULES = {"model_fetch": Rule(params={"spec": Keys("models.{model}")}, sources=True, mem_mb=4000, runtime=60)}


def decoders(config: dict, names: list[str]) -> list[str]:
    """The models of ``names`` with a next-token loss (encoder families such as bert have none)."""
    return [m for m in names if config["models"][m]["family"] not in ENCODER_FAMILIES]
