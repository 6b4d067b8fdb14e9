"""Hidden-state metrics: checked against direct computations from output_hidden_states, padding
isolation, every architecture family, checkpoint resume, and the statistics on synthetic data."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from depthwidth.download.fineweb import read_corpus
from depthwidth.hidden_states import extract as ex
from depthwidth.hidden_states.extract import extract, load_token_metrics, make_batches, pad_batch
from depthwidth.hidden_states.metrics import batch_metrics, find_parts
from depthwidth.hidden_states.stats import compositional_test, improvement_depth, token_clusters
from depthwidth.hidden_states.tiny import CONFIG_FAMILY, FAMILIES, tiny_model, tiny_tokenizer

from _helpers import SHARED_DATA

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def texts():
    path = SHARED_DATA / "fineweb" / "fineweb_subset.json"
    if path.is_file():
        return [d["text"] for d in read_corpus(path, limit=8)]
    rng = np.random.default_rng(0)  # no mirror: still real-looking, varied-length text
    words = "the of a layer model depth width token loss scaling , . ; and to is in".split()
    return [" ".join(rng.choice(words, size=int(rng.integers(20, 120)))) for _ in range(8)]


@pytest.fixture(scope="module")
def tok(texts):
    return tiny_tokenizer(texts, vocab_size=400)


def _batch(tok, texts, max_tokens=40):
    seqs = ex.tokenize(tok, texts, max_tokens)
    return seqs, *pad_batch(seqs, tok.pad_token_id)


def test_metrics_match_direct_computation(tok, texts):
    """Every metric equals a plain computation from output_hidden_states, position by position."""
    model = tiny_model("llama", vocab_size=len(tok), layers=4)
    seqs, ids, mask = _batch(tok, texts[:3])
    mask[1, 10:] = 0  # make one row short so that padding is present
    seqs[1] = seqs[1][:10]
    res = batch_metrics(find_parts(model), ids, mask)
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
    hs = out.hidden_states
    L = len(hs) - 1
    n = 0
    for b, s in enumerate(seqs):
        for t in range(len(s) - 1):  # positions whose successor is a real token
            h = [hs[l][b, t] for l in range(L + 1)]
            d = [h[l + 1] - h[l] for l in range(L)]
            ang = lambda a, c: math.acos(max(-1.0, min(1.0, F.cosine_similarity(a, c, dim=0).item())))  # noqa: E731
            assert res["row"][n] == b and res["position"][n] == t
            for l in range(L):
                assert res["theta"][n, l].item() == pytest.approx(ang(h[l], h[l + 1]), abs=2e-4)
                assert res["angle_to_last"][n, l].item() == pytest.approx(ang(h[l], h[L]), abs=2e-4)
            for l in range(L - 1):
                assert res["theta_dh"][n, l].item() == pytest.approx(ang(d[l], d[l + 1]), abs=2e-4)
            for l in range(L + 1):
                assert res["norm"][n, l].item() == pytest.approx(h[l].norm().item(), rel=1e-5)
                s_l = torch.dot(h[l] - h[0], h[L] - h[0]) / (h[L] - h[0]).norm() ** 2
                assert res["progress"][n, l].item() == pytest.approx(s_l.item(), abs=1e-5)
                logits = model.lm_head(h[l] if l == L else model.model.norm(h[l]))
                ce = F.cross_entropy(logits[None], ids[b, t + 1][None]).item()
                assert res["loss_logit_lens"][n, l].item() == pytest.approx(ce, abs=1e-4)
            n += 1
    assert n == res["theta"].shape[0] == sum(len(s) - 1 for s in seqs)


@pytest.mark.parametrize("family", ["llama", "gpt_neox"])
def test_last_block_loss_equals_truncated_model(tok, texts, family):
    """loss_last_block[:, l] is the loss of the model that keeps blocks 0..l-1 and the last block."""
    model = tiny_model(family, vocab_size=len(tok), layers=4)
    seqs, ids, mask = _batch(tok, texts[:2], max_tokens=24)
    res = batch_metrics(find_parts(model), ids, mask)
    L = 4
    valid = mask[:, :-1].bool() & mask[:, 1:].bool()
    blocks = model.base_model.layers
    for l in range(L):
        short = copy.deepcopy(model)
        short.base_model.layers = torch.nn.ModuleList(
            [copy.deepcopy(b) for b in list(blocks[:l]) + [blocks[-1]]]
        )
        short.config.num_hidden_layers = l + 1
        with torch.no_grad():
            logits = short(input_ids=ids, attention_mask=mask, use_cache=False).logits[:, :-1][valid]
        ce = F.cross_entropy(logits, ids[:, 1:][valid], reduction="none")
        assert torch.allclose(res["loss_last_block"][:, l], ce, atol=1e-4), l


def test_padding_never_leaks(tok, texts):
    """A document's metrics are the same alone and batched with longer, padded neighbours."""
    model = tiny_model("qwen2", vocab_size=len(tok), layers=3)
    parts = find_parts(model)
    seqs = ex.tokenize(tok, texts[:4], 48)
    short = min(range(4), key=lambda i: len(seqs[i]))
    alone = batch_metrics(parts, *pad_batch([seqs[short]]))
    ids, mask = pad_batch(seqs, pad_id=7)  # an ordinary token as pad: only the mask may hide it
    together = batch_metrics(parts, ids, mask)
    rows = together["row"] == short
    assert int(rows.sum()) == len(seqs[short]) - 1 == alone["theta"].shape[0]
    for k in ("theta", "theta_dh", "norm", "progress", "loss_logit_lens", "loss_last_block"):
        assert torch.allclose(together[k][rows], alone[k], atol=1e-4), k
    # Computed without autograd: a forward that records a graph keeps every activation (GBs on CPU).
    assert together["theta"].is_inference() and not together["loss_last_block"].requires_grad
    # No kept position is a pad or has a pad successor.
    assert together["theta"].shape[0] == sum(len(s) - 1 for s in seqs)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_goes_through_extraction(tmp_path, tok, texts, family):
    model = tiny_model(family, vocab_size=len(tok), layers=3)
    out = tmp_path / "m.safetensors"
    s = extract(
        model,
        tok,
        texts[:5],
        list(range(10, 15)),
        out,
        model_name=family,
        max_tokens=32,
        batch_tokens=64,
        keep_raw_tokens=4,
    )
    t, summary, strings = load_token_metrics(out)
    n_expected = sum(len(x) - 1 for x in ex.tokenize(tok, texts[:5], 32))
    L = 3
    assert s["n_tokens"] == summary["n_tokens"] == n_expected == t["theta"].shape[0]
    assert t["theta"].shape == (n_expected, L) and t["theta_dh"].shape == (n_expected, L - 1)
    assert t["norm"].shape == (n_expected, L + 1)
    assert float(t["theta"].min()) >= 0 and float(t["theta"].max()) <= math.pi
    assert torch.allclose(t["progress"][:, 0], torch.zeros(n_expected), atol=1e-6)
    assert torch.allclose(t["progress"][:, -1], torch.ones(n_expected), atol=1e-4)
    assert sorted(set(t["doc_index"].tolist())) == list(range(10, 15))
    assert t["raw_hidden"].shape == (4, L + 1, 32)
    assert all(int(i) in strings for i in t["token_id"].unique())
    if family == "bert":
        assert "loss_logit_lens" not in t and summary["losses"] == []
    else:
        # The last logit-lens column is the model's own loss: compare with transformers' mean loss.
        for d in range(10, 15):
            ids = torch.tensor([ex.tokenize(tok, [texts[d - 10]], 32)[0]])
            with torch.no_grad():
                ref = model.float()(input_ids=ids, labels=ids).loss.item()
            mine = t["loss_logit_lens"][t["doc_index"] == d, -1].mean().item()
            assert mine == pytest.approx(ref, rel=1e-4)
        assert torch.allclose(t["loss_last_block"][:, -1], t["loss_logit_lens"][:, -1])


