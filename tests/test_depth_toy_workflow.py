"""End to end: the depth-toy stage through Snakemake with config/test.yaml in a temp folder, and a bad
config that fails before any job."""

import json
import os

import pandas as pd
import pytest
import yaml
from _pipeline import copy_stage, planned_jobs, run_snakemake

pytestmark = pytest.mark.workflow

TARGET = "results/depth_toy/section.html"


def test_depth_toy_end_to_end(completed_run, tmp_path):
    # the stage as the shared test run made it (config.yaml + config/test.yaml, the config this test would
    # run), copied: this test damages and reruns it. Nothing is left to do in the copy.
    copy_stage(completed_run, tmp_path, "depth_toy")
    assert planned_jobs(run_snakemake(tmp_path, "-n", TARGET)) == {}
    res = tmp_path / "results/depth_toy"
    runs = pd.read_csv(res / "runs.csv")
    # mse: 2 kinds x 2 depths; learned_head: tied x 2 temperatures x 2 depths
    assert len(runs) == 8
    assert list(runs.columns) == [
        "kind",
        "variant",
        "temperature",
        "replicate",
        "depth",
        "steps",
        "final_train_loss",
        "test_loss",
    ]
    assert (runs.steps == 20).all() and (runs.test_loss > 0).all()
    # a colder teacher is further from the students' (initially uniform) prediction at every depth
    lh = runs[runs.variant == "learned_head"].pivot_table(
        index="depth", columns="temperature", values="test_loss"
    )
    assert (lh[0.1] > lh[1.0]).all()
    ex = pd.read_csv(res / "exponents.csv")
    assert len(ex) == 4 and ex.alpha.notna().all()
    angles = pd.read_csv(res / "angles.csv")
    t = angles[angles.model == "teacher"].groupby("kind").angle_update_deg.mean()
    assert t["tied"] < t["independent"] - 30  # smooth vs random-walk teacher dynamics
    rows = json.loads((res / "headline.json").read_text())
    assert [r["paper_text"] for r in rows] == ["≈ 1", "≈ 3"] and {r["paper"] for r in rows} == {"depth"}
    mse = ex[ex.variant == "mse"].set_index("kind").alpha
    assert rows[0]["value"] == mse["independent"] and rows[1]["value"] == mse["tied"]
    traj = pd.read_csv(res / "exponent_vs_step.csv")
    assert len(traj) == 2 * len(ex)  # two evaluations (step 10 and the last) per (kind, variant, T)
    last = traj[traj.step == 20].set_index(["kind", "variant", "temperature"]).alpha.sort_index()
    assert last.to_numpy() == pytest.approx(
        ex.set_index(["kind", "variant", "temperature"]).alpha.sort_index().to_numpy(), rel=1e-9
    )
    # figures are files beside the section (the report rule embeds them), each with its caption
    assert (res / "section.html").read_text().count('<img src="results/depth_toy/figures/') >= 5
    assert len(list((res / "figures").glob("*.png"))) >= 5
    assert {p.stem for p in (res / "figures").glob("*.txt")} == {
        p.stem for p in (res / "figures").glob("*.png")
    }
    student = res / "runs/tied/learned_head/rep0/T0.1/depth4.json"
    rec = json.loads(student.read_text())
    assert rec["temperature"] == 0.1 and rec["depth"] == 4 and len(rec["test_curve"]) == 2
    assert not (res / "runs/tied/learned_head/rep0/checkpoint.pt").exists()

    # the checkpoint interval changes no result: editing it retrains nothing
    ck = tmp_path / "checkpoint.yaml"
    ck.write_text(yaml.safe_dump({"depth_toy": {"checkpoint_every": 7}}))
    assert (
        planned_jobs(run_snakemake(tmp_path, "-n", TARGET, configfiles=("config/test.yaml", str(ck)))) == {}
    )

    # which jobs an edit reruns (new replicate, report note) is checked for every stage in test_partial_rerun.py

    # a finished table that lost rows (mtime kept, so Snakemake sees nothing) stops its consumer;
    # the rule log holds the traceback and names the file and the fix, and the named fix works
    runs_csv = res / "runs.csv"
    mtime = runs_csv.stat().st_mtime
    runs_csv.write_text("".join(runs_csv.read_text().splitlines(keepends=True)[:4]))
    os.utime(runs_csv, (mtime, mtime))
    proc = run_snakemake(tmp_path, TARGET, "--forcerun", "depth_toy_section", check=False)
    assert proc.returncode != 0
    log = (tmp_path / "logs/depth_toy/section.log").read_text()
    assert "Traceback" in log and "IntegrityError: results/depth_toy/runs.csv" in log
    assert "Fix: snakemake --cores all <your target> --forcerun depth_toy_tables" in log
    run_snakemake(tmp_path, TARGET, "--forcerun", "depth_toy_tables")
    assert len(pd.read_csv(runs_csv)) == 8 and json.loads((res / "headline.json").read_text()) == rows


def test_bad_depth_toy_config_fails_before_any_job(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        yaml.safe_dump({"depth_toy": {"variants": {"shared_head": {"depths": [2, 4], "steps": 5}}}})
    )
    proc = run_snakemake(tmp_path, "-n", TARGET, configfiles=("config/test.yaml", str(bad)), check=False)
    assert proc.returncode != 0
    assert "depth_toy.variants.shared_head.temperatures" in proc.stdout + proc.stderr
    assert not (tmp_path / "results").exists()
