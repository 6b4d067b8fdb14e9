"""Sweeps of training runs (depthwidth.chinchilla.sweeps) and the law's identifiability
(depthwidth.chinchilla.identify): the contract's errors, a user CSV with known exponents, the OpenLM loaders."""

from __future__ import annotations

import itertools
from pathlib import Path
import json

import numpy as np
import pandas as pd
import pytest
import yaml

from _helpers import SHARED_DATA
from _pipeline import run_snakemake
from depthwidth.chinchilla import identify, sweeps
from depthwidth.laws import law, lawfit, profile

OPENLM = SHARED_DATA / "openlm_scaling"
needs_openlm = pytest.mark.skipif(
    not (OPENLM / "exp_data" / "grid.json").is_file(), reason=f"no OpenLM data in the mirror at {OPENLM}"
)


TRUE = {"alpha_m": 0.9, "alpha_l": 1.2, "alpha_D": 0.3}


def synthetic(seed: int = 0, noise: float = 0.005) -> pd.DataFrame:
    """A crossed width × depth × tokens design (5 × 5 × 5) with known exponents and 0.5 % log-normal noise,
    in a user's own column names."""
    rng = np.random.default_rng(seed)
    rows = []
    for w, layers, t in itertools.product(
        [128, 256, 512, 1024, 2048], [2, 4, 8, 16, 32], [1e8, 3e8, 1e9, 3e9, 1e10]
    ):
        loss = (
            0.8 * (w / 512) ** -TRUE["alpha_m"]
            + 0.5 * (layers / 8) ** -TRUE["alpha_l"]
            + 0.6 * (t / 1e9) ** -TRUE["alpha_D"]
            + 1.7
        )
        rows.append(
            {
                "hidden": w,
                "blocks": layers,
                "train_tokens": t,
                "val_loss": loss * np.exp(rng.normal(0, noise)),
                "note": "synthetic",
            }
        )
    return pd.DataFrame(rows)


MAPPING = {"width": "hidden", "depth": "blocks", "tokens": "train_tokens", "loss": "val_loss"}


def good_sweep() -> pd.DataFrame:
    return synthetic().rename(columns={v: k for k, v in MAPPING.items()}).assign(group="g")


def fit_sweep(df: pd.DataFrame, fixed: dict | None = None, group_offsets: bool = False, **kw):
    """A sweep table fitted by the core as the sweeps fit it: (result, data in fit units, the LawFit)."""
    d, how = identify.to_data(df), identify.sweep_fit(group_offsets, fixed)
    return lawfit.fit(d, how, **kw), d, how


def test_user_csv_recovers_known_exponents(tmp_path):
    path = tmp_path / "my_runs.csv"
    synthetic().to_csv(path, index=False)
    df = sweeps.load_sweep({"name": "mine", "path": str(path), "columns": MAPPING})
    assert list(df.columns[:5]) == ["width", "depth", "tokens", "loss", "group"] and "note" in df.columns
    res, d, how = fit_sweep(df, n_starts=4)
    v, se = how.values(res, d), how.stderrs(res, d)
    for a, truth in TRUE.items():
        assert abs(v[a] - truth) < 3 * se[a], (a, v[a], se[a])
    assert identify.tokens_vs_size(df)["tied"] is False
    # the small interface, and a parameter held fixed
    p, ssr, n = identify.fit(df, {"alpha_l": 1.2}, n_starts=2)
    assert n == 125 and p["alpha_l"] == 1.2 and ssr >= res.chisqr - 1e-12


def test_profile_interval_covers_truth_and_flags_flat_direction():
    df = good_sweep()
    res, d, how = fit_sweep(df, n_starts=4)
    best, se = how.values(res, d), how.stderrs(res, d)
    grid = profile.refine_grid([0.6, 2.0], best["alpha_l"], se["alpha_l"], n_fine=9)
    prof = profile.profile(d, how, "alpha_l", grid, best=best, n_starts=0)
    iv = profile.profile_interval(prof, min(res.chisqr, prof["ssr"].min()), len(d), res.nvarys, 3.84)
    assert iv["lo"] < TRUE["alpha_l"] < iv["hi"]
    # a flat profile (every SSR equal) has no closed end
    flat = pd.DataFrame({"value": [0.5, 1.0, 2.0], "ssr": [1.0, 1.0, 1.0]})
    assert profile.profile_interval(flat, 1.0, 50, 7, 1.0) == {
        "level": 1.0,
        "lo": None,
        "hi": None,
        "closed_lo": False,
        "closed_hi": False,
        "grid": [0.5, 2.0],
    }


