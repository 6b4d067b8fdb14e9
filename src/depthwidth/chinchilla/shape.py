"""What the fitted decomposed law implies for the shape of a model: the loss-optimal width and depth at a
fixed parameter count N = 12·n_layers·d_model², and how they grow with N."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import brentq

from depthwidth.laws.law import PARAMS


def optimal_shape(v: dict, n_params: float, width_scale: float, depth_scale: float) -> dict:
    """Loss-optimal d_model and n_layers at ``n_params`` non-embedding parameters (N = 12 n_layers d_model²)."""

    def gap(log_dm):
        dm = np.exp(log_dm)
        nl = n_params / (12 * dm**2)
        m, ell = dm * width_scale, nl * depth_scale
        return v["alpha_m"] * v["c_m"] * m ** (-v["alpha_m"]) - 2 * v["alpha_l"] * v["c_l"] * ell ** (
            -v["alpha_l"]
        )

    lo, hi = np.log(1.0), np.log(np.sqrt(n_params / 12 / 1e-3))
    try:
        log_dm = brentq(gap, lo, hi)
    except ValueError:
        return {"n_params": n_params, "d_model": np.nan, "n_layers": np.nan, "width_to_depth": np.nan}
    dm = float(np.exp(log_dm))
    nl = float(n_params / (12 * dm**2))
    return {"n_params": n_params, "d_model": dm, "n_layers": nl, "width_to_depth": dm / nl}


def shape_table(fit: dict, boot: pd.DataFrame, n_params: list[float]) -> pd.DataFrame:
    """Loss-optimal d_model, n_layers and their ratio per parameter count, with bootstrap 95 % intervals
    (columns ``<name>_ci_lo``, ``<name>_ci_hi``) when ``boot`` has rows."""
    v = {k: fit["params"][k]["value"] for k in PARAMS}
    ws, ds = fit_scales(fit)[:2]
    rows = []
    for n in n_params:
        best = optimal_shape(v, n, ws, ds)
        row = {
            "n_params": n,
            "d_model_opt": best["d_model"],
            "n_layers_opt": best["n_layers"],
            "width_to_depth": best["width_to_depth"],
        }
        if len(boot):
            r = pd.DataFrame([optimal_shape(b, n, ws, ds) for b in boot[list(PARAMS)].to_dict("records")])
            for name in ("d_model", "n_layers", "width_to_depth"):
                row[f"{name}_ci_lo"] = float(np.nanpercentile(r[name], 2.5))
                row[f"{name}_ci_hi"] = float(np.nanpercentile(r[name], 97.5))
        rows.append(row)
    return pd.DataFrame(rows)


def fit_scales(fit: dict) -> tuple[float, float, float]:
    """(width_scale, depth_scale, tokens_scale) as recorded in fit.json's ``units``."""
    u = fit["units"]
    return float(u["m"].split("*")[1]), float(u["l"].split("*")[1]), float(u["D"].split("*")[1])
