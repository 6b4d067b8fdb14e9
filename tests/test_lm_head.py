"""LM-head geometry, loss and width fit: identities, random baselines and known exponents."""

import math

import numpy as np
import pytest
import torch

from depthwidth.integrity import write_table
from depthwidth.lm_head.corpus import join_texts
from depthwidth.lm_head.geometry import (
    geometry,
    head_from_checkpoint,
    lm_head_matrix,
    mean_abs_overlap,
    mean_sq_overlap,
    mean_sq_overlap_bruteforce,
    produced_token_mask,
    row_norm_stats,
)
from depthwidth.lm_head.loss import corpus_loss, token_nll
from depthwidth.lm_head.width_fit import fit_width_law, width_law


def test_gram_identity_matches_pair_loop():
    rng = np.random.default_rng(1)
    w = rng.normal(size=(60, 7)) * rng.uniform(0.1, 3.0, size=(60, 1))  # unequal norms: normalisation matters
    fast = mean_sq_overlap(torch.tensor(w), chunk=16)  # several chunks
    slow = mean_sq_overlap_bruteforce(w)
    assert fast == pytest.approx(slow, rel=1e-12)
    assert 0.05 < fast < 0.5  # not trivially 0 or 1


@pytest.mark.parametrize("m", [32, 128])
def test_random_gaussian_rows_give_m_times_overlap_one(m):
    w = torch.randn(4000, m, generator=torch.Generator().manual_seed(m))
    row, norms = geometry(w, abs_rows=500)
    # E[(ŵ_i·ŵ_j)²] = 1/m exactly for isotropic directions; 4000 rows give ~1% scatter
    assert row["m_times_mean_sq_overlap"] == pytest.approx(1.0, abs=0.03)
    assert row["mean_abs_overlap"] == pytest.approx(
        row["mean_abs_overlap_random"], abs=4 * row["mean_abs_overlap_err"] + 1e-3
    )
    assert row["frac_near_zero"] == 0.0 and norms.shape == (4000,)


def test_sampled_abs_overlap_agrees_with_exact():
    w = (
        torch.randn(800, 16, generator=torch.Generator().manual_seed(3)) + 0.3
    )  # a shared offset: overlaps > random
    exact, e0 = mean_abs_overlap(w, method="exact", chunk=100)
    est, err = mean_abs_overlap(w, method="sample", n_rows=200, seed=1)
    assert e0 == 0.0 and 0 < err < 0.002
    assert abs(est - exact) < 4 * err
    # the full V x V matrix checks the exact chunked sum
    wn = (w / w.norm(dim=1, keepdim=True)).double()
    full = (wn @ wn.T).abs()
    assert exact == pytest.approx(float((full.sum() - 800) / (800 * 799)), rel=1e-6)


def test_weak_superposition_has_dead_rows_and_high_overlap():
    # half the tokens get no direction (norm ~0) and the rest share few directions: weak superposition
    rng = np.random.default_rng(0)
    w = np.concatenate([rng.normal(size=(500, 64)), 1e-4 * rng.normal(size=(500, 64))])
    stats = row_norm_stats(np.linalg.norm(w, axis=1))
    assert stats["frac_near_zero"] == pytest.approx(0.5)
    aligned = np.repeat(rng.normal(size=(4, 64)), 250, axis=0) + 0.1 * rng.normal(size=(1000, 64))
    assert 64 * mean_sq_overlap(torch.tensor(aligned)) > 10


