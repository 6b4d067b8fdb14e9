"""Geometry of an LM head: the V × m matrix whose rows are the token directions a model reads out.

- ``lm_head_matrix`` / ``head_from_checkpoint``: which matrix that is, from a loaded model or straight
  from the checkpoint files.
- ``row_norm_stats``, ``mean_sq_overlap``, ``mean_abs_overlap``, ``geometry``: its rows. For V random
  directions in m dimensions the mean squared overlap is 1/m, so m · mean_sq_overlap ≈ 1 is the
  signature of strong superposition (all tokens represented, as spread out as random directions).
- ``lm_head_geometry``: rule lm_head_geometry, one model's row of numbers and its row norms.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from depthwidth.files import atomic_write_npy
from depthwidth.integrity import seal, write_json

log = logging.getLogger("depthwidth.lm_head")


# ------------------------------------------------------------------------------------- which matrix


@dataclass
class HeadMatrix:
    """``weight``: the LM-head matrix, torch tensor of shape (V, m). ``name``: the parameter it is
    (e.g. ``lm_head.weight``, ``embed_out.weight``, ``model.embed_tokens.weight``); ``tied``: True when
    the read-out is the input embedding."""

    weight: Any
    name: str
    tied: bool


def _param_name(model, tensor) -> str:
    for n, p in model.named_parameters(remove_duplicate=False):
        if p is tensor or p.data_ptr() == tensor.data_ptr():
            return n
    return "?"


def lm_head_matrix(model, causal: bool = True) -> HeadMatrix:
    """The read-out matrix of a transformers model, shape (V, m).

    Decoders: the output embedding, which transformers ties to the input embedding where the model
    ties them (OPT, GPT-2, small Qwen2.5, SmolLM2), a separate ``lm_head`` where it does not (large
    Qwen2.5, OPT-66b) and ``embed_out`` for Pythia (GPT-NeoX never ties). Encoders (``causal=False``,
    BERT without its MLM head): the word embedding, to which BERT's MLM decoder is tied.
    """
    emb = model.get_input_embeddings().weight
    out = model.get_output_embeddings() if causal else None
    if out is None:
        return HeadMatrix(emb.detach(), _param_name(model, emb), True)
    w = out.weight
    tied = w.data_ptr() == emb.data_ptr()
    # with tied weights named_parameters lists the input embedding first: name the tensor by that
    return HeadMatrix(w.detach(), _param_name(model, emb) if tied else _param_name(model, w), tied)


# checkpoint names of the read-out matrix: separate heads, then the input embeddings that tied heads reuse
HEAD_NAMES = ("lm_head.weight", "embed_out.weight")
EMBED_NAMES = (
    "model.decoder.embed_tokens.weight",
    "decoder.embed_tokens.weight",
    "model.embed_tokens.weight",
    "transformer.wte.weight",
    "wte.weight",
    "gpt_neox.embed_in.weight",
    "embeddings.word_embeddings.weight",
    "bert.embeddings.word_embeddings.weight",
)


def head_from_checkpoint(folder, causal: bool = True) -> HeadMatrix | None:
    """The LM-head matrix (V, m) read straight from a transformers folder's weight files (safetensors,
    or PyTorch ``.bin`` as OPT ships, memory-mapped), without building the model: for a 72B model this
    reads one tensor instead of 145 GB. Same choice of matrix as ``lm_head_matrix``. Returns None when
    the folder has neither format or the tensor is not found (then load the model instead)."""
    import json
    from pathlib import Path

    import torch
    from safetensors import safe_open
    from transformers import AutoConfig

    folder = Path(folder)
    where: dict[str, Path] = {}
    for index, single in (
        ("model.safetensors.index.json", "model.safetensors"),
        ("pytorch_model.bin.index.json", "pytorch_model.bin"),
    ):
        if (folder / index).exists():
            where = {k: folder / v for k, v in json.loads((folder / index).read_text())["weight_map"].items()}
        elif (folder / single).exists():
            where = {"*": folder / single}
        if where:
            break
    if not where:
        return None
    cfg = AutoConfig.from_pretrained(folder)
    tied = not causal or bool(getattr(cfg, "tie_word_embeddings", True))
    # a tied checkpoint stores only the embedding; an untied one must have its head
    names = EMBED_NAMES if tied else HEAD_NAMES
    files = {where.get(n, where.get("*")) for n in names} - {None}
    for path in sorted(files):
        if path.suffix == ".safetensors":
            with safe_open(path, framework="pt") as f:
                keys = set(f.keys())
                for name in names:
                    if name in keys:
                        return HeadMatrix(f.get_tensor(name), name, tied)
        else:
            state = torch.load(path, map_location="cpu", mmap=True, weights_only=True)
            for name in names:
                if name in state:
                    return HeadMatrix(state[name], name, tied)
    return None


def produced_token_mask(tokenizer, vocab_rows: int) -> np.ndarray:
    """Boolean (V,): True for rows whose id the tokenizer can produce (ids in its vocabulary, added
    tokens included). Rows past the tokenizer's vocabulary are padding added for matmul speed."""
    mask = np.zeros(vocab_rows, dtype=bool)
    ids = np.fromiter((i for i in tokenizer.get_vocab().values() if 0 <= i < vocab_rows), dtype=np.int64)
    mask[ids] = True
    return mask


