"""Next-token loss of one model on one corpus, resumable (rule lm_head_loss)."""

import hashlib
import json
import time
from pathlib import Path

import pandas as pd
import torch

from depthwidth.download.fetch import sha256_file
from depthwidth.lm_head import corpus_loss
from depthwidth.logs import setup_logging
from depthwidth.models.load import load_model

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
torch.set_num_threads(sm.threads)
device = "cuda" if torch.cuda.is_available() else "cpu"
t0 = time.monotonic()
lm = load_model(Path(sm.input.model).parent, device=device, dtype=getattr(torch, sm.params.dtype),
                device_map="auto" if device == "cuda" and torch.cuda.device_count() > 1 else None)
device = lm.model.device  # where the inputs go (the first GPU under device_map auto)
texts = pd.read_parquet(sm.input.corpus)["text"].tolist()
# a model cannot score more positions than it was built for (GPT-2: 1024), so the limit is clamped
cfg = lm.model.config
positions = getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)
max_tokens = min(sm.params.max_tokens, positions) if positions else sm.params.max_tokens
if max_tokens < sm.params.max_tokens:
    log.warning("%s has %d positions: texts are truncated to %d tokens, not lm_head.loss.max_tokens = %d",
                lm.info.name, positions, max_tokens, sm.params.max_tokens)
log.info("%s on %s: %d texts, max %d tokens each, on %s", lm.info.name, sm.wildcards.corpus, len(texts),
         max_tokens, device)
# The checkpoint is named by what its numbers depend on (texts, model, token limit, dtype): a checkpoint
# left by a killed job with other settings is never resumed from.
key = hashlib.sha256(json.dumps([sha256_file(sm.input.corpus), sha256_file(sm.input.model), max_tokens,
                                 sm.params.dtype]).encode()).hexdigest()[:16]
checkpoint = Path(f"{sm.output.texts}.checkpoint-{key}")
for stale in Path(sm.output.texts).parent.glob(Path(sm.output.texts).name + ".checkpoint-*"):
    if stale != checkpoint:
        stale.unlink()
per_text = corpus_loss(lm.model, lm.tokenizer, texts, max_tokens=max_tokens, checkpoint=str(checkpoint),
                       every=sm.config["lm_head"]["loss"]["checkpoint_every"], device=device, logger=log)
per_text.to_csv(sm.output.texts, index=False)
checkpoint.unlink(missing_ok=True)
tokens = int(per_text["tokens"].sum())
summary = {"model": lm.info.name, "family": lm.info.family, "width": lm.info.width, "n_layers": lm.info.n_layers,
           "corpus": sm.wildcards.corpus, "n_texts": len(per_text), "tokens": tokens,
           "loss_nats": float(per_text["nll_nats"].sum() / max(tokens, 1)), "max_tokens": max_tokens,
           "dtype": sm.params.dtype, "device": str(device),
           "seconds": time.monotonic() - t0}
log.info("%s on %s: loss %.4f nats over %d tokens (%.1fs)", lm.info.name, sm.wildcards.corpus,
         summary["loss_nats"], tokens, summary["seconds"])
with open(sm.output.summary, "w") as f:
    json.dump(summary, f, indent=2)