def _tiny(family):
    import transformers as tf

    torch.manual_seed(0)
    common = {
        "vocab_size": 101,
        "hidden_size": 16,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "intermediate_size": 32,
    }
    kv = {"num_key_value_heads": 2}
    if family == "gpt2":
        return (
            tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=101, n_embd=16, n_layer=2, n_head=2)),
            "transformer.wte.weight",
            True,
        )
    if family == "opt":
        cfg = tf.OPTConfig(
            vocab_size=101,
            hidden_size=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            ffn_dim=32,
            word_embed_proj_dim=16,
        )
        return tf.OPTForCausalLM(cfg), "model.decoder.embed_tokens.weight", True
    if family == "opt-untied":  # OPT-66b does not tie
        cfg = tf.OPTConfig(
            vocab_size=101,
            hidden_size=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            ffn_dim=32,
            word_embed_proj_dim=16,
            tie_word_embeddings=False,
        )
        return tf.OPTForCausalLM(cfg), "lm_head.weight", False
    if family == "pythia":
        model = tf.GPTNeoXForCausalLM(tf.GPTNeoXConfig(**common))
        # checkpoints call it embed_out.weight; transformers >= 5 loads it into lm_head.weight
        return model, "lm_head.weight" if hasattr(model, "lm_head") else "embed_out.weight", False
    if family == "qwen2.5":
        return (
            tf.Qwen2ForCausalLM(tf.Qwen2Config(**common, **kv, tie_word_embeddings=True)),
            "model.embed_tokens.weight",
            True,
        )
    if family == "qwen2.5-7b":  # Qwen2.5 >= 7B has a separate lm_head
        return (
            tf.Qwen2ForCausalLM(tf.Qwen2Config(**common, **kv, tie_word_embeddings=False)),
            "lm_head.weight",
            False,
        )
    if family == "llama":
        return (
            tf.LlamaForCausalLM(tf.LlamaConfig(**common, **kv, tie_word_embeddings=True)),
            "model.embed_tokens.weight",
            True,
        )
    if family == "bert":
        return tf.BertModel(tf.BertConfig(**common)), "embeddings.word_embeddings.weight", True
    raise KeyError(family)


@pytest.mark.parametrize(
    "family", ["gpt2", "opt", "opt-untied", "pythia", "qwen2.5", "qwen2.5-7b", "llama", "bert"]
)
def test_right_matrix_for_each_architecture(family, tmp_path):
    model, want_name, want_tied = _tiny(family)
    # the checkpoint reader (used for big models) must pick the same matrix from the saved files, in
    # safetensors and in PyTorch's .bin format (OPT ships .bin)
    model.save_pretrained(tmp_path / "st")
    model.config.save_pretrained(
        tmp_path / "bin"
    )  # transformers 5 only writes safetensors: save .bin by hand
    torch.save(model.state_dict(), tmp_path / "bin/pytorch_model.bin")
    for fmt in ("st", "bin"):
        from_files = head_from_checkpoint(tmp_path / fmt, causal=family != "bert")
        assert from_files is not None and from_files.tied == want_tied
        assert torch.equal(from_files.weight, lm_head_matrix(model, causal=family != "bert").weight.detach())
    head = lm_head_matrix(model, causal=family != "bert")
    params = dict(model.named_parameters(remove_duplicate=False))
    assert head.name == want_name and head.tied == want_tied
    assert tuple(head.weight.shape) == (101, 16)
    assert torch.equal(head.weight, params[want_name].detach())
    if family != "bert":
        # the matrix must be the one that makes the logits: logits = h W^T
        ids = torch.tensor([[1, 5, 7]])
        out = model(ids, output_hidden_states=True)
        h = out.hidden_states[-1]
        assert torch.allclose(out.logits, h @ head.weight.T, atol=1e-5)


class _Tok:
    """Minimal tokenizer: one token per character, ids 0..9 used of a vocabulary of 12."""

    def get_vocab(self):
        return {str(i): i for i in range(10)}

    def __call__(self, text, return_tensors=None, truncation=True, max_length=None):
        ids = torch.tensor([[int(c) for c in text][:max_length]])
        return type("Enc", (), {"input_ids": ids})()


def test_produced_token_mask_drops_padding_rows():
    mask = produced_token_mask(_Tok(), 12)
    assert mask.sum() == 10 and not mask[10:].any()