# ------------------------------------------------------------------------------------------ geometry


def row_norm_stats(norms: np.ndarray, dead_fraction: float = 0.1) -> dict:
    """Statistics of the row norms (V,). A row counts as near-zero (a token with no direction, as in
    weak superposition) when its norm is below ``dead_fraction`` × the median norm."""
    norms = np.asarray(norms, dtype=np.float64)
    med = float(np.median(norms))
    return {
        "norm_mean": float(norms.mean()),
        "norm_std": float(norms.std()),
        "norm_min": float(norms.min()),
        "norm_max": float(norms.max()),
        "norm_median": med,
        "frac_near_zero": float(np.mean(norms < dead_fraction * med)),
    }


def normalized_rows(weight, chunk: int = 16384, center=None):
    """Yield (start, Ŵ_chunk) with unit-norm rows in float64 (torch), chunk by chunk so that no float64
    copy of the whole matrix is made. ``center`` (m,) is subtracted from every row first. Zero rows stay
    zero (they have no direction; callers exclude them)."""
    import torch

    w = torch.as_tensor(weight)
    for s in range(0, w.shape[0], chunk):
        c = w[s : s + chunk].to(torch.float64)
        if center is not None:
            c = c - center
        n = c.norm(dim=1, keepdim=True)
        yield s, c / torch.where(n > 0, n, torch.ones_like(n))


def mean_sq_overlap(weight, chunk: int = 16384, center=None) -> float:
    """Mean of (ŵ_i · ŵ_j)² over all ordered pairs i ≠ j of the V normalised rows of ``weight`` (V, m).

    Uses Σ_{i≠j} (ŵ_i·ŵ_j)² = ‖ŴᵀŴ‖²_F − V: the m × m Gram matrix is accumulated chunk by chunk in
    float64, so no V × V matrix is formed. ``center`` (m,) is subtracted from the rows before they are
    normalised. Rows of norm zero (after centering) have no direction and are not counted in V.
    """
    import torch

    w = torch.as_tensor(weight)
    m = w.shape[1]
    gram = torch.zeros(m, m, dtype=torch.float64)
    v = 0
    for _, c in normalized_rows(w, chunk, center):
        gram += c.T @ c
        v += int((c.abs().sum(1) > 0).sum())
    if v < 2:
        raise ValueError(f"need at least 2 rows of nonzero norm, got {v}")
    return float(((gram**2).sum() - v) / (v * (v - 1)))


def mean_sq_overlap_bruteforce(weight) -> float:
    """The same quantity by an explicit loop over pairs; O(V² m), for tests on small matrices."""
    w = np.asarray(weight, dtype=np.float64)
    w = w / np.linalg.norm(w, axis=1, keepdims=True)
    v = w.shape[0]
    total = 0.0
    for i in range(v):
        for j in range(v):
            if i != j:
                total += float(w[i] @ w[j]) ** 2
    return total / (v * (v - 1))


def mean_abs_overlap(
    weight, method: str = "sample", n_rows: int = 2000, seed: int = 0, chunk: int = 1024
) -> tuple[float, float]:
    """Mean |ŵ_i · ŵ_j| over pairs i ≠ j of the normalised rows of ``weight`` (V, m).

    ``method="exact"``: all pairs, chunk × V blocks at a time (O(V² m) work, minutes for V ≈ 50k on a
    laptop); the error returned is 0. ``method="sample"``: ``n_rows`` rows drawn without replacement,
    each paired with all V − 1 others (one chunk × V matrix product per chunk of rows, so no gathers of
    random pairs); every row has the same number of partners, so the mean over sampled rows of their
    row means is unbiased. Returns (mean, standard error over the sampled rows).
    """
    import torch

    w = torch.as_tensor(weight)
    v = w.shape[0]
    if method not in ("exact", "sample"):
        raise ValueError(f"method must be 'exact' or 'sample', got {method!r}")
    wn = torch.cat([c.float() for _, c in normalized_rows(w)])
    if method == "exact" or n_rows >= v:
        rows = torch.arange(v)
    else:
        rows = torch.randperm(v, generator=torch.Generator().manual_seed(seed))[:n_rows]
    means = []
    for s in range(0, len(rows), chunk):
        idx = rows[s : s + chunk]
        block = (wn[idx] @ wn.T).abs_().double()
        # each row's own |ŵ_i·ŵ_i| = 1 is not a pair
        means.append((block.sum(1) - 1.0) / (v - 1))
    rm = torch.cat(means)
    exact = len(rows) == v
    err = 0.0 if exact else float(rm.std() / math.sqrt(len(rm)) * math.sqrt(1 - len(rm) / v))
    return float(rm.mean()), err


