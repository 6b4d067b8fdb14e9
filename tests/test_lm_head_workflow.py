"""The LM-head stage end to end on the shared test run (the ``completed_run`` fixture): the packaged
SmolLM2 fetched from its PyPI wheel, its geometry, loss and report section, and a reference loss."""

from __future__ import annotations

import json
import pandas as pd
import pytest
import torch
from _pipeline import merged_config

from depthwidth.models.load import load_model

pytestmark = pytest.mark.workflow


@pytest.fixture(scope="module")
def done(completed_run):
    return completed_run


def test_packaged_smollm2_geometry_and_loss(done):
    geo = pd.read_csv(done / "results/lm_head/geometry.csv").set_index("model")
    r = geo.loc["smollm2-135m"]
    # SmolLM2-135M ties its head to the input embedding: 49152 tokens x width 576, 30 layers
    assert (r["V"], r["m"], r["width"], r["n_layers"]) == (49152, 576, 576, 30)
    assert r["matrix"] == "model.embed_tokens.weight" and bool(r["tied"])
    # strong superposition: every token has a direction (no near-zero rows)
    assert r["frac_near_zero"] == 0.0 and r["norm_min"] > 0.1 * r["norm_median"]
    loss = pd.read_csv(done / "results/lm_head/loss.csv")
    c = merged_config()["lm_head"]["loss"]
    # FineWeb documents are longer than max_tokens: each text gives max_tokens - 1 predictions
    assert loss["tokens"].sum() == c["n_texts"] * (c["max_tokens"] - 1)
    fit = json.loads((done / "results/lm_head/width_fit.json").read_text())
    assert fit["status"] == "skipped" and "1 distinct width" in fit["reason"]
    rows = json.loads((done / "results/lm_head/headline.json").read_text())
    assert rows[0]["value_text"] == "not fitted" and rows[0]["verdict"] == "not tested"
    assert "only 1 distinct width (576)" in rows[0]["verdict_text"]
    comparisons = pd.read_csv(done / "results/lm_head/comparisons.csv").set_index("key")
    assert comparisons.loc["m_overlap_smollm2-135m", "value"] == pytest.approx(r["m_times_mean_sq_overlap"])
    assert "m_overlap_smollm2-135m" not in {row["key"] for row in rows}  # shown in the section only
    assert (done / "results/lm_head/section.html").read_text().count("<img") == 4  # + token rank-frequency


def test_token_counts_stop_after_min_tokens(done):
    """SmolLM2's tokenizer on the mirrored FineWeb documents: counting stops at the document that reaches
    min_tokens (counted whole), so the total is at least min_tokens and less than one document more."""
    c = merged_config()["lm_head"]["token_frequencies"]
    corpus, tok = next(iter(c["corpora"])), c["tokenizers"][0]
    counts = pd.read_parquet(done / f"results/lm_head/token_counts/{corpus}/{tok}.parquet")
    summary = json.loads((done / f"results/lm_head/token_counts/{corpus}/{tok}.json").read_text())
    assert counts["count"].sum() == summary["n_tokens"] >= c["min_tokens"] and not summary["exhausted"]
    assert (
        counts["rank"].tolist() == list(range(1, len(counts) + 1)) and counts["count"].is_monotonic_decreasing
    )
    fit = pd.read_csv(done / "results/lm_head/token_frequency_fit.csv").iloc[0]
    assert (fit["rank_min"], fit["rank_max"]) == tuple(c["fit_ranks"])
    assert 0.7 < fit["alpha"] < 1.3 and fit["weak_alpha_m"] == pytest.approx(fit["alpha"] - 1)


def test_fetched_smollm2_matches_reference_loss(done):
    """The de-quantized GGUF reproduces the reference loss in shared/data/fineweb/SOURCE.md: 3.69 nats on
    the first 4 x 512 tokens of the FineWeb documents joined with EOS."""
    lm = load_model(done / "data/models/smollm2-135m")
    docs = json.loads((done / "data/raw/fineweb/fineweb_subset.json").read_text())
    ids: list[int] = []
    for d in docs[:20]:
        ids += lm.tokenizer(d["text"], add_special_tokens=False).input_ids + [lm.tokenizer.eos_token_id]
    x = torch.tensor(ids[:2048]).view(4, 512)
    with torch.inference_mode():
        loss = float(lm.model(x, labels=x).loss)
    assert loss == pytest.approx(3.69, abs=0.01)
