"""The one verdict procedure (depthwidth.verdicts): its tests decide as stated, and records that break the
procedure are refused."""

from __future__ import annotations

import numpy as np
import pytest

from depthwidth import verdicts as v


def test_difference_test_decides_at_two_combined_sigma():
    err = v.Error(0.3, v.COVARIANCE, unit="runs", resamples=200)
    # combined σ = 0.5 → threshold 1.0
    assert v.difference_test(1.99, err, 1.0, 0.4).word == v.YES
    out = v.difference_test(2.01, err, 1.0, 0.4)
    assert out.word == v.NO and "beyond 1" in out.why
    assert out.p_value == pytest.approx(0.0434, abs=1e-4)  # two-sided normal p of 2.02σ
    # an allowance widens the threshold and must be shown in the test's words
    assert v.difference_test(2.01, err, 1.0, 0.4, allowance=0.1).word == v.YES
    assert v.difference_test(1.0, v.NONE, 1.0, None).word == v.NOT_TESTED


def test_procedure_test_compares_printed_digits():
    assert v.procedure_test(1.20141, 1.2014).word == v.EXACT
    out = v.procedure_test(1.2019, 1.2014)
    assert out.word == v.NO and "1.2014" in out.why


def test_bootstrap_error_states_unit_resamples_and_monte_carlo_error():
    rng = np.random.default_rng(0)
    e = v.bootstrap_error(rng.normal(0, 2.0, 400), "models")
    assert e.value == pytest.approx(2.0, rel=0.1)
    assert e.mc == pytest.approx(e.value / np.sqrt(2 * 399))
    assert "over models, 400 resamples" in e.text
    with pytest.raises(v.VerdictError, match="≥ 200"):
        v.bootstrap_error(rng.normal(size=30), "seeds")


def test_covariance_error_only_within_a_quarter_of_the_bootstrap():
    boot = v.bootstrap_error(np.random.default_rng(1).normal(0, 0.1, 1000), "runs")
    assert v.choose_error(0.11, boot).method == v.COVARIANCE
    assert v.choose_error(0.059, boot).method == v.BOOTSTRAP  # 1.7× smaller: the bootstrap is stated
    assert v.choose_error(0.2, boot) is boot


def test_parameters_at_a_bound_are_named_and_lose_their_error():
    hits = v.at_bound(
        {"alpha_m": 10.0, "L0": 9e-22, "c_m": 3e-7, "alpha_l": 1.35},
        {"alpha_m": (0, 10), "L0": (0, None), "c_m": (0, None), "alpha_l": (0, 10)},
    )
    assert hits == ["alpha_m", "L0"]
    c = v.compare(
        "chinchilla",
        "alpha_l_sweep",
        "depth",
        "Chinchilla decomposed fit",
        "α_ℓ",
        v.not_tested("fit at its bound (alpha_m, L0)"),
        value=1.35,
        err=v.Error(0.84, v.COVARIANCE, unit="runs", resamples=0),
        paper_value=1.2,
        paper_err=0.3,
        bound_params=hits,
    )
    assert c.err is None and c.at_bound == "alpha_m, L0"


def test_records_that_break_the_procedure_are_refused(tmp_path):
    with pytest.raises(v.VerdictError, match="says why"):
        v.Verdict(v.NOT_TESTED)
    with pytest.raises(v.VerdictError, match="use one of"):
        v.Verdict("supports")
    with pytest.raises(v.VerdictError, match="stated reason"):
        v.compare("s", "k", "depth", "c", "q", v.no_paper_number(), allowance=0.15)
    with pytest.raises(v.VerdictError, match="resampling unit"):
        v.Error(0.1, v.BOOTSTRAP)
    rows = [v.compare("s", "k", "depth", "c", "q", v.no_paper_number(), value=1.0)] * 2
    with pytest.raises(v.VerdictError, match="used twice"):
        v.write_comparisons(tmp_path / "c.csv", rows)