def test_token_nll_is_token_weighted_cross_entropy():
    import transformers as tf

    torch.manual_seed(0)
    model = tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=12, n_embd=16, n_layer=1, n_head=2)).eval()
    texts = ["0123456789", "98765", "5"]
    res = token_nll(model, _Tok(), texts, max_tokens=8)
    assert [n for n, _ in res] == [7, 4, 0]  # truncated to 8 tokens: 7 predictions; one token: none
    ids = torch.tensor([[0, 1, 2, 3, 4, 5, 6, 7]])
    with torch.no_grad():
        mean_loss = float(model(ids, labels=ids).loss)  # transformers' own shifted mean
    assert res[0][1] / 7 == pytest.approx(mean_loss, rel=1e-5)
    # random init over 12 tokens: loss near ln 12
    assert res[1][1] / 4 == pytest.approx(math.log(12), abs=0.5)


def test_width_fit_recovers_known_alpha():
    rng = np.random.default_rng(0)
    alpha, A = 0.91, 60.0
    widths = np.array([512, 768, 1024, 2048, 4096, 5120, 7168])
    rows = []
    for fam, B in [("opt", 2.1), ("pythia", 2.4), ("qwen2.5", 1.9)]:
        for corpus, dB in [("wikitext", 0.0), ("c4", 0.3)]:
            for m in widths:
                rows.append((m, width_law(m, A, alpha, B + dB) + rng.normal(0, 0.01), f"{fam} / {corpus}"))
    m, y, g = map(np.array, zip(*rows))
    fit = fit_width_law(m, y, g)
    assert fit["status"] == "ok"
    assert fit["alpha_err"] < 0.1
    assert abs(fit["alpha"] - alpha) < 3 * fit["alpha_err"]
    # A and α are strongly correlated; the fitted curve itself must match the true one to the noise
    fitted = width_law(widths, fit["A"], fit["alpha"], fit["B"]["opt / wikitext"])
    assert np.max(np.abs(fitted - width_law(widths, A, alpha, 2.1))) < 0.02
    assert fit["B"]["pythia / c4"] == pytest.approx(2.7, abs=0.05)


def test_width_fit_skips_with_too_few_widths():
    fit = fit_width_law(
        [576, 576, 960], [3.7, 3.9, 3.3], ["llama / fineweb", "llama / wiki", "llama / fineweb"]
    )
    assert fit["status"] == "skipped" and "2 distinct width" in fit["reason"]
    fit = fit_width_law([576, 640, 960], [3.7, 3.5, 3.3], ["a", "b", "c"])
    assert fit["status"] == "skipped" and "two widths" in fit["reason"]


def test_join_texts_skips_blank_rows_and_joins_to_word_count():
    rows = ["", " = Title = ", "one two three", "\n", "four five", "six", "seven eight nine ten"]
    assert join_texts(rows, 10) == [
        " = Title = ",
        "one two three",
        "four five",
        "six",
        "seven eight nine ten",
    ]
    # the paper's wikitext handling: join rows until a chunk has >= join_words words
    assert join_texts(rows, 10, join_words=4) == [
        " = Title =  one two three",
        "four five six seven eight nine ten",
    ]
    assert join_texts(rows, 1, join_words=4) == [" = Title =  one two three"]


def test_shared_direction_raises_overlap_and_centering_removes_it():
    g = torch.Generator().manual_seed(5)
    m = 64
    w = torch.randn(3000, m, generator=g) + 2.0 * torch.randn(
        1, m, generator=g
    )  # anisotropic: a common offset
    row, _ = geometry(w, abs_rows=300)
    wn = (w / w.norm(dim=1, keepdim=True)).double()
    full = wn @ wn.T
    assert row["mean_overlap"] == pytest.approx(float((full.sum() - 3000) / (3000 * 2999)), rel=1e-9)
    assert row["mean_overlap"] > 0.5 and row["m_times_mean_sq_overlap"] > 20
    assert row["m_times_mean_sq_overlap_centered"] == pytest.approx(1.0, abs=0.05)


