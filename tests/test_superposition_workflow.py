"""End to end: the superposition stage through Snakemake with config/test.yaml (the shared test run), then
the grid grows (only the new cells train) and an analysis key changes (nothing retrains), as dry runs."""

import pytest
import json

import pandas as pd
import yaml
from _pipeline import planned_jobs, run_snakemake

pytestmark = pytest.mark.workflow

TARGET = "results/superposition/section.html"


def test_superposition_end_to_end_and_grid_growth(completed_run, tmp_path):
    # the stage as the shared test run made it (completed_run: config.yaml + config/test.yaml, the config
    # this test would run); below only dry runs, which change nothing there
    done = completed_run
    res = done / "results/superposition"
    cells = pd.read_csv(res / "cells.csv")
    assert len(cells) == 6  # 1 law x 2 gammas x 3 widths x 1 seed
    assert {
        "gamma",
        "alpha",
        "distribution",
        "n",
        "m",
        "seed",
        "steps",
        "final_loss",
        "represented_fraction",
        "mean_sq_overlap",
    } <= set(cells.columns)
    assert (cells.steps == 80).all() and cells.final_loss.between(1e-4, 1.0).all()
    # γ = -1 keeps more features than γ = +1 at every width
    rep = cells.pivot_table(index="m", columns="gamma", values="represented_fraction")
    assert (rep[-1.0] > rep[1.0]).all()
    exps = pd.read_csv(res / "exponents.csv")
    assert len(exps) == 2 and set(exps.regime) == {"strong", "weak"} and exps.exponent.notna().all()
    rows = json.loads((res / "headline.json").read_text())
    # per α (one here) against the stated and the drawn value, strong and weak, and the strong α-trend
    assert len(rows) == 5 and all(
        set(r) >= {"quantity", "paper_text", "value", "err", "verdict"} for r in rows
    )
    trend = next(r for r in rows if r["key"].endswith("alpha_trend"))
    assert trend["verdict"] == "not tested" and "fewer than two α" in trend["verdict_text"]
    # one seed: no bootstrap error, so no verdict against the stated value
    stated = next(r for r in rows if r["key"] == "strong_gamma-1_alpha1.5_stated")
    assert stated["verdict"] == "not tested" and stated["err"] is None
    # figures are files beside the section (the report rule embeds them)
    assert (res / "section.html").read_text().count("<figure>") >= 4
    assert len(list((res / "figures").glob("*.png"))) >= 4
    cell = res / "cells/power-a1.5/n64/gamma-1/m8/seed0"
    assert (cell / "model.safetensors").exists() and not (cell / "checkpoint.pt").exists()

    # nothing to do when nothing changed
    assert planned_jobs(run_snakemake(done, "-n", TARGET)) == {}
    # a new width trains only its two cells; an analysis key retrains nothing
    grow = tmp_path / "grow.yaml"
    grow.write_text(yaml.safe_dump({"superposition": {"widths": [4, 8, 16, 32]}}))
    jobs = planned_jobs(run_snakemake(done, "-n", TARGET, configfiles=("config/test.yaml", str(grow))))
    # (rule paperfigs_compare's Figs. 4b/6e and 5b jobs compare the new exponents with the drawn values)
    after = {
        "superposition_tables": 1,
        "paperfigs_compare": 2,
        "superposition_compare": 1,
        "superposition_section": 1,
    }
    assert jobs == {"superposition_train": 2, **after}
    thr = tmp_path / "thr.yaml"
    thr.write_text(
        yaml.safe_dump(
            {"superposition": {"analysis": {"final_window": 20, "norm_threshold": 0.3, "etf_factor": 2.0}}}
        )
    )
    jobs = planned_jobs(run_snakemake(done, "-n", TARGET, configfiles=("config/test.yaml", str(thr))))
    assert jobs == after


def test_bad_superposition_config_fails_before_any_job(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"superposition": {"widths": [4, 64]}}))
    proc = run_snakemake(tmp_path, "-n", TARGET, configfiles=("config/test.yaml", str(bad)), check=False)
    assert proc.returncode != 0
    assert "superposition.widths [64]" in proc.stdout + proc.stderr
    assert not (tmp_path / "results").exists()
