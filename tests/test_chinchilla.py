"""Chinchilla reconstruction and the decomposed-law fit."""

import numpy as np
import pandas as pd
import pytest

from _helpers import SHARED_DATA, needs_shared_data
from depthwidth.chinchilla import adam, fit, points, scan, shape
from depthwidth.laws import law, lawfit
from depthwidth.optimal_shape import shape_exponents
from depthwidth.papers import CHINCHILLA_ADAM_FIT

TRUE = {"c_m": 300.0, "alpha_m": 0.9, "c_l": 800.0, "alpha_l": 1.2, "c_D": 9.0, "alpha_D": 0.3, "L0": 1.75}


@needs_shared_data
def test_reconstruction_maps_known_rows():
    pts = pd.read_csv(SHARED_DATA / "chinchilla" / "svg_extracted_data.csv")
    table = pd.read_csv(SHARED_DATA / "chinchilla" / "chinchilla_table_a9.csv")
    out, worst = points.reconstruct_points(pts, table)
    assert len(out) == 245 and list(out.columns[:6]) == [
        "params",
        "flops",
        "tokens",
        "loss",
        "d_model",
        "n_layers",
    ]
    # First row: N = 6.7956e9 is Table A9's 6796M model (d_model 3584, 40 layers); D = C/(6N).
    r = out.iloc[0]
    assert (r.d_model, r.n_layers) == (3584, 40)
    assert r.tokens == pytest.approx(9.993852799709755e18 / (6 * 6795600349.289497), rel=1e-12)
    assert worst < 0.0059  # SOURCE.md: every point within 0.59 % of a Table A9 entry
    assert out[["d_model", "n_layers"]].drop_duplicates().shape[0] == 43


def test_reconstruction_rejects_missing_column():
    with pytest.raises(ValueError, match="Training FLOP"):
        points.reconstruct_points(
            pd.DataFrame({"Model Size": [1.0], "loss": [3.0]}),
            pd.DataFrame({"params_millions": [1], "d_model": [64], "n_layers": [2]}),
        )


def _synthetic(n=250, noise=0.003, seed=1):
    rng = np.random.default_rng(seed)
    m = rng.choice([512, 640, 768, 1024, 1280, 1536, 2048, 3072, 4096], n).astype(float)
    ell = rng.choice([8, 10, 12, 16, 20, 24, 32, 40, 48], n).astype(float) * 100
    D = np.exp(rng.uniform(np.log(1e3), np.log(3e5), n))
    loss = law.decomposed_law(m, ell, D, *(TRUE[k] for k in law.PARAMS)) * np.exp(
        noise * rng.standard_normal(n)
    )
    return law.FitData(m, ell, D, loss)


def test_fit_recovers_known_exponents():
    d = _synthetic()
    res = fit.fit_law(d, n_starts=6, seed=0)
    assert res.success
    v, se = fit.MAIN.values(res, d), fit.MAIN.stderrs(res, d)
    for k in ("alpha_m", "alpha_l", "alpha_D"):
        # within 3 standard errors of the truth, and the error itself is informative (< 0.25)
        assert abs(v[k] - TRUE[k]) < 3 * se[k] + 0.02, (k, v[k], se[k])
        assert se[k] < 0.25
    assert v["L0"] == pytest.approx(TRUE["L0"], abs=0.05)


def _central_jacobian(residual, p, args, names, rel=1e-6):
    cols = []
    for k in names:
        h = rel * max(1.0, abs(p[k].value))
        up, dn = p.copy(), p.copy()
        up[k].set(value=p[k].value + h)
        dn[k].set(value=p[k].value - h)
        up.update_constraints()
        dn.update_constraints()
        cols.append((residual(up, *args) - residual(dn, *args)) / (2 * h))
    return np.stack(cols, axis=1)