def test_correlations_and_group_offsets():
    df = good_sweep()
    df["group"] = np.where(np.arange(len(df)) % 2 == 0, "a", "b")
    df.loc[df["group"] == "b", "loss"] += 0.2  # group b sits 0.2 nats higher
    res, d, how = fit_sweep(df, group_offsets=True, n_starts=3)
    v = how.values(res, d)
    assert v["L0[b]"] - v["L0[a]"] == pytest.approx(0.2, abs=0.02)
    corr = identify.correlation_from_covariance(res)
    assert set(corr) == {"alpha_m,alpha_l", "alpha_m,alpha_D", "alpha_l,alpha_D"}
    assert all(c is not None and -1 <= c <= 1 for c in corr.values())
    boot = lawfit.bootstrap(d, how, v, 4, n_starts=1)
    assert len(boot) >= 3 and set(identify.EXPONENTS) <= set(boot.columns)


def test_tied_tokens_flagged():
    df = good_sweep()
    df["tokens"] = 20 * 12 * df["depth"] * df["width"] ** 2  # compute-optimal style: D = 20 N
    t = identify.tokens_vs_size(df)
    assert t["tied"] and t["corr_logD_logN"] > 0.99 and t["tokens_per_shape_max"] == 1


@pytest.mark.parametrize(
    "case, words",
    [
        ("missing", ["'mine'", "depth", "columns:"]),
        ("nan_loss", ["'mine'", "'loss'", "NaN", "rows 3"]),
        ("negative", ["'mine'", "'tokens'", "positive", "rows 5"]),
        ("zero_width", ["'mine'", "'width'", "positive"]),
        ("few_depths", ["'mine'", "'depth'", "2 distinct", "alpha_l"]),
        ("few_widths", ["'mine'", "'width'", "1 distinct", "alpha_m"]),
        ("bad_mapping", ["'mine'", "not in the file", "nope"]),
    ],
)
def test_bad_sweeps_are_refused_with_a_clear_error(tmp_path, case, words):
    df = synthetic()
    columns = dict(MAPPING)
    if case == "missing":
        df = df.drop(columns=["blocks"])
        columns.pop("depth")
    elif case == "nan_loss":
        df.loc[3, "val_loss"] = np.nan
    elif case == "negative":
        df.loc[5, "train_tokens"] = -1.0
    elif case == "zero_width":
        df.loc[0, "hidden"] = 0
    elif case == "few_depths":
        df = df[df["blocks"].isin([4, 8])].reset_index(drop=True)
    elif case == "few_widths":
        df = df[df["hidden"] == 512].reset_index(drop=True)
    elif case == "bad_mapping":
        columns["loss"] = "nope"
    path = tmp_path / "bad.csv"
    df.to_csv(path, index=False)
    with pytest.raises(sweeps.SweepError) as e:
        sweeps.read_sweep(path, "mine", columns)
    msg = str(e.value)
    assert str(path) in msg and "Fix" in msg
    for w in words:
        assert w in msg, (w, msg)


def test_check_sweep_parquet_and_fewer_exponents(tmp_path):
    df = good_sweep()
    two_depths = df[df["depth"].isin([4, 8])]
    with pytest.raises(sweeps.SweepError):
        sweeps.check_sweep(two_depths, "two", 3)
    assert sweeps.check_sweep(two_depths, "two", 2) is two_depths
    path = tmp_path / "runs.parquet"
    synthetic().to_parquet(path)
    assert len(sweeps.read_sweep(path, "pq", MAPPING)) == 125


def test_chinchilla_points_map_unchanged(tmp_path):
    pts = pd.DataFrame(
        {
            "params": [1e8, 2e8, 4e8, 8e8],
            "flops": [1e18] * 4,
            "tokens": [1e9, 2e9, 3e9, 4e9],
            "loss": [3.0, 2.9, 2.8, 2.7],
            "d_model": [512, 640, 768, 1024],
            "n_layers": [8, 10, 12, 16],
            "arch_params": [1e8] * 4,
            "params_rel_mismatch": [0.0] * 4,
        }
    )
    pts.to_csv(tmp_path / "points.csv", index=False)
    df = sweeps.load_sweep(
        {"name": "chinchilla", "loader": "chinchilla", "path": str(tmp_path / "points.csv")}
    )
    assert (
        df["width"].tolist() == pts["d_model"].tolist() and df["depth"].tolist() == pts["n_layers"].tolist()
    )
    assert (df["group"] == "chinchilla").all() and {"flops", "arch_params"} <= set(df.columns)


