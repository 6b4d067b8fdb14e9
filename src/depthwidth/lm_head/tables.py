"""Tables of the LM-head stage, made from the per-job JSON files (one per model, one per model × corpus)."""

from __future__ import annotations

import pandas as pd

from depthwidth.integrity import read_json

#: columns of loss.csv, in order (the per-job summaries also hold timing and device, left out)
LOSS_COLUMNS = [
    "model",
    "family",
    "width",
    "n_layers",
    "corpus",
    "n_texts",
    "tokens",
    "loss_nats",
    "max_tokens",
]


def _rows(paths: list[str], rule: str, keys: tuple[str, ...]) -> list[dict]:
    """The per-job JSON files of ``rule``, each checked against its seal and for ``keys``."""
    return [read_json(p, rule, keys) for p in paths]


def geometry_table(paths: list[str]) -> pd.DataFrame:
    """geometry.csv: one row per model (rule lm_head_geometry's JSON files), in the order given."""
    return pd.DataFrame(_rows(paths, "lm_head_geometry", ("model", "family", "width")))


def loss_table(paths: list[str]) -> pd.DataFrame:
    """loss.csv: one row per (model, corpus) (rule lm_head_loss's summaries), columns ``LOSS_COLUMNS``."""
    return pd.DataFrame(
        _rows(paths, "lm_head_loss", tuple(LOSS_COLUMNS)), columns=LOSS_COLUMNS + ["seconds"]
    )[LOSS_COLUMNS]