def test_extraction_resumes_from_checkpoint_parts(tmp_path, tok, texts, monkeypatch):
    model = tiny_model("llama", vocab_size=len(tok), layers=3)
    kw = dict(model_name="m", max_tokens=32, batch_tokens=40, checkpoint_every_s=0.0)
    ref = tmp_path / "ref.safetensors"
    extract(model, tok, texts, list(range(8)), ref, **kw)
    n_batches = len(make_batches([len(s) for s in ex.tokenize(tok, texts, 32)], 40))
    assert n_batches >= 4
    calls = {"n": 0}
    real = ex.batch_metrics

    def dies_after_two(*a, **k):
        calls["n"] += 1
        if calls["n"] > 2:
            raise KeyboardInterrupt("killed")
        return real(*a, **k)

    out = tmp_path / "run.safetensors"
    monkeypatch.setattr(ex, "batch_metrics", dies_after_two)
    with pytest.raises(KeyboardInterrupt):
        extract(model, tok, texts, list(range(8)), out, **kw)
    assert not out.exists() and len(list((tmp_path / "run.safetensors.parts").glob("part-*"))) == 2
    calls["n"] = -1000  # the restart must compute only the missing batches
    extract(model, tok, texts, list(range(8)), out, **kw)
    assert calls["n"] == -1000 + n_batches - 2
    a, _, _ = load_token_metrics(ref)
    b, _, _ = load_token_metrics(out)
    for k in a:
        assert torch.equal(a[k], b[k]), k
    assert not (tmp_path / "run.safetensors.parts").exists()


