"""Chinchilla stage: config → rule params. The only module rules/chinchilla.smk imports."""

from __future__ import annotations

# Keys of chinchilla.fit the dropped-points scan uses: editing another fit key (bootstrap, held-out,
# variants) does not rerun the scan.
SCAN_FIT_KEYS = ("width_scale", "depth_scale", "tokens_scale", "n_starts", "seed", "adam_steps")


def fit_params(config: dict) -> dict:
    """The fit subtree, with every key spelt out so that editing one reruns only the fit."""
    # Sorted: Snakemake compares params in order, and key order depends on how config files were merged.
    return dict(sorted(config["chinchilla"]["fit"].items()))


def shape_params(config: dict) -> dict:
    return dict(sorted(config["chinchilla"]["shape"].items()))


def drop_scan_params(config: dict) -> dict:
    """The scan's k list and the fit settings it shares with the main fit."""
    fit = config["chinchilla"]["fit"]
    return dict(sorted({**{k: fit[k] for k in SCAN_FIT_KEYS}, **config["chinchilla"]["drop_scan"]}.items()))
