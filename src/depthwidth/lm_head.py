"""LM-head geometry and loss vs width: the LLM evidence for strong superposition (Liu, Liu & Gore 2025).

- ``lm_head_matrix``: the V × m matrix whose rows are the token directions read out by the model.
- ``row_norm_stats``, ``mean_sq_overlap``, ``mean_abs_overlap``: geometry of its rows. For V random
  directions in m dimensions the mean squared overlap is 1/m, so m · mean_sq_overlap ≈ 1 is the
  signature of strong superposition (all tokens represented, as spread out as random directions).
- ``token_nll``: next-token negative log-likelihood of texts, summed, for a token-weighted mean loss.
- ``fit_width_law``: L = A / m^α + B_g with one A and α and one offset B per group (family, corpus).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

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
EMBED_NAMES = ("model.decoder.embed_tokens.weight", "decoder.embed_tokens.weight", "model.embed_tokens.weight",
               "transformer.wte.weight", "wte.weight", "gpt_neox.embed_in.weight",
               "embeddings.word_embeddings.weight", "bert.embeddings.word_embeddings.weight")


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
    for index, single in (("model.safetensors.index.json", "model.safetensors"),
                          ("pytorch_model.bin.index.json", "pytorch_model.bin")):
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
        c = w[s:s + chunk].to(torch.float64)
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


def mean_abs_overlap(weight, method: str = "sample", n_rows: int = 2000, seed: int = 0,
                     chunk: int = 1024) -> tuple[float, float]:
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
        idx = rows[s:s + chunk]
        block = (wn[idx] @ wn.T).abs_().double()
        # each row's own |ŵ_i·ŵ_i| = 1 is not a pair
        means.append((block.sum(1) - 1.0) / (v - 1))
    rm = torch.cat(means)
    exact = len(rows) == v
    err = 0.0 if exact else float(rm.std() / math.sqrt(len(rm)) * math.sqrt(1 - len(rm) / v))
    return float(rm.mean()), err


def geometry(weight, *, keep: np.ndarray | None = None, dead_fraction: float = 0.1,
             abs_method: str = "sample", abs_rows: int = 2000, seed: int = 0) -> tuple[dict, np.ndarray]:
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
    row = {"V": int(w.shape[0]), "m": int(m), "n_zero_rows": int((~nz).sum()),
           **row_norm_stats(norms, dead_fraction),
           "mean_sq_overlap": msq, "m_times_mean_sq_overlap": m * msq, "mean_overlap": mean_ov,
           "mean_sq_overlap_centered": msq_c, "m_times_mean_sq_overlap_centered": m * msq_c,
           "mean_abs_overlap": mabs, "mean_abs_overlap_err": mabs_err,
           # for random directions E|cos| = Γ(m/2) / (√π Γ((m+1)/2)) ≈ √(2/(π m))
           "mean_abs_overlap_random": float(math.exp(math.lgamma(m / 2) - math.lgamma((m + 1) / 2)) / math.sqrt(math.pi))}
    return row, norms


# ---------------------------------------------------------------------------------------------- loss


def token_nll(model, tokenizer, texts: Iterable[str], max_tokens: int = 2048, device: str = "cpu",
              on_doc=None) -> list[tuple[int, float]]:
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


# ----------------------------------------------------------------------------------------- width fit


def fit_width_law(width, loss, group, min_widths: int = 3) -> dict:
    """Fit L = A / m^α + B_g (lmfit, least squares): A and α shared, one B per group.

    ``width`` (n,) residual widths m, ``loss`` (n,) mean losses in nats, ``group`` (n,) labels (e.g.
    "opt / wikitext"). Returns a dict with ``status`` "ok" and alpha, alpha_err (standard error from the
    covariance), A, A_err, B {group: value}, n_points, n_widths, redchi; or ``status`` "skipped" with a
    ``reason`` when the data cannot determine α (fewer than ``min_widths`` distinct widths, no group
    with two widths, or no more points than parameters).
    """
    import lmfit

    m = np.asarray(width, dtype=np.float64)
    y = np.asarray(loss, dtype=np.float64)
    g = np.asarray([str(x) for x in group])
    groups = list(dict.fromkeys(g))
    n_widths = len(np.unique(m))
    widths_per_group = {k: len(np.unique(m[g == k])) for k in groups}
    base = {"n_points": len(m), "n_widths": int(n_widths), "groups": groups}
    n_params = 2 + len(groups)
    reason = None
    if n_widths < min_widths:
        reason = f"only {n_widths} distinct width(s) ({', '.join(str(int(x)) for x in np.unique(m))}); need {min_widths}"
    elif max(widths_per_group.values()) < 2:
        reason = "no group (family, corpus) has two widths, so every offset B_g absorbs its point"
    elif len(m) <= n_params:
        reason = f"{len(m)} points for {n_params} parameters"
    if reason:
        return {"status": "skipped", "reason": reason, **base}
    scale = float(np.exp(np.mean(np.log(m))))  # fit in m / m̄ so A is of order the loss range
    x = m / scale
    idx = np.array([groups.index(k) for k in g])
    params = lmfit.Parameters()
    params.add("alpha", value=1.0, min=0.0, max=5.0)
    spread = max(float(y.max() - y.min()), 1e-3)
    params.add("A", value=spread, min=0.0)
    for k in range(len(groups)):
        params.add(f"B{k}", value=float(y[idx == k].min()) - 0.5 * spread)

    def resid(p):
        b = np.array([p[f"B{k}"].value for k in range(len(groups))])
        return p["A"].value * x ** (-p["alpha"].value) + b[idx] - y

    res = lmfit.minimize(resid, params, method="leastsq")
    a_err = res.params["alpha"].stderr
    A_err = res.params["A"].stderr
    # A refers to m in units of `scale`; convert back to L = A' / m^α with A' = A · scale^α
    alpha = res.params["alpha"].value
    A = res.params["A"].value * scale**alpha
    return {
        "status": "ok", **base, "alpha": float(alpha),
        "alpha_err": float(a_err) if a_err is not None else None,
        "A": float(A), "A_err": float(A_err * scale**alpha) if A_err is not None else None,
        "B": {name: float(res.params[f"B{k}"].value) for k, name in enumerate(groups)},
        "B_err": {name: (float(res.params[f"B{k}"].stderr) if res.params[f"B{k}"].stderr is not None else None)
                  for k, name in enumerate(groups)},
        "redchi": float(res.redchi), "width_scale": scale, "success": bool(res.success),
    }


def width_law(m, A: float, alpha: float, B: float):
    """L(m) = A / m^α + B, nats."""
    return A * np.asarray(m, dtype=np.float64) ** (-alpha) + B


# ------------------------------------------------------------------------------------------ corpora


def join_texts(texts: Iterable[str], n_texts: int, join_words: int = 0) -> list[str]:
    """The first ``n_texts`` non-empty texts; with ``join_words`` > 0, consecutive non-empty texts are
    joined (with a space) until a chunk has at least that many whitespace-separated words. The paper
    built its wikitext-103 and bookcorpus samples this way (one line per row, joined to max_tokens/2 words)."""
    out: list[str] = []
    cur: list[str] = []
    words = 0
    for t in texts:
        t = str(t)
        if not t.strip():
            continue  # blank lines (wikitext) have no tokens to score
        if join_words <= 0:
            out.append(t)
        else:
            cur.append(t)
            words += len(t.split())
            if words < join_words:
                continue
            out.append(" ".join(cur))
            cur, words = [], 0
        if len(out) >= n_texts:
            break
    return out


def corpus_texts(spec: dict, n_texts: int, *, input_paths: list[str] | None = None, name: str = "?") -> list[str]:
    """The first ``n_texts`` non-empty texts of a corpus (config ``lm_head.loss.corpora.<name>``).

    ``source`` fineweb: ``input_paths`` are the FineWeb parquet shards; raw/local: ``input_paths[0]``
    is the file (parquet, JSON or JSONL); hub: streamed with ``datasets`` (only what is needed is read).
    Empty and whitespace-only texts are skipped; ``join_words`` joins short rows (see ``join_texts``).
    """
    from depthwidth.download.fineweb import CorpusError, read_corpus, read_shards

    col = spec.get("text_column", "text")
    join = int(spec.get("join_words", 0))
    src = spec["source"]
    if src == "fineweb":
        texts = join_texts(read_shards(input_paths)["text"], n_texts, join)
    elif src in ("raw", "local"):
        texts = join_texts((d["text"] for d in read_corpus(input_paths[0], text_column=col)), n_texts, join)
    elif src == "hub":
        texts = _hub_texts(spec, n_texts, join, name)
    else:
        raise CorpusError(f"lm_head.loss.corpora.{name}.source is {src!r}; use fineweb, raw, hub or local")
    if len(texts) < n_texts:
        log.warning("corpus %s gives %d texts, fewer than lm_head.loss.n_texts = %d; using all of them",
                    name, len(texts), n_texts)
    return texts


def _hub_texts(spec: dict, n_texts: int, join_words: int, name: str) -> list[str]:
    from depthwidth.download.fineweb import CorpusError

    col = spec.get("text_column", "text")
    try:
        import datasets

        ds = datasets.load_dataset(spec["dataset"], name=spec.get("config"), split=spec.get("split", "train"),
                                   revision=spec.get("revision"), streaming=True)
        return join_texts((row[col] for row in ds), n_texts, join_words)
    except Exception as e:
        raise CorpusError(
            f"corpus '{name}': could not stream {spec.get('dataset')} (config {spec.get('config')}, split "
            f"{spec.get('split', 'train')}) from the hub: {type(e).__name__}: {e}.\nFix: run where the hub is "
            f"reachable, or save the texts as JSONL and set lm_head.loss.corpora.{name} to "
            "{source: local, path: <file>}."
        ) from e


def corpus_loss(model, tokenizer, texts: list[str], *, max_tokens: int, checkpoint: str | None = None,
                every: int = 50, device: str = "cpu", logger: logging.Logger | None = None):
    """Per-text next-token loss with a resumable checkpoint.

    Returns a DataFrame with one row per text: ``text_index``, ``tokens`` (predictions scored) and
    ``nll_nats`` (their summed negative log-likelihood). Rows already in ``checkpoint`` (a CSV written
    atomically every ``every`` texts) are not recomputed, so a killed job resumes where it stopped.
    """
    import os

    import pandas as pd

    from depthwidth.logs import Progress

    done = pd.DataFrame(columns=["text_index", "tokens", "nll_nats"])
    if checkpoint and os.path.exists(checkpoint):
        done = pd.read_csv(checkpoint)
        (logger or log).info("resuming from %s: %d of %d texts done", checkpoint, len(done), len(texts))
    have = set(done["text_index"].astype(int))
    todo = [k for k in range(len(texts)) if k not in have]
    rows = done.to_dict("records")
    prog = Progress(len(todo), "texts scored", every_s=10.0, logger=logger)

    def save():
        if checkpoint:
            tmp = f"{checkpoint}.partial-{os.getpid()}"
            pd.DataFrame(rows).to_csv(tmp, index=False)
            os.replace(tmp, checkpoint)

    def on_doc(k, n, nll):
        rows.append({"text_index": todo[k], "tokens": n, "nll_nats": nll})
        tok_sum = sum(r["tokens"] for r in rows)
        prog.update(1, loss_nats=sum(r["nll_nats"] for r in rows) / max(tok_sum, 1))
        if (k + 1) % every == 0:
            save()

    token_nll(model, tokenizer, (texts[k] for k in todo), max_tokens=max_tokens, device=device, on_doc=on_doc)
    save()
    out = pd.DataFrame(rows, columns=["text_index", "tokens", "nll_nats"])
    return out.sort_values("text_index").reset_index(drop=True)


# ------------------------------------------------------------------------------------------- config

_CORPUS_KEYS = {"fineweb": (), "raw": ("path",), "local": ("path",), "hub": ("dataset",)}


def check_config(config: dict) -> None:
    """Cross-key checks of the ``lm_head`` section that the JSON schema cannot express, run when the
    workflow is parsed (before any job): model names must be in ``models:`` with a valid spec, each
    corpus must have the keys its source needs, and a ``raw`` path must be pinned in the manifest."""
    from depthwidth.config import ConfigError
    from depthwidth.download.fetch import load_manifest
    from depthwidth.models.load import ModelError, model_spec

    sec = config["lm_head"]
    known = config.get("models") or {}
    errors = []
    for name in sec["models"]:
        if name not in known:
            errors.append(f"config key 'lm_head.models' names '{name}', which is not in the models section "
                          f"(known: {', '.join(known) or 'none'}). Fix: add it under models: or remove it.")
            continue
        try:
            model_spec(name, known[name])
        except ModelError as e:
            errors.append(str(e))
    manifest = None
    for name, spec in sec["loss"]["corpora"].items():
        for key in _CORPUS_KEYS[spec["source"]]:
            if not spec.get(key):
                errors.append(f"config key 'lm_head.loss.corpora.{name}.{key}' is required for source "
                              f"'{spec['source']}'")
        if spec["source"] == "raw" and spec.get("path"):
            manifest = manifest if manifest is not None else load_manifest()
            if spec["path"] not in manifest:
                errors.append(f"config key 'lm_head.loss.corpora.{name}.path' is '{spec['path']}', which is not "
                              f"pinned in src/depthwidth/manifest.yaml (pinned: {', '.join(manifest)}). Fix: use "
                              "one of those, or source: local with a path to your file.")
    if errors:
        raise ConfigError("Invalid configuration (nothing was run):\n  - " + "\n  - ".join(errors))