def test_smooth_bulk_rule_finds_planted_outliers():
    """1000 tokens share a smooth profile with noise; 4 tokens have a spike: exactly those 4 are outliers."""
    rng = np.random.default_rng(1)
    depth = np.linspace(0, 1, 24)
    smooth = 0.3 + 0.2 * depth
    bulk = smooth + rng.normal(0, 0.02, size=(1000, 24)) + rng.normal(0, 0.03, size=(1000, 1))
    spikes = smooth + rng.normal(0, 0.02, size=(4, 24))
    spikes[:, 2] += 1.2
    theta = np.vstack([bulk, spikes])
    cl = token_clusters(theta, n_components=2, max_distance=6.0, n_clusters=2)
    assert cl.bulk.sum() == 1000
    assert not cl.bulk[-4:].any()
    assert cl.bulk.mean() == pytest.approx(1000 / 1004)
    assert (cl.labels[-4:] == 1).all() and (cl.labels[:1000] == 0).all()


def test_improvement_depth_separates_gradual_from_early_gains():
    depth = np.arange(1, 11) / 10
    gradual = np.tile(1.0 / depth, (50, 1))  # loss ∝ 1/l, as ensemble averaging predicts
    early = np.tile(np.where(depth <= 0.2, 5.0 - 20 * depth, 1.0), (50, 1))  # done at 0.2 L
    d_grad = improvement_depth(gradual, depth, 0.9)
    d_early = improvement_depth(early, depth, 0.9)
    # 1/l falls to within 10 % of its total gain (9 nats) from l/L = 0.6 on: 1/0.6 - 1 = 0.67 <= 0.9
    assert np.allclose(d_grad, 0.6) and np.allclose(d_early, 0.2)
    assert compositional_test(gradual, depth)["share_done_by_early"] == 0.0
    assert compositional_test(early, depth)["share_done_by_early"] == 1.0
    flat = np.ones((3, 10))
    assert np.isnan(improvement_depth(flat, depth)).all()


def test_loss_stride_keeps_exactly_the_selected_layers(tok, texts):
    """A loss stride computes a subset of the columns, identical to the full computation there."""
    model = tiny_model("llama", vocab_size=len(tok), layers=5)
    parts = find_parts(model)
    _, ids, mask = _batch(tok, texts[:2], max_tokens=20)
    full = batch_metrics(parts, ids, mask)
    some = batch_metrics(parts, ids, mask, loss_stride=2)
    assert some["loss_logit_lens_layers"].tolist() == [0, 2, 4, 5]
    assert some["loss_last_block_layers"].tolist() == [0, 2, 4]
    for v in ("logit_lens", "last_block"):
        cols = some[f"loss_{v}_layers"].long()
        assert torch.allclose(some[f"loss_{v}"], full[f"loss_{v}"][:, cols], atol=1e-5)


