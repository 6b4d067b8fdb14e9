"""The Chinchilla stage's comparisons as data (rule chinchilla_compare, ``chinchilla.comparisons``): errors
from the bootstrap over runs unless the covariance is within 1.25× of it, no error for a fit at a bound, no
optimal-shape split for exponents a sweep does not identify, the paper's procedure reproduced to its
digits, and a section that only renders."""

import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from depthwidth import verdicts as V
from depthwidth.chinchilla import comparisons as C

SRC = Path(__file__).resolve().parents[1] / "src/depthwidth/chinchilla"
PARAMS = ("c_m", "alpha_m", "c_l", "alpha_l", "c_D", "alpha_D", "L0")
BEST = {
    "c_m": 300.0,
    "alpha_m": 0.95,
    "c_l": 1400.0,
    "alpha_l": 1.33,
    "c_D": 9.0,
    "alpha_D": 0.30,
    "L0": 1.75,
}


def _boot(sd: dict, n: int = 200, seed: int = 0) -> pd.DataFrame:
    """Bootstrap rows: each parameter normal about BEST with the given sd (default 1 % of the value)."""
    rng = np.random.default_rng(seed)
    cols = {k: BEST[k] + sd.get(k, 0.01 * BEST[k]) * rng.standard_normal(n) for k in PARAMS}
    return pd.DataFrame({**cols, "converged": True})


def _fit(stderr: dict, adam_alpha_l: float = 1.201390266418457) -> dict:
    params = {k: {"value": BEST[k], "stderr": stderr.get(k, 0.01 * BEST[k])} for k in PARAMS}
    adam = {"params": {k: {"value": BEST[k]} for k in PARAMS}, "steps": 50000}
    adam["params"]["alpha_l"] = {"value": adam_alpha_l, "stderr_paper": 0.27}
    return {"params": params, "n_points": 203, "drop_highest_loss": 40, "variants": {"paper_adam": adam}}


def _scan(stats: dict) -> pd.DataFrame:
    """A squared scan row at k = 40 with the given profile statistics {column: value}."""
    return pd.DataFrame([{"drop_highest": 40, "n_points": 203, **stats}])


def test_errors_are_the_bootstrap_unless_the_covariance_is_within_1_25x():
    # α_m: covariance 0.085 against a bootstrap sd near 0.053 (1.6×): the bootstrap is stated;
    # α_ℓ: covariance 0.29 against a bootstrap sd near 0.27 (1.07×): the covariance may stand for it
    boot = _boot({"alpha_m": 0.053, "alpha_l": 0.27})
    fit = _fit({"alpha_m": 0.085, "alpha_l": 0.29})
    scan = _scan({"alpha_l_lr_1": 2.7, "alpha_l_lr_1.2": 0.35, "alpha_m_lr_1": 1.0, "alpha_m_lr_0.91": 0.6})
    rows = {r.key: r for r in C.alpha_l_rows(fit, boot, scan, None) + C.other_rows(fit, boot, scan)}
    am, al = rows["alpha_m"], rows["alpha_l_converged"]
    assert am.err_method.startswith("bootstrap over runs, 200 resamples") and am.err_resamples == 200
    assert am.err == pytest.approx(boot["alpha_m"].std(ddof=1), rel=1e-12)
    assert "not stated: 1.56× the bootstrap" in am.note, am.note
    assert al.err_method.startswith("covariance") and al.err == 0.29
    assert al.low == pytest.approx(np.percentile(boot["alpha_l"], 2.5), rel=1e-9)  # the bootstrap interval
    for r in rows.values():  # no record states a covariance more than 1.25× off its bootstrap
        if r.err_method.startswith("covariance"):
            b = boot[r.key.replace("_converged", "")].std(ddof=1)
            assert 1 / 1.25 <= r.err / b <= 1.25, (r.key, r.err, b)


def test_a_bootstrap_under_200_resamples_states_no_error():
    boot = _boot({}, n=8)
    rows = C.other_rows(_fit({}), boot, _scan({}))
    am = next(r for r in rows if r.key == "alpha_m")
    assert am.err is None and am.verdict == V.NOT_TESTED and "8 resamples, fewer than 200" in am.note


