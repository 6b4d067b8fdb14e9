"""Every compared figure's records in one file (rule paperfigs_comparisons): kept apart from the figures'
comparisons (``figures``) so that the gathering job runs none of their code."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from depthwidth import verdicts as V
from depthwidth.files import atomic_write_csv
from depthwidth.integrity import seal


def paperfigs_comparisons(paths: list[str], comparisons_csv: str) -> pd.DataFrame:
    """Rule paperfigs_comparisons: every figure's records in one file (results/paperfigs/comparisons.csv),
    each figure's keys prefixed with its name."""
    frames = []
    for p in paths:
        df = V.read_comparisons(p, "paperfigs_compare")
        df["key"] = Path(p).parent.name + "/" + df["key"].astype(str)
        frames.append(df)
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(V.COLUMNS))
    atomic_write_csv(comparisons_csv, out[list(V.COLUMNS)])
    seal(comparisons_csv, rows=len(out))
    return out