def test_bfloat16_extraction_agrees_with_float32(tmp_path, tok, texts):
    """The GPU setting (bf16 weights and activations) on the CPU: same tokens, and metrics within
    bf16 rounding of the float32 run (angles computed from bf16 states, losses from bf16 logits)."""
    model = tiny_model("qwen2", vocab_size=len(tok), layers=4)
    runs = {}
    for dt in ("float32", "bfloat16"):
        out = tmp_path / f"{dt}.safetensors"
        extract(
            copy.deepcopy(model),
            tok,
            texts[:4],
            list(range(4)),
            out,
            model_name="qwen2",
            max_tokens=48,
            batch_tokens=96,
            dtype=dt,
            device="cpu",
        )
        runs[dt], summary, _ = load_token_metrics(out)
        assert summary["dtype"] == dt
    a, b = runs["float32"], runs["bfloat16"]
    assert torch.equal(a["token_id"], b["token_id"]) and torch.equal(a["position"], b["position"])
    for k in ("theta", "theta_dh", "angle_to_last"):
        diff = (a[k] - b[k]).abs()
        assert float(diff.mean()) < math.radians(1.0), k  # bf16 keeps ~3 significant digits
        assert float(diff.max()) < math.radians(10.0), k
    rel = ((a["norm"] - b["norm"]).abs() / a["norm"]).mean()
    assert float(rel) < 0.01
    lens = (a["loss_logit_lens"] - b["loss_logit_lens"]).abs().mean() / a["loss_logit_lens"].abs().mean()
    assert float(lens) < 0.02


@pytest.mark.parametrize("family", ["gpt_neox", "llama"])
def test_paper_mask_sees_future_tokens_and_causal_does_not(tok, texts, family):
    """The paper's padding-only mask lets the last block at l ≤ L-2 see later tokens: changing a document's
    last token moves the loss at its earlier positions. The causal re-run and the model's own column
    (l = L-1) do not move. Padding stays hidden under both masks."""
    model = tiny_model(family, vocab_size=len(tok), layers=4)
    parts = find_parts(model)
    seqs, ids, mask = _batch(tok, texts[:3], max_tokens=24)
    mask[1, 10:] = 0  # a padded row
    seqs[1] = seqs[1][:10]
    n = int(mask[0].sum())
    changed = ids.clone()
    changed[0, n - 1] = (ids[0, n - 1] + 1) % len(tok)
    for kind, leaks in (("causal", False), ("padding_only", True)):
        a = batch_metrics(parts, ids, mask, last_block_mask=kind)
        b = batch_metrics(parts, changed, mask, last_block_mask=kind)
        early = (a["row"] == 0) & (a["position"] < n - 2)  # targets unchanged, the changed token is later
        moved = (a["loss_last_block"][early] - b["loss_last_block"][early]).abs()
        assert (float(moved[:, :-1].max()) > 1e-4) == leaks, kind
        assert float(moved[:, -1].max()) < 1e-5, kind
        alone = batch_metrics(parts, *pad_batch([seqs[1]]), last_block_mask=kind)
        assert torch.allclose(a["loss_last_block"][a["row"] == 1], alone["loss_last_block"], atol=1e-4), kind
    with pytest.raises(ValueError, match="last_block_mask"):
        batch_metrics(parts, ids, mask, last_block_mask="none")


def _saved_model(folder, family, tok, **kw):
    """A tiny float32 model of ``family`` saved with its tokenizer in ``folder``, and fetched as the local
    model ``folder/m`` (manifest), so that load_model reads it."""
    from depthwidth.models.fetch import fetch_model
    from depthwidth.models.load import model_spec

    model = tiny_model(family, vocab_size=len(tok), **kw)
    model.save_pretrained(folder / "w")
    tok.save_pretrained(folder / "w")
    spec = model_spec("t", {"source": "local", "path": str(folder / "w"), "family": CONFIG_FAMILY[family]})
    fetch_model(spec, folder / "m")
    return model


def _rotary_buffers(model):
    return {n: b for n, b in model.named_buffers() if n.endswith("inv_freq")}


