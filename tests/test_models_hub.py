"""Models from the Hugging Face hub (``source: hub``, as every model of config/paper.yaml), proven
offline. Tiny random decoders of every family the hidden-states stage supports, with their tokenizer, are
written into a Hugging Face cache laid out as the hub client lays out a download (blobs, snapshot
symlinks, refs/main; ``hidden_states.tiny.save_to_hub_cache``). With ``HF_HOME`` on that cache and
``HF_HUB_OFFLINE=1``:

- every family goes through ``fetch_model`` and ``load_model`` in-process: shapes, tokenizer and logits
  are those of the model written;
- one family (GPT-NeoX, the Pythias' architecture) runs the hidden-states and LM-head stages end to end
  through Snakemake, and the outputs are checked against the tiny model's depth, width and vocabulary.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from _pipeline import run
from _helpers import REPO, SHARED_DATA

from depthwidth.download.fineweb import read_corpus
from depthwidth.hidden_states.extract import load_token_metrics
from depthwidth.hidden_states.tiny import (
    CONFIG_FAMILY,
    DECODER_FAMILIES,
    save_to_hub_cache,
    tiny_model,
    tiny_tokenizer,
)

MIRROR = SHARED_DATA / "fineweb" / "fineweb_subset.json"
pytestmark = pytest.mark.skipif(not MIRROR.is_file(), reason=f"no FineWeb mirror at {MIRROR}")

# a different depth per family, so that a model loaded in place of another shows
LAYERS = {"gpt_neox": 3, "qwen2": 2, "opt": 4, "llama": 5, "gpt2": 6}
WIDTH = 32
ORG = "tiny-org"
E2E = "gpt_neox"  # the family run through Snakemake


def _name(family: str) -> str:
    return "tiny-" + family.replace("_", "-")


def _entry(family: str) -> dict:
    return {
        "source": "hub",
        "id": f"{ORG}/{_name(family)}",
        "revision": "main",
        "family": CONFIG_FAMILY[family],
    }


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    """HF_HOME holding one tiny random decoder per family (and the tokenizer), hub layout."""
    home = tmp_path_factory.mktemp("hf_home")
    tok = tiny_tokenizer([d["text"] for d in read_corpus(MIRROR, limit=20)], vocab_size=300)
    models = {}
    for i, fam in enumerate(DECODER_FAMILIES):
        models[fam] = tiny_model(fam, vocab_size=len(tok), hidden=WIDTH, layers=LAYERS[fam], seed=i)
        save_to_hub_cache(home, f"{ORG}/{_name(fam)}", models[fam], tok)
    return home, tok, models


def test_the_cache_has_the_hub_layout(hub):
    home, _, _ = hub
    repo = home / "hub" / f"models--{ORG}--{_name(E2E)}"
    commit = (repo / "refs" / "main").read_text()
    snap = repo / "snapshots" / commit
    assert len(commit) == 40 and snap.is_dir()
    files = {p.name: p for p in snap.iterdir()}
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= set(files)
    for p in files.values():  # every snapshot file is a relative link to a blob named by its hash
        assert p.is_symlink() and not Path(p.readlink()).is_absolute()
        assert p.resolve().parent == repo / "blobs"
    # weights are LFS files, named by their SHA-256 (64 hex digits); small files by git's SHA-1 (40)
    assert (
        len(files["model.safetensors"].resolve().name) == 64
        and len(files["config.json"].resolve().name) == 40
    )


def test_every_family_loads_from_the_hub_cache(hub, tmp_path, monkeypatch):
    import huggingface_hub.constants as hf_constants

    from depthwidth.models.fetch import fetch_model
    from depthwidth.models.load import ModelError, config_shape, load_model, model_spec

    home, tok, models = hub
    # huggingface_hub reads HF_HOME and HF_HUB_OFFLINE when imported: set the module's copies as well
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(hf_constants, "HF_HUB_CACHE", str(home / "hub"))
    monkeypatch.setattr(hf_constants, "HF_HUB_OFFLINE", True)
    text = "The quick brown fox jumps over the lazy dog."
    ids = torch.tensor([tok(text).input_ids])
    for fam in DECODER_FAMILIES:
        name, entry = _name(fam), _entry(fam)
        man = fetch_model(model_spec(name, entry), tmp_path / name, allow_network=False)
        repo = home / "hub" / f"models--{ORG}--{name}"
        assert man["origin"] == f"hub:{entry['id']}@main" and man["format"] == "hf"
        assert Path(man["hf_dir"]) == repo / "snapshots" / (repo / "refs" / "main").read_text()
        assert config_shape(tmp_path / name) == (LAYERS[fam], WIDTH)
        lm = load_model(tmp_path / name)
        info = lm.info
        assert (info.model_type, info.family) == (fam, CONFIG_FAMILY[fam])
        assert (info.n_layers, info.width, info.vocab_size, info.causal) == (
            LAYERS[fam],
            WIDTH,
            len(tok),
            True,
        )
        assert lm.tokenizer(text).input_ids == ids[0].tolist()
        with torch.inference_mode():
            assert torch.equal(lm.model(ids).logits, models[fam](ids).logits), fam
    # an id the cache does not hold: the error says what was tried and how to fix it, and nothing is fetched
    with pytest.raises(
        ModelError, match=r"(?s)HF cache \(HF_HOME\).*not tried \(data.allow_network is false\).*Fix:"
    ):
        fetch_model(
            model_spec("absent", _entry(E2E) | {"id": f"{ORG}/absent"}),
            tmp_path / "absent",
            allow_network=False,
        )
    assert not (tmp_path / "absent" / "manifest.json").exists()


@pytest.mark.workflow
def test_hub_model_through_both_stages_with_snakemake(hub, tmp_path):
    """model_fetch, fineweb_shards, hidden_states_extract, lm_head_corpus/geometry/loss on a ``source: hub``
    model, offline, in a fresh working folder (the statistics and sections only read these outputs)."""
    home, tok, _ = hub
    name, L, V = _name(E2E), LAYERS[E2E], len(tok)
    overlay = {
        "stages": ["hidden_states", "lm_head"],
        "data": {"allow_network": False},
        "models": {name: _entry(E2E)},
        "hidden_states": {
            "corpus": {"name": "hub-4", "source": "fineweb", "n_docs": 4, "docs_per_shard": 4},
            "models": [name],
            "max_tokens": 24,
        },
        "lm_head": {"models": [name], "loss": {"n_texts": 2, "max_tokens": 16}},
    }
    cfg = tmp_path / "hub.yaml"
    cfg.write_text(yaml.safe_dump(overlay))
    wd = tmp_path / "wd"
    wd.mkdir()
    targets = [
        f"results/hidden_states/{name}/token_metrics.safetensors",
        f"results/lm_head/geometry/{name}.json",
        f"results/lm_head/loss/fineweb/{name}.json",
    ]
    offline = {
        "HF_HOME": str(home),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }
    run(
        wd,
        "--cores",
        "2",
        *targets,
        # one thread per job: the tiny model needs no more, and the three model jobs (extraction,
        # geometry, loss), each mostly importing torch, then share the 2 cores (~45 s instead of ~90 s)
        "--set-threads",
        "hidden_states_extract=1",
        "lm_head_geometry=1",
        "lm_head_loss=1",
        configs=[REPO / "config.yaml", REPO / "config" / "test.yaml", cfg],
        extra_env=offline,
        timeout=300,
    )
    man = json.loads((wd / "data/models" / name / "manifest.json").read_text())
    repo = home / "hub" / f"models--{ORG}--{name}"
    assert man["origin"] == f"hub:{ORG}/{name}@main"
    assert man["hf_dir"] == str(repo / "snapshots" / (repo / "refs" / "main").read_text())

    # hidden states: per token, one θ per layer, one θ^Δ per pair of layers, one norm per state
    # (embeddings + L), and the logit-lens loss at every loss_stride-th layer, the last included
    t, summary, _ = load_token_metrics(wd / "results/hidden_states" / name / "token_metrics.safetensors")
    n = summary["n_tokens"]
    assert summary["n_layers"] == L and n == t["theta"].shape[0] > 4 * 5
    assert t["theta"].shape == (n, L) and t["theta_dh"].shape == (n, L - 1) and t["norm"].shape == (n, L + 1)
    assert torch.isfinite(t["loss_logit_lens"]).all() and t["loss_logit_lens"].shape[0] == n
    assert torch.allclose(t["progress"][:, -1], torch.ones(n), atol=1e-4)

    # LM head: V rows of width m (the tiny model ties nothing: its own head), every row a direction
    geo = json.loads((wd / "results/lm_head/geometry" / f"{name}.json").read_text())
    assert (geo["V"], geo["m"], geo["width"], geo["n_layers"]) == (V, WIDTH, WIDTH, L)
    norms = np.load(wd / "results/lm_head/geometry" / f"{name}_norms.npy")
    assert norms.shape == (V,) and np.isfinite(norms).all() and (norms > 0).all()

    # loss: 2 texts of 16 tokens give 15 predictions each; a random model is near uniform, ln V nats
    loss = json.loads((wd / "results/lm_head/loss/fineweb" / f"{name}.json").read_text())
    texts = pd.read_csv(wd / "results/lm_head/loss/fineweb" / f"{name}.csv")
    assert loss["tokens"] == texts["tokens"].sum() == 2 * 15
    assert math.isfinite(loss["loss_nats"]) and abs(loss["loss_nats"] - math.log(V)) < 1.0
    assert np.isfinite(texts["nll_nats"]).all()
