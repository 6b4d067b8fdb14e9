"""Chinchilla reconstruction and the decomposed-law fit."""

import numpy as np
import pandas as pd
import pytest

from conftest import SHARED_DATA, needs_shared_data
from depthwidth import chinchilla as ch

TRUE = {"c_m": 300.0, "alpha_m": 0.9, "c_l": 800.0, "alpha_l": 1.2, "c_D": 9.0, "alpha_D": 0.3, "L0": 1.75}


@needs_shared_data
def test_reconstruction_maps_known_rows():
    pts = pd.read_csv(SHARED_DATA / "chinchilla" / "svg_extracted_data.csv")
    table = pd.read_csv(SHARED_DATA / "chinchilla" / "chinchilla_table_a9.csv")
    out, worst = ch.reconstruct_points(pts, table)
    assert len(out) == 245 and list(out.columns[:6]) == ["params", "flops", "tokens", "loss", "d_model", "n_layers"]
    # First row: N = 6.7956e9 is Table A9's 6796M model (d_model 3584, 40 layers); D = C/(6N).
    r = out.iloc[0]
    assert (r.d_model, r.n_layers) == (3584, 40)
    assert r.tokens == pytest.approx(9.993852799709755e18 / (6 * 6795600349.289497), rel=1e-12)
    assert worst < 0.0059  # SOURCE.md: every point within 0.59 % of a Table A9 entry
    assert out[["d_model", "n_layers"]].drop_duplicates().shape[0] == 43


def test_reconstruction_rejects_missing_column():
    with pytest.raises(ValueError, match="Training FLOP"):
        ch.reconstruct_points(pd.DataFrame({"Model Size": [1.0], "loss": [3.0]}),
                              pd.DataFrame({"params_millions": [1], "d_model": [64], "n_layers": [2]}))


def _synthetic(n=250, noise=0.003, seed=1):
    rng = np.random.default_rng(seed)
    m = rng.choice([512, 640, 768, 1024, 1280, 1536, 2048, 3072, 4096], n).astype(float)
    ell = rng.choice([8, 10, 12, 16, 20, 24, 32, 40, 48], n).astype(float) * 100
    D = np.exp(rng.uniform(np.log(1e3), np.log(3e5), n))
    loss = ch.decomposed_law(m, ell, D, *(TRUE[k] for k in ch.PARAMS)) * np.exp(noise * rng.standard_normal(n))
    return ch.FitData(m, ell, D, loss)


def test_fit_recovers_known_exponents():
    d = _synthetic()
    res = ch.fit_law(d, n_starts=6, seed=0)
    assert res.success
    v, se = ch.values(res), ch.stderrs(res)
    for k in ("alpha_m", "alpha_l", "alpha_D"):
        # within 3 standard errors of the truth, and the error itself is informative (< 0.25)
        assert abs(v[k] - TRUE[k]) < 3 * se[k] + 0.02, (k, v[k], se[k])
        assert se[k] < 0.25
    assert v["L0"] == pytest.approx(TRUE["L0"], abs=0.05)


def test_bootstrap_interval_covers_truth():
    d = _synthetic(seed=2)
    best = ch.values(ch.fit_law(d, n_starts=4))
    boot = ch.bootstrap(d, best, n_resamples=12, seed=0, n_starts=1)
    lo, hi = np.percentile(boot["alpha_D"], [2.5, 97.5])
    assert lo - 0.02 < TRUE["alpha_D"] < hi + 0.02
    assert boot["converged"].mean() > 0.9


def test_optimal_shape_matches_analytic_exponents():
    v = dict(TRUE)
    ex = ch.shape_exponents(v["alpha_m"], v["alpha_l"])
    a = ch.optimal_shape(v, 1e9, 1.0, 100.0)
    b = ch.optimal_shape(v, 1e11, 1.0, 100.0)
    width_slope = np.log(b["d_model"] / a["d_model"]) / np.log(100)
    depth_slope = np.log(b["n_layers"] / a["n_layers"]) / np.log(100)
    assert width_slope == pytest.approx(ex["width_exponent"], abs=1e-6)
    assert depth_slope == pytest.approx(ex["depth_exponent"], abs=1e-6)
    assert ch.shape_exponents(1.0, 1.0)["N_exponent"] == pytest.approx(1 / 3)
    # the optimum conserves N = 12 ℓ m²
    assert 12 * a["n_layers"] * a["d_model"] ** 2 == pytest.approx(1e9, rel=1e-9)


def test_numpy_adam_matches_torch_adam():
    """fit_adam (NumPy, analytic gradient) takes the same steps as torch.optim.Adam on the same objective."""
    import torch

    d = _synthetic(n=60, seed=3)
    steps = 300
    ours = {k: v["value"] for k, v in ch.fit_adam(d, steps)["params"].items()}
    t = {k: torch.tensor(getattr(d, k), dtype=torch.float64) for k in ("m", "ell", "D", "loss")}
    init = ch.PAPER_INIT
    coeffs = torch.nn.Parameter(torch.tensor([np.log(init[k]) for k in ("c_m", "c_l", "c_D")], dtype=torch.float64))
    expo = torch.nn.Parameter(torch.tensor([init[k] for k in ("alpha_m", "alpha_l", "alpha_D")], dtype=torch.float64))
    L0 = torch.nn.Parameter(torch.tensor(init["L0"], dtype=torch.float64))
    opt = torch.optim.Adam([{"params": [coeffs], "lr": 5e-3}, {"params": [expo], "lr": 5e-4},
                            {"params": [L0], "lr": 5e-3}])
    for _ in range(steps):
        opt.zero_grad()
        pred = ((coeffs[0] - expo[0] * t["m"].log()).exp() + (coeffs[1] - expo[1] * t["ell"].log()).exp()
                + (coeffs[2] - expo[2] * t["D"].log()).exp() + L0).log()
        (t["loss"].log() - pred).pow(2).mean().backward()
        opt.step()
    assert ours["alpha_l"] == pytest.approx(float(expo[1].detach()), abs=1e-6)
    assert ours["c_m"] == pytest.approx(float(coeffs[0].detach().exp()), rel=1e-6)
    assert ours["L0"] == pytest.approx(float(L0), abs=1e-6)
    assert ours["alpha_l"] != pytest.approx(init["alpha_l"], abs=1e-3)  # it moved
