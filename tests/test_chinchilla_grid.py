"""The Chinchilla fit grid: one cell per loss, each cell's settings drawn from the config, and the leverage
rule that reads the Huber cell."""

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


def test_each_loss_of_the_core_has_a_cell_with_its_settings():
    cfg = validate_config(yaml.safe_load((Path(__file__).parents[1] / "config.yaml").read_text()))
    assert pipeline.LOSSES == lawfit.LOSSES
    sq, hub = (pipeline.cell(cfg, loss) for loss in pipeline.LOSSES)
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
    fit_h = pipeline.fit_params(cfg, {"loss": "huber"})
    scan_h, scan_s = (pipeline.drop_scan_params(cfg, {"loss": x}) for x in ("huber", "squared"))
    assert not {"delta_scan", "scan_bootstrap_resamples", "adam_steps"} & set(fit_h)
    assert not {"adam_steps", "paper_stderr_precision"} & set(scan_h)
    assert scan_s["adam_steps"] == sq["adam_steps"]
    assert scan_s["paper_stderr_precision"] == cfg["chinchilla"]["drop_scan"]["paper_stderr_precision"]
    assert scan_h["scan_bootstrap_resamples"] == 30 and "scan_bootstrap_resamples" not in scan_s
    with pytest.raises(ValueError, match="no fit cell for loss 'l1'"):
        pipeline.cell(cfg, "l1")


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
    integrity.write_json(fit_json, {**huber_fit, "loss": "squared"})
    with pytest.raises(ValueError, match=r"fit\.json: a fit with loss 'squared'.*forcerun chinchilla_fit"):
        robustness.chinchilla_leverage(points_csv, fit_json, cfg, tmp_path / "d.csv", tmp_path / "l.csv")