def test_analytic_jacobian_matches_differences():
    """The core's analytic Jacobian (as the main fit uses it, and as a sweep fit with one offset per group
    and a fixed exponent does) equals central differences of its residual; a wrong sign or a missing log x
    fails."""
    from depthwidth.chinchilla import identify

    d = _synthetic(n=60)
    p = fit.MAIN.params(d, {**TRUE, "alpha_l": 1.0, "c_D": 5.0})
    names = [k for k, q in p.items() if q.vary]
    assert names == ["log_c_m", "log_c_l", "log_c_D", "alpha_m", "alpha_l", "alpha_D", "L0"]
    J, num = fit.MAIN.jacobian(p, d), _central_jacobian(fit.MAIN.residual, p, (d,), names)
    assert np.abs(J - num).max() < 1e-7 * np.abs(num).max()

    df = pd.DataFrame({"width": d.m, "depth": d.ell, "tokens": d.D, "loss": d.loss})
    df["group"] = np.where(np.arange(len(df)) % 2, "a", "b")
    sd = identify.to_data(df)
    how = identify.sweep_fit(group_offsets=True, fixed={"alpha_l": 1.0})
    init = {"c_m": 0.3, "alpha_m": 0.6, "c_l": 0.2, "alpha_l": 1.3, "c_D": 0.3, "alpha_D": 0.3, "L0": 1.0}
    q = how.params(sd, init)
    assert q["alpha_l"].value == 1.0  # the fixed value wins over the start
    names = [k for k, v in q.items() if v.vary]
    assert "alpha_l" not in names and {"L0_0", "L0_1"} <= set(names)
    J = how.jacobian(q, sd)
    num = _central_jacobian(how.residual, q, (sd,), names)
    assert J.shape == (len(df), len(names))
    assert np.abs(J - num).max() < 1e-7 * np.abs(num).max()
    # one parameter builder: the main fit and the sweeps share every bound
    for k in ("log_c_m", "log_c_l", "log_c_D", "alpha_m", "alpha_l", "alpha_D"):
        assert (p[k].min, p[k].max) == (q[k].min, q[k].max), k
    assert (p["log_c_l"].min, p["log_c_l"].max) == lawfit.LOG_C_BOUNDS
    assert (p["alpha_l"].min, p["alpha_l"].max) == law.ALPHA_BOUNDS


def test_core_fits_another_power_law():
    """The core is not tied to the decomposed law: a two-term law L = A/m^a + B/D^b + E (its own names,
    starts given by the caller) is fitted with the same builder, residual and analytic Jacobian and gives
    back its exponents on noiseless data."""
    two = law.PowerLaw("two_term", (("A", "a", "m"), ("B", "b", "D")), offset="E")
    assert two.params == ("A", "a", "B", "b", "E")
    rng = np.random.default_rng(4)
    m, D = np.exp(rng.uniform(0, 3, 80)), np.exp(rng.uniform(0, 3, 80))
    loss = 2.0 * m**-0.7 + 1.5 * D**-0.4 + 1.1
    d = law.FitData(m, np.ones_like(m), D, loss)
    how = lawfit.LawFit(
        law=two, starts=lambda d, n, rng: [{"A": 1.0, "a": 1.0, "B": 1.0, "b": 1.0, "E": 0.5}]
    )
    p = how.params(d, {"A": 1.0, "a": 1.0, "B": 1.0, "b": 1.0, "E": 0.5})
    names = [k for k, q in p.items() if q.vary]
    assert names == ["log_A", "log_B", "a", "b", "E"]
    num = _central_jacobian(how.residual, p, (d,), names)
    assert np.abs(how.jacobian(p, d) - num).max() < 1e-7 * np.abs(num).max()
    v = how.values(lawfit.fit(d, how, n_starts=1), d)
    assert list(v) == list(two.params)
    for k, truth in {"A": 2.0, "a": 0.7, "B": 1.5, "b": 0.4, "E": 1.1}.items():
        assert v[k] == pytest.approx(truth, rel=1e-5), k


def test_analytic_jacobian_fit_reaches_the_same_optimum():
    """With the analytic Jacobian the fit ends where lmfit's two-point differences end (to 1e-6 in every
    parameter and 1e-9 in χ²), in fewer evaluations."""
    d = _synthetic(seed=3)
    starts = [fit.MAIN.params(d, i) for i in lawfit.paper_starts(d, 3, np.random.default_rng(0))]
    two_point = lawfit.best_of_starts(fit.MAIN.residual, [s.copy() for s in starts], (d,))
    analytic = lawfit.best_of_starts(fit.MAIN.residual, starts, (d,), jac=fit.MAIN.jacobian)
    for k in law.PARAMS:
        assert fit.MAIN.values(analytic, d)[k] == pytest.approx(fit.MAIN.values(two_point, d)[k], rel=1e-6), k
    assert analytic.chisqr == pytest.approx(two_point.chisqr, rel=1e-9)
    assert analytic.nfev < two_point.nfev / 3


