"""Causal tracing of a fact in a decoder LM (Meng et al. 2022), as the depth paper's Fig. 6 runs it.

For a fact (prompt, subject, target), with ``T`` tokens and ``L`` blocks:

1. The text ``prompt + target`` is tokenised without special tokens. The subject is found by a
   case-insensitive character search in the decoded text and mapped to token positions
   ``[start, end)`` (a token belongs to the range when its characters overlap the match). The target
   token is the first token of ``target``; the prediction position is the token before it, whose
   next-token distribution is read. The model sees all ``T`` tokens, as the paper's; the causal mask
   hides the target from the prediction position.
2. σ is the standard deviation of all entries of the input-embedding matrix (float32). A corrupted run
   adds noise ``N(0, (k σ)²)`` (k = ``noise_sigmas``, 3 in the paper) to every coordinate of the
   embedding module's output at the subject positions only.
3. The clean run stores every block's output (the residual stream after block ℓ, ℓ = 0 … L−1) at every
   position and gives ``p_clean``, the target's probability. The corrupted run gives ``p_corrupt``.
4. Restoration (ℓ, j): a corrupted run in which block ℓ's output at position j alone is replaced by
   its clean value. The result is an ``(L, T)`` matrix of the target's probability. Positions before
   the subject (no noise reaches them) and after the prediction position (the causal mask hides them
   from it) cannot change the target's probability: their entries are p_corrupt without a run.

Each of the ``noise_samples`` draws (from ``seed``) is used for the corrupted run and all ``L T``
restorations, as the paper's script uses its one draw for every run; probabilities are averaged over
the draws. The restorations at one layer (all positions, all draws) go through the model as one batch
(split at ``batch_rows`` sequences, which changes speed, not results). A restoration at block ℓ leaves
blocks 0 … ℓ−1 as in the corrupted run, so their stored corrupted outputs stand in for them and only
blocks ℓ … L−1 run: about half the arithmetic of running every block.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from torch import nn

from depthwidth.files import atomic_write_json, atomic_write_npy
from depthwidth.models.load import resolve_device as _resolve_device

log = logging.getLogger("depthwidth.causal_tracing")

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


class CausalTracingError(ValueError):
    """A fact or a model that causal tracing cannot handle; the message names it and the fix."""


@dataclass(frozen=True)
class Fact:
    """One configured fact. ``target`` None: the prompt's last word (with its leading space) is the target."""

    name: str
    prompt: str
    subject: str
    target: str | None = None

    def split(self) -> tuple[str, str]:
        """(text before the target, target)."""
        if self.target is not None:
            return self.prompt, self.target
        cut = self.prompt.rstrip().rfind(" ")
        if cut <= 0:
            raise CausalTracingError(
                f"fact '{self.name}': the prompt {self.prompt!r} has no last word to predict. "
                "Fix: give the fact a target, e.g. target: ' Paris'."
            )
        return self.prompt[:cut], self.prompt.rstrip()[cut:]


@dataclass(frozen=True)
class Located:
    """Token positions of a fact. ``subject`` is ``[start, end)``; ``predict`` reads the target's probability."""

    ids: list[int]
    tokens: list[str]
    subject: tuple[int, int]
    predict: int
    target_id: int

    @property
    def target_token(self) -> str:
        return self.tokens[self.predict + 1]


def token_range(tokenizer, ids: Sequence[int], text: str, *, last: bool = False) -> tuple[int, int]:
    """``[start, end)`` token positions covering the first (``last``: the last) case-insensitive
    occurrence of ``text`` in the decoded ``ids``; character offsets come from decoding prefixes."""
    full = tokenizer.decode(list(ids), clean_up_tokenization_spaces=False)
    char_s = full.lower().rfind(text.lower()) if last else full.lower().find(text.lower())
    if char_s < 0:
        raise CausalTracingError(f"{text!r} does not occur in the decoded text {full!r}")
    char_e = char_s + len(text)
    start = end = None
    for i in range(1, len(ids) + 1):
        n = len(tokenizer.decode(list(ids[:i]), clean_up_tokenization_spaces=False))
        if start is None and n > char_s:
            start = i - 1
        if n >= char_e:
            end = i
            break
    if start is None or end is None:
        raise CausalTracingError(f"{text!r}: no token range found in {full!r}")
    return start, end


