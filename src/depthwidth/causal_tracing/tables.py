"""Tables from the per-job outputs of causal tracing: one row per (model, fact), and the peak depths."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

PAIR_COLUMNS = (
    "model",
    "fact",
    "prompt",
    "subject",
    "target_token",
    "n_layers",
    "n_tokens",
    "p_clean",
    "p_corrupt",
    "knows",
    "noise_samples",
    "noise_sigmas",
    "dtype",
    "device",
    "seconds",
)
PEAK_COLUMNS = (
    "model",
    "fact",
    "role",
    "position",
    "token",
    "n_layers",
    "peak_depth",
    "peak_p",
    "p_corrupt",
    "half_depth_low",
    "half_depth_high",
)


def read_jobs(summaries: list[str | Path], matrices: list[str | Path]) -> list[tuple[dict, np.ndarray]]:
    """(summary, L × T matrix) of every job, in the given order."""
    return [(json.loads(Path(s).read_text()), np.load(m)) for s, m in zip(summaries, matrices, strict=True)]


def pairs_table(jobs: list[tuple[dict, np.ndarray]], min_p_clean: float) -> pd.DataFrame:
    """One row per (model, fact); ``knows``: p_clean ≥ ``min_p_clean``, so a map of it means something."""
    rows = [
        {**{k: s[k] for k in PAIR_COLUMNS if k in s}, "knows": bool(s["p_clean"] >= min_p_clean)}
        for s, _ in jobs
    ]
    return pd.DataFrame(rows, columns=list(PAIR_COLUMNS))


def depth(n_layers: int) -> np.ndarray:
    """Normalised depth of block ℓ's output, (ℓ + 1) / L for ℓ = 0 … L−1 (the paper's heatmap axis)."""
    return np.arange(1, n_layers + 1) / n_layers


def peak(profile: np.ndarray, p_corrupt: float) -> dict:
    """Where a token's restored probability (over layers) peaks, and the depth span where its gain over
    p_corrupt is at least half the peak gain. NaN where no restoration raises the probability."""
    d = depth(len(profile))
    i = int(np.argmax(profile))
    gain = profile - p_corrupt
    out = {"peak_depth": float(d[i]), "peak_p": float(profile[i])}
    if gain[i] <= 0:
        return {**out, "half_depth_low": float("nan"), "half_depth_high": float("nan")}
    above = np.flatnonzero(gain >= 0.5 * gain[i])
    return {**out, "half_depth_low": float(d[above[0]]), "half_depth_high": float(d[above[-1]])}


def peak_table(jobs: list[tuple[dict, np.ndarray]]) -> pd.DataFrame:
    """For the last subject token and the last token (the prediction position) of every job."""
    rows = []
    for s, matrix in jobs:
        roles = (("last subject token", s["subject_range"][1] - 1), ("last token", s["predict_position"]))
        for role, pos in roles:
            rows.append(
                {
                    "model": s["model"],
                    "fact": s["fact"],
                    "role": role,
                    "position": pos,
                    "token": s["tokens"][pos],
                    "n_layers": s["n_layers"],
                    "p_corrupt": s["p_corrupt"],
                    **peak(matrix[:, pos], s["p_corrupt"]),
                }
            )
    return pd.DataFrame(rows, columns=list(PEAK_COLUMNS))
