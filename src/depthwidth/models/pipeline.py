"""Config → params of the model rules, and the configured models other stages select from."""

from __future__ import annotations

from depthwidth.config import result_params
from depthwidth.models.load import ENCODER_FAMILIES


def model_spec_params(config: dict, model: str) -> dict:
    """The config entry of one model, keys sorted: editing it refetches only that model."""
    return result_params(config["models"][model])


def spec_params(config: dict):
    """:func:`model_spec_params` as the params function of rule model_fetch (``{model}`` wildcard)."""

    def params(wildcards):
        return model_spec_params(config, wildcards.model)

    return params


def decoders(config: dict, names: list[str]) -> list[str]:
    """The models of ``names`` with a next-token loss (encoder families such as bert have none)."""
    return [m for m in names if config["models"][m]["family"] not in ENCODER_FAMILIES]
