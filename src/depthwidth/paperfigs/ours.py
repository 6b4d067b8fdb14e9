"""Our superposition cells (rows of cells.csv) as seed means in the paper's unit: the one place every figure
comparison takes them from.

The paper's toy figures plot losses summed over the n features (its exp-17 notebook multiplies the
per-element mean by n; Figs. 1, 5a and 7 span [0, 4/3·…] in that unit). cells.csv holds the per-element
mean unless ``superposition.analysis.loss_summed_over_features`` is set, in which case rule
superposition_tables has already multiplied ``final_loss``, ``final_loss_err`` and ``loss_unlearned`` by n.
``summed`` says which, and is required: a caller that forgets it would scale the losses a second time (n
times too large) or not at all.

- ``seed_means``: per group of ``keys``, the seed mean, standard deviation and standard error of each column
  (losses in the paper's summed unit), and the number of seeds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: the columns of our cells.csv the figure comparisons read (rule superposition_tables writes them)
CELL_COLUMNS = (
    "distribution",
    "alpha",
    "density",
    "gamma",
    "n",
    "m",
    "seed",
    "final_loss",
    "represented_fraction",
    "strong_represented_fraction",
    "loss_unlearned",
    "strong_mean_sq_overlap",
)
#: the cells.csv columns that are losses: per element in cells.csv unless the run sums them over features
LOSS_COLUMNS = ("final_loss", "final_loss_err", "loss_unlearned")


def in_paper_unit(cells: pd.DataFrame, *, summed: bool) -> pd.DataFrame:
    """``cells`` with every loss column in the paper's unit (summed over the n features): × n when the run's
    losses are per element (``summed`` False), as they are when ``summed`` is True."""
    if not isinstance(summed, bool):
        raise TypeError(
            f"summed must be True or False (superposition.analysis.loss_summed_over_features), got {summed!r}"
        )
    if summed:
        return cells.copy()
    scale = cells["n"].astype(float) if "n" in cells else None
    out = cells.copy()
    for c in LOSS_COLUMNS:
        if c in out:
            if scale is None:
                raise KeyError(f"cells have loss column {c!r} but no 'n' to sum it over the features")
            out[c] = out[c].astype(float) * scale
    return out


def seed_means(cells: pd.DataFrame, columns, keys, *, summed: bool) -> pd.DataFrame:
    """One row per group of ``keys`` (those present in ``cells``): for each of ``columns`` its seed mean
    (named as the column), ``<column>_std`` (ddof 1; 0 for one seed) and ``<column>_se`` (std/√seeds; 0 for
    one seed), and ``seeds``. Loss columns are in the paper's unit (:func:`in_paper_unit`)."""
    columns = [columns] if isinstance(columns, str) else list(columns)
    keys = [k for k in keys if k in cells.columns]
    missing = [c for c in columns if c not in cells.columns]
    if missing:
        raise KeyError(f"cells.csv has no column {missing}; remake it (rule superposition_tables)")
    c = in_paper_unit(cells, summed=summed)
    if c.empty:  # the column types of cells.csv, no rows
        out = pd.DataFrame({k: pd.Series(dtype=c[k].dtype) for k in keys})
        for col in columns:
            for name in (col, f"{col}_std", f"{col}_se"):
                out[name] = pd.Series(dtype=float)
        out["seeds"] = pd.Series(dtype=int)
        return out
    g = c.groupby(keys, dropna=False)
    out = g[columns].mean().reset_index()
    count = g.size().reset_index(name="seeds")["seeds"].to_numpy()
    std = g[columns].std(ddof=1).reset_index(drop=True)
    for col in columns:
        s = std[col].to_numpy(dtype=float)
        s = np.where(count > 1, s, 0.0)
        out[f"{col}_std"] = s
        out[f"{col}_se"] = s / np.sqrt(count)
    out["seeds"] = count
    return out
