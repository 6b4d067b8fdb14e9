"""Tiny random-weight models of each family and a small byte-level BPE tokenizer, built offline.

Used by the tests (every architecture goes through extraction in seconds, the last block's attention
mask is checked on them, hub models load from a Hugging Face cache written by ``save_to_hub_cache``)
and by ``bench/last_block_mask.py``. The benchmark's random models with real models' shapes are built
in ``bench/bench_hidden_states.py`` itself.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

import torch

# transformers model types; the config's ``models.<name>.family`` of each is in CONFIG_FAMILY
FAMILIES = ("gpt_neox", "qwen2", "opt", "llama", "gpt2", "bert")
DECODER_FAMILIES = tuple(f for f in FAMILIES if f != "bert")
CONFIG_FAMILY = {
    "gpt_neox": "pythia",
    "qwen2": "qwen2.5",
    "opt": "opt",
    "llama": "llama",
    "gpt2": "gpt2",
    "bert": "bert",
}
# weights are stored in git LFS on the hub: their blobs are named by SHA-256, other files by git's SHA-1
_LFS_SUFFIXES = (".safetensors", ".bin", ".gguf", ".model")


def tiny_tokenizer(texts: list[str], vocab_size: int = 400):
    """A byte-level BPE tokenizer trained on ``texts`` (no download); pad id 0, eos id 1."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<pad>", "<eos>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>")


def tiny_model(
    family: str,
    vocab_size: int = 400,
    hidden: int = 32,
    layers: int = 4,
    heads: int = 4,
    seed: int = 0,
    max_positions: int = 512,
):
    """A random-weight model of ``family`` (float32, eval mode): decoders with an LM head, BERT without."""
    import transformers as T

    torch.manual_seed(seed)
    common = {
        "vocab_size": vocab_size,
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
    }
    if family == "gpt_neox":
        cfg = T.GPTNeoXConfig(intermediate_size=4 * hidden, max_position_embeddings=max_positions, **common)
    elif family == "qwen2":
        cfg = T.Qwen2Config(
            intermediate_size=4 * hidden,
            num_key_value_heads=max(1, heads // 2),
            max_position_embeddings=max_positions,
            **common,
        )
    elif family == "opt":
        cfg = T.OPTConfig(
            ffn_dim=4 * hidden,
            word_embed_proj_dim=hidden,
            max_position_embeddings=max_positions,
            pad_token_id=0,
            **common,
        )
    elif family == "llama":
        cfg = T.LlamaConfig(intermediate_size=4 * hidden, max_position_embeddings=max_positions, **common)
    elif family == "gpt2":
        cfg = T.GPT2Config(
            vocab_size=vocab_size,
            n_embd=hidden,
            n_layer=layers,
            n_head=heads,
            n_positions=max_positions,
            bos_token_id=1,
            eos_token_id=1,
        )
    elif family == "bert":
        cfg = T.BertConfig(intermediate_size=4 * hidden, max_position_embeddings=max_positions, **common)
        return T.BertModel(cfg).eval()
    else:
        raise ValueError(f"unknown family {family!r}; choose from {FAMILIES}")
    return T.AutoModelForCausalLM.from_config(cfg).eval()


def _blob_name(path: Path) -> str:
    data = path.read_bytes()
    if path.name.endswith(_LFS_SUFFIXES):
        return hashlib.sha256(data).hexdigest()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def save_to_hub_cache(hf_home: str | Path, repo_id: str, model, tokenizer, revision: str = "main") -> Path:
    """Write ``model`` and ``tokenizer`` into the Hugging Face cache under ``hf_home`` as the hub client
    lays out a downloaded repo, so ``snapshot_download(repo_id, local_files_only=True)`` and
    ``from_pretrained`` find it offline (``HF_HOME=hf_home``, ``HF_HUB_OFFLINE=1``)::

        <hf_home>/hub/models--<org>--<name>/blobs/<sha>               the files' bytes
        <hf_home>/hub/models--<org>--<name>/snapshots/<commit>/<file>  relative symlinks to the blobs
        <hf_home>/hub/models--<org>--<name>/refs/<revision>            the commit hash, no newline

    The commit hash is derived from the files' hashes. Returns the snapshot folder.
    """
    repo = Path(hf_home) / "hub" / ("models--" + repo_id.replace("/", "--"))
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=repo) as tmp:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        files = sorted(p for p in Path(tmp).rglob("*") if p.is_file())
        blobs = {p.relative_to(tmp).as_posix(): _blob_name(p) for p in files}
        commit = hashlib.sha1("\n".join(f"{k} {v}" for k, v in sorted(blobs.items())).encode()).hexdigest()
        snapshot = repo / "snapshots" / commit
        for p in files:
            rel = p.relative_to(tmp).as_posix()
            blob = repo / "blobs" / blobs[rel]
            if not blob.exists():
                shutil.move(p, blob)
            link = snapshot / rel
            link.parent.mkdir(parents=True, exist_ok=True)
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(os.path.relpath(blob, link.parent))
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / revision).write_text(commit)
    return snapshot
