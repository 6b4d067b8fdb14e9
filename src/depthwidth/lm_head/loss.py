"""Next-token loss of a model on a corpus: the y axis of the width law.

- ``token_nll``: next-token negative log-likelihood of texts, summed per text.
- ``corpus_loss``: the same for a corpus, resumable from a checkpoint.
- ``lm_head_loss``: rule lm_head_loss, one model on one corpus (per-text CSV and a summary JSON).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from depthwidth.integrity import (
    fingerprint,
    quarantine,
    texts_sha256,
    unseal,
    usable,
    write_json,
    write_table,
)

log = logging.getLogger("depthwidth.lm_head")


class LossError(RuntimeError):
    """A loss cannot be measured (no token to score); the message names the corpus and the fix."""


def token_nll(
    model, tokenizer, texts: Iterable[str], max_tokens: int = 2048, device: str = "cpu", on_doc=None
) -> list[tuple[int, float]]:
    """Next-token loss of each text, as (tokens predicted, summed NLL in nats).

    Each text is tokenized on its own, the way the model's tokenizer does by default (special tokens
    such as a BOS included), and truncated to ``max_tokens`` tokens; a text of n tokens gives n − 1
    predictions. The token-weighted mean loss of a corpus is Σ nll / Σ tokens. ``on_doc(k, n, nll)`` is
    called after each text (for progress and checkpoints).
    """
    import torch

    out = []
    with torch.inference_mode():
        for k, text in enumerate(texts):
            ids = tokenizer(text, return_tensors="pt", truncation=True, max_length=max_tokens).input_ids
            ids = ids[:, :max_tokens].to(device)
            n = ids.shape[1] - 1
            if n < 1:
                out.append((0, 0.0))
            else:
                logits = model(ids).logits[0, :-1].float()
                nll = float(torch.nn.functional.cross_entropy(logits, ids[0, 1:], reduction="sum"))
                out.append((n, nll))
            if on_doc is not None:
                on_doc(k, *out[-1])
    return out


LOSS_COLUMNS = ["text_index", "tokens", "nll_nats"]


def _resumable(checkpoint: str | None, fp, n_texts: int, logger: logging.Logger) -> pd.DataFrame | None:
    """The rows of a checkpoint that matches its seal and ``fp``; else None (a bad one is moved aside)."""
    if not checkpoint or not usable(checkpoint, fp):
        return None
    try:
        done = pd.read_csv(checkpoint)
        idx = done["text_index"]
        ok = (
            list(done.columns) == LOSS_COLUMNS
            and idx.between(0, n_texts - 1).all()
            and idx.is_unique
            and (done["tokens"] >= 0).all()
            and done["nll_nats"].notna().all()
        )
    except (ValueError, KeyError, pd.errors.ParserError) as e:
        ok, why = False, f"it could not be read ({type(e).__name__}: {e})"
    else:
        why = f"its rows are not a valid loss checkpoint for {n_texts} texts"
    if not ok:
        quarantine(checkpoint, why)
        return None
    logger.info("resuming from %s: %d of %d texts done", checkpoint, len(done), n_texts)
    return done


def corpus_loss(
    model,
    tokenizer,
    texts: list[str],
    *,
    max_tokens: int,
    checkpoint: str | None = None,
    every: int = 50,
    device: str = "cpu",
    logger: logging.Logger | None = None,
    fp=None,
):
    """Per-text next-token loss with a resumable checkpoint.

    Returns a DataFrame with one row per text: ``text_index``, ``tokens`` (predictions scored) and
    ``nll_nats`` (their summed negative log-likelihood). Rows already in ``checkpoint`` (a CSV written
    atomically and sealed every ``every`` texts) are not recomputed, so a killed job resumes where it
    stopped. The seal holds ``fp`` (what the numbers depend on: texts, model, token limit, dtype) and the
    texts' count: a truncated, damaged or foreign checkpoint is logged, moved aside and scoring restarts.
    """
    from depthwidth.logs import Progress

    fp = {"max_tokens": max_tokens, "settings": fp}
    done = _resumable(checkpoint, fp, len(texts), logger or log)
    if done is None:
        done = pd.DataFrame(columns=LOSS_COLUMNS)
    have = set(done["text_index"].astype(int))
    todo = [k for k in range(len(texts)) if k not in have]
    rows = done.to_dict("records")
    prog = Progress(len(todo), "texts scored", every_s=10.0, logger=logger)

    def save():
        if checkpoint:
            write_table(pd.DataFrame(rows, columns=LOSS_COLUMNS), checkpoint, fp)

    def on_doc(k, n, nll):
        rows.append({"text_index": todo[k], "tokens": n, "nll_nats": nll})
        tok_sum = sum(r["tokens"] for r in rows)
        prog.update(1, loss_nats=sum(r["nll_nats"] for r in rows) / max(tok_sum, 1))
        if (k + 1) % every == 0:
            save()

    token_nll(model, tokenizer, (texts[k] for k in todo), max_tokens=max_tokens, device=device, on_doc=on_doc)
    save()
    out = pd.DataFrame(rows, columns=LOSS_COLUMNS)
    return out.sort_values("text_index").reset_index(drop=True)


def require_tokens(per_text: pd.DataFrame, corpus: str, model: str, corpus_path: str | Path) -> int:
    """The tokens scored in ``per_text`` (``corpus_loss``'s frame); ``LossError`` naming the corpus and the
    fix when there are none: a loss of 0.0 nats over 0 tokens is not a result."""
    tokens = int(per_text["tokens"].sum())
    if tokens == 0:
        raise LossError(
            f"corpus '{corpus}' gives {model} no token to score: its {len(per_text)} texts in {corpus_path} are "
            "at most one token each after tokenization, so the loss would be 0.0 nats over 0 tokens.\n"
            f"Fix: give lm_head corpus '{corpus}' texts with words in them (check its source and text_column), "
            "or remove it from lm_head.loss.corpora."
        )
    return tokens


def lm_head_loss(
    model_dir: str | Path,
    corpus_path: str | Path,
    corpus: str,
    *,
    max_tokens: int,
    dtype: str,
    checkpoint_every: int,
    texts_path: str | Path,
    summary_path: str | Path,
    logger: logging.Logger | None = None,
) -> dict:
    """Rule lm_head_loss: next-token loss of the model fetched into ``model_dir`` on the texts of
    ``corpus_path`` (rule lm_head_corpus), on a GPU when there is one. Writes the per-text CSV
    (``text_index``, ``tokens``, ``nll_nats``) and a summary JSON; returns the summary."""
    import torch

    from depthwidth.download.fetch import sha256_file
    from depthwidth.integrity import read_table
    from depthwidth.lm_head.corpus import CORPUS_RULE
    from depthwidth.models.load import load_model

    logger = logger or log
    device = "cuda" if torch.cuda.is_available() else "cpu"
    t0 = time.monotonic()
    lm = load_model(
        model_dir,
        device=device,
        dtype=getattr(torch, dtype),
        device_map="auto" if device == "cuda" and torch.cuda.device_count() > 1 else None,
    )
    device = lm.model.device  # where the inputs go (the first GPU under device_map auto)
    texts = read_table(corpus_path, CORPUS_RULE, ("text",))["text"].tolist()  # its seal checked
    # a model cannot score more positions than it was built for (GPT-2: 1024), so the limit is clamped
    cfg = lm.model.config
    positions = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)
    limit = min(max_tokens, positions) if positions else max_tokens
    if limit < max_tokens:
        logger.warning(
            "%s has %d positions: texts are truncated to %d tokens, not lm_head.loss.max_tokens = %d",
            lm.info.name,
            positions,
            limit,
            max_tokens,
        )
    logger.info(
        "%s on %s: %d texts, max %d tokens each, on %s", lm.info.name, corpus, len(texts), limit, device
    )
    # What the numbers depend on: the texts' content, the model (its manifest holds the weights' checksums),
    # the token limit and dtype. The checkpoint is named by it and its seal holds it, so a checkpoint left by
    # a killed job with other texts or settings, or a damaged one, is never resumed from.
    fp = {
        "texts": texts_sha256(texts),
        "model": sha256_file(Path(model_dir) / "manifest.json"),
        "max_tokens": limit,
        "dtype": dtype,
    }
    key = fingerprint(fp)[:16]
    texts_path = Path(texts_path)
    checkpoint = texts_path.with_name(f"{texts_path.name}.checkpoint-{key}")
    for stale in texts_path.parent.glob(texts_path.name + ".checkpoint-*"):
        if (
            stale != checkpoint and ".bad-" not in stale.name
        ):  # files moved aside stay for a person to look at
            unseal(stale)
    per_text = corpus_loss(
        lm.model,
        lm.tokenizer,
        texts,
        max_tokens=limit,
        checkpoint=str(checkpoint),
        every=checkpoint_every,
        device=device,
        logger=logger,
        fp=fp,
    )
    try:
        tokens = require_tokens(per_text, corpus, lm.info.name, corpus_path)
    except LossError:
        unseal(checkpoint)
        raise
    write_table(per_text, texts_path)
    unseal(checkpoint)
    summary = {
        "model": lm.info.name,
        "family": lm.info.family,
        "width": lm.info.width,
        "n_layers": lm.info.n_layers,
        "corpus": corpus,
        "n_texts": len(per_text),
        "tokens": tokens,
        "loss_nats": float(per_text["nll_nats"].sum() / max(tokens, 1)),
        "max_tokens": limit,
        "dtype": dtype,
        "device": str(device),
        "seconds": time.monotonic() - t0,
    }
    logger.info(
        "%s on %s: loss %.4f nats over %d tokens (%.1fs)",
        lm.info.name,
        corpus,
        summary["loss_nats"],
        tokens,
        summary["seconds"],
    )
    write_json(summary_path, summary)  # sealed: rule lm_head_width_fit checks it before use
    return summary
