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

log = logging.getLogger("depthwidth.lm_head")


def fit_width_law(width, loss, group, min_widths: int = 3) -> dict:
    """Fit L = A / m^α + B_g (lmfit, least squares): A and α shared, one B per group.

    ``width`` (n,) residual widths m, ``loss`` (n,) mean losses in nats, ``group`` (n,) labels (e.g.
    "opt / wikitext"). Returns a dict with ``status`` "ok" and alpha, alpha_err (standard error from the
    covariance), A, A_err, B {group: value}, n_points, n_widths, redchi; or ``status`` "skipped" with a
    ``reason`` when the data cannot determine α (fewer than ``min_widths`` distinct widths, no group
    with two widths, or no more points than parameters).
    """
    import lmfit

    m = np.asarray(width, dtype=np.float64)
    y = np.asarray(loss, dtype=np.float64)
    g = np.asarray([str(x) for x in group])
    groups = list(dict.fromkeys(g))
    n_widths = len(np.unique(m))
    widths_per_group = {k: len(np.unique(m[g == k])) for k in groups}
    base = {"n_points": len(m), "n_widths": int(n_widths), "groups": groups}
    n_params = 2 + len(groups)
    reason = None
    if n_widths < min_widths:
        reason = f"only {n_widths} distinct width(s) ({', '.join(str(int(x)) for x in np.unique(m))}); need {min_widths}"
    elif max(widths_per_group.values()) < 2:
        reason = "no group (family, corpus) has two widths, so every offset B_g absorbs its point"
    elif len(m) <= n_params:
        reason = f"{len(m)} points for {n_params} parameters"
    if reason:
        return {"status": "skipped", "reason": reason, **base}
    scale = float(np.exp(np.mean(np.log(m))))  # fit in m / m̄ so A is of order the loss range
    x = m / scale
    idx = np.array([groups.index(k) for k in g])
    params = lmfit.Parameters()
    params.add("alpha", value=1.0, min=0.0, max=5.0)
    spread = max(float(y.max() - y.min()), 1e-3)
    params.add("A", value=spread, min=0.0)
    for k in range(len(groups)):
        params.add(f"B{k}", value=float(y[idx == k].min()) - 0.5 * spread)

    def resid(p):
        b = np.array([p[f"B{k}"].value for k in range(len(groups))])
        return p["A"].value * x ** (-p["alpha"].value) + b[idx] - y

    res = lmfit.minimize(resid, params, method="leastsq")
    a_err = res.params["alpha"].stderr
    A_err = res.params["A"].stderr
    # A refers to m in units of `scale`; convert back to L = A' / m^α with A' = A · scale^α
    alpha = res.params["alpha"].value
    A = res.params["A"].value * scale**alpha
    return {
        "status": "ok",
        **base,
        "alpha": float(alpha),
        "alpha_err": float(a_err) if a_err is not None else None,
        "A": float(A),
        "A_err": float(A_err * scale**alpha) if A_err is not None else None,
        "B": {name: float(res.params[f"B{k}"].value) for k, name in enumerate(groups)},
        "B_err": {
            name: (float(res.params[f"B{k}"].stderr) if res.params[f"B{k}"].stderr is not None else None)
            for k, name in enumerate(groups)
        },
        "redchi": float(res.redchi),
        "width_scale": scale,
        "success": bool(res.success),
    }


def width_law(m, A: float, alpha: float, B: float):
    """L(m) = A / m^α + B, nats."""
    return A * np.asarray(m, dtype=np.float64) ** (-alpha) + B


def lm_head_width_fit(
    geometry_paths: list[str],
    loss_paths: list[str],
    *,
    min_widths: int,
    geometry_csv: str | Path,
    loss_csv: str | Path,
    fit_json: str | Path,
    logger: logging.Logger | None = None,
) -> dict:
    """Rule lm_head_width_fit: the per-model geometry rows and per-(model, corpus) losses as tables
    (``geometry_csv``, ``loss_csv``) and the width fit over the losses (``fit_json``); returns the fit."""
    from depthwidth.lm_head.tables import geometry_table, loss_table

    logger = logger or log
    geo = geometry_table(geometry_paths)
    loss = loss_table(loss_paths)
    # sealed with their row counts (and the fit below): rule lm_head_section checks them before use
    write_table(geo, geometry_csv)
    write_table(loss, loss_csv)
    if len(loss):
        fit = fit_width_law(
            loss["width"], loss["loss_nats"], loss["family"] + " / " + loss["corpus"], min_widths=min_widths
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