def test_corpus_loss_resumes_from_checkpoint(tmp_path):
    import transformers as tf

    torch.manual_seed(0)
    model = tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=12, n_embd=16, n_layer=1, n_head=2)).eval()
    texts = ["0123", "456789", "11", "2222222", "98"]
    full = corpus_loss(model, _Tok(), texts, max_tokens=8)
    ckpt = tmp_path / "loss.csv.checkpoint"
    # a job killed after 3 texts left this checkpoint behind
    corpus_loss(model, _Tok(), texts[:3], max_tokens=8, checkpoint=str(ckpt), every=1)
    calls = []
    handle = model.register_forward_hook(lambda *a: calls.append(1))
    resumed = corpus_loss(model, _Tok(), texts, max_tokens=8, checkpoint=str(ckpt), every=1)
    handle.remove()
    assert len(calls) == 2  # only the two texts not in the checkpoint were scored
    assert resumed["tokens"].tolist() == [3, 5, 1, 6, 1]
    assert np.allclose(resumed["nll_nats"], full["nll_nats"], rtol=1e-6)


def test_section_shows_fit_and_headline_rows(tmp_path):
    import pandas as pd

    from depthwidth.lm_head.section import render
    from depthwidth.sections import Figures

    rng = np.random.default_rng(2)
    geo_rows, loss_rows, norms = [], [], {}
    for k, m in enumerate([64, 128, 256]):
        w = torch.randn(2000, m, generator=torch.Generator().manual_seed(k))
        row, norms[f"toy-{m}"] = geometry(w, abs_rows=100)
        geo_rows.append({"model": f"toy-{m}", "family": "toy", "width": m, **row})
        loss_rows.append(
            {
                "model": f"toy-{m}",
                "family": "toy",
                "width": m,
                "corpus": "c",
                "n_texts": 1,
                "tokens": 100,
                "loss_nats": float(width_law(m, 30.0, 0.9, 2.0) + rng.normal(0, 1e-3)),
                "max_tokens": 8,
            }
        )
    loss_rows.append(
        {**loss_rows[0], "model": "toy-512", "width": 512, "loss_nats": float(width_law(512, 30.0, 0.9, 2.0))}
    )
    geo, loss = pd.DataFrame(geo_rows), pd.DataFrame(loss_rows)
    fit = fit_width_law(loss["width"], loss["loss_nats"], loss["family"] + " / " + loss["corpus"])
    html, rows = render(geo, loss, fit, norms, figures=Figures(tmp_path / "figures"), dead_fraction=0.1)
    assert html.count("<img") == 3 and "No fit" not in html
    alpha = rows[0]
    assert alpha["value"] == pytest.approx(0.9, abs=0.05) and alpha["agree"] is True
    over = {r["quantity"]: r for r in rows}
    assert over["m·mean_sq_overlap, toy-128"]["value"] == pytest.approx(1.0, abs=0.05)
    # one model's m·overlap is not the paper's claim: the slope across the three widths tests it
    assert over["m·mean_sq_overlap, toy-128"]["agree"] is None
    assert "the slope row tests the 1/m scaling" in over["m·mean_sq_overlap, toy-128"]["note"]
    # random rows: overlap falls exactly like 1/m
    slope = over["slope of log mean_sq_overlap vs log m"]
    assert slope["value"] == pytest.approx(-1.0, abs=0.03) and slope["agree"] is True


