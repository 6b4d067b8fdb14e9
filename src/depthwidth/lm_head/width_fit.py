"""The width law of LLM losses: L = A / m^α + B_g with one A and α and one offset B per group
(family, corpus), as the paper fitted it to 27 models (α_m = 0.91 ± 0.04).

- ``fit_width_law``, ``width_law``: the fit and the curve.
- ``lm_head_width_fit``: rule lm_head_width_fit, the geometry and loss tables and the fit.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from depthwidth.integrity import write_json, write_table
from depthwidth.laws.group_offsets import fit_group_offsets

log = logging.getLogger("depthwidth.lm_head")


def fit_width_law(
    width, loss, group, min_widths: int = 3, models=None, bootstrap_resamples: int = 0, seed: int = 0
) -> dict:
    """Fit L = A / m^α + B_g: A and α shared, one B per group (the fitting layer's group-offset law,
    ``depthwidth.laws.group_offsets``).

    ``width`` (n,) residual widths m, ``loss`` (n,) mean losses in nats, ``group`` (n,) labels (e.g.
    "opt / wikitext"). Returns a dict with ``status`` "ok" and alpha, alpha_err (standard error from the
    covariance), A, A_err, B {group: value}, n_points, n_widths, redchi; or ``status`` "skipped" with a
    ``reason`` when the data cannot determine α (fewer than ``min_widths`` distinct widths, no group
    with two widths, or no more points than parameters). With ``models`` (the model of each row) and
    ``bootstrap_resamples`` > 0, also ``alpha_bootstrap``: α refitted on that many resamples over models
    (a model drawn brings its rows on every corpus; a resample that cannot determine α is left out), the
    error the comparison states (rule lm_head_compare).
    """
    f = fit_group_offsets(
        width,
        loss,
        group,
        min_widths=min_widths,
        unit=models,
        unit_name="models",
        n_bootstrap=bootstrap_resamples if models is not None else 0,
        seed=seed,
    )
    out = f.as_dict()
    if f.bootstrap is not None:
        out["bootstrap_unit"] = f.bootstrap_unit
        out["bootstrap_resamples"] = int(bootstrap_resamples)
        out["alpha_bootstrap"] = f.bootstrap["alpha"].tolist() if len(f.bootstrap) else []
    return out


def width_law(m, A: float, alpha: float, B: float):
    """L(m) = A / m^α + B, nats."""
    return A * np.asarray(m, dtype=np.float64) ** (-alpha) + B


def lm_head_width_fit(
    geometry_paths: list[str],
    loss_paths: list[str],
    *,
    min_widths: int,
    bootstrap_resamples: int = 0,
    seed: int = 0,
    geometry_csv: str | Path,
    loss_csv: str | Path,
    fit_json: str | Path,
    logger: logging.Logger | None = None,
) -> dict:
    """Rule lm_head_width_fit: the per-model geometry rows and per-(model, corpus) losses as tables
    (``geometry_csv``, ``loss_csv``) and the width fit over the losses (``fit_json``) with
    ``bootstrap_resamples`` refits over models (``seed``); returns the fit."""
    from depthwidth.lm_head.tables import geometry_table, loss_table

    logger = logger or log
    geo = geometry_table(geometry_paths)
    loss = loss_table(loss_paths)
    # sealed with their row counts (and the fit below): rule lm_head_section checks them before use
    write_table(geo, geometry_csv)
    write_table(loss, loss_csv)
    if len(loss):
        fit = fit_width_law(
            loss["width"],
            loss["loss_nats"],
            loss["family"] + " / " + loss["corpus"],
            min_widths=min_widths,
            models=loss["model"],
            bootstrap_resamples=bootstrap_resamples,
            seed=seed,
        )
    else:
        fit = {
            "status": "skipped",
            "reason": "no decoder model has a loss (no corpora or only encoders)",
            "n_points": 0,
            "n_widths": 0,
            "groups": [],
        }
    fit["models"] = sorted(loss["model"].unique().tolist())
    if fit["status"] == "ok":
        logger.info(
            "alpha_m = %.3f ± %.3f from %d points, %d widths",
            fit["alpha"],
            fit["alpha_err"] or float("nan"),
            fit["n_points"],
            fit["n_widths"],
        )
    else:
        logger.info("width fit skipped: %s", fit["reason"])
    write_json(fit_json, fit)
    return fit
