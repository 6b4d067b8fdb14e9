"""Synthesis across the papers: shape exponents and their carried-through uncertainty."""

import numpy as np
import pytest

from depthwidth.optimal_shape import shape_exponents
from depthwidth.report.synthesis import propagate, synthesis_rows


def test_equal_exponents_give_m_proportional_to_l_and_one_third():
    r = propagate(1.0, 0.0, 1.0, 0.0)
    assert r["ratio_exponent"]["value"] == pytest.approx(0.0)
    assert r["N_exponent"]["value"] == pytest.approx(1 / 3)
    assert r["width_exponent"]["value"] + 0.5 * r["depth_exponent"]["value"] == pytest.approx(0.5)


def test_monte_carlo_error_matches_linear_propagation():
    am, al, s = 0.9, 1.2, 0.01
    h = 1e-6
    d_am = (shape_exponents(am + h, al)["N_exponent"] - shape_exponents(am - h, al)["N_exponent"]) / (2 * h)
    d_al = (shape_exponents(am, al + h)["N_exponent"] - shape_exponents(am, al - h)["N_exponent"]) / (2 * h)
    linear = np.hypot(d_am * s, d_al * s)
    assert propagate(am, s, al, s, n=40000)["N_exponent"]["std"] == pytest.approx(linear, rel=0.05)


def test_rows_use_llm_width_exponent_when_present():
    fit = {"params": {"alpha_m": {"value": 0.95, "stderr": 0.08}, "alpha_l": {"value": 1.3, "stderr": 0.3}}}
    rows = synthesis_rows(fit, {"status": "ok", "alpha": 0.8, "alpha_err": 0.05})
    assert [r["alpha_m"] for r in rows] == [0.95, 0.8, 0.91]
    assert len(synthesis_rows(fit, {"status": "skipped"})) == 2