def test_bootstrap_interval_covers_truth():
    d = _synthetic(seed=2)
    best = fit.MAIN.values(fit.fit_law(d, n_starts=4), d)
    boot = lawfit.bootstrap(d, fit.MAIN, best, n_resamples=12, seed=0, n_starts=1)
    lo, hi = np.percentile(boot["alpha_D"], [2.5, 97.5])
    assert lo - 0.02 < TRUE["alpha_D"] < hi + 0.02
    assert boot["converged"].mean() > 0.9


def test_optimal_shape_matches_analytic_exponents():
    v = dict(TRUE)
    ex = shape_exponents(v["alpha_m"], v["alpha_l"])
    a = shape.optimal_shape(v, 1e9, 1.0, 100.0)
    b = shape.optimal_shape(v, 1e11, 1.0, 100.0)
    width_slope = np.log(b["d_model"] / a["d_model"]) / np.log(100)
    depth_slope = np.log(b["n_layers"] / a["n_layers"]) / np.log(100)
    assert width_slope == pytest.approx(ex["width_exponent"], abs=1e-6)
    assert depth_slope == pytest.approx(ex["depth_exponent"], abs=1e-6)
    assert shape_exponents(1.0, 1.0)["N_exponent"] == pytest.approx(1 / 3)
    # the optimum conserves N = 12 ℓ m²
    assert 12 * a["n_layers"] * a["d_model"] ** 2 == pytest.approx(1e9, rel=1e-9)


def test_adam_matches_torch_adam_loop():
    """fit_adam takes the same steps as the paper's loop: torch.optim.Adam on 100·mean squared log
    residual, one parameter tensor per group, with the notebook's dtypes (ln c from numpy scalars, so
    float64; exponents and E from Python floats, so float32; data float64); fitting several datasets at
    once changes nothing."""
    import torch

    d = _synthetic(n=60, seed=3)
    steps = 300
    ours = {k: v["value"] for k, v in adam.fit_adam(d, steps)["params"].items()}
    t = {k: torch.tensor(getattr(d, k), dtype=torch.float64) for k in ("m", "ell", "D", "loss")}
    init = law.PAPER_INIT
    coeffs = torch.nn.Parameter(torch.tensor([np.log(init[k]) for k in ("c_m", "c_l", "c_D")]))
    assert coeffs.dtype == torch.float64
    expo = torch.nn.Parameter(
        torch.tensor([init[k] for k in ("alpha_m", "alpha_l", "alpha_D")], dtype=torch.float32)
    )
    L0 = torch.nn.Parameter(torch.tensor(init["L0"], dtype=torch.float32))
    opt = torch.optim.Adam(
        [{"params": [coeffs], "lr": 5e-3}, {"params": [expo], "lr": 5e-4}, {"params": [L0], "lr": 5e-3}]
    )
    for _ in range(steps):
        opt.zero_grad()
        pred = (
            (coeffs[0] - expo[0] * t["m"].log()).exp()
            + (coeffs[1] - expo[1] * t["ell"].log()).exp()
            + (coeffs[2] - expo[2] * t["D"].log()).exp()
            + L0
        ).log()
        (100 * (t["loss"].log() - pred).pow(2).mean()).backward()
        opt.step()
    assert ours["alpha_l"] == pytest.approx(float(expo[1].detach()), abs=1e-6)
    assert ours["c_m"] == pytest.approx(float(coeffs[0].detach().exp()), rel=1e-6)
    assert ours["L0"] == pytest.approx(float(L0.detach()), abs=1e-6)
    assert ours["alpha_l"] != pytest.approx(init["alpha_l"], abs=1e-3)  # it moved
    # several datasets at once (padded): each fit as if alone
    other = _synthetic(n=45, seed=4)
    both = adam.fit_adam_batch([d, other], steps)
    alone = adam.fit_adam(other, steps)
    for k in law.PARAMS:
        assert both[0]["params"][k]["value"] == pytest.approx(ours[k], rel=1e-5, abs=1e-6)
        assert both[1]["params"][k]["value"] == pytest.approx(alone["params"][k]["value"], rel=1e-5, abs=1e-6)


