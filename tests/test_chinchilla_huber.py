"""The Huber loss of the fitting core: its objective, and exponents recovered where outliers pull least
squares off."""

import numpy as np
import pandas as pd
import pytest

from depthwidth.chinchilla import fit
from depthwidth.laws import law, lawfit

TRUE = {"c_m": 300.0, "alpha_m": 0.9, "c_l": 800.0, "alpha_l": 1.2, "c_D": 9.0, "alpha_D": 0.3, "L0": 1.75}


def _with_outliers(n=200, noise=5e-4, n_out=8, seed=5):
    """Runs of the decomposed law with log-normal noise (σ = 5e-4, inside δ = 1e-3), and ``n_out`` runs
    drawn among the two smallest depths (64 runs) with their loss raised by 10 % (diverged or
    under-trained runs)."""
    rng = np.random.default_rng(seed)
    m = rng.choice([512, 768, 1024, 1536, 2048, 3072, 4096], n).astype(float)
    ell = rng.choice([8, 12, 16, 24, 32, 48], n).astype(float) * 100
    D = np.exp(rng.uniform(np.log(1e3), np.log(3e5), n))
    loss = law.decomposed_law(m, ell, D, *(TRUE[k] for k in law.PARAMS)) * np.exp(
        noise * rng.standard_normal(n)
    )
    loss[rng.choice(np.flatnonzero(ell <= 1200), n_out, replace=False)] *= 1.10
    return law.FitData(m, ell, D, loss)


def test_huber_objective_is_scipys_cost():
    r = np.array([-3e-3, -1e-3, -2e-4, 0.0, 5e-4, 1e-3, 0.02])
    # ½r² inside δ, δ(|r| − δ/2) beyond, summed
    want = 0.5 * (2e-4**2 + 5e-4**2 + 2 * 1e-3**2) + 1e-3 * (3e-3 - 5e-4) + 1e-3 * (0.02 - 5e-4)
    opts = lawfit.loss_options("huber", 1e-3)
    assert lawfit.objective(r, opts) == pytest.approx(want, rel=1e-12)
    assert lawfit.objective(r, lawfit.loss_options("squared")) == pytest.approx(float(r @ r), rel=1e-12)
    with pytest.raises(ValueError, match="unknown loss 'l1'"):
        lawfit.loss_options("l1")


def test_huber_recovers_exponents_that_outliers_pull_least_squares_off():
    d = _with_outliers()
    sq = fit.MAIN.values(fit.fit_law(d, n_starts=4, seed=0), d)
    how = fit.main_fit({"loss": "huber", "huber_delta": 1e-3})
    res = fit.fit_law(d, n_starts=4, seed=0, how=how)
    hub = how.values(res, d)
    # the 8 raised runs (of 64 at the two smallest depths): least squares moves α_ℓ to 1.51 and L0 to 1.69 ...
    assert abs(sq["alpha_l"] - TRUE["alpha_l"]) > 0.3, sq
    assert abs(sq["L0"] - TRUE["L0"]) > 0.05, sq
    # ... Huber stays within 0.03 of every exponent and 0.01 of L0
    for k in ("alpha_m", "alpha_l", "alpha_D"):
        assert hub[k] == pytest.approx(TRUE[k], abs=0.03), (k, hub[k])
    assert hub["L0"] == pytest.approx(TRUE["L0"], abs=0.01)
    # the result carries the Huber objective, lower than the one at the least-squares optimum
    assert res.objective == pytest.approx(lawfit.objective(res.residual, how.least_squares), rel=1e-12)
    at_sq = how.residual(how.params(d, sq), d)
    assert res.objective < lawfit.objective(at_sq, how.least_squares)


def test_default_loss_is_the_plain_sum_of_squares():
    d = _with_outliers(n=80, n_out=0, seed=5)
    a = fit.fit_law(d, n_starts=2, seed=0)
    b = fit.fit_law(d, n_starts=2, seed=0, how=fit.main_fit({"loss": "squared", "huber_delta": 1e-3}))
    assert a.objective == a.chisqr == b.chisqr
    assert fit.MAIN.values(a, d) == fit.MAIN.values(b, d)


@pytest.mark.workflow  # a full-size sweep fit and profile: 12 CPU-s
def test_sweep_with_huber_loss_profiles_the_huber_objective():
    """A sweep entry with loss: huber fits, profiles and bounds α_ℓ with the Huber objective: on a crossed
    design with 4 raised runs the Huber fit stays within 0.05 of the true α_ℓ = 1.2, its 95 % profile
    interval is closed and holds it, and the profile's objective column is the Huber objective."""
    import itertools

    from depthwidth.chinchilla import identify

    rng = np.random.default_rng(0)
    rows = []
    for w, layers, t in itertools.product([256, 512, 1024, 2048], [4, 8, 16, 32], [1e8, 1e9, 1e10, 1e11]):
        loss = 0.8 * (w / 512) ** -0.9 + 0.5 * (layers / 8) ** -1.2 + 0.6 * (t / 1e9) ** -0.3 + 1.7
        rows.append({"width": w, "depth": layers, "tokens": t, "loss": loss * np.exp(rng.normal(0, 5e-4))})
    df = pd.DataFrame(rows)
    df.loc[rng.choice(np.flatnonzero(df["depth"] == 4), 4, replace=False), "loss"] *= 1.1
    kw = dict(n_starts=3, n_bootstrap=0, profile_grids={"alpha_l": np.geomspace(0.3, 4, 15)})
    hub = identify.identify(df, loss="huber", huber_delta=1e-3, **kw)
    sq = identify.identify(df, **kw)
    assert hub["params"]["alpha_l"]["value"] == pytest.approx(1.2, abs=0.05)
    assert abs(sq["params"]["alpha_l"]["value"] - 1.2) > 0.1
    iv = hub["profiles"]["alpha_l"]["intervals"]["95%"]
    assert iv["closed_lo"] and iv["closed_hi"] and iv["lo"] < 1.2 < iv["hi"]
    best = min(r["objective"] for r in hub["profiles"]["alpha_l"]["rows"])
    assert best == pytest.approx(hub["objective_huber"], rel=1e-3)
    assert hub["laws"]["chinchilla"]["objective"] != hub["laws"]["chinchilla"]["ssr"]
