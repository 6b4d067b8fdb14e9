"""Config → params of the model rules (``RULES``), and the configured models other stages select from."""

from __future__ import annotations

from depthwidth.models.load import ENCODER_FAMILIES
from depthwidth.rules import Keys, Rule

# The config entry of one model, keys sorted: editing it refetches only that model. Where the weights come
# from (sources) does not change them: not a rerun trigger.
RULES = {"model_fetch": Rule(params={"spec": Keys("models.{model}")}, sources=True, mem_mb=4000, runtime=60)}


def unknown_model_errors(config: dict, key: str, names: list[str]) -> list[str]:
    """The error for model names of config key ``key`` that the ``models:`` section lacks (a typo), so that
    it stops the run at parse time, naming the key, rather than later as a missing input."""
    known = config.get("models") or {}
    unknown = ", ".join(repr(m) for m in names if m not in known)
    if not unknown:
        return []
    return [
        f"config key '{key}' names {unknown}, which is not in the models section (known: "
        f"{', '.join(known) or 'none'}). Fix: add it under models: or remove it."
    ]


def decoders(config: dict, names: list[str]) -> list[str]:
    """The models of ``names`` with a next-token loss (encoder families such as bert have none)."""
    return [m for m in names if config["models"][m]["family"] not in ENCODER_FAMILIES]