def test_paper_stderrs_are_the_linear_residual_covariance():
    """s²(JᵀJ)⁻¹ with J the Jacobian of L − L̂ over (ln c, α, E), checked against finite differences."""
    d = _synthetic(n=80, seed=5)
    v = fit.MAIN.values(fit.fit_law(d, n_starts=2), d)
    se = fit.paper_stderrs(d, v)
    theta = np.array(
        [
            np.log(v["c_m"]),
            np.log(v["c_l"]),
            np.log(v["c_D"]),
            v["alpha_m"],
            v["alpha_l"],
            v["alpha_D"],
            v["L0"],
        ]
    )

    def resid(th):
        return d.loss - law.decomposed_law(
            d.m, d.ell, d.D, np.exp(th[0]), th[3], np.exp(th[1]), th[4], np.exp(th[2]), th[5], th[6]
        )

    h = 1e-6
    jac = np.column_stack([(resid(theta + h * e) - resid(theta - h * e)) / (2 * h) for e in np.eye(7)])
    r = resid(theta)
    cov = r @ r / (len(d) - 7) * np.linalg.inv(jac.T @ jac)
    want = dict(zip(("c_m", "c_l", "c_D", "alpha_m", "alpha_l", "alpha_D", "L0"), np.sqrt(np.diag(cov))))
    for k in law.PARAMS:
        assert se[k] == pytest.approx(want[k], rel=1e-4), k


def _paper_points():
    pts = pd.read_csv(SHARED_DATA / "chinchilla" / "svg_extracted_data.csv")
    table = pd.read_csv(SHARED_DATA / "chinchilla" / "chinchilla_table_a9.csv")
    return points.reconstruct_points(pts, table)[0]