def test_grid_key_parsing():
    k = sweeps.parse_grid_key("d=1024_l=12_h=16-64-0.003-0.033-64-5149020160-100-3e-05")
    assert (k["width"], k["depth"], k["n_heads"], k["tokens"], k["warmup"], k["cooldown"]) == (
        1024,
        12,
        16,
        5149020160,
        100,
        3e-05,
    )
    with pytest.raises(sweeps.SweepError):
        sweeps.parse_grid_key("d=1024_l=12-64-0.003")


@needs_openlm
def test_openlm_grid_counts():
    runs = sweeps.load_openlm_grid(OPENLM, select="all")
    assert len(runs) == 435 and runs["shape"].nunique() == 130
    assert sorted(runs["width"].unique()) == [96, 192, 288, 320, 488, 512, 576, 640, 768, 1024]
    assert sorted(runs["depth"].unique()) == [4, 8, 12, 16, 24]
    best = sweeps.load_openlm_grid(OPENLM)
    assert len(best) == 50 and best["n_runs"].sum() == 435  # every (d_model, n_layers) pair: crossed
    assert (
        best.groupby(["width", "depth"])["loss"].min() == runs.groupby(["width", "depth"])["loss"].min()
    ).all()
    assert identify.tokens_vs_size(best)["tied"]  # tokens grow with model size: one budget per shape


@needs_openlm
def test_openlm_main_counts_and_validation_sets():
    with pytest.raises(sweeps.SweepError, match="'depth' has 2 distinct"):
        sweeps.load_openlm_main(OPENLM)
    main = sweeps.load_openlm_main(OPENLM, n_exponents=2)
    assert len(main) == 95 and len(main.attrs["skipped_runs"]) == 9  # open_lm_1b (6) and open_lm_7b (3)
    per_shape = main.groupby(["width", "depth"]).size().to_dict()
    assert per_shape == {(96, 8): 24, (512, 8): 24, (576, 24): 24, (1024, 24): 23}
    assert sorted(main["group"].unique()) == list(sweeps.OPENLM_TRAIN_SETS)
    assert (main["loss"] == main["loss_c4_val"]).all()
    assert {f"loss_{v}" for v in sweeps.OPENLM_VAL_SETS} <= set(main.columns)
    assert (main["tokens"] == (20 * main["multiplier"] * main["params"]).round()).all()


@needs_openlm
def test_grid_validation_set_not_established():
    v = sweeps.grid_val_set(OPENLM)
    assert v["n_overlap_shapes"] == 4 and v["match"] == []  # no evaluation reproduces grid.json within 0.02
    assert v["best"][:2] == ("rpj", "paloma_redpajama")


def test_openlm_files_are_pinned():
    from depthwidth.download.fetch import load_manifest

    files = sweeps.openlm_files(load_manifest())
    assert len(files) == 110 and "openlm_scaling/exp_data/grid.json" in files
    if (OPENLM / "SHA256SUMS").is_file():
        sums = dict(
            reversed(line.split()) for line in (OPENLM / "SHA256SUMS").read_text().splitlines() if line
        )
        m = load_manifest()
        assert {f"openlm_scaling/{p[2:]}": s for p, s in sums.items()} == {f: m[f]["sha256"] for f in files}
        assert all(m[f]["urls"][0].endswith(f.split("/", 1)[1]) for f in files)


@needs_openlm
def test_openlm_fetched_through_the_mirror(tmp_path):
    """The download layer takes the pinned files from the mirror offline; the loaders read the copy."""
    from depthwidth.download.fetch import fetch, load_manifest

    m = load_manifest()
    wanted = [f for f in sweeps.openlm_files(m) if "/models/" not in f or "d=96_l=8" in f]
    for f in wanted:
        assert fetch(f, tmp_path / f, [SHARED_DATA], m, allow_network=False) == str(SHARED_DATA / f)
    root = tmp_path / sweeps.OPENLM_DIR
    assert len(sweeps.load_openlm_grid(root)) == 50
    runs, skipped = sweeps.read_openlm_main(root)
    assert len(runs) == 24 and skipped == []


def test_fixed_parameters_have_no_stderr():
    df = good_sweep()
    res, d, how = fit_sweep(df, {"alpha_l": 1.2, "c_D": 0.6}, n_starts=1)
    se = how.stderrs(res, d)
    assert se["alpha_l"] is None and se["c_D"] is None and se["alpha_m"] > 0 and se["c_m"] > 0