def locate(tokenizer, fact: Fact) -> Located:
    """Tokenise ``fact`` (no special tokens) and find its subject, prediction position and target."""
    before, target = fact.split()
    ids = list(tokenizer(before + target, add_special_tokens=False)["input_ids"])
    tokens = [tokenizer.decode([t], clean_up_tokenization_spaces=False) for t in ids]
    try:
        subject = token_range(tokenizer, ids, fact.subject)
        # The target's first token holds its first non-space character (a lone space token stays in the prompt).
        t_start, _ = token_range(tokenizer, ids, target.lstrip(), last=True)
    except CausalTracingError as e:
        raise CausalTracingError(
            f"fact '{fact.name}': {e}. Fix: the subject and target must be spelt as in the "
            "prompt (case does not matter for the subject)."
        ) from e
    if t_start < 1 or subject[1] > t_start:
        raise CausalTracingError(
            f"fact '{fact.name}': the subject {fact.subject!r} (tokens {subject[0]}–{subject[1] - 1}) must lie before "
            f"the target {target!r} (token {t_start}) in {tokens}. Fix: put the subject in the prompt."
        )
    return Located(ids=ids, tokens=tokens, subject=subject, predict=t_start - 1, target_id=ids[t_start])


@dataclass
class DecoderParts:
    """What tracing needs of a causal LM: its blocks, its embedding module and the path to logits."""

    model: nn.Module
    blocks: nn.ModuleList
    embed: nn.Module
    base: nn.Module
    head: nn.Module

    @property
    def n_layers(self) -> int:
        return len(self.blocks)


def decoder_parts(model: nn.Module, name: str) -> DecoderParts:
    """Blocks, input embedding, body and LM head of a decoder of any family the hidden-states stage
    supports (GPT-NeoX, Llama, Qwen2, OPT, GPT-2); encoders (BERT) are refused with an error naming them."""
    from depthwidth.hidden_states.metrics import find_parts

    parts = find_parts(model)
    if not parts.causal:
        raise CausalTracingError(
            f"model '{name}' ({type(model).__name__}, model_type {model.config.model_type!r}) is encoder-only: causal "
            "tracing reads a next-token probability and needs a decoder with an LM head. Fix: remove it from "
            "causal_tracing.models."
        )
    # the block list, found as find_parts finds it: the first list of n_layers modules in the body
    blocks = next(
        m for m in model.base_model.modules() if isinstance(m, nn.ModuleList) and len(m) == parts.n_layers
    )
    return DecoderParts(
        model=model,
        blocks=blocks,
        embed=model.get_input_embeddings(),
        base=model.base_model,
        head=parts.lm_head,
    )


def embedding_sigma(embed: nn.Module) -> float:
    """Standard deviation of every entry of the input-embedding matrix, in float32 (as the paper)."""
    return float(embed.weight.detach().float().std().item())


def _hidden(out):
    return out[0] if isinstance(out, tuple) else out


def _replace(out, h):
    return (h, *out[1:]) if isinstance(out, tuple) else h


