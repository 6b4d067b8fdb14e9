"""Run a model over documents and store per-token metrics (not hidden states) in one safetensors file.

Documents are tokenised (truncated to ``max_tokens``), sorted by length and cut into batches of at
most ``batch_tokens`` padded tokens, so little compute goes to padding. Batches are right-padded;
causal models never attend to the pads, and :func:`.metrics.valid_positions` drops them from every
statistic. Finished batches are flushed to checkpoint parts (``<out>.parts/``, atomic writes) that a
restarted job resumes from; at the end the parts are joined, sorted by (document, position), and
written atomically to ``out``.

Size per token: ``7 L + 2`` float32 metrics and four int32 indices, i.e. ``4 (7 L + 6)`` bytes
(1.0 kB for L = 36: Pythia-12B on 5 M tokens is 5.2 GB on disk, about twice that in host memory at
the join). Raw hidden states would be ``2 (L + 1) d`` bytes per token in bf16 (379 kB for Pythia-12B,
1.9 TB for 5 M tokens), which is why only a sample is kept on request.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from pathlib import Path

import numpy as np
import torch

from safetensors.torch import load_file, save_file

from depthwidth.files import atomic_write, atomic_write_json, sha256_file
from depthwidth.integrity import (
    IntegrityError,
    check_sealed,
    fingerprint as fingerprint_of,
    fix_hint,
    quarantine,
    seal,
    texts_sha256,
    usable,
)
from depthwidth.models.load import cast_like_pretrained, resolve_device as _resolve_device

from .metrics import LOSSES, batch_metrics, find_parts, loss_layers

log = logging.getLogger("depthwidth.hidden_states")


def resolve_device(device: str = "auto") -> torch.device:
    return _resolve_device(device, "hidden_states.device")


def resolve_dtype(dtype: str, device: torch.device) -> torch.dtype:
    """``auto``: bfloat16 on a GPU (the paper's setting), float32 on a CPU (bf16 matmuls are slow there)."""
    if dtype == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    return {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]


def tokenize(tokenizer, texts: list[str], max_tokens: int) -> list[list[int]]:
    """Token ids of each text with the tokenizer's own special tokens, truncated to ``max_tokens``."""
    enc = tokenizer(list(texts), truncation=True, max_length=max_tokens, add_special_tokens=True)
    return [list(ids) for ids in enc["input_ids"]]


def make_batches(lengths: list[int], batch_tokens: int, max_batch_docs: int = 256) -> list[list[int]]:
    """Group document indices, longest first, so that rows × longest row ≤ ``batch_tokens``.

    Documents with fewer than two tokens have no next-token target and are left out.
    """
    order = sorted((i for i, n in enumerate(lengths) if n >= 2), key=lambda i: (-lengths[i], i))
    batches, cur = [], []
    for i in order:
        longest = lengths[cur[0]] if cur else lengths[i]
        if cur and ((len(cur) + 1) * longest > batch_tokens or len(cur) >= max_batch_docs):
            batches.append(cur)
            cur = []
        cur.append(i)
    if cur:
        batches.append(cur)
    return batches


def pad_batch(seqs: list[list[int]], pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-pad token lists: (B, T) int64 ids and (B, T) int64 attention mask."""
    T = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), T), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), T), dtype=torch.long)
    for r, s in enumerate(seqs):
        ids[r, : len(s)] = torch.tensor(s, dtype=torch.long)
        mask[r, : len(s)] = 1
    return ids, mask


def save_tensors(
    tensors: dict[str, torch.Tensor], path: Path, metadata: dict[str, str] | None = None
) -> None:
    """A safetensors file, written atomically (``depthwidth.files``)."""
    atomic_write(
        path, lambda p: save_file({k: v.contiguous() for k, v in tensors.items()}, str(p), metadata=metadata)
    )


def _cat(parts: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    keys = parts[0].keys()
    return {k: torch.cat([p[k] for p in parts]) for k in keys}


#: the rule that writes the per-token file (named in the fix when a consumer finds it damaged)
EXTRACT_RULE = "hidden_states_extract"


class _Parts:
    """Checkpoint parts of one extraction, reused only when the fingerprint matches: the model (and its
    manifest's checksum), the texts' content and document indices, and the options. ``fingerprint.json``
    (written atomically) holds it; a folder of another fingerprint is discarded.
    Each part is sealed with the fingerprint: a damaged one (truncated, emptied, garbage) is logged, moved
    aside (``<name>.bad-<time>``) and its batches are computed again, as is a part sealed for another
    fingerprint (left by a run whose ``fingerprint.json`` was lost)."""

    def __init__(self, out: Path, fingerprint: dict):
        self.dir = out.with_name(out.name + ".parts")
        self.fingerprint = fingerprint
        meta = self.dir / "fingerprint.json"
        if self.dir.exists():
            try:
                old = json.loads(meta.read_text())
            except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                old = None
            if old is None:  # damaged or missing: each part's seal still says what it was computed for
                log.info(
                    "%s has no readable fingerprint.json; keeping only parts whose seals match", self.dir
                )
            elif old != fingerprint:
                log.info("discarding checkpoint parts in %s made with other settings or inputs", self.dir)
                shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        atomic_write_json(meta, fingerprint, sort_keys=True)

    def _part_paths(self) -> list[Path]:
        return sorted(self.dir.glob("part-*.safetensors"))

    def done_batches(self, raw_needed: bool = False) -> set[int]:
        """The batches of the parts that match their seals (the others are moved aside). With ``raw_needed``
        the part holding batch 0 counts only if the raw sample (``raw.safetensors``) is intact too."""
        done = set()
        raw_ok = not raw_needed or usable(self.dir / "raw.safetensors", self.fingerprint)
        for p in self._part_paths():
            if not usable(p, self.fingerprint):
                continue
            a, b = (int(x) for x in p.stem.split("-")[1:3])
            if a == 0 and not raw_ok:
                quarantine(p, "the raw sample of its first batch is missing or damaged")
                continue
            done.update(range(a, b + 1))
        return done

    def save(self, first: int, last: int, chunks: list[dict[str, torch.Tensor]]) -> None:
        path = self.dir / f"part-{first:06d}-{last:06d}.safetensors"
        save_tensors(_cat(chunks), path)
        seal(path, self.fingerprint)

    def save_raw(self, raw: dict[str, torch.Tensor]) -> None:
        path = self.dir / "raw.safetensors"
        save_tensors(raw, path)
        seal(path, self.fingerprint)

    def load(self, path: Path) -> dict[str, torch.Tensor]:
        """A part (checked against its seal); a bad one is moved aside and the job stops: a rerun computes its
        batches again."""
        try:
            return load_file(str(path))
        except Exception as e:
            dest = quarantine(path, f"it could not be read ({type(e).__name__}: {e})")
            raise IntegrityError(
                f"{path}: checkpoint part unreadable, moved aside to {dest.name}; "
                f"rerun rule {EXTRACT_RULE} to compute its batches again"
            ) from e

    def load_all(self) -> list[dict[str, torch.Tensor]]:
        return [self.load(p) for p in self._part_paths()]


def extract(
    model,
    tokenizer,
    texts: list[str],
    doc_index: list[int],
    out: str | Path,
    *,
    model_name: str,
    max_tokens: int = 1024,
    batch_tokens: int = 16384,
    max_batch_docs: int = 256,
    losses: tuple[str, ...] = LOSSES,
    device: str = "auto",
    dtype: str = "auto",
    keep_raw_tokens: int = 0,
    checkpoint_every_s: float = 120.0,
    chunk_tokens: int = 4096,
    progress_every_s: float = 10.0,
    loss_stride: int = 1,
    last_block_mask: str = "causal",
    angle_precision: str = "float32",
    model_sha256: str | None = None,
) -> dict:
    """Extract per-token metrics of ``texts`` with ``model`` into the safetensors file ``out``.

    Checkpoint parts (``<out>.parts/``) are resumed only when their fingerprint matches: ``model_name``,
    ``model_sha256`` (the checksum of the model's manifest, which holds its weights' checksums), the texts'
    content, ``doc_index`` and the options. ``out`` is sealed (``depthwidth.integrity``) once written.

    ``model`` is cast to the compute dtype as ``from_pretrained(dtype=...)`` would have loaded it
    (:func:`depthwidth.models.load.cast_like_pretrained`: the rotary ``inv_freq`` stays float32); a model
    already loaded in that dtype is left as it is. ``angle_precision``: ``float32`` or ``paper_bf16``
    (:mod:`.metrics`).

    Returns a summary dict (tokens, documents, seconds, tokens/s, peak GPU memory in GiB).
    """
    from depthwidth.logs import Progress

    out = Path(out)
    dev = resolve_device(device)
    dt = resolve_dtype(dtype, dev)
    model = cast_like_pretrained(model, dt).to(dev).eval()
    parts_info = find_parts(model)
    limit = getattr(model.config, "max_position_embeddings", None)
    if isinstance(limit, int) and limit > 0 and max_tokens > limit:
        log.warning(
            "%s: max_tokens %d exceeds the model's %d positions; truncating to %d",
            model_name,
            max_tokens,
            limit,
            limit,
        )
        max_tokens = limit
    seqs = tokenize(tokenizer, texts, max_tokens)
    batches = make_batches([len(s) for s in seqs], batch_tokens, max_batch_docs)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    fingerprint = {
        "model": model_name,
        "n_docs": len(texts),
        "max_tokens": max_tokens,
        "batch_tokens": batch_tokens,
        "max_batch_docs": max_batch_docs,
        "losses": list(losses),
        "dtype": str(dt),
        "keep_raw_tokens": keep_raw_tokens,
        "loss_stride": loss_stride,
        "last_block_mask": last_block_mask,
        "angle_precision": angle_precision,
        "first_doc": int(doc_index[0]) if doc_index else -1,
        "texts": texts_sha256(texts),
        "doc_index": fingerprint_of([int(i) for i in doc_index]),
        "model_manifest": model_sha256,
    }
    parts = _Parts(out, fingerprint)
    done = parts.done_batches(raw_needed=keep_raw_tokens > 0)
    n_tokens_total = sum(len(seqs[i]) - 1 for b in batches for i in b)
    log.info(
        "%s on %s (%s): %d documents, %d scored tokens, %d batches (%d already done), losses %s",
        model_name,
        dev,
        dt,
        len(texts),
        n_tokens_total,
        len(batches),
        len(done & set(range(len(batches)))),
        list(losses) if parts_info.decode is not None else "none (no causal LM head)",
    )
    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
    prog = Progress(len(batches), f"{model_name} batches", every_s=progress_every_s, logger=log)
    pending: list[dict[str, torch.Tensor]] = []
    first = None
    raw_left = keep_raw_tokens
    t0 = t_flush = time.monotonic()
    n_new = 0
    for bi, rows in enumerate(batches):
        if bi in done:
            prog.update(1)
            continue
        ids, mask = pad_batch([seqs[i] for i in rows], pad_id)
        res = batch_metrics(
            parts_info,
            ids.to(dev),
            mask.to(dev),
            losses=losses,
            chunk_tokens=chunk_tokens,
            keep_raw=raw_left if bi == 0 else 0,
            loss_stride=loss_stride,
            last_block_mask=last_block_mask,
            angle_precision=angle_precision,
        )
        row_doc = torch.tensor([doc_index[i] for i in rows], dtype=torch.int32)
        rec = {
            k: v.float().cpu()
            for k, v in res.items()
            if k not in ("row", "position", "token_id", "target_id", "raw_hidden")
            and not k.endswith("_layers")
        }
        rec["doc_index"] = row_doc[res["row"].cpu()]
        rec["position"] = res["position"].cpu().to(torch.int32)
        rec["token_id"] = res["token_id"].cpu().to(torch.int32)
        rec["target_id"] = res["target_id"].cpu().to(torch.int32)
        if "raw_hidden" in res:
            # Raw states are a small inspection sample from the first batch only (its longest documents).
            k = res["raw_hidden"].shape[0]
            raw = {
                "raw_hidden": res["raw_hidden"].cpu(),
                "raw_doc_index": rec["doc_index"][:k],
                "raw_position": rec["position"][:k],
            }
            parts.save_raw(raw)
        pending.append(rec)
        first = bi if first is None else first
        n_new += rec["position"].shape[0]
        prog.update(1, tokens=n_new, tok_per_s=n_new / max(time.monotonic() - t0, 1e-9))
        if time.monotonic() - t_flush >= checkpoint_every_s:
            parts.save(first, bi, pending)
            pending, first, t_flush = [], None, time.monotonic()
    if pending:
        parts.save(first, len(batches) - 1 if first is not None else 0, pending)
    seconds = time.monotonic() - t0
    chunks = parts.load_all()
    if not chunks:
        raise RuntimeError(f"{model_name}: no document had two or more tokens; nothing to measure")
    data = _cat(chunks)
    order = torch.from_numpy(np.lexsort((data["position"].numpy(), data["doc_index"].numpy())))
    data = {k: v[order] for k, v in data.items()}
    for variant in losses:  # which layers the loss columns are (the same in every batch), stored once
        if f"loss_{variant}" in data:
            data[f"loss_{variant}_layers"] = torch.tensor(
                loss_layers(parts_info.n_layers, loss_stride, variant), dtype=torch.int32
            )
    raw_path = parts.dir / "raw.safetensors"
    if keep_raw_tokens > 0 and raw_path.exists():
        data.update(parts.load(raw_path))
    uniq = torch.unique(torch.cat([data["token_id"], data["target_id"]])).tolist()
    token_strings = {int(i): tokenizer.decode([int(i)]) for i in uniq}
    peak_gib = torch.cuda.max_memory_allocated(dev) / 2**30 if dev.type == "cuda" else float("nan")
    summary = {
        "model": model_name,
        "device": str(dev),
        "dtype": str(dt).removeprefix("torch."),
        "n_layers": parts_info.n_layers,
        "hidden_size": int(getattr(model.config, "hidden_size", 0) or 0),
        "n_docs": len(texts),
        "n_tokens": int(data["position"].shape[0]),
        "max_tokens": max_tokens,
        "losses": list(losses) if parts_info.decode is not None else [],
        "loss_stride": loss_stride,
        "last_block_mask": last_block_mask,
        "angle_precision": angle_precision,
        "seconds_this_run": round(seconds, 3),
        "tokens_per_s_this_run": n_new / max(seconds, 1e-9),
        "peak_gpu_gib": peak_gib,
        "architecture": type(model).__name__,
    }
    meta = {"summary": json.dumps(summary), "token_strings": json.dumps(token_strings)}
    save_tensors(data, out, metadata=meta)
    seal(out, fingerprint)  # rule hidden_states_stats checks it before use
    shutil.rmtree(parts.dir, ignore_errors=True)
    log.info(
        "%s: wrote %s (%d tokens, %.1f s, %.0f tokens/s)",
        model_name,
        out,
        summary["n_tokens"],
        seconds,
        summary["tokens_per_s_this_run"],
    )
    return summary


def hidden_states_extract(
    shards: list[str | Path],
    model_manifest: str | Path,
    out: str | Path,
    *,
    model_name: str,
    params: dict,
    speed: dict,
    threads: int = 1,
) -> dict:
    """Rule ``hidden_states_extract``: the first ``params["n_docs"]`` documents of the FineWeb shards
    through the fetched model (``data/models/<name>/manifest.json``) into the per-token file ``out``.

    ``params``: the settings that change the metrics (``depthwidth.hidden_states.pipeline.extract_params``);
    ``speed``: batch sizes, decoding chunk and checkpoint interval (``pipeline.SPEED_KEYS``).
    The model is loaded in the compute dtype (``params["dtype"]`` on ``params["device"]``), as the paper's
    scripts load it, never in float32 and cast afterwards.
    """
    from depthwidth.download.fineweb import read_shards
    from depthwidth.models.load import load_model

    torch.set_num_threads(max(1, threads))
    docs = read_shards(list(shards), limit=params["n_docs"])
    dt = resolve_dtype(params["dtype"], resolve_device(params["device"]))
    loaded = load_model(Path(model_manifest).parent, dtype=dt)
    return extract(
        loaded.model,
        loaded.tokenizer,
        docs["text"].tolist(),
        docs["doc_index"].tolist(),
        out,
        model_name=model_name,
        max_tokens=params["max_tokens"],
        losses=tuple(params["losses"]),
        loss_stride=params["loss_stride"],
        last_block_mask=params["last_block_mask"],
        angle_precision=params["angle_precision"],
        device=params["device"],
        dtype=params["dtype"],
        keep_raw_tokens=params["keep_raw_tokens"],
        batch_tokens=speed["batch_tokens"],
        max_batch_docs=speed["max_batch_docs"],
        chunk_tokens=speed["loss_chunk_tokens"],
        checkpoint_every_s=speed["checkpoint_every_s"],
        model_sha256=sha256_file(model_manifest),
    )


def load_token_metrics(path: str | Path) -> tuple[dict[str, torch.Tensor], dict, dict[int, str]]:
    """Read a per-token file: (tensors, summary dict, token id -> decoded string). It must match the seal
    rule hidden_states_extract wrote (a truncated or damaged file stops here, naming it and the fix)."""
    from safetensors import safe_open

    path = Path(path)
    check_sealed(path, EXTRACT_RULE)
    try:
        with safe_open(str(path), framework="pt") as f:
            meta = f.metadata() or {}
            tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 - safe_open is not iterable
    except Exception as e:
        raise IntegrityError(
            f"per-token metrics file {path} is unreadable ({type(e).__name__}: {e}). {fix_hint(EXTRACT_RULE)}"
        ) from e
    summary = json.loads(meta.get("summary", "{}"))
    strings = {int(k): v for k, v in json.loads(meta.get("token_strings", "{}")).items()}
    return tensors, summary, strings
