"""The Chinchilla fit grid: one cell per law and loss, each cell's settings drawn from the config, the
chinchilla cells' fit of the Chinchilla law, and the leverage rule that reads the decomposed Huber cell."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from depthwidth import integrity
from depthwidth.chinchilla import pipeline, robustness
from depthwidth.config import validate_config
from depthwidth.laws import lawfit
from depthwidth.laws.law import PARAMS, decomposed_law

TRUE = {"c_m": 300.0, "alpha_m": 0.9, "c_l": 800.0, "alpha_l": 1.2, "c_D": 9.0, "alpha_D": 0.3, "L0": 1.75}


def test_each_law_and_loss_of_the_core_has_a_cell_with_its_settings():
    cfg = validate_config(yaml.safe_load((Path(__file__).parents[1] / "config.yaml").read_text()))
    assert pipeline.LOSSES == lawfit.LOSSES
    sq, hub = (pipeline.cell(cfg, "decomposed", loss) for loss in pipeline.LOSSES)
    # the squared cell is chinchilla.fit as configured (the paper's cut); the Huber cell takes
    # chinchilla.huber over it (all points, no variants) and keeps the shared units and starts
    assert (sq["loss"], sq["drop_highest_loss"], hub["loss"], hub["drop_highest_loss"]) == (
        "squared",
        40,
        "huber",
        0,
    )
    assert hub["variants"] == [] and "paper_adam" in sq["variants"]
    for k in ("width_scale", "depth_scale", "tokens_scale", "n_starts", "seed", "huber_delta"):
        assert hub[k] == sq[k] == cfg["chinchilla"]["fit"][k], k
    # a job's params are the keys it reads: the fit's hold no scan-only key, the Huber scan neither the
    # Adam steps nor the precision of the paper's least-squares errors
    fit_h = pipeline.fit_params(cfg, {"law": "decomposed", "loss": "huber"})
    scan_h, scan_s = (
        pipeline.drop_scan_params(cfg, {"law": "decomposed", "loss": x}) for x in ("huber", "squared")
    )
    assert not {"delta_scan", "scan_bootstrap_resamples", "adam_steps"} & set(fit_h)
    assert not {"adam_steps", "paper_stderr_precision"} & set(scan_h)
    assert scan_s["adam_steps"] == sq["adam_steps"]
    assert scan_s["paper_stderr_precision"] == cfg["chinchilla"]["drop_scan"]["paper_stderr_precision"]
    assert scan_h["scan_bootstrap_resamples"] == 30 and "scan_bootstrap_resamples" not in scan_s
    with pytest.raises(ValueError, match="no fit cell for law 'decomposed' and loss 'l1'"):
        pipeline.cell(cfg, "decomposed", "l1")
    with pytest.raises(ValueError, match="no fit cell for law 'kaplan'"):
        pipeline.cell(cfg, "kaplan", "squared")
    # the chinchilla cells: Besiroglu et al.'s cut and the core's starts, seed, bootstrap and δ from
    # chinchilla.chinchilla_law, and all points as their variant; the replication's params hold none of the
    # keys only the cells read (editing the cells' bootstrap does not rerun the 100-start replication)
    law = cfg["chinchilla"]["chinchilla_law"]
    for loss in pipeline.LOSSES:
        c = pipeline.fit_params(cfg, {"law": "chinchilla", "loss": loss})
        assert (c["law"], c["loss"], c["drop_highest_loss"], c["variants"]) == (
            "chinchilla",
            loss,
            law["n_excluded"],
            ["keep_all_points"],
        )
        assert {k: c[k] for k in ("n_starts", "seed", "bootstrap_resamples", "huber_delta")} == {
            k: law[k] for k in ("n_starts", "seed", "bootstrap_resamples", "huber_delta")
        }
        assert not {"width_scale", "adam_steps", "heldout_splits"} & set(c)
    from depthwidth.rules import job_params

    rep = job_params(cfg, pipeline, "chinchilla_law")["cfg"]
    assert set(rep) == {"n_excluded", "huber_delta", "grid_stride", "notebook_bootstrap_resamples"}


def _points(n=120, seed=3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    d_model = rng.choice([512, 1024, 2048, 4096], n).astype(float)
    n_layers = rng.choice([8, 16, 24, 32, 48], n).astype(float)
    tokens = np.exp(rng.uniform(np.log(1e9), np.log(3e11), n))
    loss = decomposed_law(d_model, n_layers * 100, tokens * 1e-6, *(TRUE[k] for k in PARAMS))
    params = 12 * n_layers * d_model**2
    return pd.DataFrame(
        {
            "params": params,
            "flops": 6 * params * tokens,
            "tokens": tokens,
            "loss": loss * np.exp(2e-3 * rng.standard_normal(n)),
            "d_model": d_model,
            "n_layers": n_layers,
        }
    )


def test_leverage_reads_the_huber_cell_and_its_hat_values_sum_to_the_parameter_count(tmp_path):
    from depthwidth.chinchilla.fit import run_fit

    points_csv = tmp_path / "points.csv"
    points = _points()
    integrity.write_table(points, points_csv)
    cfg = {
        "width_scale": 1.0,
        "depth_scale": 100.0,
        "tokens_scale": 1e-6,
        "n_starts": 2,
        "seed": 0,
        "drop_highest_loss": 0,
        "delta_scan": [1e-3],
        "paper_cut": 10,
    }
    fit_cfg = {
        **{k: cfg[k] for k in ("width_scale", "depth_scale", "tokens_scale", "n_starts", "seed")},
        "drop_highest_loss": 0,
        "loss": "huber",
        "huber_delta": 1e-3,
        "bootstrap_resamples": 0,
        "heldout_splits": 0,
        "variants": [],
    }
    huber_fit, _ = run_fit(points, fit_cfg)
    fit_json = tmp_path / "fit.json"
    integrity.write_json(fit_json, huber_fit)
    lev = robustness.chinchilla_leverage(points_csv, fit_json, cfg, tmp_path / "d.csv", tmp_path / "l.csv")
    deltas = pd.read_csv(tmp_path / "d.csv")
    # the hat matrix of a full-rank 7-parameter least-squares fit has trace 7
    assert lev["hat"].sum() == pytest.approx(len(PARAMS), rel=1e-6)
    assert int(lev["left_out_by_cut"].sum()) >= 10 and len(lev) == len(points)
    # the δ scan's Huber row is the Huber cell's fit (same points, starts and δ); its residuals are the
    # cell's
    row = deltas[deltas["loss"] == "huber"].iloc[0]
    assert row["alpha_l"] == pytest.approx(huber_fit["params"]["alpha_l"]["value"], rel=1e-9)
    assert set(deltas["loss"]) == {"huber", "squared"}
    # a fit.json of another cell is refused, naming the file and the rule to force
    for other in ({"loss": "squared"}, {"law": "chinchilla"}):
        integrity.write_json(fit_json, {**huber_fit, **other})
        with pytest.raises(ValueError, match=r"fit\.json: a fit of the .*forcerun chinchilla_fit"):
            robustness.chinchilla_leverage(points_csv, fit_json, cfg, tmp_path / "d.csv", tmp_path / "l.csv")


def test_a_chinchilla_cell_recovers_the_law_and_its_variant_keeps_every_point(tmp_path):
    """The grid's chinchilla cell on runs drawn from a known Chinchilla law: the core recovers its
    exponents, the main fit leaves out the cut's runs, the variant fits all of them, and rule
    chinchilla_fit writes the cell's record with its law."""
    from depthwidth.chinchilla.fit import chinchilla_fit

    rng = np.random.default_rng(5)
    points = _points(n=160, seed=5)
    N, D = points["params"].to_numpy(), points["tokens"].to_numpy()
    true = {"E": 1.8, "A": 400.0, "B": 2000.0, "alpha": 0.34, "beta": 0.28}
    clean = true["E"] + true["A"] / N ** true["alpha"] + true["B"] / D ** true["beta"]
    points["loss"] = clean * np.exp(1e-3 * rng.standard_normal(len(points)))
    points.loc[points["loss"].nlargest(5).index, "loss"] *= 1.5  # five outliers, above every other loss
    points_csv = tmp_path / "points.csv"
    integrity.write_table(points, points_csv)
    cfg = {
        "law": "chinchilla",
        "loss": "huber",
        "huber_delta": 1e-3,
        "n_starts": 4,
        "seed": 0,
        "bootstrap_resamples": 6,
        "drop_highest_loss": 5,
        "variants": ["keep_all_points"],
    }
    fit = chinchilla_fit(points_csv, cfg, tmp_path / "fit.json", tmp_path / "boot.csv")
    assert (fit["law"], fit["n_points"], fit["variants"]["keep_all_points"]["n_points"]) == (
        "chinchilla",
        155,
        160,
    )
    for k in ("alpha", "beta"):
        assert fit["params"][k]["value"] == pytest.approx(true[k], abs=0.01), k
    assert (
        fit["bootstrap_resamples"] == 6
        and len(integrity.read_table(tmp_path / "boot.csv", "chinchilla_fit")) == 6
    )
    # summarised as the sweeps' laws are: a Huber fit's criteria from the Laplace pseudo-likelihood
    assert fit["criteria"] == "Laplace pseudo-likelihood" and fit["bic"] > fit["aic"]
    # the compute-optimal split is the law's: N* ∝ C^(β/(α+β))
    a = fit["params"]["alpha"]["value"]
    b = fit["params"]["beta"]["value"]
    assert fit["compute_optimal"]["a"] == pytest.approx(b / (a + b), rel=1e-12)
    with pytest.raises(ValueError, match="no fit for law 'kaplan'"):
        chinchilla_fit(points_csv, {**cfg, "law": "kaplan"}, tmp_path / "f.json", tmp_path / "b.csv")


