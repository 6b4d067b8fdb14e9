"""Per-token, per-layer metrics of one batch, computed on the model's device.

Notation (shapes per batch): ``h_l`` for ``l = 0..L`` are the ``L + 1`` hidden states that
``output_hidden_states=True`` returns: ``h_0`` the embedding output, ``h_l`` the input of block ``l``
(0-based) and ``h_L`` the last hidden state, which Hugging Face models return *after* the final norm.
For every kept token (``N`` of them) the metrics are

==================  ==========  =============================================================
name                shape       definition
==================  ==========  =============================================================
theta               (N, L)      angle(h_l, h_{l+1}), l = 0..L-1, radians
theta_dh            (N, L-1)    angle(Δh_l, Δh_{l+1}) with Δh_l = h_{l+1} - h_l, radians
norm                (N, L+1)    ‖h_l‖ (model units)
angle_to_last       (N, L)      angle(h_l, h_L), radians
progress            (N, L+1)    s_l = ⟨h_l - h_0, h_L - h_0⟩ / ‖h_L - h_0‖² (0 at l=0, 1 at l=L)
loss_logit_lens     (N, L+1)    next-token loss (nats) of head(final_norm(h_l)); l = L is the model's own loss
loss_last_block     (N, L)      next-token loss (nats) of head(final_norm(block_{L-1}(h_l))), the paper's
                                variant: the model that keeps blocks 0..l-1 and the last block;
                                l = L-1 is the model's own loss
==================  ==========  =============================================================

The last block is re-run with the causal mask of the model's own call (``last_block_mask="causal"``).
``"padding_only"`` reproduces the paper's Pythia script, which called the last block with a mask that
hides only the padding: transformers' SDPA attention then treats that mask as the whole mask (its causal
flag is used only when no mask is given), so for l < L-1 every position sees the later tokens of its row,
the next one included. The column l = L-1 is the model's own (causal) loss either way.

With a loss stride k > 1 the loss columns are only the layers 0, k, 2k, ... and the model's own output;
``loss_<variant>_layers`` lists them.

A position ``t`` is kept only when it and its successor ``t + 1`` are real (unpadded) tokens, so
every kept token has a next-token target and padding never enters a statistic.

Angles are ``acos`` of the cosine clamped to [-1, 1]. With ``angle_precision="float32"`` (the default)
the states are cast to float32 first and the cosine and the arccos are computed in float32, whatever the
model's dtype. The paper's scripts compute the cosine in the model's dtype (``F.cosine_similarity`` of
bf16 states, Δh as a bf16 difference) and only the arccos in float32; the cosine is then rounded to
bf16, whose values just below 1 are 1 − 2⁻⁸ and 1 − 2⁻⁷, so an angle below about 3.6° (cosine above
1 − 2⁻⁹) reads 0, one between about 3.6° and 6.2° reads 5.07° and the next reading is 7.17° (the bf16
roundings inside ``cosine_similarity`` move these boundaries by a few tenths of a degree at width 1024,
more at smaller widths). ``angle_precision="paper_bf16"`` reproduces that: the states are rounded to bf16
(a no-op for a bf16 model), the cosine is ``F.cosine_similarity`` in bf16 and the arccos float32. Norms
and progress are float32 in both settings (the paper's are computed in bf16: rounded, with no threshold
of the kind above).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

LOSSES = ("logit_lens", "last_block")
LAST_BLOCK_MASKS = ("causal", "padding_only")
ANGLE_PRECISIONS = ("float32", "paper_bf16")

# Where architectures keep the final norm, looked for on the base model and on its ``decoder``.
_NORM_NAMES = ("norm", "final_layer_norm", "ln_f", "norm_f", "final_layernorm")


class UnsupportedModelError(RuntimeError):
    """The model's layers, final norm or head could not be located; the message says what to add."""


@dataclass
class ModelParts:
    """The pieces of a Hugging Face model that the metrics need.

    ``decode(h)`` maps a residual-stream state ``(..., d)`` to logits ``(..., vocab)`` the way the
    model maps its last block's output (final norm, optional projection, LM head); it is ``None``
    for encoders without a causal LM head (BERT, MiniLM), whose losses are then not computed.
    """

    model: nn.Module
    n_layers: int
    last_layer: nn.Module
    final_norm: nn.Module | None
    project_out: nn.Module | None
    lm_head: nn.Module | None
    causal: bool

    def post(self, h: torch.Tensor) -> torch.Tensor:
        if self.final_norm is not None:
            h = self.final_norm(h)
        if self.project_out is not None:
            h = self.project_out(h)
        return h

    @property
    def decode(self) -> Callable[[torch.Tensor], torch.Tensor] | None:
        if self.lm_head is None or not self.causal:
            return None
        return lambda h: self.lm_head(self.post(h))


