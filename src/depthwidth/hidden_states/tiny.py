"""Tiny random-weight models of each family and a small byte-level BPE tokenizer, built offline.

Used by the tests (every architecture goes through extraction in seconds, the last block's attention
mask is checked on them) and by ``bench/last_block_mask.py``. The benchmark's random models with real
models' shapes are built in ``bench/bench_hidden_states.py`` itself.
"""

from __future__ import annotations

import torch

FAMILIES = ("gpt_neox", "qwen2", "opt", "llama", "bert")


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
    elif family == "bert":
        cfg = T.BertConfig(intermediate_size=4 * hidden, max_position_embeddings=max_positions, **common)
        return T.BertModel(cfg).eval()
    else:
        raise ValueError(f"unknown family {family!r}; choose from {FAMILIES}")
    return T.AutoModelForCausalLM.from_config(cfg).eval()