def test_the_section_names_the_chinchilla_cells_from_their_records_and_checks_the_optimiser_on_like_points():
    """The Chinchilla-law table's columns are named from each fit's own loss and point count; the
    optimiser check compares only the cell on the replication's points, loss and δ (else says nothing)."""
    from depthwidth.chinchilla.section_law import core_law_fits, optimiser_check

    def rec(loss, n, obj, **kw):
        return {"loss": loss, "n_points": n, "objective": obj, "params": {}, **kw}

    huber = rec("huber", 240, 1.0e-3, huber_delta=1e-3, variants={"keep_all_points": rec("huber", 245, 2e-3)})
    squared = rec("squared", 240, 1.1e-2, variants={"keep_all_points": rec("squared", 245, 7e-2)})
    assert list(core_law_fits([squared, huber])) == [
        "squared, 240 points",
        "squared, 245 points",
        "huber, 240 points",
        "huber, 245 points",
    ]
    rep = {"huber_delta": 1e-3, "n_points": 240, "objective_huber": 1.25e-3}
    chk = optimiser_check(rep, [squared, huber])
    assert chk["lower"] == "lmfit" and chk["relative_difference"] == pytest.approx(-0.2, rel=1e-12)
    assert optimiser_check({**rep, "n_points": 245}, [squared, huber]) is None
    assert optimiser_check({**rep, "huber_delta": 1e-2}, [squared, huber]) is None