def test_the_paper_procedure_row_shows_its_digits_and_the_optimum_leans():
    # χ²₁ p-values: statistic 2.7 → p = 0.100 for α_ℓ = 1, 0.35 → p = 0.554 for 1.2
    scan = _scan({"alpha_l_lr_1": 2.7, "alpha_l_lr_1.2": 0.35})
    rows = {r.key: r for r in C.alpha_l_rows(_fit({}), _boot({}), scan, None)}
    adam = rows["alpha_l_paper_procedure"]
    assert adam.value_text == "1.2014" and adam.verdict == V.EXACT and adam.err is None
    off = C.alpha_l_rows(_fit({}, adam_alpha_l=1.1969), _boot({}), scan, None)[0]
    assert off.verdict == V.NO  # a procedure that stops elsewhere does not reproduce the digits
    conv = rows["alpha_l_converged"]
    assert conv.verdict == V.CANNOT_TELL and conv.verdict_text.startswith("cannot tell (leans 1.2: p = 0.55")
    assert conv.p_value == pytest.approx(0.5541, abs=1e-3)
    excluded = C.alpha_l_rows(_fit({}), _boot({}), _scan({"alpha_l_lr_1": 9.0, "alpha_l_lr_1.2": 0.4}), None)
    assert excluded[1].verdict == V.YES  # 1 excluded (p = 0.003), the paper's 1.2 kept


def _sweep(at_bound=(), alpha_m=0.9, l0=1.5, c_m=0.8, lo=0.8, hi=1.4, identified=True) -> dict:
    iv = {"lo": lo, "hi": hi, "closed_lo": lo is not None, "closed_hi": hi is not None, "grid": [0.05, 4.7]}
    rows = [{"value": v, "ssr": 1.0 + (v - 1.1) ** 2} for v in np.geomspace(0.3, 4.0, 30)]
    return {
        "sweep": "mine",
        "n": 50,
        "p": 7,
        "ssr": 1.0,
        "fixed": {},
        "at_bound": list(at_bound),
        "identified": {"alpha_l": identified, "alpha_m": identified},
        "params": {
            "c_m": {"value": c_m, "stderr": 1e-4},
            "alpha_m": {"value": alpha_m, "stderr": 185.0},
            "c_l": {"value": 0.05, "stderr": 0.05},
            "alpha_l": {"value": 1.1, "stderr": 0.84},
            "c_D": {"value": 3.0, "stderr": 1.7},
            "alpha_D": {"value": 0.16, "stderr": 0.09},
            "L0": {"value": l0, "stderr": 1.7},
        },
        "profiles": {a: {"rows": rows, "intervals": {"95%": iv, "68%": iv}} for a in ("alpha_l", "alpha_m")},
        "tokens_vs_size": {"tied": False, "corr_logD_logN": 0.2},
        "group_offsets": False,
        "groups": ["all"],
        "rmse_log": 0.01,
    }