def _n_layers(model: nn.Module) -> int:
    cfg = model.config
    for key in ("num_hidden_layers", "n_layer", "num_layers"):
        if isinstance(getattr(cfg, key, None), int):
            return getattr(cfg, key)
    raise UnsupportedModelError(
        f"{type(model).__name__}: its config names no layer count (num_hidden_layers)"
    )


def find_parts(model: nn.Module) -> ModelParts:
    """Locate the block list, final norm and LM head of a Hugging Face model, whatever its family."""
    n = _n_layers(model)
    base = getattr(model, "base_model", model)
    layers = None
    for _, mod in base.named_modules():  # named_modules is breadth-first enough: the block list comes first
        if isinstance(mod, nn.ModuleList) and len(mod) == n:
            layers = mod
            break
    if layers is None:
        raise UnsupportedModelError(
            f"{type(model).__name__}: no list of {n} blocks found. Add its layout to "
            "depthwidth.hidden_states.metrics.find_parts."
        )
    final_norm = None
    for holder in (base, getattr(base, "decoder", None)):
        if holder is None:
            continue
        for name in _NORM_NAMES:
            mod = getattr(holder, name, None)
            if isinstance(mod, nn.Module):
                final_norm = mod
                break
        if final_norm is not None:
            break
    project_out = getattr(getattr(base, "decoder", None), "project_out", None)
    lm_head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    causal = bool(lm_head is not None and getattr(model, "can_generate", lambda: False)())
    return ModelParts(model, n, layers[-1], final_norm, project_out, lm_head, causal)


def valid_positions(attention_mask: torch.Tensor) -> torch.Tensor:
    """(B, T-1) bool: position t is kept when t and t+1 are both real tokens (mask == 1)."""
    m = attention_mask.bool()
    return m[:, :-1] & m[:, 1:]


def angle(
    a: torch.Tensor, b: torch.Tensor, na: torch.Tensor | None = None, nb: torch.Tensor | None = None
) -> torch.Tensor:
    """Angle in radians between rows of ``a`` and ``b`` (N, d) -> (N,); norms may be passed in."""
    na = a.norm(dim=-1) if na is None else na
    nb = b.norm(dim=-1) if nb is None else nb
    cos = (a * b).sum(-1) / (na * nb).clamp_min(1e-12)
    return cos.clamp(-1.0, 1.0).acos()


