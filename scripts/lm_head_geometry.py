"""Row norms and overlaps of one model's LM-head matrix (rule lm_head_geometry)."""

import json
import time
from pathlib import Path

import numpy as np
import torch

from depthwidth.lm_head import geometry, head_from_checkpoint, lm_head_matrix, produced_token_mask
from depthwidth.logs import setup_logging
from depthwidth.models.load import config_shape, load_model, read_spec

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
torch.set_num_threads(sm.threads)
p = sm.params.geometry
t0 = time.monotonic()
model_dir = Path(sm.input.model).parent
spec, man = read_spec(model_dir)
tokenizer = None
# Reading the one tensor from the safetensors files avoids building the model (145 GB for Qwen2.5-72B).
head = head_from_checkpoint(man["hf_dir"], causal=spec.causal) if man.get("hf_dir") else None
if head is None:
    lm = load_model(model_dir)
    head, tokenizer = lm_head_matrix(lm.model, causal=spec.causal), lm.tokenizer
n_layers, width = config_shape(model_dir)
log.info("%s: LM head is %s (%d x %d, tied=%s), read in %.1fs", spec.name, head.name, *head.weight.shape,
         head.tied, time.monotonic() - t0)
keep = None
if p["drop_unused_rows"]:
    if tokenizer is None:
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(man["hf_dir"])
    keep = produced_token_mask(tokenizer, head.weight.shape[0])
    log.info("dropping %d rows of tokens the tokenizer never produces", int((~keep).sum()))
row, norms = geometry(head.weight, keep=keep, dead_fraction=p["dead_norm_fraction"], abs_method=p["abs_overlap"],
                      abs_rows=p["abs_rows"], seed=p["seed"])
row = {"model": spec.name, "family": spec.family, "width": width, "n_layers": n_layers, "matrix": head.name,
       "tied": head.tied, "rows_dropped": 0 if keep is None else int((~keep).sum()), **row}
log.info("%s: m*mean_sq_overlap = %.3f, mean |overlap| = %.4f (random %.4f), near-zero rows %.2f%%, %.1fs",
         spec.name, row["m_times_mean_sq_overlap"], row["mean_abs_overlap"], row["mean_abs_overlap_random"],
         100 * row["frac_near_zero"], time.monotonic() - t0)
np.save(sm.output.norms, norms.astype(np.float32))
Path(sm.output.row).write_text(json.dumps(row, indent=2))