@needs_shared_data
def test_drop_scan_keeps_the_papers_counts():
    loss = _paper_points()["loss"].to_numpy()
    ks = [1, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
    assert [int(law.kept_mask(loss, k).sum()) for k in ks] == [
        244,
        235,
        225,
        215,
        203,
        194,
        185,
        175,
        165,
        154,
        144,
    ]
    assert law.kept_mask(loss, 0).all()


@needs_shared_data
def test_paper_stderr_at_the_converged_optimum():
    """On the paper's 203 points the paper's formula gives ± 0.270 for α_ℓ where lmfit gives ± 0.287."""
    d = law.select_points(_paper_points(), 40, 1.0, 100.0, 1e-6)
    res = fit.fit_law(d, n_starts=3, seed=0)
    v = fit.MAIN.values(res, d)
    assert v["alpha_l"] == pytest.approx(1.3251, abs=1e-3)
    assert fit.MAIN.stderrs(res, d)["alpha_l"] == pytest.approx(0.287, abs=1e-3)
    assert fit.paper_stderrs(d, v)["alpha_l"] == pytest.approx(0.270, abs=1e-3)


@needs_shared_data
@pytest.mark.workflow  # full size: seconds of CPU, outside the quick loop
def test_paper_adam_gives_the_papers_digits():
    """The paper's Adam procedure (50k steps) on its 203 points prints its notebook's digits: α_ℓ 1.2014,
    α_m 0.9769, c_ℓ 1284.4, c_m 333.38, E 1.7503, each to the last digit printed."""
    d = law.select_points(_paper_points(), 40, 1.0, 100.0, 1e-6)
    got = {k: v["value"] for k, v in adam.fit_adam(d, 50_000)["params"].items()}
    for k, digits in {"alpha_l": 4, "alpha_m": 4, "c_l": 1, "c_m": 2, "L0": 4}.items():
        assert round(got[k], digits) == pytest.approx(CHINCHILLA_ADAM_FIT[k].value, abs=1e-9), k


def test_drop_scan_table():
    d = _synthetic(n=120, seed=6)
    pts = pd.DataFrame({"d_model": d.m, "n_layers": d.ell / 100, "tokens": d.D * 1e6, "loss": d.loss})
    params = {
        "width_scale": 1.0,
        "depth_scale": 100.0,
        "tokens_scale": 1e-6,
        "n_starts": 2,
        "seed": 0,
        "adam_steps": 50,
        "loss": "squared",
        "huber_delta": 1e-3,
        "drop_highest": [1, 20],
        "paper_stderr_precision": "float64",
    }
    table = scan.drop_scan(pts, params)
    assert table["n_points"].tolist() == [119, 100]
    for p in law.PARAMS:
        assert {p, f"{p}_stderr", f"{p}_stderr_paper", f"{p}_adam", f"{p}_adam_stderr_paper"} <= set(
            table.columns
        )
    # the converged fit at k = 20 is the one fit.fit_law finds on the same points
    d20 = law.select_points(pts, 20, 1.0, 100.0, 1e-6)
    main = fit.MAIN.values(fit.fit_law(d20, n_starts=2, seed=0), d20)
    assert table.loc[1, "alpha_l"] == pytest.approx(main["alpha_l"], rel=1e-9)
    assert table["converged"].all()
    assert (table["stderr_paper_precision"] == "float64").all()


def _paper_dtype_stderrs(d, v) -> dict:
    """The paper's error computation with its dtypes, written with autograd: float32 parameter leaves (ln c
    taken in float32), float64 data and residuals, a float32 Jacobian stacked row by row, JᵀJ and its
    inverse in float32."""
    import torch

    c = torch.tensor([v["c_m"], v["c_l"], v["c_D"]]).log().requires_grad_(True)
    a = torch.tensor([v["alpha_m"], v["alpha_l"], v["alpha_D"]], requires_grad=True)
    e = torch.tensor(v["L0"], requires_grad=True)
    m, ell, D, loss = (torch.tensor(x) for x in (d.m, d.ell, d.D, d.loss))
    pred = (c[2] - a[2] * D.log()).exp() + (c[0] - a[0] * m.log()).exp() + (c[1] - a[1] * ell.log()).exp() + e
    r = loss - pred
    rows = [
        torch.cat([g.reshape(-1) for g in torch.autograd.grad(r[i], [c, a, e], retain_graph=True)])
        for i in range(len(r))
    ]
    J = torch.stack(rows)
    assert J.dtype == torch.float32
    cov = (r.detach() ** 2).sum() / (len(r) - 7) * torch.linalg.inv(J.T @ J)
    se = cov.diagonal().clamp_min(0).sqrt()
    return dict(zip(("c_m", "c_l", "c_D", "alpha_m", "alpha_l", "alpha_D", "L0"), se.tolist()))


def test_paper_stderrs_in_float32_follow_the_papers_dtypes():
    """precision float32 gives the errors of the paper's dtypes (float32 Jacobian and inverse) to 1e-6, and
    they differ from the float64 errors (the normal matrix is ill-conditioned); an unknown precision is
    refused."""
    d = _synthetic(n=120, seed=6)
    res = fit.fit_law(d, n_starts=2)
    v = fit.MAIN.values(res, d)
    f32, f64, ref = fit.paper_stderrs(d, v, "float32"), fit.paper_stderrs(d, v), _paper_dtype_stderrs(d, v)
    for k in law.PARAMS:
        assert f32[k] == pytest.approx(ref[k], rel=1e-6), k
    assert max(abs(f32[k] / f64[k] - 1) for k in law.PARAMS) > 1e-5
    with pytest.raises(ValueError, match="precision"):
        fit.paper_stderrs(d, v, "float16")


@needs_shared_data
def test_paper_stderr_in_float32_at_the_papers_cut():
    """On the 203 points of k = 40 the paper's formula in float32 gives ± 0.250 for α_ℓ (0.270 in float64):
    float32 inverts JᵀJ, whose condition number is 9·10⁷, to a few per cent."""
    d = law.select_points(_paper_points(), 40, 1.0, 100.0, 1e-6)
    res = fit.fit_law(d, n_starts=3, seed=0)
    v = fit.MAIN.values(res, d)
    assert fit.paper_stderrs(d, v, "float32")["alpha_l"] == pytest.approx(0.250, abs=1e-3)
    assert fit.paper_stderrs(d, v, "float32")["alpha_l"] == pytest.approx(
        _paper_dtype_stderrs(d, v)["alpha_l"], rel=1e-6
    )