@pytest.mark.parametrize("family", ["llama", "gpt_neox"])
def test_bf16_extraction_loads_as_the_paper_and_keeps_inv_freq_float32(
    tmp_path, tok, texts, family, monkeypatch
):
    """In bf16 the model is loaded as the paper's scripts load it (from_pretrained(torch_dtype=bf16)): the
    rotary inv_freq stays float32 and the per-token metrics equal, bit for bit, those of the paper's load,
    both through the rule's function (hidden_states_extract on a fetched model) and for an in-memory float32
    model that extract casts. A cast of the whole model (.to(bf16)) rounds inv_freq and moves the angles."""
    import pandas as pd
    from transformers import AutoModelForCausalLM

    import depthwidth.download.fineweb as fineweb
    import depthwidth.models.load as models_load

    model = _saved_model(tmp_path, family, tok, hidden=64, heads=2, layers=3)
    seqs = ex.tokenize(tok, texts[:4], 160)
    order = sorted(range(4), key=lambda i: -len(seqs[i]))  # extract's batch order: one batch, longest first
    docs, seqs = [texts[:4][i] for i in order], [seqs[i] for i in order]
    assert len(seqs[0]) >= 120  # long enough for the rounding of inv_freq to move the phases

    paper = AutoModelForCausalLM.from_pretrained(tmp_path / "w", torch_dtype=torch.bfloat16).eval()
    assert all(b.dtype == torch.float32 for b in _rotary_buffers(paper).values())
    ids, mask = pad_batch(seqs, tok.pad_token_id)
    ref = batch_metrics(find_parts(paper), ids, mask)

    monkeypatch.setattr(
        fineweb, "read_shards", lambda paths, limit: pd.DataFrame({"doc_index": range(4), "text": docs})
    )
    loaded, load_model = [], models_load.load_model  # the model the rule loads

    def spy(*args, **kw):
        lm = load_model(*args, **kw)
        loaded.append((lm.model, next(lm.model.parameters()).dtype))
        return lm

    monkeypatch.setattr(models_load, "load_model", spy)
    params = {"n_docs": 4, "max_tokens": 160, "losses": ["logit_lens", "last_block"], "loss_stride": 1,
              "last_block_mask": "causal", "angle_precision": "float32", "device": "cpu", "dtype": "bfloat16",
              "keep_raw_tokens": 0}  # fmt: skip
    speed = {
        "batch_tokens": 4096,
        "max_batch_docs": 256,
        "loss_chunk_tokens": 4096,
        "checkpoint_every_s": 120,
    }
    ex.hidden_states_extract([], tmp_path / "m/manifest.json", tmp_path / "rule.safetensors", model_name="t",
                             params=params, speed=speed)  # fmt: skip
    mem = copy.deepcopy(model)
    extract(mem, tok, docs, list(range(4)), tmp_path / "mem.safetensors", model_name="t", max_tokens=160,
            batch_tokens=4096, dtype="bfloat16", device="cpu")  # fmt: skip
    assert loaded[0][1] == torch.bfloat16  # loaded in bf16, not loaded in float32 and cast
    for m in (loaded[0][0], mem):
        bufs = _rotary_buffers(m)
        assert bufs and all(b.dtype == torch.float32 for b in bufs.values())
    for name in ("rule", "mem"):
        got = load_token_metrics(tmp_path / f"{name}.safetensors")[0]
        for k in ("theta", "theta_dh", "angle_to_last", "norm", "loss_logit_lens", "loss_last_block"):
            assert torch.equal(got[k], ref[k].float()), (name, k)
    cast = copy.deepcopy(model).to(torch.bfloat16)  # the whole-model cast: inv_freq rounded to bf16
    assert any(b.dtype == torch.bfloat16 for b in _rotary_buffers(cast).values())
    moved = (batch_metrics(find_parts(cast), ids, mask)["theta"].float() - ref["theta"].float()).abs()
    assert float(moved.max()) > math.radians(0.1)


