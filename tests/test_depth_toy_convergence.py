"""The depth toy's convergence test, local exponents and verdict (depthwidth.depth_toy.exponents) on
synthetic test curves whose answers are known, and the headline rows built from them.

    PYTHONPATH=src .venv/bin/python -m pytest -n 0 tests/test_depth_toy_convergence.py
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from depthwidth.depth_toy.exponents import (
    convergence_test,
    convergence_verdict,
    exponents,
    local_exponents,
)
from depthwidth.depth_toy.compare import comparisons


def _curves(alpha: float, slow: float, kind: str = "tied", steps: int = 1000) -> pd.DataFrame:
    """L(ℓ, t) = ℓ^(−α) · (1 + slow · ℓ / t): deeper students approach their floor more slowly."""
    rows = []
    for depth in (4, 8, 16, 32):
        for step in range(100, steps + 1, 100):
            loss = depth ** (-alpha) * (1 + slow * depth / step)
            rows.append(
                {"kind": kind, "variant": "mse", "temperature": np.nan, "replicate": 0, "depth": depth}
                | {"step": step, "test_loss": loss}
            )
    return pd.DataFrame(rows)


def test_local_exponents_of_a_pure_power_law():
    loc = local_exponents(_curves(3.0, 0.0))
    assert len(loc) == 10 * 3 and set(zip(loc["depth_lo"], loc["depth_hi"])) == {(4, 8), (8, 16), (16, 32)}
    np.testing.assert_allclose(loc["alpha_local"], 3.0, rtol=1e-9)


def test_a_settled_run_passes_and_a_moving_one_does_not():
    settled = convergence_test(_curves(3.0, 0.01)).iloc[0]
    assert settled["converged"] and settled["step_from"] == 800 and settled["steps"] == 1000
    assert abs(settled["loss_change"]) < 0.01 and abs(settled["alpha_change"]) < 0.01
    moving = convergence_test(_curves(3.0, 30.0)).iloc[0]
    # depth 32: (1 + 960/800) / (1 + 960/1000) − 1 = 12 %
    assert not moving["converged"] and moving["depth_moving"] == 32
    assert moving["loss_change"] == pytest.approx((1 + 30 * 32 / 800) / (1 + 30 * 32 / 1000) - 1, rel=1e-9)
    assert moving["alpha_change"] > 0.01  # the deep students catch up: α_ℓ still rising


def test_verdict_compares_only_a_converged_run():
    settled = convergence_test(_curves(3.0, 0.01)).iloc[0].to_dict()
    assert convergence_verdict(settled, 2.9)[0] == "converged"
    assert convergence_verdict(settled, float("nan"))[0] == "still moving"
    moving = convergence_test(_curves(3.0, 30.0)).iloc[0].to_dict()
    word, reason = convergence_verdict(moving, 2.9)
    assert word == "still moving" and "depth 32" in reason and "+12." in reason
    assert convergence_verdict(None, 2.9)[0] == "still moving"


def test_comparisons_carry_the_convergence_verdict():
    """A converged tied run near 3 gets "yes" with the allowance and its reason in the row; one far from 3
    "no"; a moving independent run "not tested: still moving" with the test's numbers."""
    curves = pd.concat([_curves(3.0, 0.01, "tied"), _curves(1.0, 30.0, "independent")])
    last = curves[curves["step"] == 1000]
    runs = last.assign(steps=1000, final_train_loss=last["test_loss"])
    rows = {c.key: c for c in comparisons(exponents(runs), convergence_test(curves), "mse")}
    tied, ind = rows["alpha_l_tied_mse"], rows["alpha_l_independent_mse"]
    assert tied.verdict == "yes" and tied.allowance == 0.5 and "without error" in tied.allowance_reason
    assert tied.value == pytest.approx(3.0, abs=1e-3) and tied.err is None  # slow = 0.01 bends it a little
    assert ind.verdict == "not tested" and ind.verdict_text.startswith("not tested: still moving")
    assert "depth 32" in ind.verdict_text and ind.err is not None and "fitted line" in ind.err_method
    far = pd.concat([_curves(1.5, 0.01, "tied"), _curves(1.0, 30.0, "independent")])
    last = far[far["step"] == 1000]
    runs = last.assign(steps=1000, final_train_loss=last["test_loss"])
    tied = {c.key: c for c in comparisons(exponents(runs), convergence_test(far), "mse")}["alpha_l_tied_mse"]
    assert tied.verdict == "no" and "beyond 0.5" in tied.verdict_text