def test_identify_summary_small():
    df = good_sweep()
    out = identify.identify(df, n_starts=2, n_bootstrap=3, profile_grids={"alpha_D": [0.1, 0.6]})
    assert (
        out["n"] == 125 and out["p"] == 7 and out["at_bound"] == [] and out["identified"] == {"alpha_D": True}
    )
    iv = out["profiles"]["alpha_D"]["intervals"]["95%"]
    assert iv["lo"] < 0.3 < iv["hi"] and out["bootstrap"]["resamples"] == 3
    assert set(out["corr_bootstrap"]) == set(out["corr_covariance"])


def test_profile_keeps_other_fixed_parameters():
    df = good_sweep()
    prof = profile.profile(
        identify.to_data(df),
        identify.sweep_fit(fixed={"alpha_D": 0.5}),
        "alpha_l",
        [1.0, 1.2],
        n_starts=0,
        best={**{k: 1.0 for k in law.PARAMS}, "alpha_D": 0.5, "L0": 1.0},
    )
    assert (prof["alpha_D"] == 0.5).all() and prof["value"].tolist() == [1.0, 1.2]


# ---------------------------------------------------------------- a user's sweep through the rules
def _user_sweep_config(tmp_path, entry: dict):
    cfg = tmp_path / "sweeps.yaml"
    cfg.write_text(yaml.safe_dump({"chinchilla": {"sweeps": [entry]}}))
    return ("config/test.yaml", str(cfg))


@pytest.mark.workflow
def test_user_sweep_fitted_by_adding_a_sweeps_entry(tmp_path):
    """A user's CSV, added as a ``chinchilla.sweeps`` entry, runs through chinchilla_sweep_points and
    chinchilla_sweep_identify; the known exponents come back within their errors."""
    synthetic().to_csv(tmp_path / "my_runs.csv", index=False)
    entry = {
        "name": "mine",
        "path": "my_runs.csv",
        "columns": MAPPING,
        "bootstrap": 0,
        "n_starts": 3,
        "profile_points": 6,
    }
    run_snakemake(
        tmp_path,
        "results/chinchilla/sweeps/mine/identify.json",
        configfiles=_user_sweep_config(tmp_path, entry),
    )
    runs = pd.read_csv(tmp_path / "results/chinchilla/sweeps/mine/runs.csv")
    assert len(runs) == 125 and list(runs.columns[:5]) == ["width", "depth", "tokens", "loss", "group"]
    out = json.loads((tmp_path / "results/chinchilla/sweeps/mine/identify.json").read_text())
    assert out["sweep"] == "mine" and out["n"] == 125 and out["at_bound"] == []
    for a, truth in TRUE.items():
        p = out["params"][a]
        assert abs(p["value"] - truth) < 3 * p["stderr"], (a, p)
    iv = out["profiles"]["alpha_l"]["intervals"]["95%"]
    assert iv["lo"] < TRUE["alpha_l"] < iv["hi"] and out["identified"] == {"alpha_l": True}
    assert out["heldout"]["n_splits"] == 10 and out["heldout"]["rmse_log_test_mean"] < 0.01  # schema default
    assert len(out["depth_partial"]["partial"]) == 125
    prof = pd.read_csv(tmp_path / "results/chinchilla/sweeps/mine/profile.csv")
    assert set(prof["param"]) == {"alpha_l"} and len(prof) >= 6


@pytest.mark.workflow
def test_bad_user_sweep_fails_before_fitting(tmp_path):
    synthetic().drop(columns=["blocks"]).to_csv(tmp_path / "my_runs.csv", index=False)
    entry = {
        "name": "mine",
        "path": "my_runs.csv",
        "columns": {k: v for k, v in MAPPING.items() if k != "depth"},
    }
    p = run_snakemake(
        tmp_path,
        "results/chinchilla/sweeps/mine/identify.json",
        configfiles=_user_sweep_config(tmp_path, entry),
        check=False,
    )
    err = p.stdout + p.stderr
    assert p.returncode != 0 and "SweepError" in err and "sweep 'mine'" in err and "['depth']" in err, err[
        -3000:
    ]
    assert not (tmp_path / "results/chinchilla/sweeps/mine/runs.csv").exists()
    assert not (tmp_path / "logs/chinchilla/sweeps/mine/identify.log").exists()  # never got to the fit


