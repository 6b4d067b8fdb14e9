"""The decomposed law fitted with the Huber loss: the stage's main fit (``fit.run_fit``) and dropped-points
scan (``scan.drop_scan``) run again with ``loss: huber`` (Σ Huber_δ of the log residuals, δ = 1e-3 by
default, Hoffmann et al.'s and Besiroglu et al.'s objective); the same fit on all points at each δ of
``delta_scan`` and with least squares (how much the all-points exponents owe to δ); and the leverage of
every run under the least-squares fit on all points, which shows why the cut moves α_ℓ.

A Huber M-estimator bounds the influence of a residual, not of a point's leverage: the runs the paper's cut
leaves out are not residual outliers under the Huber fit but high-leverage runs at small D, so the loss does
not replace the cut.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from depthwidth.laws import lawfit
from depthwidth.chinchilla.fit import fit_law, main_fit, run_fit
from depthwidth.laws.law import PARAMS, kept_mask, select_points, unit_scales
from depthwidth.chinchilla.scan import drop_scan
from depthwidth.integrity import read_table, write_json, write_table

log = logging.getLogger("depthwidth.chinchilla")


def delta_scan(points: pd.DataFrame, params: dict) -> pd.DataFrame:
    """The fit on the points ``params["drop_highest_loss"]`` keeps, with the Huber loss at each δ of
    ``params["delta_scan"]`` and with least squares: one row per fit (``loss``, ``huber_delta``, values,
    objective, ``n_inside``: runs with |r| ≤ δ)."""
    scales = unit_scales(params)
    d = select_points(points, params["drop_highest_loss"], **scales)
    rows = []
    for loss, delta in [("huber", float(x)) for x in params["delta_scan"]] + [("squared", np.nan)]:
        how = main_fit({"loss": loss, "huber_delta": delta if loss == "huber" else 1.0})
        res = fit_law(d, n_starts=params["n_starts"], seed=params["seed"], how=how)
        r = how.residual(res.params, d)
        rows.append(
            {
                "loss": loss,
                "huber_delta": delta,
                "drop_highest": params["drop_highest_loss"],
                "n_points": len(d),
                **how.values(res, d),
                "objective": float(res.objective),
                "n_inside": int(np.sum(np.abs(r) <= delta)) if loss == "huber" else len(d),
                "converged": bool(res.success),
            }
        )
    return pd.DataFrame(rows)


def leverage(
    points: pd.DataFrame, params: dict, ls_values: dict, huber_values: dict, cut: int
) -> pd.DataFrame:
    """Per run of all points: tokens, loss, whether the paper's cut of ``cut`` leaves it out, its hat value
    h_i = [J(JᵀJ)⁻¹Jᵀ]_ii and Cook's distance r_i²/(p s²)·h_i/(1 − h_i)² under the least-squares fit on all
    points (``ls_values``), and its log residual under the Huber fit on all points (``huber_values``)."""
    scales = unit_scales(params)
    d = select_points(points, 0, **scales)
    how = lawfit.LawFit(starts=lawfit.paper_starts)
    p = how.params(d, ls_values)
    J, r = how.jacobian(p, d), how.residual(p, d)
    n, k = J.shape
    h = np.einsum("ij,jk,ik->i", J, np.linalg.pinv(J.T @ J), J)
    s2 = float(r @ r) / (n - k)
    return pd.DataFrame(
        {
            "tokens": points["tokens"].to_numpy(float),
            "params": points["params"].to_numpy(float),
            "loss": points["loss"].to_numpy(float),
            "left_out_by_cut": ~kept_mask(points["loss"].to_numpy(float), cut),
            "hat": h,
            "cooks_distance": r**2 / (k * s2) * h / (1 - h) ** 2,
            "residual_least_squares": r,
            "residual_huber": how.residual(how.params(d, huber_values), d),
        }
    )


def chinchilla_huber(
    points_csv, params: dict, fit_out, bootstrap_out, scan_out, delta_out=None, leverage_out=None
) -> dict:
    """Rule chinchilla_huber: the Huber fit (fit.json's content, with its bootstrap rows) on the points
    ``params["drop_highest_loss"]`` keeps, the Huber fit at each k of ``params["drop_highest"]`` (the
    scan's table without its Adam columns), the δ-sensitivity of the fit and the runs' leverage."""
    from depthwidth.chinchilla.points import POINT_COLUMNS, POINTS_RULE

    if params["loss"] != "huber":
        raise ValueError(f"chinchilla_huber fits with loss huber (params give '{params['loss']}')")
    points = read_table(points_csv, POINTS_RULE, POINT_COLUMNS)
    fit, boot = run_fit(points, params)
    scan: pd.DataFrame = drop_scan(points, params, adam=False)
    log.info(
        "Huber (delta %g): alpha_l = %.4f on %d points; scan alpha_l %s",
        params["huber_delta"],
        fit["params"]["alpha_l"]["value"],
        fit["n_points"],
        [round(a, 3) for a in scan["alpha_l"]],
    )
    deltas = delta_scan(points, params)
    log.info("delta scan: alpha_l %s", dict(zip(deltas["huber_delta"], deltas["alpha_l"].round(3))))
    ls = deltas[deltas["loss"] == "squared"].iloc[0]
    lev = leverage(
        points,
        params,
        {p: float(ls[p]) for p in PARAMS},
        {p: fit["params"][p]["value"] for p in PARAMS},
        params["paper_cut"],
    )
    # sealed: rule chinchilla_section checks them
    write_table(boot, bootstrap_out)
    write_table(scan, scan_out)
    if delta_out:
        write_table(deltas, delta_out)
    if leverage_out:
        write_table(lev, leverage_out)
    write_json(fit_out, fit)
    return fit
