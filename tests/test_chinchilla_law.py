"""The Chinchilla law L = E + A/N^α + B/D^β beside the decomposed law, and Besiroglu et al.'s replication."""

import itertools

import numpy as np
import pandas as pd
import pytest

from _helpers import SHARED_DATA, needs_shared_data
from depthwidth.chinchilla import compare, identify, points, replication
from depthwidth.papers import NOTEBOOK_OPTIMUM


def _sweep(law: str, seed: int = 0, noise: float = 0.003) -> pd.DataFrame:
    """A crossed width × depth × tokens design (4 × 4 × 4) with losses of either law."""
    rng = np.random.default_rng(seed)
    rows = []
    for w, layers, t in itertools.product([256, 512, 1024, 2048], [4, 8, 16, 32], [1e8, 1e9, 1e10, 1e11]):
        N = 12.0 * layers * w**2
        if law == "chinchilla":
            loss = 400.0 / N**0.34 + 410.0 / t**0.28 + 1.7
        else:
            loss = 0.8 * (w / 512) ** -0.9 + 0.5 * (layers / 8) ** -1.2 + 0.6 * (t / 1e9) ** -0.3 + 1.7
        rows.append({"width": w, "depth": layers, "tokens": t, "loss": loss * np.exp(rng.normal(0, noise))})
    return pd.DataFrame(rows)


def test_each_law_recovered_and_preferred_on_its_own_runs():
    out = identify.identify(
        _sweep("chinchilla"), n_starts=3, n_bootstrap=4, profile_grids={}, heldout_splits=2
    )
    ch = out["laws"]["chinchilla"]
    assert ch["params"]["alpha"]["value"] == pytest.approx(0.34, abs=0.02)
    assert ch["params"]["beta"]["value"] == pytest.approx(0.28, abs=0.02)
    assert ch["params"]["E"]["value"] == pytest.approx(1.7, abs=0.02)
    # a = β/(α+β) = 0.452 for the true exponents
    assert ch["split"]["a"] == pytest.approx(0.28 / 0.62, abs=0.02)
    assert out["laws"]["lower"] == {"aic": "chinchilla", "bic": "chinchilla", "heldout": "chinchilla"}
    assert len(ch["params"]["alpha"]["bootstrap_ci95"]) == 2 and ch["heldout"]["n_splits"] == 2
    dec = identify.identify(_sweep("decomposed"), n_starts=3, n_bootstrap=0, profile_grids={})
    assert dec["laws"]["lower"]["aic"] == "decomposed" and dec["laws"]["lower"]["bic"] == "decomposed"
    assert dec["laws"]["decomposed"]["split"]["kind"] == "width/depth at fixed N"


def test_information_criteria():
    ic = compare.information_criteria(ssr=0.02, n=100, k=5)
    assert ic["aic"] == pytest.approx(100 * np.log(2e-4) + 10)
    assert ic["bic"] == pytest.approx(100 * np.log(2e-4) + 5 * np.log(100))
    assert replication.compute_optimal(0.34, 0.28) == pytest.approx({"a": 0.28 / 0.62, "b": 0.34 / 0.62})


def test_replication_grid_and_objective():
    starts = replication.grid_starts()
    assert len(starts) == 4500
    # their loop order: α outermost, then β, e, a, b (innermost); a start is (a, b, e, α, β)
    assert starts[0].tolist() == [0, 0, -1, 0, 0] and starts[1].tolist() == [0, 5, -1, 0, 0]
    assert starts[-1].tolist() == [25, 25, 1, 2, 2]
    rng = np.random.default_rng(0)
    logN, logD = rng.uniform(18, 24, 30), rng.uniform(20, 27, 30)
    x = np.array([6.0, 6.0, 0.5, 0.34, 0.28])
    logL = replication.lse_prediction(x, logN, logD) + rng.normal(0, 2e-3, 30)
    args = (logN, logD, logL, 1e-3)
    g = replication.gradient(x, *args)
    h = 1e-6
    num = [
        (replication.objective(x + h * e, *args) - replication.objective(x - h * e, *args)) / (2 * h)
        for e in np.eye(5)
    ]
    assert g == pytest.approx(num, rel=1e-5, abs=1e-9)


@pytest.mark.workflow  # the replication at the default run's setting: 7 CPU-s
@needs_shared_data
def test_replication_setting_gives_our_runs_numbers():
    """Besiroglu et al.'s procedure from every 45th start of their grid (the default run's setting) on the
    240 points: the numbers of our run, within 1e-5 relative. L-BFGS-B stops where its relative objective
    change falls below 2.2e-9; along the flat A–B valley that leaves runs from different starts 2e-4 apart
    in A and B (the full grid's best start: A = 477.742, B = 2143.62), so 1e-5 pins the run and not a
    lucky digit. Its true target is the δ = 1e-3 optimum their notebook prints ("Replicate exactly"): every
    value within 1e-3 relative of it (their A 477.842, B 2143.864: the flat A–B valley; the objective
    within 2e-8)."""
    pts = points.reconstruct_points(
        pd.read_csv(SHARED_DATA / "chinchilla" / "svg_extracted_data.csv"),
        pd.read_csv(SHARED_DATA / "chinchilla" / "chinchilla_table_a9.csv"),
    )[0]
    rep = replication.replicate(pts, n_excluded=5, delta=1e-3, grid_stride=45)
    assert rep["n_points"] == 240 and rep["starts_run"] == 100 and rep["best_start_index"] == 495
    ours = {"A": 477.79020, "B": 2142.4122, "E": 1.8171821, "alpha": 0.34730657, "beta": 0.36714867}
    for k, v in ours.items():
        assert rep[k] == pytest.approx(v, rel=1e-5), k
        assert rep[k] == pytest.approx(NOTEBOOK_OPTIMUM[k].value, rel=1e-3), k
    assert rep["objective_huber"] == pytest.approx(1.01827405e-3, rel=1e-8)
    assert rep["objective_huber"] == pytest.approx(NOTEBOOK_OPTIMUM["objective"].value, rel=2e-8)