def test_sweep_rows_test_alpha_l_against_one_by_the_profile_interval():
    """A sweep's α_ℓ row: "yes" where the closed 95 % profile interval holds 1, "no" where a closed end
    excludes it, "cannot tell" where the interval is open; on the first screen only in the sweeps' own table
    (its claim "sweep: <name>"), never among the papers' rows."""
    from depthwidth.chinchilla.comparisons import sweep_rows

    runs = pd.DataFrame(
        {"width": [256, 512, 1024] * 4, "depth": [4] * 3 + [8] * 3 + [16] * 3 + [32] * 3, "loss": 3.0}
    )

    def summary(lo, hi):
        iv = {
            "lo": lo,
            "hi": hi,
            "closed_lo": lo is not None,
            "closed_hi": hi is not None,
            "grid": [0.05, 4.0],
        }
        return {
            "sweep": "s",
            "n": 12,
            "p": 7,
            "ssr": 1.0,
            "fixed": {},
            "at_bound": [],
            "identified": {"alpha_l": lo is not None and hi is not None},
            "params": {"alpha_l": {"value": 1.1}, "alpha_m": {"value": 0.9}, "L0": {"value": 1.0}},
            "profiles": {"alpha_l": {"rows": [], "intervals": {"95%": iv, "68%": iv}}},
            "tokens_vs_size": {"tied": False, "corr_logD_logN": 0.1},
        }

    def row(lo, hi):
        with pytest.MonkeyPatch.context() as mp:  # no profile rows: no lean to read
            mp.setattr("depthwidth.chinchilla.comparisons.profile_p_values", lambda *a: {})
            return sweep_rows(summary(lo, hi), runs)[0]

    assert row(0.8, 1.4).verdict == "yes" and row(1.3, 2.0).verdict == "no"
    open_row = row(0.25, None)
    assert open_row.verdict == "cannot tell" and "open above" in open_row.verdict_text
    assert (
        open_row.headline and open_row.claim == "sweep: s" and (open_row.low, open_row.high) == (0.25, None)
    )


def test_section_compares_sweeps(tmp_path):
    from depthwidth.chinchilla.section import sweeps_html
    from depthwidth.sections import Figures

    from depthwidth.chinchilla.comparisons import sweep_rows
    from depthwidth.verdicts import COLUMNS

    df = good_sweep()
    out = identify.identify(
        df, n_starts=2, n_bootstrap=0, profile_grids={"alpha_l": [0.6, 2.0]}, heldout_splits=2
    )
    s = {"sweep": "mine", "n_exponents": 3, **out}
    rows = pd.DataFrame([r.row() for r in sweep_rows(s, df)], columns=list(COLUMNS))
    body, table = sweeps_html(Figures(tmp_path), [s], rows)
    assert table["Sweep"].tolist() == ["mine"] * 3
    am = table[table["Exponent"] == "α_m"].iloc[0]
    assert am["Status"] == "not profiled" and am["68 % low"] == "–"
    assert "not identified" in body and "Held-out check per sweep" in body
    assert (tmp_path / "depth_part_mine.png").is_file() and "Partial dependence on depth, sweep mine" in body
    # the true α_ℓ = 1.2 with 0.5 % noise: the 95 % interval is narrow and excludes 1
    assert rows["verdict"].tolist() == ["no"] and "1 excluded; leans 1.2" in rows["verdict_text"].iloc[0]
    assert "1 excluded; leans 1.2" in body
    assert (tmp_path / "profile_alpha_l_mine.png").is_file() and "No sweep ties" in body


# ---------------------------------------------------------------- depth part, held-out check, shape, headline
def test_depth_partial_recovers_depth_term():
    """On a noiseless synthetic sweep, L − fitted width and data terms − L0 is the true 0.5·(ℓ/8)^−1.2."""
    df = synthetic(noise=0.0).rename(columns={v: k for k, v in MAPPING.items()})
    res, d, how = fit_sweep(df, n_starts=2)
    dp = identify.depth_partial(d, how, how.values(res, d))
    depth, part = np.asarray(dp["depth"]), np.asarray(dp["partial"])
    assert np.allclose(depth, df["depth"]) and dp["depth_unit"] == pytest.approx(8.0)
    truth = 0.5 * (depth / 8) ** -TRUE["alpha_l"]
    assert np.allclose(part, truth, rtol=1e-4, atol=1e-6), np.abs(part - truth).max()
    assert np.allclose(dp["depth_term"], truth, rtol=1e-4)