def test_comparisons_round_trip_through_their_sealed_file(tmp_path):
    rows = [
        v.compare(
            "s",
            "a",
            "depth",
            "c",
            "q",
            v.interval_test(0.9, 1.3, 1.0),
            value=1.1,
            paper_value=1.0,
            paper_text="≈ 1",
        ),
        v.compare(
            "s",
            "b",
            "superposition",
            "c",
            "q",
            v.cannot_tell(v.leans({"1.2": 0.55, "1": 0.10})),
            paper_text="1.2",
        ),
    ]
    v.write_comparisons(tmp_path / "c.csv", rows)
    df = v.read_comparisons(tmp_path / "c.csv", "stage_rule")
    assert list(df["verdict"]) == [v.YES, v.CANNOT_TELL]
    assert df.loc[1, "verdict_text"] == "cannot tell (leans 1.2: p = 0.55 for 1.2, 0.1 for 1)"
    assert df["headline"].tolist() == [True, True]
    (tmp_path / "c.csv").write_text((tmp_path / "c.csv").read_text().replace("yes", "supports"))
    with pytest.raises(Exception, match="c.csv"):
        v.read_comparisons(tmp_path / "c.csv", "stage_rule")


def test_outside_test_needs_the_whole_range_outside_the_band():
    # band 0.91 ± 2·0.04 = [0.83, 0.99]
    assert v.outside_test(-0.1, 0.05, 0.91, 0.04).word == v.YES
    out = v.outside_test(0.5, 0.85, 0.91, 0.04)
    assert out.word == v.NO and "reaches [0.83, 0.99]" in out.why
    assert v.outside_test(1.0, 1.2, 0.91, 0.04).word == v.YES
    assert v.outside_test(0.95, 0.96, 0.91, None).word == v.YES  # no error: the band is the point


def test_bootstrap_summary_error_matches_the_error_from_the_samples():
    rng = np.random.default_rng(3)
    s = rng.normal(0.9, 0.05, 400)
    full = v.bootstrap_error(s, "seeds")
    summ = v.bootstrap_summary_error(full.value, "seeds", full.resamples, full.low, full.high)
    assert summ == full
    with pytest.raises(v.VerdictError, match="≥ 200"):
        v.bootstrap_summary_error(0.05, "seeds", 150)


def test_larger_bootstrap_states_the_larger_unit():
    seeds = v.Error(0.010, v.BOOTSTRAP, unit="5 seeds", resamples=1000)
    widths = v.Error(0.025, v.BOOTSTRAP, unit="6 widths, seeds pooled", resamples=1000)
    assert v.larger_bootstrap(0.0145, seeds, widths) is widths  # 0.0145 is 1.7x smaller: not stated
    out = v.larger_bootstrap(0.022, seeds, widths)
    assert out.method == v.COVARIANCE and out.value == 0.022 and out.unit == "6 widths, seeds pooled"
    assert v.larger_bootstrap(0.02) is v.NONE


def test_a_users_sweep_has_its_own_claim_prefix():
    assert v.sweep_claim("my_runs") == "sweep: my_runs" and v.sweep_claim("x").startswith(v.SWEEP_PREFIX)
    with pytest.raises(v.VerdictError, match="names the sweep"):
        v.sweep_claim("")


def test_a_line_fit_error_is_shown_but_never_decides():
    err = v.Error(0.02, v.LINE_FIT, unit="4 depths, one teacher replicate")
    assert "4 depths" in err.text
    row = v.compare(
        "t", "a", "depth", "c", "q", v.not_tested("still moving"), value=0.47, err=err, paper_text="≈ 1"
    )
    assert row.err == 0.02 and row.err_method.startswith("standard error of the fitted line")
    with pytest.raises(v.VerdictError, match="cannot decide"):
        v.compare("t", "b", "depth", "c", "q", v.Verdict(v.YES), value=0.47, err=err, paper_text="≈ 1")


def test_words_stay_words_when_read_back(tmp_path):
    row = v.compare(
        "s",
        "adam",
        "depth",
        "c",
        "q",
        v.procedure_test(1.20139, 1.2014),
        value=1.20139,
        value_text="1.2014",
        paper_text="1.2014",
    )
    v.write_comparisons(tmp_path / "c.csv", [row])
    df = v.read_comparisons(tmp_path / "c.csv", "r")
    assert df.loc[0, "value_text"] == "1.2014" and df.loc[0, "paper_text"] == "1.2014"
    assert df.loc[0, "at_bound"] == "" and df.loc[0, "value"] == 1.20139
