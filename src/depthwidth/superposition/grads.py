"""Exact loss and gradients of the toy model y = ReLU(x W Wᵀ + b) on one sparse batch, by two routes.

``loss_and_grads`` (one cell, W (n, m)) and ``loss_and_grads_t`` (the trainer's layout, Wᵀ (m, n)) run the
'hidden' route (h = x W, products over the batch's active rows) or the 'features' route (rows of W Wᵀ of
the batch's distinct active features); ``choose_path`` picks the cheaper. On the CPU the features route's
elementwise part is one pass of the compiled kernel (``fused``) where that builds, else the same in torch
ops (``_empty_rows``, ``_residual_into``), which compute the same quantities up to float rounding order.
"""

from __future__ import annotations

import torch

from depthwidth.superposition import fused
from depthwidth.superposition.batch import Batch, Workspace


def choose_path(m: int, active_rows: float, active_features: float, fused_pass: bool | None = None) -> str:
    """The cheaper exact gradient route for one cell and batch. 'hidden' costs 6·rows·n·m flops
    (rows: samples with an active feature) plus several unfused passes over the (rows × n) block;
    'features' costs 6·a·n·m (a: distinct active features) plus its (a × n) tables.

    Without the compiled pass (``fused_pass`` False) 'features' also makes those unfused passes, and its
    tables (about 5·a·n of memory traffic) weigh like m ≈ 30 extra columns on a 2-core CPU. Measured
    at n = 1000, batch 2048: the rule then picks the faster route in every case of power laws α ∈ {1,
    1.5, 2} and the linear law at m ∈ {10, 25, 100}, where the two differ by more than the timing noise.

    With it (the default where it builds, on the CPU) the rows cost one pass in cache instead, so
    'features' is cheaper whenever it does fewer flops, a ≤ rows; measured at α = 1 (a ≈ 506 of
    ≈ 1306 rows, where the rule above takes 'hidden' at m = 10): 'features' 2.4–2.9× faster at m = 10,
    25 and 100."""
    if fused_pass is None:
        fused_pass = fused.kernel() is not None
    if fused_pass:
        return "features" if active_features <= active_rows else "hidden"
    return "features" if active_features * (m + 30.0) < active_rows * m else "hidden"


def loss_and_grads(
    W: torch.Tensor, b: torch.Tensor, x: Batch, path: str, loss_scale: float = 1.0
) -> tuple[float, torch.Tensor, torch.Tensor]:
    """Loss (mean over batch and features) and the gradients (n, m), (n,) of ``loss_scale`` × loss for one
    cell on batch x (the paper's exp-17 scales its loss by 100 before the backward pass).

    Both routes are exact. With pre = x W Wᵀ + b and R = dL/dpre, dL/dW = (xᵀR) W + Rᵀ(x W).

    'hidden' forms h = x W (a gather) and the three products h Wᵀ, R W, Rᵀ h, each ∝ rows·n·m.
    Rows are processed in chunks of ≤ 512 active rows so that pre-activations (chunk × n floats)
    stay in cache; stacking many cells into one big tensor was measured 3× slower on a 2-core CPU
    because those tensors spill to memory.

    'features' uses that x has only a ≪ batch distinct active features (a ≈ 180 of n = 1000 at
    α = 1.5, batch 2048): it forms the a rows G_A = W_A Wᵀ of the Gram matrix, pre = x_A G_A + b (a
    weighted gather), D = x_Aᵀ R (another, grouped by feature) and dL/dW = scatter_A(D W) + Dᵀ W_A,
    three products ∝ a·n·m. On the CPU its elementwise part (pre, ReLU, residual, loss, dL/db and D)
    is one pass of the compiled kernel of ``fused`` where that builds, else the same in torch ops.
    """
    loss, gWt, gb = loss_and_grads_t(W.t().contiguous(), b, x, path, loss_scale, Workspace(W.device, W.dtype))
    return loss, gWt.t().contiguous(), gb


