"""The superposition stage's comparisons (depthwidth.superposition.compare): per-α strong and weak rows
against the stated values, the α-trend test, the drawn values copied from the paper-figures records (one
answer for the same cell), and the allowance shown with its reason."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from depthwidth import verdicts as V
from depthwidth.superposition.compare import cell_key, comparisons


def _exps(strong=(0.781, 0.904, 0.966), weak=(0.284, 0.481, 0.668), sd=0.02) -> pd.DataFrame:
    rows = []
    for g, vals in ((-1.0, strong), (0.3, weak)):
        for a, v in zip((1.25, 1.5, 1.75), vals):
            rows.append(
                {
                    "distribution": f"power-a{a:g}",
                    "alpha": a,
                    "gamma": g,
                    "exponent": v,
                    "stderr": sd / 1.8,  # the pooled OLS error, smaller than the bootstrap
                    "boot_sd": sd,
                    "boot_lo": v - 2 * sd,
                    "boot_hi": v + 2 * sd,
                    "boot_resamples": 1000,
                    "n_seeds": 5,
                    "lof_p": 0.009,
                    "means_exponent": v + 0.01,
                    "means_stderr": 0.03,
                    "m_min": 6.0,
                    "m_max": 48.0,
                    "n_points": 30,
                }
            )
    return pd.DataFrame(rows)


def _drawn(gamma: float, alpha: float, verdict: str, value: float) -> pd.DataFrame:
    """A paper-figures record of one cell, as paperfigs_compare writes it."""
    v = V.Verdict(verdict, "" if verdict == V.YES else "Δ = −0.38, beyond 0.24", "|Δ| ≤ 2·√(σ² + σ_paper²)")
    rec = V.compare(
        "paperfigs",
        cell_key(gamma, alpha),
        "superposition",
        "toy α_m per cell, as drawn",
        "α_m",
        v,
        value=value,
        err=V.Error(0.02, V.BOOTSTRAP, unit="5 seeds", resamples=1000),
        paper_value=1.16,
        paper_err=0.12,
        paper_source="Fig. 4b (heat map decoded through its colour bar)",
    )
    return pd.DataFrame([rec.row()])


def test_strong_rows_per_alpha_and_the_trend():
    recs = {c.key: c for c in comparisons(_exps(), tolerance=0.15)}
    a125 = recs["strong_gamma-1_alpha1.25_stated"]
    # 0.781 ± 0.02 against ≈ 1 with the allowance 0.15: |Δ| = 0.219 > 2·0.02 + 0.15
    assert a125.verdict == V.NO and a125.allowance == 0.15 and "finite n" in a125.allowance_reason
    assert (
        a125.err == 0.02 and "bootstrap over 5 seeds, 1000 resamples" in a125.err_method
    )  # not the OLS 0.011
    assert "p = 0.009" in a125.note and "significant" in a125.note
    assert recs["strong_gamma-1_alpha1.75_stated"].verdict == V.YES
    trend = recs["strong_gamma-1_alpha_trend"]
    # slope of (0.781, 0.904, 0.966) on (1.25, 1.5, 1.75) with equal weights: 0.37, error 0.02/√0.125 = 0.057
    assert trend.value == pytest.approx(0.37, abs=1e-9) and trend.err == pytest.approx(0.02 / np.sqrt(0.125))
    assert trend.verdict == V.NO and trend.paper_value == 0.0
    # without the paper-figures stage the drawn comparison is not tested, and says why
    drawn = recs["strong_gamma-1_alpha1.25_drawn"]
    assert drawn.verdict == V.NOT_TESTED and "paperfigs" in drawn.verdict_text
    assert all(c.headline for c in recs.values())
    weak = recs["weak_gamma0.3_alpha1.5_stated"]
    assert weak.paper_value == 0.5 and weak.verdict == V.YES


def test_the_drawn_row_is_the_figure_record_of_the_same_cell():
    """One answer for the same cell: the headline's drawn row carries the figure record's numbers and
    verdict, and the stated row's note names it."""
    fig = _drawn(-1.0, 1.25, V.NO, 0.781)
    recs = {c.key: c for c in comparisons(_exps(), 0.15, drawn_strong=fig)}
    d = recs["strong_gamma-1_alpha1.25_drawn"]
    assert d.verdict == V.NO and d.paper_value == 1.16 and d.paper_err == 0.12 and d.value == 0.781
    assert d.verdict_text == fig["verdict_text"].iloc[0]
    assert "paperfigs/gamma-1_alpha1.25" in d.note
    assert "the paper draws 1.16 here" in recs["strong_gamma-1_alpha1.25_stated"].note
    # a yes against the stated value where the drawn value says no names that no
    fig75 = _drawn(-1.0, 1.75, V.NO, 0.966)
    r75 = {c.key: c for c in comparisons(_exps(), 0.15, drawn_strong=fig75)}[
        "strong_gamma-1_alpha1.75_stated"
    ]
    assert r75.verdict == V.YES and "stated value only" in r75.verdict_text and "(no)" in r75.verdict_text
    # a cell the figure does not draw stays not tested
    assert recs["strong_gamma-1_alpha1.5_drawn"].verdict == V.NOT_TESTED


def test_the_larger_of_the_seed_and_width_bootstraps_is_stated():
    e = _exps().assign(n_widths=6, wboot_sd=0.05, wboot_lo=0.7, wboot_hi=1.0, wboot_resamples=1000)
    r = {c.key: c for c in comparisons(e, 0.0)}["strong_gamma-1_alpha1.75_stated"]
    assert r.err == 0.05 and "over 6 widths, seeds pooled" in r.err_method
    one_seed = _exps().assign(n_seeds=1)
    r1 = {c.key: c for c in comparisons(one_seed, 0.15)}["strong_gamma-1_alpha1.75_stated"]
    assert r1.verdict == V.NOT_TESTED and r1.err is None


def test_no_allowance_compares_on_the_bootstrap_alone():
    recs = {c.key: c for c in comparisons(_exps(), tolerance=0.0)}
    r = recs["strong_gamma-1_alpha1.75_stated"]
    assert r.allowance is None and r.allowance_reason == ""
    assert r.verdict == V.YES  # 0.966 within 2·0.02 of 1
    assert recs["strong_gamma-1_alpha1.5_stated"].verdict == V.NO  # 0.904: 0.096 > 0.04