def paper_angle(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The paper's angle between rows of ``a`` and ``b`` (N, d) -> (N,) float32: the cosine computed and
    rounded in bf16 (``F.cosine_similarity``), only the arccos in float32 (see the module docstring)."""
    cos = F.cosine_similarity(a.bfloat16(), b.bfloat16(), dim=-1)
    return cos.clamp(-1.0, 1.0).float().acos()


def geometry(states: list[torch.Tensor], angle_precision: str = "float32") -> dict[str, torch.Tensor]:
    """Geometric metrics of kept tokens from their L+1 states, each (N, d) in any float dtype.

    Works layer by layer (float32 copies of at most four states at once), so memory stays at a few
    times N·d whatever the depth. ``angle_precision``: ``float32`` or ``paper_bf16`` (the module docstring).
    """
    if angle_precision not in ANGLE_PRECISIONS:
        raise ValueError(f"unknown angle_precision {angle_precision!r}; choose from {ANGLE_PRECISIONS}")
    if angle_precision == "paper_bf16":
        return _paper_geometry(states)
    L = len(states) - 1
    x0 = states[0].float()
    xL = states[L].float()
    u = xL - x0
    uu = (u * u).sum(-1).clamp_min(1e-20)
    nL = xL.norm(dim=-1)
    theta, theta_dh, norm, to_last, progress = [], [], [], [], []
    x_prev, n_prev, d_prev = x0, x0.norm(dim=-1), None
    norm.append(n_prev)
    progress.append(torch.zeros_like(n_prev))
    for l in range(L):
        to_last.append(angle(x_prev, xL, n_prev, nL))
        x_next = xL if l + 1 == L else states[l + 1].float()
        n_next = nL if l + 1 == L else x_next.norm(dim=-1)
        theta.append(angle(x_prev, x_next, n_prev, n_next))
        d = x_next - x_prev
        if d_prev is not None:
            theta_dh.append(angle(d_prev, d))
        norm.append(n_next)
        progress.append(((x_next - x0) * u).sum(-1) / uu)
        x_prev, n_prev, d_prev = x_next, n_next, d

    def stack(xs):
        return torch.stack(xs, dim=1) if xs else x0.new_zeros((x0.shape[0], 0))

    return {
        "theta": stack(theta),
        "theta_dh": stack(theta_dh),
        "norm": stack(norm),
        "angle_to_last": stack(to_last),
        "progress": stack(progress),
    }


def _paper_geometry(states: list[torch.Tensor]) -> dict[str, torch.Tensor]:
    """:func:`geometry` with the paper's angles (:func:`paper_angle`; Δh_l = h_{l+1} − h_l in bf16);
    norms and progress as in float32 mode."""
    res = geometry(states, "float32")
    L = len(states) - 1
    hb = [h.bfloat16() for h in states]  # a no-op (no copy) for a bf16 model
    theta = [paper_angle(hb[l], hb[l + 1]) for l in range(L)]
    to_last = [paper_angle(hb[l], hb[L]) for l in range(L)]
    theta_dh = []
    d_prev = None
    for l in range(L):
        d = hb[l + 1] - hb[l]
        if d_prev is not None:
            theta_dh.append(paper_angle(d_prev, d))
        d_prev = d
    empty = res["theta"].new_zeros((res["theta"].shape[0], 0))
    res.update(
        theta=torch.stack(theta, dim=1) if theta else empty,
        theta_dh=torch.stack(theta_dh, dim=1) if theta_dh else empty,
        angle_to_last=torch.stack(to_last, dim=1) if to_last else empty,
    )
    return res


def next_token_loss(
    decode: Callable[[torch.Tensor], torch.Tensor],
    states: torch.Tensor,
    targets: torch.Tensor,
    chunk_tokens: int = 4096,
) -> torch.Tensor:
    """Cross-entropy (nats, float32) of ``decode(states)`` against ``targets``: (N, d), (N,) -> (N,).

    Decoding goes ``chunk_tokens`` rows at a time so the (rows, vocab) logits never hold all tokens.
    """
    out = []
    for i in range(0, states.shape[0], chunk_tokens):
        logits = decode(states[i : i + chunk_tokens]).float()
        t = targets[i : i + chunk_tokens]
        # logsumexp minus the target's logit: cross-entropy without writing a second (rows, vocab) array
        out.append(logits.logsumexp(-1) - logits.gather(1, t[:, None]).squeeze(1))
    return torch.cat(out) if out else states.new_zeros((0,), dtype=torch.float32)


_CACHE_KEYS = ("past_key_values", "past_key_value", "layer_past", "cache")


def _is_cache(k: str, v: Any) -> bool:
    try:
        from transformers.cache_utils import Cache
    except ImportError:  # pragma: no cover
        Cache = ()
    return k in _CACHE_KEYS or isinstance(v, Cache)


class _CaptureCall:
    """Forward pre-hook that records how the model called its last block (positional args, kwargs).

    Re-calling the block with another hidden state and the same masks / rotary embeddings is then
    architecture-agnostic: no family-specific mask or position code is rebuilt.
    """

    def __init__(self, module: nn.Module):
        self.args: tuple = ()
        self.kwargs: dict[str, Any] = {}
        self.handle = module.register_forward_pre_hook(self, with_kwargs=True)

    def __call__(self, module, args, kwargs):
        # A KV cache would make the re-run attend to the keys of the first call as well.
        self.args = args
        self.kwargs = {k: (None if _is_cache(k, v) else v) for k, v in kwargs.items()}
        if "use_cache" in self.kwargs:
            self.kwargs["use_cache"] = False

    def rerun(
        self, module: nn.Module, h: torch.Tensor, attention_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        """The block on ``h`` with the recorded arguments; ``attention_mask`` replaces the recorded mask."""
        kwargs = self.kwargs
        if attention_mask is not None:
            if "attention_mask" not in kwargs:
                raise UnsupportedModelError(
                    f"{type(module).__name__} is not called with an attention_mask "
                    "keyword; its mask cannot be replaced (use last_block_mask: causal)"
                )
            kwargs = {**kwargs, "attention_mask": attention_mask}
        if self.args:
            out = module(h, *self.args[1:], **kwargs)
        else:
            out = module(**{**kwargs, "hidden_states": h})
        return out[0] if isinstance(out, (tuple, list)) else out

    def remove(self) -> None:
        self.handle.remove()


def padding_only_mask(attention_mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The paper's mask: (B, T) 0/1 -> (B, 1, 1, T) additive, 0 at real tokens and the dtype's minimum at
    pads, with no causal part (as ``get_extended_attention_mask`` gives for a config that is not a decoder)."""
    keep = attention_mask[:, None, None, :].to(dtype)
    return (1.0 - keep) * torch.finfo(dtype).min


def loss_layers(n_layers: int, stride: int, variant: str) -> list[int]:
    """Columns of a per-layer loss that are computed: every ``stride``-th layer from 0, plus the model's
    own output (l = L for the logit lens, l = L-1 for the last-block variant)."""
    last = n_layers if variant == "logit_lens" else n_layers - 1
    return sorted(set(range(0, last + 1, max(1, stride))) | {last})


@torch.inference_mode()
def batch_metrics(
    parts: ModelParts,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    losses: tuple[str, ...] = LOSSES,
    chunk_tokens: int = 4096,
    keep_raw: int = 0,
    loss_stride: int = 1,
    last_block_mask: str = "causal",
    angle_precision: str = "float32",
) -> dict[str, torch.Tensor]:
    """All metrics of one right-padded batch; tensors stay on the model's device.

    ``input_ids``, ``attention_mask``: (B, T) on the model's device. Returns the metrics of the module
    docstring for the ``N`` kept tokens, in (batch row, position) order, plus ``row`` and ``position``
    (N,) int64, ``token_id`` and ``target_id`` (N,), and ``raw_hidden`` (min(N, keep_raw), L+1, d)
    float32 when ``keep_raw`` > 0. With ``loss_stride`` > 1 the losses are computed only at the layers
    of :func:`loss_layers` (each costs one LM-head pass), listed in ``loss_<variant>_layers``.
    ``last_block_mask``: ``causal`` (the model's own mask) or ``padding_only`` (the paper's, see the module
    docstring) for the last-block re-runs. ``angle_precision``: ``float32`` or ``paper_bf16`` (the module
    docstring).
    """
    unknown = set(losses) - set(LOSSES)
    if unknown:
        raise ValueError(f"unknown losses {sorted(unknown)}; choose from {LOSSES}")
    if last_block_mask not in LAST_BLOCK_MASKS:
        raise ValueError(f"unknown last_block_mask {last_block_mask!r}; choose from {LAST_BLOCK_MASKS}")
    if angle_precision not in ANGLE_PRECISIONS:
        raise ValueError(f"unknown angle_precision {angle_precision!r}; choose from {ANGLE_PRECISIONS}")
    decode = parts.decode
    losses = tuple(losses) if decode is not None else ()
    capture = _CaptureCall(parts.last_layer) if "last_block" in losses else None
    try:
        out = parts.model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            output_hidden_states=True,
            use_cache=False,
            return_dict=True,
        )
    finally:
        if capture is not None:
            capture.remove()
    hs = out.hidden_states
    L = len(hs) - 1
    if L != parts.n_layers:
        raise UnsupportedModelError(
            f"{type(parts.model).__name__} returned {len(hs)} hidden states, "
            f"expected n_layers + 1 = {parts.n_layers + 1}"
        )
    if hs[-1].shape[-1] != hs[0].shape[-1]:
        raise UnsupportedModelError(
            f"{type(parts.model).__name__}: the last hidden state has width {hs[-1].shape[-1]} but the others "
            f"{hs[0].shape[-1]} (a projection after the last block, as in OPT-350m); angles across it are "
            "undefined. Use another size of the family."
        )
    valid = valid_positions(attention_mask)
    rows, pos = valid.nonzero(as_tuple=True)
    kept = [h[:, :-1][valid] for h in hs]  # L+1 tensors (N, d), model dtype
    res = geometry(kept, angle_precision)
    targets = input_ids[:, 1:][valid]
    res.update(row=rows, position=pos, token_id=input_ids[:, :-1][valid], target_id=targets)
    own = None
    if losses:
        own = F.cross_entropy(out.logits[:, :-1][valid].float(), targets, reduction="none")
    if "logit_lens" in losses:
        layers = loss_layers(L, loss_stride, "logit_lens")
        per_layer = [
            own if l == L else next_token_loss(decode, kept[l], targets, chunk_tokens) for l in layers
        ]
        res["loss_logit_lens"] = torch.stack(per_layer, dim=1)
        res["loss_logit_lens_layers"] = torch.tensor(layers, dtype=torch.int32)
    if "last_block" in losses:
        layers = loss_layers(L, loss_stride, "last_block")
        mask = padding_only_mask(attention_mask, hs[0].dtype) if last_block_mask == "padding_only" else None
        per_layer = []
        for l in layers:
            if l == L - 1:  # the last block applied to its real input is the model itself
                per_layer.append(own)
                continue
            y = capture.rerun(parts.last_layer, hs[l], attention_mask=mask)
            per_layer.append(next_token_loss(decode, y[:, :-1][valid], targets, chunk_tokens))
        res["loss_last_block"] = torch.stack(per_layer, dim=1)
        res["loss_last_block_layers"] = torch.tensor(layers, dtype=torch.int32)
    if keep_raw > 0:
        k = min(keep_raw, kept[0].shape[0])
        res["raw_hidden"] = torch.stack([h[:k].float() for h in kept], dim=1)
    return res