@pytest.mark.parametrize("widths", [[576], [384, 576]])
def test_overlap_scaling_is_not_tested_with_fewer_than_three_widths(widths):
    """One width (or two) cannot test overlaps ∝ 1/m: the rows say so and why, and none says "no", even
    for rows that share one direction (m·overlap far from 1, as SmolLM2-135M's embedding)."""
    import pandas as pd

    from depthwidth.lm_head.section import geometry_headlines
    from depthwidth.report.page import headline_table_html
    from depthwidth.report.rows import normalise

    geo_rows = []
    for k, m in enumerate(widths):
        w = torch.randn(3000, m, generator=torch.Generator().manual_seed(k)) + 2.0  # a shared direction
        row, _ = geometry(w, abs_rows=100)
        geo_rows.append({"model": f"toy-{m}", "family": "toy", "width": m, **row})
    rows = geometry_headlines(pd.DataFrame(geo_rows))
    assert len(rows) == len(widths)  # no slope row
    assert all(r["value"] > 50 for r in rows)  # far from random directions' 1
    for r in rows:
        assert r["agree"] is None and normalise(r, "lm_head")["verdict"] == "not tested"
        assert f"{len(widths)} width" in r["note"] and "three or more widths" in r["note"]
    table = headline_table_html([normalise(r, "lm_head") for r in rows], {"lm_head": True})
    assert ">no<" not in table and table.count(">not tested: ") == len(widths)


def test_config_cross_checks_name_the_key_and_fix():
    from depthwidth.config import ConfigError
    from depthwidth.lm_head.pipeline import check_config

    cfg = {
        "models": {
            "a": {"source": "local", "path": "/x", "family": "gpt2"},
            "b": {"source": "hub", "family": "opt"},
        },
        "lm_head": {
            "models": ["a", "b", "zz"],
            "loss": {
                "corpora": {
                    "w": {"source": "hub"},
                    "f": {"source": "raw", "path": "nope.json"},
                    "ok": {"source": "raw", "path": "fineweb/fineweb_subset.json"},
                }
            },
        },
    }
    with pytest.raises(ConfigError) as e:
        check_config(cfg)
    msg = str(e.value)
    assert "'lm_head.models' names 'zz'" in msg and "Fix: add it under models:" in msg
    assert "models.b.id' is required" in msg
    assert "lm_head.loss.corpora.w.dataset' is required" in msg
    assert "corpora.f.path' is 'nope.json'" in msg and "corpora.ok" not in msg
    assert msg.count("\n  - ") == 4


def test_bf16_loss_loads_the_model_as_the_paper(tmp_path):
    """lm_head_loss loads the model in its dtype as the papers' scripts do (from_pretrained(torch_dtype=...)):
    in bfloat16 each text's NLL equals, bit for bit, that of a model loaded that way (rotary inv_freq float32)."""
    import pandas as pd
    from transformers import AutoModelForCausalLM

    from depthwidth.hidden_states.tiny import tiny_model, tiny_tokenizer
    from depthwidth.integrity import read_table
    from depthwidth.lm_head.loss import lm_head_loss
    from depthwidth.models.fetch import fetch_model
    from depthwidth.models.load import model_spec

    texts = [" ".join(["the width of a model and its loss"] * k) for k in (3, 8, 12)]
    tok = tiny_tokenizer(texts, vocab_size=300)
    tiny_model("llama", vocab_size=len(tok), hidden=64, heads=2, layers=2).save_pretrained(tmp_path / "w")
    tok.save_pretrained(tmp_path / "w")
    fetch_model(
        model_spec("t", {"source": "local", "path": str(tmp_path / "w"), "family": "llama"}), tmp_path / "m"
    )
    # sealed, as lm_head_corpus writes it
    write_table(pd.DataFrame({"text": texts}), tmp_path / "corpus.parquet")
    summary = lm_head_loss(tmp_path / "m", tmp_path / "corpus.parquet", "c", max_tokens=256, dtype="bfloat16",
                           checkpoint_every=10, texts_path=tmp_path / "t.csv", summary_path=tmp_path / "s.json")  # fmt: skip
    assert summary["dtype"] == "bfloat16"
    paper = AutoModelForCausalLM.from_pretrained(tmp_path / "w", torch_dtype=torch.bfloat16).eval()
    assert paper.model.rotary_emb.inv_freq.dtype == torch.float32
    want = token_nll(paper, tok, texts, max_tokens=256)
    got = read_table(tmp_path / "t.csv", "lm_head_loss")
    assert got["tokens"].tolist() == [n for n, _ in want] and max(got["tokens"]) > 80
    assert got["nll_nats"].tolist() == [nll for _, nll in want]