def test_heldout_noiseless_sweep_is_zero_and_noisy_matches_noise():
    """The sweep's held-out check is the main fit's (``lawfit.held_out``, with the sweep's ``LawFit``)."""
    df = synthetic(noise=0.0).rename(columns={v: k for k, v in MAPPING.items()})
    out = identify.identify(df, n_starts=2, n_bootstrap=0, profile_grids={}, heldout_splits=3)
    h = out["heldout"]
    assert h["n_splits"] == 3 and h["rmse_log_test_mean"] < 1e-5 and h["rmse_log_train_mean"] < 1e-5, h
    noisy = identify.identify(
        good_sweep(), n_starts=2, n_bootstrap=0, profile_grids={}, heldout_splits=2, group_offsets=True
    )["heldout"]
    assert 0.003 < noisy["rmse_log_test_mean"] < 0.008, noisy  # the 0.5 % noise, not more


def test_sweep_shape():
    from depthwidth.chinchilla.identify import sweep_shape

    def summary(name, lo, hi, identified):
        iv = {
            "lo": lo,
            "hi": hi,
            "closed_lo": lo is not None,
            "closed_hi": hi is not None,
            "grid": [0.05, 4.0],
        }
        return {
            "sweep": name,
            "n": 50,
            "fixed": {},
            "at_bound": [],
            "identified": identified,
            "params": {"alpha_l": {"value": 1.1, "stderr": 0.1}, "alpha_m": {"value": 0.9, "stderr": 0.1}},
            "profiles": {a: {"intervals": {"95%": iv, "68%": iv}} for a in identified},
        }

    both = summary("a", 0.8, 1.4, {"alpha_l": True, "alpha_m": True})
    sh, text = sweep_shape(both)
    assert sh["width_exponent"] == pytest.approx(1.1 / 3.1) and "m* ∝ N^0.355" in text
    only_l = summary("b", 0.3, None, {"alpha_l": False})
    assert sweep_shape(only_l) == (
        None,
        "b: loss-optimal shape not identified (alpha_m not profiled, alpha_l 95 % profile interval open).",
    )
    assert (
        "alpha_m at its bound"
        in sweep_shape({**both, "at_bound": ["alpha_m"], "identified": {"alpha_l": True, "alpha_m": False}})[
            1
        ]
    )


# ---------------------------------------------------------------- a user's file: read, repeats, free exponents
def test_repeated_rows_stop_the_sweep_naming_them_or_are_dropped_by_the_option_named(tmp_path):
    """20 rows copied once more (what moved α_ℓ from 1.19 to 1.38 unnoticed): the read stops naming the
    repeated rows, the rows they repeat and both fixes; `duplicates: drop`, as the message names it, gives
    back the 125 runs of the file without repeats."""
    df = synthetic()
    doubled = pd.concat([df, df.iloc[10:30]], ignore_index=True)
    path = tmp_path / "runs.csv"
    doubled.to_csv(path, index=False)
    with pytest.raises(sweeps.SweepError) as e:
        sweeps.read_sweep_table(path, "mine", sweeps.sweep_key("mine", 0), MAPPING)
    msg = str(e.value)
    assert "20 row(s) repeat an earlier run" in msg and str(path) in msg, msg
    assert "data rows 125, 126, 127, 128, 129, 130, 131, 132 … and 12 more" in msg
    assert "repeating rows 10, 11, 12" in msg
    assert "add `duplicates: drop` to chinchilla.sweeps[0] (the entry named 'mine')" in msg
    out = sweeps.read_sweep_table(path, "mine", None, MAPPING, duplicates="drop")
    assert len(out) == 125 and out["loss"].tolist() == df["val_loss"].tolist()
    # repeated settings with another loss are two runs (seeds), not a repeat
    seeds = pd.concat([df, df.iloc[10:30].assign(val_loss=lambda d: d["val_loss"] * 1.01)], ignore_index=True)
    seeds.to_csv(path, index=False)
    assert len(sweeps.read_sweep_table(path, "mine", None, MAPPING)) == 145


