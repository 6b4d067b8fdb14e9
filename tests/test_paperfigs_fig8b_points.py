"""Fig. 8b's undrawable point: a point whose model part L − B_g is negative at the notebook's fit is found
from its group's stationarity, confirmed by the notebook's printed slope error (whose formula counts its
NaN log as 0), and left out of the fits; its implied value is kept."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from depthwidth.paperfigs.fig8fit import slope_error_parts, unplottable

A, ALPHA = 476.0, 0.91


def _points(rng) -> pd.DataFrame:
    """Two groups of six widths on the law A/m^α with small scatter whose residuals sum to 0 per group, as
    at a converged fit; the last point of group "q" sits at a negative model part (drawn nowhere)."""
    m = np.array([512.0, 1024, 2048, 3584, 5120, 8192])
    rows = []
    for g in ("p", "q"):
        e = rng.normal(0, 0.01, len(m))
        if g == "q":
            e[-1] = -0.2  # the law gives 0.13 at m = 8192: this point's model part is about −0.07
        e -= e.mean() if g == "p" else 0
        if g == "q":
            e[:-1] -= (e.sum()) / (len(m) - 1)  # the group's residuals sum to 0 with the negative point in
        for mi, ei in zip(m, e):
            rows.append({"group": g, "m": mi, "model_part": A / mi**ALPHA + ei})
    return pd.DataFrame(rows)


def test_the_undrawable_point_is_found_and_confirmed_by_the_printed_error():
    rng = np.random.default_rng(0)
    truth = _points(rng)
    neg = truth["model_part"] < 0
    assert neg.sum() == 1
    # the printed error: the notebook's formula on the true points (the NaN log counted as 0)
    printed = slope_error_parts(truth.assign(plotted=~neg, implied_model_part=truth["model_part"]), ALPHA, A)
    assert printed["n_nan_terms"] == 1 and printed["nan_share"] > 0.3
    assert printed["err_slope_without_nan"] < printed["err_slope"]
    # the reading cannot see the point: the drawing model leaves it at its start, the law's value
    read = truth.assign(model_part=truth["model_part"].where(~neg, A / truth["m"] ** ALPHA))
    out = unplottable(read, ALPHA, A, printed["err_slope"])
    assert out["plotted"].sum() == len(out) - 1 and not out.loc[neg, "plotted"].any()
    assert out.loc[neg, "implied_model_part"].iloc[0] == pytest.approx(truth.loc[neg, "model_part"].iloc[0])
    assert "a log axis cannot draw it" in out.loc[neg, "excluded_why"].iloc[0]
    # a printed error that needs no NaN term: nothing is left out (the group's gap is misread markers)
    kept = unplottable(read, ALPHA, A, printed["err_slope_without_nan"] * 0.9)
    assert kept["plotted"].all()
