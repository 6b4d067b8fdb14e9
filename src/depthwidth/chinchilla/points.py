"""The Chinchilla points: each run of Chinchilla Fig. 4 (Epoch AI's extraction) with its architecture.

D = C/(6N); the architecture (d_model, n_layers) is the Table A9 entry nearest in parameter count.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from depthwidth.download.fetch import check_pinned
from depthwidth.integrity import write_json, write_table

log = logging.getLogger("depthwidth.chinchilla")

#: the rule that writes points.csv and reconstruction.json (named in the fix when a consumer finds one damaged)
POINTS_RULE = "chinchilla_points"
#: the columns of points.csv its consumers read (checked with the row count chinchilla_points recorded)
POINT_COLUMNS = ("params", "flops", "tokens", "loss", "d_model", "n_layers")


def reconstruct_points(points: pd.DataFrame, table: pd.DataFrame) -> tuple[pd.DataFrame, float]:
    """Map each Fig. 4 point to the Table A9 architecture nearest in parameter count.

    points: columns ``Model Size`` (N, parameters), ``Training FLOP`` (C), ``loss`` (nats/token).
    table: columns ``params_millions, d_model, n_layers, ...``.
    Returns (points with ``params, flops, tokens, loss, d_model, n_layers, arch_params,
    params_rel_mismatch``; the worst relative mismatch |N − N_arch| / N).
    """
    for col in ("Model Size", "Training FLOP", "loss"):
        if col not in points.columns:
            raise ValueError(f"Chinchilla points file lacks column '{col}' (has {list(points.columns)})")
    for col in ("params_millions", "d_model", "n_layers"):
        if col not in table.columns:
            raise ValueError(f"Table A9 file lacks column '{col}' (has {list(table.columns)})")
    n = points["Model Size"].to_numpy(float)
    arch_params = table["params_millions"].to_numpy(float) * 1e6
    idx = np.abs(np.log(n[:, None]) - np.log(arch_params[None, :])).argmin(axis=1)
    out = pd.DataFrame(
        {
            "params": n,
            "flops": points["Training FLOP"].to_numpy(float),
            "tokens": points["Training FLOP"].to_numpy(float) / (6.0 * n),  # C = 6 N D
            "loss": points["loss"].to_numpy(float),
            "d_model": table["d_model"].to_numpy(int)[idx],
            "n_layers": table["n_layers"].to_numpy(int)[idx],
            "arch_params": arch_params[idx],
        }
    )
    out["params_rel_mismatch"] = np.abs(out["params"] - out["arch_params"]) / out["params"]
    return out, float(out["params_rel_mismatch"].max())


def reconstruction_summary(points: pd.DataFrame, worst: float) -> dict:
    """What the reconstruction found: counts, the worst parameter mismatch, the token range."""
    return {
        "n_points": len(points),
        "n_architectures": int(points[["d_model", "n_layers"]].drop_duplicates().shape[0]),
        "worst_params_rel_mismatch": worst,
        "tokens_min": float(points["tokens"].min()),
        "tokens_max": float(points["tokens"].max()),
    }


def chinchilla_points(points_csv, table_csv, points_out, summary_out, sources: dict | None = None) -> dict:
    """Rule chinchilla_points: read Fig. 4's points and Table A9 (each checked against its pinned SHA-256
    first, and fetched again from ``sources`` where damaged), write the points and a summary (both sealed:
    the fit, scan, sweep and section check them)."""
    check_pinned(points_csv, rule="chinchilla_points", sources=sources)
    check_pinned(table_csv, rule="chinchilla_points", sources=sources)
    points, worst = reconstruct_points(pd.read_csv(points_csv), pd.read_csv(table_csv))
    summary = reconstruction_summary(points, worst)
    write_table(points, points_out)
    write_json(summary_out, summary)
    log.info(
        "reconstructed %d points on %d architectures; worst |N - N_arch|/N = %.4f",
        summary["n_points"],
        summary["n_architectures"],
        worst,
    )
    return summary