def _runs(width_depth_corr: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    w = np.exp(rng.uniform(5, 8, 50))
    d = w / 40 * np.exp(0.05 * rng.standard_normal(50)) if width_depth_corr else np.exp(rng.uniform(1, 4, 50))
    return pd.DataFrame({"width": w, "depth": d, "loss": rng.uniform(3.0, 4.0, 50), "group": "all"})


def test_a_boundary_fit_prints_no_error_and_the_why_of_not_identified():
    from depthwidth.chinchilla.section_sweeps import exponent_table

    # α_m at its cap, L0 and c_m at 0 (as the openlm_grid fit): flagged, no error or interval stated
    s = _sweep(at_bound=["alpha_m"], alpha_m=10.0, l0=9e-22, c_m=3e-7, hi=None, identified=False)
    (row,) = C.sweep_rows(s, _runs(width_depth_corr=True))
    assert set(row.at_bound.split(", ")) == {"alpha_m", "L0", "c_m"}
    assert row.err is None and row.low is None and row.high is None and row.err_method == V.NO_ERROR
    assert row.verdict == V.NOT_TESTED and row.headline and row.claim == "sweep: mine"
    assert (
        "corr(log m, log ℓ) = 1.00" in row.note
        and "leans" not in row.note
        and "interval is open above" in row.note
    ), row.note
    table = exponent_table([s])
    am = table[table["Exponent"] == "α_m"].iloc[0]
    assert am["Status"].startswith("at its bound; the fit is at a bound") and am["95 % low"] == "–"
    al = table[table["Exponent"] == "α_ℓ"].iloc[0]  # no interval for any exponent of a boundary fit
    assert al["95 % low"] == "–" and al["95 % high"] == "–" and al["Value"] == 1.1
    # an interior fit with a closed interval: the interval is stated and tested against α_ℓ ≈ 1
    (ok,) = C.sweep_rows(_sweep(), _runs())
    # the interval holds 1 and 1.2 alike: the profile leans, as the main fit's rows say (p ≈ 0.5 each)
    assert ok.at_bound == "" and (ok.low, ok.high) == (0.8, 1.4) and ok.verdict == V.CANNOT_TELL
    assert ok.verdict_text.startswith("cannot tell (leans 1")
    assert ok.err_method.startswith("profile likelihood")


def test_no_optimal_shape_split_for_exponents_not_identified():
    from depthwidth.chinchilla.section_sweeps import split_text, sweep_table

    bad = _sweep(at_bound=["alpha_m"], alpha_m=10.0, identified=False)
    good = _sweep()
    assert split_text(bad, {"kind": "width/depth at fixed N"}).startswith("not identified (")
    assert "∝ N^" not in split_text(bad, {"kind": "width/depth at fixed N"})
    assert split_text(good, {}).startswith("m* ∝ N^0.355")  # a = 1.1/(0.9 + 2.2)
    t = sweep_table([{**bad, "tokens_vs_size": {"tied": True, "corr_logD_logN": 0.98}}, good])
    assert t["Optimal shape m* ∝ N^a"].tolist() == ["not identified", "0.355"]


def test_sections_only_render():
    """No section module of the stage imports the fitting layer or calls a test of the verdict procedure."""
    banned = {
        "difference_test",
        "procedure_test",
        "interval_test",
        "compare",
        "bootstrap_error",
        "choose_error",
        "at_bound",
        "agree_within",
    }
    files = sorted(SRC.glob("section*.py"))
    assert len(files) == 5
    for f in files:
        tree = ast.parse(f.read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = (
                    [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                )
                assert not any(n.startswith("depthwidth.laws") for n in names), (f.name, names)
                if isinstance(node, ast.ImportFrom):
                    assert not banned & {a.name for a in node.names}, (f.name, node.module)
            if isinstance(node, ast.Call):
                fn = node.func
                name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
                assert name not in banned, (f.name, name)
        assert len(f.read_text().splitlines()) < 400, f.name


def test_a_main_fit_at_a_bound_states_no_error():
    """L0 run to 0 (a bound of the fitting core): every row of that fit is "not tested" without an error,
    though its bootstrap has 200 resamples; an interior fit states errors."""
    boot, scan = _boot({}), _scan({"alpha_l_lr_1": 2.7, "alpha_l_lr_1.2": 0.35})
    fit = _fit({})
    fit["params"]["L0"]["value"] = 1e-12
    rows = C.alpha_l_rows(fit, boot, scan, None, lmin=1.9) + C.other_rows(fit, boot, scan, lmin=1.9)
    fitted = [r for r in rows if r.key != "alpha_l_paper_procedure"]
    assert len(fitted) == 5 and all(r.at_bound == "L0" and r.err is None for r in fitted)
    assert all(r.verdict in (V.NOT_TESTED, V.NO_PAPER_NUMBER) and "at a bound (L0)" in r.note for r in fitted)
    interior = C.alpha_l_rows(_fit({}), boot, scan, None, lmin=1.9)
    assert interior[1].at_bound == "" and interior[1].err is not None