def geometry(
    weight,
    *,
    keep: np.ndarray | None = None,
    dead_fraction: float = 0.1,
    abs_method: str = "sample",
    abs_rows: int = 2000,
    seed: int = 0,
) -> tuple[dict, np.ndarray]:
    """All geometry numbers of one LM head (V, m); ``keep`` (V,) bool selects rows (default all).

    Returns (row of numbers, row norms (V_kept,)). Rows with norm exactly 0 have no direction and are
    left out of the overlaps (``n_zero_rows`` says how many).
    """
    import torch

    w = torch.as_tensor(weight).detach().float()
    if keep is not None:
        w = w[torch.as_tensor(keep)]
    norms = w.norm(dim=1).double().numpy()
    nz = norms > 0
    wd = w[torch.as_tensor(nz)]
    v, m = wd.shape
    msq = mean_sq_overlap(wd)
    mabs, mabs_err = mean_abs_overlap(wd, method=abs_method, n_rows=abs_rows, seed=seed)
    # A direction shared by all rows (anisotropy) raises every overlap; the signed mean overlap measures
    # it exactly, Σ_{i≠j} ŵ_i·ŵ_j = V²‖μ̂‖² − V with μ̂ the mean unit row, and the overlaps of the rows
    # after subtracting their mean row show what remains.
    mu = torch.zeros(m, dtype=torch.float64)
    for _, c in normalized_rows(wd):
        mu += c.sum(0)
    mu /= v
    mean_ov = float((v * v * (mu @ mu) - v) / (v * (v - 1)))
    msq_c = mean_sq_overlap(wd, center=wd.sum(0, dtype=torch.float64) / v)
    row = {
        "V": int(w.shape[0]),
        "m": int(m),
        "n_zero_rows": int((~nz).sum()),
        **row_norm_stats(norms, dead_fraction),
        "mean_sq_overlap": msq,
        "m_times_mean_sq_overlap": m * msq,
        "mean_overlap": mean_ov,
        "mean_sq_overlap_centered": msq_c,
        "m_times_mean_sq_overlap_centered": m * msq_c,
        "mean_abs_overlap": mabs,
        "mean_abs_overlap_err": mabs_err,
        # for random directions E|cos| = Γ(m/2) / (√π Γ((m+1)/2)) ≈ √(2/(π m))
        "mean_abs_overlap_random": float(
            math.exp(math.lgamma(m / 2) - math.lgamma((m + 1) / 2)) / math.sqrt(math.pi)
        ),
    }
    return row, norms


def lm_head_geometry(
    model_dir: str | Path,
    params: dict,
    row_path: str | Path,
    norms_path: str | Path,
    logger: logging.Logger | None = None,
) -> dict:
    """Rule lm_head_geometry: the geometry row of the model fetched into ``model_dir`` (JSON at
    ``row_path``) and its row norms (float32 ``.npy`` at ``norms_path``). ``params``: the config's
    ``lm_head.geometry``. Returns the row."""
    from depthwidth.lm_head.corpus import load_tokenizer
    from depthwidth.models.load import config_shape, load_model, read_spec

    logger = logger or log
    t0 = time.monotonic()
    model_dir = Path(model_dir)
    spec, man = read_spec(model_dir)
    tokenizer = None
    # Reading the one tensor from the safetensors files avoids building the model (145 GB for Qwen2.5-72B).
    head = head_from_checkpoint(man["hf_dir"], causal=spec.causal) if man.get("hf_dir") else None
    if head is None:
        lm = load_model(model_dir)
        head, tokenizer = lm_head_matrix(lm.model, causal=spec.causal), lm.tokenizer
    n_layers, width = config_shape(model_dir)
    logger.info(
        "%s: LM head is %s (%d x %d, tied=%s), read in %.1fs",
        spec.name,
        head.name,
        *head.weight.shape,
        head.tied,
        time.monotonic() - t0,
    )
    keep = None
    if params["drop_unused_rows"]:
        tokenizer = tokenizer or load_tokenizer(model_dir)
        keep = produced_token_mask(tokenizer, head.weight.shape[0])
        logger.info("dropping %d rows of tokens the tokenizer never produces", int((~keep).sum()))
    row, norms = geometry(
        head.weight,
        keep=keep,
        dead_fraction=params["dead_norm_fraction"],
        abs_method=params["abs_overlap"],
        abs_rows=params["abs_rows"],
        seed=params["seed"],
    )
    row = {
        "model": spec.name,
        "family": spec.family,
        "width": width,
        "n_layers": n_layers,
        "matrix": head.name,
        "tied": head.tied,
        "rows_dropped": 0 if keep is None else int((~keep).sum()),
        **row,
    }
    logger.info(
        "%s: m*mean_sq_overlap = %.3f, mean |overlap| = %.4f (random %.4f), near-zero rows %.2f%%, %.1fs",
        spec.name,
        row["m_times_mean_sq_overlap"],
        row["mean_abs_overlap"],
        row["mean_abs_overlap_random"],
        100 * row["frac_near_zero"],
        time.monotonic() - t0,
    )
    # both sealed (written last): rules lm_head_width_fit and lm_head_section check them before use
    atomic_write_npy(norms_path, norms.astype(np.float32))
    seal(norms_path)
    write_json(row_path, row)
    return row
