"""The decomposed law fitted with the Huber loss: the stage's main fit (``fit.run_fit``) and dropped-points
scan (``scan.drop_scan``) run again with ``loss: huber`` (Σ Huber_δ of the log residuals, δ = 1e-3 by
default, Hoffmann et al.'s and Besiroglu et al.'s objective), so that a few outlying runs weigh like
|r| instead of r² and need not be cut by hand.
"""

from __future__ import annotations

import logging

import pandas as pd

from depthwidth.chinchilla.fit import run_fit
from depthwidth.chinchilla.scan import drop_scan
from depthwidth.integrity import read_table, write_json, write_table

log = logging.getLogger("depthwidth.chinchilla")


def chinchilla_huber(points_csv, params: dict, fit_out, bootstrap_out, scan_out) -> dict:
    """Rule chinchilla_huber: the Huber fit (fit.json's content, with its bootstrap rows) on the points
    ``params["drop_highest_loss"]`` keeps, and the Huber fit at each k of ``params["drop_highest"]``
    (the scan's table without its Adam columns)."""
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
    # sealed: rule chinchilla_section checks them
    write_table(boot, bootstrap_out)
    write_table(scan, scan_out)
    write_json(fit_out, fit)
    return fit