def loss_and_grads_t(
    Wt: torch.Tensor,
    b: torch.Tensor,
    x: Batch,
    path: str,
    loss_scale: float,
    ws: Workspace,
    out: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> tuple[float, torch.Tensor, torch.Tensor]:
    """``loss_and_grads`` on the trainer's layout: Wt = Wᵀ (m, n) in, dL/dWᵀ (m, n) out (written into
    ``out`` when given, with dL/db). ``ws``: scratch tensors reused across calls."""
    if path == "features":
        return loss_and_grads_features(Wt, b, x, loss_scale, ws, out)
    if path != "hidden":
        raise ValueError(f"path must be 'features' or 'hidden', not {path!r}")
    loss, gW, gb = _loss_and_grads_hidden(Wt.t().contiguous(), b, x, loss_scale)
    if out is None:
        return loss, gW.t().contiguous(), gb
    out[0].copy_(gW.t())
    out[1].copy_(gb)
    return loss, out[0], out[1]


def _loss_and_grads_hidden(
    W: torch.Tensor, b: torch.Tensor, x: Batch, loss_scale: float
) -> tuple[float, torch.Tensor, torch.Tensor]:
    B, n = x.B, x.n
    Wt = W.t().contiguous()  # (m, n): MKL is ~4× faster with this orientation than a skinny (n, m)
    sq, gb = _empty_rows(b, x)
    gW = torch.zeros_like(W)
    gWt = torch.zeros_like(Wt)
    for r0, r1, k0, k1 in x.chunks:
        feats, vals = x.feats[k0:k1], x.vals[k0:k1]
        rid = x.rid[k0:k1] - r0
        offs = x.row_offsets[r0:r1] - k0
        # h = x_chunk W: each active row sums its features' rows of W, weighted by their values
        z = torch.nn.functional.embedding_bag(feats, W, offs, mode="sum", per_sample_weights=vals)
        y = torch.addmm(b, z, Wt).clamp_min_(0.0)  # (rows, n) ReLU(pre)
        R, sq_rows = _residual_into(y, rid, feats, vals)
        sq += sq_rows
        gb += R.sum(0)
        dh = (Wt @ R.t()).t()  # (rows, m) = R W
        gW.index_add_(0, feats, dh[rid] * vals[:, None])  # xᵀ (R W)
        gWt += z.t() @ R  # (Rᵀ h)ᵀ
    gW += gWt.t()
    scale = 2.0 * loss_scale / (B * n)
    return sq / (B * n), gW.mul_(scale), gb.mul_(scale)


def _empty_rows(b: torch.Tensor, x: Batch) -> tuple[float, torch.Tensor]:
    """Summed squared error and dL/db · (B n / 2) of the rows with no active feature, in closed form:
    there pre = b, so each such row contributes ‖ReLU(b)‖² and ReLU(b)."""
    n_empty = x.B - x.Ba
    relu_b = b.clamp_min(0.0)
    return n_empty * float((relu_b**2).sum()), n_empty * relu_b


def _residual_into(y: torch.Tensor, rid, feats, vals) -> tuple[torch.Tensor, float]:
    """Turn y = ReLU(pre) (rows × n, in place) into R = dL/dpre · (B n / 2); return it and the rows'
    summed squared error. R equals y off the active entries (the ReLU is already 0 where
    pre ≤ 0); at an active entry the residual y − x counts in the loss even where the ReLU is off,
    but its gradient needs the ReLU mask."""
    y_act = y[rid, feats]
    res = y_act - vals
    yf = y.view(-1)
    sq = float(torch.dot(yf, yf)) - float(y_act.dot(y_act)) + float(res.dot(res))
    y[rid, feats] = res * (y_act > 0)
    return y, sq


def loss_and_grads_features(
    Wt: torch.Tensor,
    b: torch.Tensor,
    x: Batch,
    loss_scale: float,
    ws: Workspace,
    out: tuple[torch.Tensor, torch.Tensor] | None,
    scaled: bool = True,
) -> tuple[float, torch.Tensor, torch.Tensor]:
    """The features route on the trainer's layout. ``scaled=False`` leaves the gradients unscaled (the
    caller multiplies them by ``grad_scale``, as the compiled update does in its pass)."""
    B, n, m, a = x.B, x.n, Wt.shape[0], x.n_features
    gWt, gb = out if out is not None else (torch.empty_like(Wt), torch.empty_like(b))
    # W_Aᵀ (m, a), gathered along Wᵀ's rows, and Wᵀ (m, n): the products below are oriented as MKL runs
    # them fastest at small m
    WAt = torch.index_select(Wt, 1, x.act, out=ws.get("WAt", m, a))  # W_Aᵀ (m, a)
    GA = torch.mm(WAt.t(), Wt, out=ws.get("GA", a, n))  # (a, n) rows of W Wᵀ
    D = ws.get("D", a, n)
    if (
        Wt.device.type == "cpu"
        and Wt.dtype == b.dtype == torch.float32
        and b.is_contiguous()
        and fused.kernel() is not None
    ):
        # one pass over the rows, in cache: pre, ReLU, residual, loss, dL/db and D = x_Aᵀ R
        sq = fused.fused_rows(GA, b, x, D, gb)
    else:
        emb = torch.nn.functional.embedding_bag
        y = emb(x.inv, GA, x.row_offsets, mode="sum", per_sample_weights=x.vals).add_(b).clamp_min_(0.0)
        R, sq_rows = _residual_into(y, x.rid, x.feats, x.vals)
        sq, gb_empty = _empty_rows(b, x)
        sq += sq_rows
        torch.add(gb_empty, R.sum(0), out=gb)
        D.copy_(emb(x.f_rid, R, x.f_offsets, mode="sum", per_sample_weights=x.f_vals))
    torch.mm(WAt, D, out=gWt)  # (Rᵀ x W)ᵀ
    gWt.index_add_(1, x.act, torch.mm(Wt, D.t(), out=ws.get("DW", m, a)))  # (xᵀ R W)ᵀ
    if not scaled:
        return sq / (B * n), gWt, gb
    scale = grad_scale(x, loss_scale)
    return sq / (B * n), gWt.mul_(scale), gb.mul_(scale)


def grad_scale(x: Batch, loss_scale: float) -> float:
    """The factor from R (the kernel's and the torch code's residual) to the gradient of loss_scale × loss."""
    return 2.0 * loss_scale / (x.B * x.n)
