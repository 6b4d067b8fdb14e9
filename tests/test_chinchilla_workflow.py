"""End to end: the Chinchilla stage through Snakemake with the shared mirror, then a partial rerun."""

import json

import pandas as pd
import pytest
import yaml

from _helpers import needs_shared_data
from _pipeline import planned_jobs, run_snakemake

pytestmark = pytest.mark.workflow


@needs_shared_data
def test_chinchilla_end_to_end_and_partial_rerun(completed_run, tmp_path):
    # The whole test config, run once per session (the completed_run fixture); this test only reads it.
    wd = completed_run
    fit = json.loads((wd / "results/chinchilla/fits/decomposed/squared/fit.json").read_text())
    assert fit["converged"] and fit["n_points"] == 203
    a_l = fit["params"]["alpha_l"]
    assert 0.9 < a_l["value"] < 1.8 and 0.05 < a_l["stderr"] < 0.6  # the paper: 1.2 ± 0.3
    assert a_l["bootstrap_ci95"][0] < a_l["value"] < a_l["bootstrap_ci95"][1]
    assert set(fit["params"]) == {"c_m", "alpha_m", "c_l", "alpha_l", "c_D", "alpha_D", "L0"}
    assert "layers_minus_2" in fit["variants"]
    assert 0.05 < a_l["stderr_paper"] < 0.6  # the paper's error formula, beside lmfit's
    # the dropped-points scan (config/test.yaml: k = 1, 40, 100) and the section's figure files
    scan = pd.read_csv(wd / "results/chinchilla/fits/decomposed/squared/drop_scan.csv")
    assert scan["n_points"].tolist() == [244, 203, 144]
    assert scan.loc[1, "alpha_l"] == pytest.approx(
        a_l["value"], rel=1e-9
    )  # k = 40 is the main fit's cut, fitted from the same starts
    figures = wd / "results/chinchilla/figures"
    assert {"points.png", "drop_scan.png", "drop_scan.txt", "robustness.png"} <= {
        p.name for p in figures.iterdir()
    }
    # the robustness table: one row per exponent and choice (loss × k), no row twice; the least-squares
    # row at k = 40 is the main fit; the Huber rows' error is their bootstrap
    rob = pd.read_csv(wd / "results/chinchilla/robustness.csv")
    assert set(rob["exponent"]) == {"alpha_l", "alpha_m", "alpha_D"}
    assert not rob.duplicated(["exponent", "loss", "drop_highest"]).any() and len(rob) == 3 * 2 * 3
    al = rob[rob["exponent"] == "alpha_l"].set_index(["loss", "drop_highest"])
    assert al.loc[("squared", 40), "value"] == pytest.approx(a_l["value"], rel=1e-12)
    assert (al.xs("huber")["error_kind"] == "bootstrap std").all()
    assert {"lr_1", "lr_1.2", "lr_1.3"} <= set(rob.columns)
    assert "leverage.png" in {p.name for p in figures.iterdir()}
    huber = json.loads((wd / "results/chinchilla/fits/decomposed/huber/fit.json").read_text())
    assert huber["loss"] == "huber" and huber["n_points"] == 245
    law = json.loads((wd / "results/chinchilla/chinchilla_law.json").read_text())
    assert law["replication"]["n_points"] == 240 and law["replication"]["starts_run"] == 10
    # the grid's chinchilla cells: the core's fits of the same law on the replication's 240 points and,
    # as their variant, on all 245; on the replication's objective the core's Huber cell is at least as
    # low as L-BFGS-B from 10 of the 4500 grid starts (8 % lower here; 3e-8 lower with the default 100)
    for loss in ("squared", "huber"):
        c = json.loads((wd / f"results/chinchilla/fits/chinchilla/{loss}/fit.json").read_text())
        assert (c["law"], c["loss"], c["n_points"]) == ("chinchilla", loss, 240)
        assert c["variants"]["keep_all_points"]["n_points"] == 245 and c["converged"]
        assert 0.2 < c["params"]["alpha"]["value"] < 0.5 and 0.2 < c["params"]["beta"]["value"] < 0.5
        if loss == "huber":
            rep = law["replication"]["objective_huber"]
            assert c["objective"] <= rep * (1 + 1e-9)
    # the comparisons as data: with the test config's 8 and 4 bootstrap resamples (under 200) no row states
    # a bootstrap error; the converged optimum's lean comes from the scan's profile statistics at k = 40
    comp = pd.read_csv(wd / "results/chinchilla/comparisons.csv").set_index("key")
    assert "alpha_l_paper_procedure" not in comp.index  # the test config runs no paper_adam variant
    assert not comp["err_method"].astype(str).str.startswith("bootstrap").any()
    assert comp.loc["alpha_l_converged", "headline"] and 0 < comp.loc["alpha_l_converged", "p_value"] < 1
    page = (wd / "results/report.html").read_text()
    assert 'id="chinchilla"' in page and "id='headline'" in page and page.count("data:image/png;base64") >= 4

    # Nothing to do when nothing changed.
    assert planned_jobs(run_snakemake(wd, "-n", "results/report.html")) == {}
    # Editing one fit key reruns the fit, its section and the report, not the reconstruction or the download.
    override = tmp_path / "override.yaml"
    override.write_text(yaml.safe_dump({"chinchilla": {"fit": {"bootstrap_resamples": 9}}}))
    proc = run_snakemake(wd, "-n", "results/report.html", configfiles=("config/test.yaml", str(override)))
    assert planned_jobs(proc) == {
        "chinchilla_fit": 1,
        "chinchilla_compare": 1,
        "chinchilla_section": 1,
        "report": 1,
    }
