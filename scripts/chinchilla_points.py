"""Reconstruct the Chinchilla points: D = C/(6N), architecture nearest in parameter count."""

import json

import pandas as pd

from depthwidth.chinchilla import reconstruct_points
from depthwidth.logs import setup_logging

log = setup_logging(snakemake.log[0])  # noqa: F821
sm = snakemake  # noqa: F821
points, worst = reconstruct_points(pd.read_csv(sm.input.points), pd.read_csv(sm.input.table))
points.to_csv(sm.output.points, index=False)
summary = {
    "n_points": len(points),
    "n_architectures": int(points[["d_model", "n_layers"]].drop_duplicates().shape[0]),
    "worst_params_rel_mismatch": worst,
    "tokens_min": float(points["tokens"].min()),
    "tokens_max": float(points["tokens"].max()),
}
with open(sm.output.summary, "w") as f:
    json.dump(summary, f, indent=2)
log.info("reconstructed %d points on %d architectures; worst |N - N_arch|/N = %.4f",
         summary["n_points"], summary["n_architectures"], worst)