@pytest.mark.parametrize("family", FAMILIES)
def test_cast_like_pretrained_matches_from_pretrained(tmp_path, tok, family):
    """cast_like_pretrained on a float32 model gives every parameter and buffer the dtype and value that
    from_pretrained(dtype=bf16) of the saved model gives it, for every family of the tiny models."""
    import transformers as T

    from depthwidth.models.load import cast_like_pretrained

    model = tiny_model(family, vocab_size=len(tok), layers=2)
    model.save_pretrained(tmp_path)
    cls = T.AutoModel if family == "bert" else T.AutoModelForCausalLM
    paper = cls.from_pretrained(tmp_path, torch_dtype=torch.bfloat16)
    ours = cast_like_pretrained(copy.deepcopy(model), torch.bfloat16)
    want = dict(paper.named_buffers()) | dict(paper.named_parameters())
    got = dict(ours.named_buffers()) | dict(ours.named_parameters())
    assert sorted(got) == sorted(want)
    for name, t in want.items():
        assert got[name].dtype == t.dtype and torch.equal(got[name], t), name
    assert {str(t.dtype) for t in ours.parameters()} == {"torch.bfloat16"}


def _rotated(theta_deg: float, d: int = 1024, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows a and b (1, d) at the angle ``theta_deg``: b is a turned towards a random orthogonal direction."""
    g = torch.Generator().manual_seed(seed)
    a, r = torch.randn(2, d, generator=g, dtype=torch.float64)
    a = a / a.norm()
    r = r - (r @ a) * a
    t = math.radians(theta_deg)
    b = math.cos(t) * a + math.sin(t) * r / r.norm()
    return (3.0 * a[None]).float(), (5.0 * b[None]).float()


def test_paper_angle_precision_quantises_small_angles():
    """angle_precision paper_bf16 computes the cosine in bf16, as the paper's scripts: on width-1024 states
    1°-3° read 0, 4°-5° read 5.07° (the cosine 1 - 2^-8) and 7° reads 7.17° (1 - 2^-7); float32 keeps them
    exact to 0.002°."""
    from depthwidth.hidden_states.metrics import angle, paper_angle

    step1, step2 = (math.degrees(math.acos(1 - 2.0**-k)) for k in (8, 7))
    assert (round(step1, 2), round(step2, 2)) == (5.07, 7.17)
    want = {1.0: 0.0, 2.0: 0.0, 3.0: 0.0, 4.0: step1, 4.5: step1, 5.0: step1, 7.0: step2}
    for deg, paper_deg in want.items():
        for seed in range(3):
            a, b = _rotated(deg, seed=seed)
            assert math.degrees(float(angle(a, b))) == pytest.approx(deg, abs=2e-3), deg
            assert math.degrees(float(paper_angle(a, b))) == pytest.approx(paper_deg, abs=1e-3), deg
    with pytest.raises(ValueError, match="angle_precision"):
        batch_metrics(None, torch.zeros(1, 2, dtype=torch.long), torch.ones(1, 2), angle_precision="bf16")


def test_paper_angle_precision_in_extraction(tmp_path, tok, texts):
    """Through extract: paper_bf16 angles equal the paper's formula applied to the model's bf16 hidden states
    (cosine_similarity in bf16, Δh as a bf16 difference, arccos in float32); norms, progress and losses are
    those of the float32 setting, and the summary says which precision was used."""
    model = tiny_model("qwen2", vocab_size=len(tok), layers=3)
    runs = {}
    for prec in ("float32", "paper_bf16"):
        out = tmp_path / f"{prec}.safetensors"
        s = extract(copy.deepcopy(model), tok, texts[:3], [0, 1, 2], out, model_name="q", max_tokens=40,
                    batch_tokens=4096, dtype="bfloat16", device="cpu", angle_precision=prec)  # fmt: skip
        assert s["angle_precision"] == prec
        runs[prec] = load_token_metrics(out)[0]
    a, p = runs["float32"], runs["paper_bf16"]
    for k in ("norm", "progress", "loss_logit_lens", "loss_last_block"):
        assert torch.equal(a[k], p[k]), k
    assert not torch.equal(a["theta"], p["theta"])
    # the paper's formula on the states of the same bf16 model, one document at a time (no padding)
    bf = ex.cast_like_pretrained(copy.deepcopy(model), torch.bfloat16)
    seqs = ex.tokenize(tok, texts[:3], 40)

    def paper(x, y):
        return F.cosine_similarity(x, y, dim=-1).clamp(min=-1.0, max=1.0).to(torch.float32).acos()

    for d, s in enumerate(seqs):
        with torch.no_grad():
            hs = bf(input_ids=torch.tensor([s]), output_hidden_states=True).hidden_states
        hs = [h[0, :-1] for h in hs]
        L = len(hs) - 1
        theta = torch.stack([paper(hs[l], hs[l + 1]) for l in range(L)], 1)
        dh = [hs[l + 1] - hs[l] for l in range(L)]
        theta_dh = torch.stack([paper(dh[l], dh[l + 1]) for l in range(L - 1)], 1)
        to_last = torch.stack([paper(hs[l], hs[L]) for l in range(L)], 1)
        rows = p["doc_index"] == d
        for k, ref in (("theta", theta), ("theta_dh", theta_dh), ("angle_to_last", to_last)):
            assert torch.allclose(p[k][rows], ref, atol=1e-6), (d, k)


def test_section_says_how_the_angles_were_computed():
    from depthwidth.hidden_states.section import precision_note

    paper = precision_note({"a": {"extraction": {"angle_precision": "paper_bf16"}}})
    ours = precision_note({"a": {"extraction": {"angle_precision": "float32"}}})
    assert "All angles shown" in paper and "paper_bf16" in paper and "5.07°" in paper
    assert "computed in float32" in ours and "All angles" not in ours


def test_bulk_share_error_resamples_documents_not_tokens():
    """Outliers that come whole documents at a time (40 documents, 4 of them odd): the bootstrap over
    documents gives about the error of a share of 40 documents, several times the binomial error of
    2000 independent tokens, which the tokens are not."""
    from depthwidth.hidden_states.stats import bulk_share_bootstrap, token_clusters

    rng = np.random.default_rng(0)
    depth = np.linspace(0, 1, 12)
    smooth = 0.2 + 0.05 * np.sin(3 * depth)
    theta = smooth + rng.normal(0, 0.01, (2000, 12))
    doc = np.repeat(np.arange(40), 50)
    theta[doc < 4] += 0.5 * depth  # whole documents with another profile
    share = token_clusters(theta).bulk.mean()
    assert share == pytest.approx(0.9)
    boot = bulk_share_bootstrap(theta, doc, 300, seed=1)
    binomial = np.sqrt(share * (1 - share) / len(theta))
    assert np.isfinite(boot).all() and np.std(boot) > 4 * binomial
    assert np.std(boot) == pytest.approx(np.sqrt(0.9 * 0.1 / 40), rel=0.3)


def test_bulk_share_compared_only_in_the_papers_setting():
    from depthwidth import verdicts as v
    from depthwidth.hidden_states.compare import bulk_comparison, words_comparisons

    shares = list(np.random.default_rng(0).normal(0.995, 0.002, 400))
    s = {
        "n_tokens": 5000,
        "bulk_share": 0.995,
        "bulk_share_err": 0.001,
        "bulk_share_bootstrap": {"unit": "documents", "n_docs": 50, "shares": shares},
        "bulk_rule": {"max_robust_distance": 6.0, "n_components": 2},
        "extraction": {"architecture": "GPTNeoXForCausalLM", "max_tokens": 1024, "n_docs": 50},
        "middle": [0.25, 0.75],
        "middle_means_rad": {"theta": 0.3, "theta_dh": 1.6},
    }
    c = bulk_comparison("pythia", s)
    assert c.verdict == v.YES and c.err == pytest.approx(0.2, rel=0.15)  # percent
    assert c.err_unit == "documents" and c.err_resamples == 400 and "bootstrap interval" in c.test
    llama = bulk_comparison(
        "smollm", {**s, "extraction": {"architecture": "LlamaForCausalLM", "max_tokens": 256}}
    )
    assert (
        llama.verdict == v.NOT_TESTED and "LlamaForCausalLM on documents of at most 256" in llama.verdict_text
    )
    far = bulk_comparison(
        "pythia", {**s, "bulk_share_bootstrap": {"unit": "documents", "shares": [x - 0.05 for x in shares]}}
    )
    assert far.verdict == v.NO
    words = words_comparisons("pythia", s)
    assert [w.verdict for w in words] == [v.NOT_TESTED] * 2 and "in words" in words[0].verdict_text
    assert words[1].value == pytest.approx(1.6 * 180 / np.pi)