@pytest.mark.parametrize(
    "case, words",
    [
        ("missing", ["does not exist"]),
        ("empty", ["is empty (0 bytes)"]),
        ("binary", ["is binary (it holds NUL bytes)"]),
        ("latin1", ["is not UTF-8 text"]),
        ("newline", ["no header and no rows"]),
        ("header_only", ["has no rows"]),
        ("bad_parquet", ["is not a parquet file"]),
    ],
)
def test_an_unreadable_sweep_file_names_the_sweep_the_file_the_key_and_the_fix(tmp_path, case, words):
    path = tmp_path / ("runs.parquet" if case == "bad_parquet" else "runs.csv")
    if case == "empty":
        path.write_bytes(b"")
    elif case == "binary":
        path.write_bytes(bytes(range(256)) * 4)
    elif case == "latin1":
        path.write_bytes("hidden,blocks,train_tokens,val_loss\n1,2,3,4\nnaïve,1,1,1\n".encode("latin-1"))
    elif case == "newline":
        path.write_bytes(b"\n")
    elif case == "header_only":
        path.write_text("hidden,blocks,train_tokens,val_loss\n")
    elif case == "bad_parquet":
        synthetic().to_csv(path, index=False)
    key = sweeps.sweep_key("mine", 2)
    with pytest.raises(sweeps.SweepError) as e:
        sweeps.read_sweep_table(path, "mine", key, MAPPING)
    msg = str(e.value)
    assert msg.startswith(f"sweep 'mine' (file {path})") and "Fix:" in msg, msg
    for w in words:
        assert w in msg, (w, msg)
    if case != "header_only":  # the rows' check names the file; the file's checks name the key too
        assert "chinchilla.sweeps[2].path (the entry named 'mine')" in msg


def test_a_missing_or_binary_sweep_file_stops_the_parse_naming_the_key(tmp_path, monkeypatch):
    """rules/chinchilla.smk runs the stage's check while the workflow is parsed: a user's sweep file that
    does not exist (a `path:` pointed elsewhere) or is binary stops before any job, naming each."""
    from depthwidth.chinchilla import pipeline
    from depthwidth.config import ConfigError

    monkeypatch.chdir(tmp_path)
    synthetic().to_csv("good.csv", index=False)
    (tmp_path / "model.bin").write_bytes(b"\0\1\2" * 100)
    config = {
        "chinchilla": {
            "sweeps": [
                {"name": "chinchilla", "loader": "chinchilla"},
                {"name": "good", "path": "good.csv"},
                {"name": "moved", "path": "runs/elsewhere.csv"},
                {"name": "weights", "path": "model.bin"},
            ]
        }
    }
    with pytest.raises(ConfigError) as e:
        pipeline.check(config)
    msg = str(e.value)
    assert "sweep 'moved': config key chinchilla.sweeps[2].path (the entry named 'moved'):" in msg
    assert "runs/elsewhere.csv does not exist (relative paths are read from the working directory" in msg
    assert "sweep 'weights': config key chinchilla.sweeps[3].path" in msg and "is binary" in msg
    assert "'good'" not in msg and msg.count("Fix:") == 2
    config["chinchilla"]["sweeps"] = config["chinchilla"]["sweeps"][:2]
    assert pipeline.check(config) is None


