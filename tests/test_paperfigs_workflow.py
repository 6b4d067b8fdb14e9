"""The paper-figures stage end to end, and Snakemake's own report (``snakemake --report``) of its figures."""

from __future__ import annotations

import zipfile

import pytest
from _helpers import needs_shared_data
from _pipeline import overlay, run

pytestmark = [pytest.mark.workflow, needs_shared_data]


def test_paperfigs_stage_and_snakemake_report(tmp_path):
    from _helpers import REPO

    work = tmp_path / "run"
    work.mkdir()
    extra = overlay(tmp_path, "paperfigs_only", {"stages": ["paperfigs"], "paperfigs": {"law_n_boot": 50}})
    configs = [REPO / "config.yaml", REPO / "config" / "test.yaml", extra]
    run(work, "--cores", "2", "results/paperfigs/section.html", configs=configs, timeout=900)
    import json

    rows = json.loads((work / "results/paperfigs/headline.json").read_text())
    alpha = next(r for r in rows if r["quantity"].startswith("LLM loss vs width"))
    assert (
        "107 points plotted (of 108)" in alpha["note"]
        and "Qwen/Qwen2.5-72B on wikitext left out" in alpha["note"]
    )
    # 50 resamples (this overlay) are too few to read an error from: no verdict, and it says why
    assert alpha["verdict"] == "not tested" and "fewer than 200 resamples" in alpha["verdict_text"]
    assert alpha["err"] is None
    run(work, "--report", str(work / "report.zip"), configs=configs, timeout=600)
    names = zipfile.ZipFile(work / "report.zip").namelist()
    assert any(n.endswith("fig8a_overlaps.png") for n in names), names[:20]
    assert any(n.endswith("fig8b_width_law.png") for n in names), names[:20]