class Tracer:
    """The clean run of one fact (block outputs, p_clean) and batched corrupted runs with restorations.

    A corrupted run is a row ``(sample, restore)``: noise draw ``sample`` at the subject, and for each
    ``(layer, position)`` in ``restore`` block ``layer``'s output at ``position`` set to its clean value.
    """

    def __init__(
        self,
        parts: DecoderParts,
        located: Located,
        *,
        noise_samples: int,
        seed: int,
        noise_sigmas: float,
        device: torch.device,
        dtype: torch.dtype,
    ):
        self.parts, self.loc, self.device, self.dtype = parts, located, device, dtype
        self.ids = torch.tensor([located.ids], dtype=torch.long, device=device)
        self.sigma = embedding_sigma(parts.embed)
        self.noise_std = noise_sigmas * self.sigma
        s, e = located.subject
        gen = torch.Generator().manual_seed(seed)
        dim = parts.embed.weight.shape[1]
        # (samples, subject tokens, embedding dim), drawn in float32 on the CPU: the same on any device
        self.noise = (torch.randn(noise_samples, e - s, dim, generator=gen) * self.noise_std).to(
            device, dtype
        )
        self.tails: list = [
            None
        ] * parts.n_layers  # what each block returns besides its output (use_cache off)
        self.clean, self.p_clean = self._clean_run()
        # A restoration at block ℓ leaves blocks < ℓ as in the plain corrupted run: their outputs are kept
        # per draw and reused, so a batch restoring at ℓ or later runs only blocks ℓ … L−1.
        self.corrupted: list[torch.Tensor] = []
        self.p_corrupt = self._batch([(k, []) for k in range(noise_samples)], capture=True)

    @torch.no_grad()
    def _clean_run(self) -> tuple[list[torch.Tensor], float]:
        states: list[torch.Tensor | None] = [None] * self.parts.n_layers

        def save(layer):
            def hook(_mod, _inp, out):
                states[layer] = _hidden(out)[0].detach().clone()
                self.tails[layer] = out[1:] if isinstance(out, tuple) else None

            return hook

        handles = [b.register_forward_hook(save(i)) for i, b in enumerate(self.parts.blocks)]
        try:
            logits = self.parts.model(input_ids=self.ids, use_cache=False).logits
        finally:
            for h in handles:
                h.remove()
        p_clean = float(logits[0, self.loc.predict].float().softmax(-1)[self.loc.target_id])
        p_body = float(self._probs(self.ids)[0])  # the batched path (body + head) must give the same number
        if abs(p_body - p_clean) > 1e-3 * max(p_clean, 1e-6) + 1e-6:
            raise CausalTracingError(
                f"{type(self.parts.model).__name__}: the LM head applied to the body's last state gives p = {p_body:.6g}, "
                f"the full model {p_clean:.6g}; this family post-processes its logits and is not supported."
            )
        return states, p_clean

    def _probs(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.parts.base(input_ids=ids, use_cache=False).last_hidden_state[:, self.loc.predict]
        return self.parts.head(h).float().softmax(-1)[:, self.loc.target_id]

    @torch.no_grad()
    def probs(self, rows: Sequence[tuple[int, Sequence[tuple[int, int]]]], batch_rows: int) -> np.ndarray:
        """Target probability of each corrupted run ``(sample, [(layer, position), ...])``, float64."""
        out = []
        for lo in range(0, len(rows), batch_rows):
            out.append(self._batch(rows[lo : lo + batch_rows]))
        return np.concatenate(out) if out else np.zeros(0)

    def _skippable(self) -> bool:
        """Blocks can be replaced by stored outputs when they return nothing batch-shaped besides their output."""
        return all(t is None or not any(isinstance(x, torch.Tensor) for x in t) for t in self.tails)

    def _stored(self, layer: int, samples: torch.Tensor):
        """A stand-in for block ``layer``'s forward: its stored corrupted output for each row's draw."""
        h, tail = self.corrupted[layer][samples], self.tails[layer]
        return lambda *args, **kwargs: h if tail is None else (h, *tail)

    @torch.no_grad()
    def _batch(self, rows, capture: bool = False) -> np.ndarray:
        s, e = self.loc.subject
        samples = torch.tensor([r[0] for r in rows])
        noise = self.noise[samples]
        L = self.parts.n_layers
        first = (
            0 if capture or not self._skippable() else min(min((l for l, _ in r[1]), default=L) for r in rows)
        )
        by_layer: dict[int, tuple[list[int], list[int]]] = {}
        for r, (_, restore) in enumerate(rows):
            for layer, pos in restore:
                by_layer.setdefault(layer, ([], []))[0].append(r)
                by_layer[layer][1].append(pos)

        def corrupt(_mod, _inp, out):
            out = out.clone()
            out[:, s:e] += noise
            return out

        def restore(layer, r_idx, p_idx):
            def hook(_mod, _inp, out):
                h = _hidden(out).clone()
                h[r_idx, p_idx] = self.clean[layer][p_idx]
                return _replace(out, h)

            return hook

        def save(_mod, _inp, out):
            self.corrupted.append(_hidden(out).detach().clone())

        handles = [self.parts.embed.register_forward_hook(corrupt)]
        for layer, (r_idx, p_idx) in by_layer.items():
            rt, pt = (torch.tensor(x, device=self.device) for x in (r_idx, p_idx))
            handles.append(self.parts.blocks[layer].register_forward_hook(restore(layer, rt, pt)))
        if capture:
            handles += [b.register_forward_hook(save) for b in self.parts.blocks]
        for layer in range(first):
            self.parts.blocks[layer].forward = self._stored(layer, samples)
        try:
            p = self._probs(self.ids.expand(len(rows), -1))
        finally:
            for h in handles:
                h.remove()
            for layer in range(first):
                del self.parts.blocks[layer].forward
        return p.double().cpu().numpy()


def resolve_device(device: str = "auto") -> torch.device:
    return _resolve_device(device, "causal_tracing.device")


def trace(
    model: nn.Module,
    tokenizer,
    fact: Fact,
    *,
    model_name: str,
    noise_samples: int,
    seed: int,
    noise_sigmas: float,
    batch_rows: int = 256,
) -> tuple[dict, np.ndarray]:
    """Trace ``fact`` in ``model`` (already on its device and dtype, eval mode).

    Returns (summary dict, restored-probability matrix of shape (L, T), float64, averaged over the
    noise draws). The summary holds the tokens, positions, p_clean, p_corrupt (mean and per draw), σ.
    """
    t0 = time.monotonic()
    parts = decoder_parts(model, model_name)
    located = locate(tokenizer, fact)
    p0 = next(model.parameters())
    tracer = Tracer(
        parts,
        located,
        noise_samples=noise_samples,
        seed=seed,
        noise_sigmas=noise_sigmas,
        device=p0.device,
        dtype=p0.dtype,
    )
    L, T = parts.n_layers, len(located.ids)
    # Positions before the subject carry no noise and positions after the prediction cannot reach it (causal
    # mask): restoring them leaves p_corrupt, so only the positions in between are run.
    first, last = located.subject[0], located.predict
    p_corrupt = [float(p) for p in tracer.p_corrupt]
    matrix = np.full((noise_samples, L, T), np.array(p_corrupt)[:, None, None])
    for layer in range(L):  # one batch (or several of batch_rows) per layer: blocks below it are not run
        rows = [(k, [(layer, pos)]) for k in range(noise_samples) for pos in range(first, last + 1)]
        matrix[:, layer, first : last + 1] = tracer.probs(rows, batch_rows).reshape(noise_samples, -1)
    matrix = matrix.mean(axis=0)
    seconds = time.monotonic() - t0
    summary = {
        "model": model_name,
        "fact": fact.name,
        "prompt": fact.prompt,
        "subject": fact.subject,
        "target": fact.split()[1],
        "text": "".join(fact.split()),
        "tokens": located.tokens,
        "token_ids": located.ids,
        "subject_range": list(located.subject),
        "predict_position": located.predict,
        "target_id": located.target_id,
        "target_token": located.target_token,
        "n_layers": L,
        "n_tokens": T,
        "p_clean": tracer.p_clean,
        "p_corrupt": float(np.mean(p_corrupt)),
        "p_corrupt_samples": p_corrupt,
        "noise_samples": noise_samples,
        "seed": seed,
        "noise_sigmas": noise_sigmas,
        "embedding_sigma": tracer.sigma,
        "noise_std": tracer.noise_std,
        "dtype": str(p0.dtype).removeprefix("torch."),
        "device": str(p0.device),
        "architecture": type(model).__name__,
        "forward_rows": noise_samples * (L * (last + 1 - first) + 1),
        "seconds": round(seconds, 3),
    }
    log.info(
        "%s / %s: p_clean %.4f, p_corrupt %.4f, %d x %d restorations x %d draws in %.1f s",
        model_name,
        fact.name,
        tracer.p_clean,
        summary["p_corrupt"],
        L,
        T,
        noise_samples,
        seconds,
    )
    return summary, matrix


def causal_tracing_trace(
    model_dir: str | Path,
    outputs: list[tuple[str | Path, str | Path]],
    params: dict,
    *,
    model_name: str,
    batch_rows: int,
) -> list[dict]:
    """Rule ``causal_tracing_trace``: every fact in one model, which is loaded once. ``params``: facts (each
    name, prompt, subject, target), noise_samples, seed, noise_sigmas, device, dtype; ``outputs``: a
    (summary JSON, matrix .npy) pair per fact, in the same order. Writes each fact's summary and (L, T)
    matrix (atomically) as soon as it is traced; returns the summaries."""
    from depthwidth.models.load import load_model, read_spec

    facts = [Fact(**f) for f in params["facts"]]
    if len(outputs) != len(facts):
        raise ValueError(f"{len(facts)} facts but {len(outputs)} output pairs for model '{model_name}'")
    spec, _ = read_spec(model_dir)
    if not spec.causal:
        raise CausalTracingError(
            f"model '{model_name}' (family {spec.family}) is encoder-only: causal tracing reads a next-token "
            "probability and needs a decoder with an LM head. Fix: remove it from causal_tracing.models."
        )
    device = resolve_device(params["device"])
    loaded = load_model(model_dir, dtype=DTYPES[params["dtype"]], device=str(device))
    summaries = []
    for i, (fact, (out_json, out_npy)) in enumerate(zip(facts, outputs, strict=True), 1):
        summary, matrix = trace(
            loaded.model,
            loaded.tokenizer,
            fact,
            model_name=model_name,
            noise_samples=params["noise_samples"],
            seed=params["seed"],
            noise_sigmas=params["noise_sigmas"],
            batch_rows=batch_rows,
        )
        # the hub id (None for packaged or local models): the headline matches on it
        summary["model_id"] = spec.id
        atomic_write_npy(out_npy, matrix)
        atomic_write_json(out_json, summary)
        log.info("%s: fact %d of %d traced (%s)", model_name, i, len(facts), fact.name)
        summaries.append(summary)
    return summaries