def test_a_sweep_files_size_and_checksum_are_a_param_of_its_points_rule(tmp_path, monkeypatch):
    """Edited in place (same size, modification time put back) the file's params differ, so its sweep
    reruns whatever the rerun triggers; a built-in loader's sweep has none."""
    import os

    from depthwidth.chinchilla import pipeline

    monkeypatch.chdir(tmp_path)
    synthetic().to_csv("runs.csv", index=False)
    config = {
        "chinchilla": {
            "sweeps": [{"name": "mine", "path": "runs.csv"}, {"name": "c", "loader": "chinchilla"}]
        }
    }
    before = pipeline.sweep_file_params(config, {"sweep": "mine"})
    assert before["size"] == os.path.getsize("runs.csv") and len(before["sha256"]) == 64
    st = os.stat("runs.csv")
    text = Path("runs.csv").read_text()
    Path("runs.csv").write_text(text.replace("synthetic", "synthetiC"))
    os.utime("runs.csv", ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    after = pipeline.sweep_file_params(config, {"sweep": "mine"})
    assert after["size"] == before["size"] and after["sha256"] != before["sha256"]
    assert pipeline.sweep_file_params(config, {"sweep": "c"}) is None


def test_the_distinct_values_check_counts_the_free_exponents_and_its_fix_works_as_printed(tmp_path):
    """One depth: the check asks for three (α_ℓ free) and prints a `fixed:` entry; that entry, read as YAML
    from the message and put into the sweep as printed, lets the sweep through, and the fit recovers the
    two free exponents (α_m 0.9, α_D 0.3) within 0.05. Two depths: the printed fix holds α_ℓ only."""
    import re

    df = synthetic()
    for depths, want in (([8], {"alpha_l": 1.0, "c_l": 1.0e-6}), ([4, 8], {"alpha_l": 1.0})):
        path = tmp_path / f"d{len(depths)}.csv"
        df[df["blocks"].isin(depths)].to_csv(path, index=False)
        with pytest.raises(sweeps.SweepError) as e:
            sweeps.read_sweep_table(path, "mine", None, MAPPING)
        msg = str(e.value)
        assert (
            f"column 'depth' has {len(depths)} distinct value(s) ({depths}); a free alpha_l needs at least 3"
            in msg
        )
        fixed = yaml.safe_load(re.search(r"(fixed: \{[^}]*\})", msg).group(1))["fixed"]
        assert fixed == want
        table = sweeps.read_sweep_table(path, "mine", None, MAPPING, fixed=fixed)
        assert len(table) == 25 * len(depths)
        out = identify.identify(table, fixed=fixed, n_starts=3, n_bootstrap=0, profile_grids={})
        assert abs(out["params"]["alpha_m"]["value"] - TRUE["alpha_m"]) < 0.05, out["params"]
        assert abs(out["params"]["alpha_D"]["value"] - TRUE["alpha_D"]) < 0.05, out["params"]
    # a held exponent with its coefficient free still needs two values
    with pytest.raises(sweeps.SweepError, match="a held alpha_l needs at least 2"):
        sweeps.check_sweep(good_sweep().query("depth == 8"), "mine", 3, fixed={"alpha_l": 1.0})


@pytest.mark.workflow
def test_a_user_sweep_file_edited_in_place_or_moved_away_is_not_left_as_it_was_fitted(tmp_path):
    """A sweep's file edited in place with its modification time put back plans the sweep again (its size
    and checksum are a param of the points rule); its `path:` pointed at a file that does not exist stops
    the parse naming the key, where it used to answer "Nothing to be done" and keep the old fit."""
    import os

    from _pipeline import planned_jobs

    f = tmp_path / "my_runs.csv"
    synthetic().to_csv(f, index=False)
    entry = {"name": "mine", "path": "my_runs.csv", "columns": MAPPING}
    target = "results/chinchilla/sweeps/mine/runs.csv"
    run_snakemake(tmp_path, target, configfiles=_user_sweep_config(tmp_path, entry))
    p = run_snakemake(tmp_path, target, "-n", configfiles=_user_sweep_config(tmp_path, entry))
    assert planned_jobs(p.stdout + p.stderr) == {}
    st = f.stat()
    df = synthetic()
    df.loc[0, "val_loss"] *= 1.5
    df.to_csv(f, index=False)
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert f.stat().st_mtime_ns < (tmp_path / target).stat().st_mtime_ns
    p = run_snakemake(tmp_path, target, "-n", configfiles=_user_sweep_config(tmp_path, entry))
    text = p.stdout + p.stderr
    assert planned_jobs(text) == {"chinchilla_sweep_points": 1}, text[-3000:]
    assert "Params have changed since last execution" in text and "sha256" in text
    entry["path"] = "moved/my_runs.csv"
    p = run_snakemake(tmp_path, target, "-n", configfiles=_user_sweep_config(tmp_path, entry), check=False)
    text = p.stdout + p.stderr
    assert p.returncode != 0 and "Nothing to be done" not in text, text[-3000:]
    assert "sweep 'mine': config key chinchilla.sweeps[0].path (the entry named 'mine'): " in text
    assert "moved/my_runs.csv does not exist" in text and "Fix: point it at your CSV" in text


@needs_openlm
def test_a_loaders_sweep_takes_the_printed_fix_too():
    """The OpenLM main runs have two depths: with all three exponents free they are refused with a
    `fixed: {alpha_l: 1.0}` fix, and that entry, given to the loader's sweep, lets them through."""
    import re

    spec = {
        "name": "openlm_main",
        "loader": "openlm_main",
        "path": str(OPENLM),
        "options": {"val_set": "c4_val"},
    }
    with pytest.raises(sweeps.SweepError) as e:
        sweeps.load_sweep(spec, 3)
    fix = yaml.safe_load(re.search(r"(fixed: \{[^}]*\})", str(e.value)).group(1))
    assert fix == {"fixed": {"alpha_l": 1.0}}, str(e.value)
    out = sweeps.load_sweep({**spec, **fix}, 3)
    assert out["depth"].nunique() == 2 and len(out) > 50
