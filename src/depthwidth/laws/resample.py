"""Bootstrap over a named resampling unit: rows, seeds, runs or models.

A resample draws the distinct labels of the unit with replacement, as many as there are, and takes every
row of each drawn label (a label drawn twice brings its rows twice). With no labels each row is its own
unit, and the draw is ``rng.integers(0, n, n)``, the row bootstrap of :func:`lawfit.bootstrap`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from depthwidth.laws.law import FitData
from depthwidth.logs import Progress


def resample_indices(n: int, rng: np.random.Generator, unit=None) -> np.ndarray:
    """Row indices of one resample of ``n`` rows. ``unit``: a label per row (the resampling unit: the
    model, seed or run of each row), or None for rows."""
    if unit is None:
        return rng.integers(0, n, n)
    labels, inverse = np.unique(np.asarray(unit), return_inverse=True)
    if len(inverse) != n:
        raise ValueError(f"the resampling unit has {len(inverse)} labels for {n} rows; give one per row")
    rows_of = [np.flatnonzero(inverse == k) for k in range(len(labels))]
    draw = rng.integers(0, len(labels), len(labels))
    return np.concatenate([rows_of[k] for k in draw])


def bootstrap(
    d: FitData,
    refit: Callable[[FitData, int], dict | None],
    n_resamples: int,
    seed: int = 0,
    unit: str = "rows",
) -> pd.DataFrame:
    """``refit(resample, b)`` on ``n_resamples`` resamples of ``d`` over the resampling unit ``unit``:
    "rows" (each row), or the name of the labels in ``d.unit`` (e.g. "models", "seeds"). One row per
    resample with the values ``refit`` returns (None skips the resample: e.g. a group left out); the unit
    is recorded as ``result.attrs["unit"]``."""
    if unit != "rows" and d.unit is None:
        raise ValueError(f"a bootstrap over {unit} needs a label per row (FitData.unit); none given")
    labels = None if unit == "rows" else d.unit
    rng = np.random.default_rng(seed)
    rows = []
    prog = Progress(n_resamples, f"bootstrap fits over {unit}")
    for b in range(n_resamples):
        v = refit(d.take(resample_indices(len(d), rng, labels)), b)
        if v is not None:
            rows.append(v)
        prog.update()
    out = pd.DataFrame(rows)
    out.attrs["unit"] = unit
    return out
