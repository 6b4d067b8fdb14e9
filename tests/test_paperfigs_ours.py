"""Our cells as seed means in the paper's unit (depthwidth.paperfigs.ours): one function, ``summed``
required, and the figures' numbers the same whether cells.csv holds per-element or summed losses
(superposition.analysis.loss_summed_over_features)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from depthwidth.paperfigs.fig5a import GAMMA_GRID, compare_fig5a, paper_unit
from depthwidth.paperfigs.ours import LOSS_COLUMNS, seed_means

N = 1000


def _cells() -> pd.DataFrame:
    """Per-element cells (as cells.csv holds them by default): two γ, two α, three m, three seeds."""
    rng = np.random.default_rng(0)
    rows = []
    for g in (-1.0, 0.3):
        for a in (1.0, 2.0):
            for m in (10, 25, 63):
                for seed in range(3):
                    u = 0.4 / m ** (a - 0.5) / N
                    rows.append(
                        {
                            "distribution": f"power-a{a:g}",
                            "alpha": a,
                            "density": 1.0,
                            "gamma": g,
                            "n": N,
                            "m": m,
                            "seed": seed,
                            "final_loss": u * (1.1 + 0.05 * rng.standard_normal()),
                            "final_loss_err": 1e-6,
                            "loss_unlearned": u,
                            "represented_fraction": 0.5,
                        }
                    )
    return pd.DataFrame(rows)


def _summed(cells: pd.DataFrame) -> pd.DataFrame:
    """The same cells as rule superposition_tables writes them with loss_summed_over_features: true."""
    out = cells.copy()
    for c in LOSS_COLUMNS:
        out[c] = out[c] * out["n"]
    return out


def test_seed_means_in_the_paper_unit_from_either_table():
    per, summed = _cells(), _summed(_cells())
    a = seed_means(
        per, ["final_loss", "loss_unlearned", "represented_fraction"], ("alpha", "gamma", "m"), summed=False
    )
    b = seed_means(
        summed, ["final_loss", "loss_unlearned", "represented_fraction"], ("alpha", "gamma", "m"), summed=True
    )
    pd.testing.assert_frame_equal(a, b, rtol=1e-12)
    g = per[(per.alpha == 1.0) & (per.gamma == 0.3) & (per.m == 25)]
    row = a[(a.alpha == 1.0) & (a.gamma == 0.3) & (a.m == 25)].iloc[0]
    assert row["final_loss"] == pytest.approx(g.final_loss.mean() * N, rel=1e-12)
    assert row["final_loss_se"] == pytest.approx(g.final_loss.std(ddof=1) * N / np.sqrt(3), rel=1e-12)
    assert row["represented_fraction"] == 0.5 and row["seeds"] == 3  # not a loss: never scaled
    with pytest.raises(TypeError):
        seed_means(per, "final_loss", ("m",))  # summed is required
    with pytest.raises(TypeError, match="summed must be True or False"):
        seed_means(per, "final_loss", ("m",), summed=None)


def test_fig5a_numbers_are_the_same_on_summed_cells():
    """The figure's numbers from a run with loss_summed_over_features: true equal those of the per-element
    run (the old code multiplied the summed losses by n once more: Fig. 5a's losses n times too large)."""
    per, summed = _cells(), _summed(_cells())
    u = paper_unit(per, False)
    assert paper_unit(summed, True)[["loss", "loss_unlearned"]].equals(u[["loss", "loss_unlearned"]])
    assert u["loss_unlearned"].max() < 4 / 3  # in the figure's axis range [0, 4/3] (summed over n)
    k = np.arange(10)
    pts = pd.DataFrame(
        {
            "gamma": [GAMMA_GRID[6]] * 10 + [-1.0] * 10,
            "loss": np.r_[0.05 + 0.01 * k, 0.05 + 0.02 * k],
            "loss_unlearned": np.r_[0.04 + 0.01 * k, 0.0 * k],
            "alpha_from_opacity": np.r_[1.0 + 0.1 * k, 1.0 + 0.1 * k],
            "reliable": True,
        }
    )
    a, b = compare_fig5a(per, pts, False), compare_fig5a(summed, pts, True)
    pd.testing.assert_frame_equal(a, b, rtol=1e-12)
    assert a["ours_excess_median"].abs().max() < 1.0  # not n times too large
    wrong = compare_fig5a(summed, pts, False)  # the old behaviour: n times too large
    assert wrong["ours_excess_median"].abs().max() == pytest.approx(a["ours_excess_median"].abs().max() * N)


def test_fig1_and_fig7_numbers_are_the_same_on_summed_cells():
    from depthwidth.paperfigs.fig1 import _ours
    from depthwidth.paperfigs.fig7 import _means

    per, summed = _cells(), _summed(_cells())
    pd.testing.assert_frame_equal(_ours(per, False), _ours(summed, True), rtol=1e-12)
    dens = lambda c: c.assign(s=0.0, E=1.0)  # noqa: E731
    pd.testing.assert_frame_equal(_means(dens(per), False), _means(dens(summed), True), rtol=1e-12)
