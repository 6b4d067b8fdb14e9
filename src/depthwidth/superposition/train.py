"""Trainers for the toy model y = ReLU(x W Wᵀ + b), W ∈ R^{n×m}, b ∈ R^n, MSE loss.

``train_cells`` trains C cells (different weight decay γ and width m, same feature law, n, batch
and schedule) on one shared input stream drawn sparsely (only the ≈ batch·Σp active entries), with
hand-written gradients that use the sparsity of x: rows without an active feature are summed in
closed form, and the dense products run over the batch's few distinct active features (or, where
that is cheaper, its active rows) instead of the whole batch. ``reference_train`` is the paper's plain loop (dense random
input, autograd, one cell), kept as the ground truth for tests and the benchmark.

Mathematics (both trainers): W₀ = randn(n, m)/√m, b₀ = randn(n); loss = mean over batch and
features of (ReLU(x W Wᵀ + b) − x)²; Adam(β = 0.9, 0.999, ε = 1e-8) on W and b; before each Adam
step, decay on W only: γ ≥ 0 gives W ← W(1 − γ·lr), γ < 0 gives W_i ← W_i + lr·γ·W_i(1 − 1/‖W_i‖)
(row norms pulled to 1). Learning rate: linear warm-up, then cosine down to ``min_lr_ratio``×peak.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.numpy import save_file

from depthwidth.files import atomic_write
from depthwidth.integrity import load_checkpoint, save_checkpoint, seal, unseal, write_json
from depthwidth.superposition import fused
from depthwidth.superposition.data import SparseSampler, feature_probabilities, parse_distribution

log = logging.getLogger("depthwidth.superposition")


@dataclass(frozen=True)
class TrainSettings:
    """Settings shared by every cell of a job. ``lr`` is the peak lr of W at width ``lr_width_reference``;
    a cell of width m uses lr·(lr_width_reference/m)^lr_width_exponent (exp-17: 0.02·(8/m)^0.25), and
    its bias uses ``lr_bias_over_m``/m when set (exp-17: 2/m), else the same lr as W. ``loss_scale``
    multiplies the loss before the gradients (exp-17: 100, exp-10: 1); with Adam it only changes how
    the gradients compare with ε = 1e-8, which matters when they are tiny (n = 10240, batch 8192)."""

    n: int
    batch: int
    steps: int
    warmup_steps: int
    lr: float = 1e-2
    min_lr_ratio: float = 0.05
    lr_width_exponent: float = 0.0
    lr_width_reference: float = 8.0
    lr_bias_over_m: float | None = None
    loss_scale: float = 1.0
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    seed: int = 0


def lr_factor(step: int, steps: int, warmup_steps: int, min_ratio: float = 0.05) -> float:
    """The paper's schedule (exp-10 ``get_lr``) as a fraction of the peak, for 0-based ``step``."""
    s = step + 1
    if warmup_steps < steps:
        if s < warmup_steps:
            return s / warmup_steps
        return (1 - min_ratio) * 0.5 * (
            1 + math.cos(math.pi * (s - warmup_steps) / (steps - warmup_steps))
        ) + min_ratio
    return (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * s / steps)) + min_ratio


def cell_lrs(settings: TrainSettings, m: int) -> tuple[float, float]:
    """(peak lr of W, peak lr of b) for width m."""
    lr_w = settings.lr * (settings.lr_width_reference / m) ** settings.lr_width_exponent
    lr_b = settings.lr_bias_over_m / m if settings.lr_bias_over_m is not None else lr_w
    return lr_w, lr_b


def _seed_of(*parts) -> int:
    """A 63-bit seed from any labels (stable across runs and machines, unlike ``hash``)."""
    h = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(h[:8], "little") & (2**63 - 1)


def init_params(n: int, m: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """W₀ (n, m) = randn/√m and b₀ (n,) = randn, from a generator seeded by (seed, n, m) only, so cells
    that differ in γ start from the same weights and a cell's start never depends on its job."""
    g = torch.Generator().manual_seed(_seed_of("init", seed, n, m))
    W = torch.randn(n, m, generator=g) / math.sqrt(m)
    b = torch.randn(n, generator=g)
    return W, b


class TrainingDiverged(FloatingPointError):
    pass


@dataclass
class CellResult:
    gamma: float
    m: int
    W: np.ndarray  # (n, m) float32, final weights
    b: np.ndarray  # (n,) float32, final bias
    losses: np.ndarray  # (steps,) float32, training loss of each step's batch


def train_cells(
    dist: str,
    gammas: list[float],
    widths: list[int],
    settings: TrainSettings,
    checkpoint: str | Path | None = None,
    checkpoint_every: int = 0,
    path: str = "auto",
    threads: int | None = None,
    progress_every_s: float = 10.0,
    device: str = "cpu",
    job: dict | None = None,
) -> list[CellResult]:
    """Train C = len(gammas) cells (γ_c, m_c) on one data stream and return one ``CellResult`` each.

    All cells see the same inputs (drawn from a generator seeded by (seed, dist, n, batch)), so a
    cell's numbers do not depend on which other cells share its job: cells of one width are stored as
    one stack and stepped together, but every product, reduction and update is the cell's own.

    ``path``: 'features' forms the rows of W Wᵀ of the batch's active features (cost ∝ a·n·m),
    'hidden' forms h = x W (cost ∝ rows·n·m); 'auto' picks the cheaper for each batch and width
    (``choose_path``), and the choice is a function of the batch and of whether the compiled pass of
    ``fused`` is in use, so a resumed run on the same machine repeats it.
    ``checkpoint``: file written atomically and sealed (``depthwidth.integrity``) every ``checkpoint_every``
    steps, and resumed from only when it matches its seal and its fingerprint (law, γs, widths, settings,
    gradient route and ``job``: what else determines the cells, e.g. the rule's params); a damaged,
    incomplete or foreign checkpoint is logged, moved aside (``<name>.bad-<time>``) and training starts
    from step 0. ``device``: where the cells train ('cpu' or 'cuda'); the
    inputs are drawn on the CPU either way, so a cell sees the same data on both.
    """
    if len(gammas) != len(widths) or not gammas:
        raise ValueError("gammas and widths must be non-empty lists of equal length")
    if threads:
        torch.set_num_threads(int(threads))
    S = settings
    n, B, C = S.n, S.batch, len(gammas)
    label = f"{dist} n={n} seed={S.seed}"
    p = feature_probabilities(parse_distribution(dist), n)

    # Cells of equal width are stored as one stack of Wᵀ (C_m, m, n); each is stepped on its own
    # (faster than one big batched product on a CPU, see loss_and_grads).
    groups = {m: [c for c in range(C) if widths[c] == m] for m in sorted(set(widths))}
    params = {}
    for m, idx in groups.items():
        W0, b0 = init_params(n, m, S.seed)
        W = W0.t().expand(len(idx), m, n).contiguous().to(device)
        b = b0.expand(len(idx), n).clone().to(device)
        params[m] = {
            "Wt": W,
            "b": b,
            "mW": torch.zeros_like(W),
            "vW": torch.zeros_like(W),
            "mb": torch.zeros_like(b),
            "vb": torch.zeros_like(b),
            "gamma": torch.tensor([float(gammas[c]) for c in idx], device=device),
        }
    losses = torch.zeros(C, S.steps)
    gen = torch.Generator().manual_seed(_seed_of("data", S.seed, dist, n, B))
    start = 0

    fingerprint = {
        "dist": dist,
        "gammas": list(map(float, gammas)),
        "widths": list(map(int, widths)),
        "settings": asdict(S),
        "path": path,
        "job": job,
        "layout": "Wt (C, m, n)",  # a checkpoint of another layout is not resumed
    }
    ckpt = Path(checkpoint) if checkpoint else None
    # The seal holds the fingerprint: a checkpoint of other settings, or a damaged one, is moved aside.
    state = load_checkpoint(ckpt, fingerprint, weights_only=False, map_location=device) if ckpt else None
    if state is not None:
        params, losses = state["params"], state["losses"]
        gen.set_state(state["gen"].cpu())
        start = int(state["step"])
        log.info("%s: resumed from checkpoint %s at step %d", label, ckpt, start)

    sampler = SparseSampler(p, B, gen)
    if path not in ("auto", "features", "hidden"):
        raise ValueError(f"path must be 'auto', 'features' or 'hidden', not {path!r}")
    log.info(
        "%s: %d cells (gamma, m) = %s, %d steps, batch %d, path %s, from step %d",
        label,
        C,
        list(zip(gammas, widths)),
        S.steps,
        B,
        path,
        start,
    )
    path_steps = {m: {"features": 0, "hidden": 0} for m in groups}
    ws = _Workspace(device, torch.float32)
    fused_pass = torch.device(device).type == "cpu" and fused.kernel() is not None
    compiled = {m: fused.update_ok(params[m]) for m in groups}  # the compiled update, per width group
    t0 = time.monotonic()
    t_last = t0
    for step in range(start, S.steps):
        f = lr_factor(step, S.steps, S.warmup_steps, S.min_lr_ratio)
        batch = _Batch(*(t.to(device) for t in sampler.sample()), B, n)
        for m, idx in groups.items():
            lr_w, lr_b = (lr * f for lr in cell_lrs(S, m))
            pm = path if path != "auto" else choose_path(m, batch.Ba, batch.n_features, fused_pass)
            path_steps[m][pm] += 1
            loss = _step_group(params[m], batch, pm, lr_w, lr_b, step + 1, S, ws, compiled[m])
            if not all(map(math.isfinite, loss.tolist())):
                c = idx[int(torch.nonzero(~torch.isfinite(loss))[0])]
                raise TrainingDiverged(
                    f"training diverged (loss={float(loss[idx.index(c)])}) in cell gamma={gammas[c]:g}, "
                    f"distribution={dist}, m={widths[c]}, n={n}, seed={S.seed} at step {step}; "
                    "lower superposition.lr or raise superposition.warmup_steps. No output was written."
                )
            losses[idx, step] = loss

        done = step + 1
        if ckpt is not None and checkpoint_every and done % checkpoint_every == 0 and done < S.steps:
            # atomic, then sealed: a kill between the two leaves a checkpoint without a valid seal, which a
            # rerun moves aside
            save_checkpoint(
                {
                    "fingerprint": fingerprint,
                    "params": params,
                    "losses": losses,
                    "gen": gen.get_state(),
                    "step": done,
                },
                ckpt,
                fingerprint,
            )
        now = time.monotonic()
        if now - t_last >= progress_every_s or done == S.steps:
            t_last = now
            rate = (done - start) / max(now - t0, 1e-9)
            log.info(
                "%s: step %d/%d (%.0f%%), %.1f steps/s, eta %.0fs, loss %s",
                label,
                done,
                S.steps,
                100 * done / S.steps,
                rate,
                (S.steps - done) / max(rate, 1e-9),
                " ".join(f"{v:.3e}" for v in losses[:, step].tolist()),
            )
    log.info("%s: steps per gradient route and width: %s", label, path_steps)

    out = []
    for c, (gmm, m) in enumerate(zip(gammas, widths)):
        j = groups[m].index(c)
        P = params[m]
        out.append(
            CellResult(
                float(gmm),
                int(m),
                np.ascontiguousarray(P["Wt"][j].t().cpu().numpy()),
                P["b"][j].cpu().numpy().copy(),
                losses[c].numpy().copy(),
            )
        )
    return out


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


class _Batch:
    """One sparse input batch: the K active entries (row, feature, value) sorted by row, their row
    index among the Ba distinct active rows (``rid``), row chunks for cache-sized blocks, and the
    same entries grouped by feature: the a distinct active features ``act``, each entry's index
    among them (``inv``) and, in feature order, the entries' rows, values and group offsets."""

    def __init__(self, rows, feats, vals, B: int, n: int, chunk_rows: int = 512):
        # The bookkeeping runs in numpy on the CPU (for a few thousand entries its per-call cost is a
        # fraction of torch's); the index tensors then go to the entries' device.
        dev = feats.device
        r, f = rows.cpu().numpy(), feats.cpu().numpy()
        K = f.size
        self.B, self.n, self.K = B, n, K
        self.feats, self.vals, self.chunk_rows = feats, vals, chunk_rows
        to = lambda a: torch.from_numpy(np.ascontiguousarray(a, dtype=np.int64)).to(dev)  # noqa: E731
        new_row = np.ones(K, dtype=bool)
        new_row[1:] = r[1:] != r[:-1]
        starts = np.flatnonzero(new_row)
        self.Ba = starts.size
        self.row_offsets = to(starts)  # (Ba,) first entry of each active row
        self.counts = to(np.diff(np.append(starts, K)))  # (Ba,) its number of entries
        rid = np.cumsum(new_row) - 1  # each entry's index among the active rows
        self.rid = to(rid)
        # group the entries by feature with one stable sort (by feature, then row): the distinct
        # features act, each entry's index among them (inv), and in that order rows, values, offsets
        order = np.argsort(f, kind="stable")
        sf = f[order]
        new = np.ones(K, dtype=bool)
        new[1:] = sf[1:] != sf[:-1]
        self.act = to(sf[new])
        group = np.cumsum(new) - 1  # feature index of each entry in feature order
        inv = np.empty(K, dtype=np.int64)
        inv[order] = group
        self.inv = to(inv)
        self.f_rid, self.f_vals = to(rid[order]), vals[to(order)]
        self.f_offsets = to(np.flatnonzero(new))
        self._np = (order, group, rid[order], starts)

    @property
    def chunks(self) -> list[tuple[int, int, int, int]]:
        """Chunks of ≤ chunk_rows active rows: (row0, row1, entry0, entry1) (the hidden route's blocks)."""
        if not hasattr(self, "_chunks"):
            e = torch.cumsum(self.counts, 0).tolist()
            self._chunks = []
            for r0 in range(0, self.Ba, self.chunk_rows):
                r1 = min(r0 + self.chunk_rows, self.Ba)
                self._chunks.append((r0, r1, 0 if r0 == 0 else e[r0 - 1], e[r1 - 1]))
        return self._chunks

    @property
    def row_ends(self) -> torch.Tensor:
        """(Ba,) one past the last entry of each active row."""
        if not hasattr(self, "_row_ends"):
            self._row_ends = self.row_offsets + self.counts
        return self._row_ends

    @property
    def row_kinds(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The fused kernel's view of the active rows: those with one active feature grouped by it
        (offsets (a + 1,) into their values, in row order within a feature) and the others, ordered by
        their first (most frequent) feature so that its rows of G_A and D stay in cache."""
        if not hasattr(self, "_row_kinds"):
            # in the entries' feature order (by feature, then row), so no further sort is needed
            order, group, f_rid, starts = self._np
            counts = self.counts.cpu().numpy()
            single = (counts == 1)[f_rid]  # the entry's row has one active feature
            s_vals = self.f_vals[torch.from_numpy(single).to(self.f_vals.device)]
            s_off = np.zeros(self.n_features + 1, dtype=np.int64)
            np.cumsum(np.bincount(group[single], minlength=self.n_features), out=s_off[1:])
            # the other rows, each named by its first entry, ordered by that entry's feature
            first = np.zeros(self.K, dtype=bool)
            first[starts] = True
            m_rows = f_rid[first[order] & ~single]
            dev = self.feats.device
            self._row_kinds = (torch.from_numpy(s_off).to(dev), s_vals, torch.from_numpy(m_rows).to(dev))
        return self._row_kinds

    @property
    def max_row_entries(self) -> int:
        if not hasattr(self, "_max_row_entries"):
            self._max_row_entries = int(self.counts.max()) if self.Ba else 1
        return self._max_row_entries

    @property
    def n_features(self) -> int:
        return self.act.numel()


class _Workspace:
    """Scratch tensors reused from step to step (named, grown on demand): a fresh tensor of more than
    ≈ 128 kB is a fresh memory mapping, whose page faults cost as much as the work done in it."""

    def __init__(self, device="cpu", dtype=torch.float32):
        self.device, self.dtype = device, dtype
        self._flat: dict[str, torch.Tensor] = {}
        self._views: dict[tuple, torch.Tensor] = {}  # (name, *shape) -> view of the current buffer

    def get(self, name: str, *shape: int) -> torch.Tensor:
        view = self._views.get((name, *shape))
        if view is not None:
            return view
        size = math.prod(shape)
        flat = self._flat.get(name)
        if flat is None or flat.numel() < size:
            size_new = max(size, int(1.25 * size) if flat is not None else size)
            flat = torch.empty(size_new, device=self.device, dtype=self.dtype)
            self._flat[name] = flat
            self._views = {k: v for k, v in self._views.items() if k[0] != name}
        view = self._views[(name, *shape)] = flat[:size].view(shape)
        return view


def loss_and_grads(
    W: torch.Tensor, b: torch.Tensor, x: _Batch, path: str, loss_scale: float = 1.0
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
    loss, gWt, gb = _loss_and_grads_t(
        W.t().contiguous(), b, x, path, loss_scale, _Workspace(W.device, W.dtype)
    )
    return loss, gWt.t().contiguous(), gb


def _loss_and_grads_t(
    Wt: torch.Tensor,
    b: torch.Tensor,
    x: _Batch,
    path: str,
    loss_scale: float,
    ws: _Workspace,
    out: tuple[torch.Tensor, torch.Tensor] | None = None,
) -> tuple[float, torch.Tensor, torch.Tensor]:
    """``loss_and_grads`` on the trainer's layout: Wt = Wᵀ (m, n) in, dL/dWᵀ (m, n) out (written into
    ``out`` when given, with dL/db). ``ws``: scratch tensors reused across calls."""
    if path == "features":
        return _loss_and_grads_features(Wt, b, x, loss_scale, ws, out)
    if path != "hidden":
        raise ValueError(f"path must be 'features' or 'hidden', not {path!r}")
    loss, gW, gb = _loss_and_grads_hidden(Wt.t().contiguous(), b, x, loss_scale)
    if out is None:
        return loss, gW.t().contiguous(), gb
    out[0].copy_(gW.t())
    out[1].copy_(gb)
    return loss, out[0], out[1]


def _loss_and_grads_hidden(
    W: torch.Tensor, b: torch.Tensor, x: _Batch, loss_scale: float
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


def _empty_rows(b: torch.Tensor, x: _Batch) -> tuple[float, torch.Tensor]:
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


def _loss_and_grads_features(
    Wt: torch.Tensor,
    b: torch.Tensor,
    x: _Batch,
    loss_scale: float,
    ws: _Workspace,
    out: tuple[torch.Tensor, torch.Tensor] | None,
    scaled: bool = True,
) -> tuple[float, torch.Tensor, torch.Tensor]:
    """The features route on the trainer's layout. ``scaled=False`` leaves the gradients unscaled (the
    caller multiplies them by ``_grad_scale``, as the compiled update does in its pass)."""
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
    scale = _grad_scale(x, loss_scale)
    return sq / (B * n), gWt.mul_(scale), gb.mul_(scale)


def _grad_scale(x: _Batch, loss_scale: float) -> float:
    """The factor from R (the kernel's and the torch code's residual) to the gradient of loss_scale × loss."""
    return 2.0 * loss_scale / (x.B * x.n)


def _step_group(
    P: dict,
    x: _Batch,
    path: str,
    lr_w: float,
    lr_b: float,
    t: int,
    S: TrainSettings,
    ws: _Workspace | None = None,
    compiled: bool | None = None,
) -> torch.Tensor:
    """One training step of every cell of a width group, in place. P['Wt'] (C, m, n) holds the cells'
    Wᵀ (the layout the products use, so no transposed copies per step), P['b'] (C, n), and their Adam
    moments. Where the compiled kernel is built (``fused``), the features route's gradients of all C
    cells are one call (gather, products through torch's own BLAS, the fused elementwise pass,
    scatter) and the update (gradient scale, decay, Adam) another, one pass over each cell's arrays;
    otherwise gradients and decay go cell by cell in torch and Adam runs on the whole stacks, one call
    per operation. Either way each cell's numbers are those of a step of its own.
    ``ws``: scratch tensors reused across steps; ``compiled``: ``fused.update_ok(P)``, when the caller
    has it. Returns the C losses."""
    Wt = P["Wt"]
    C, m, n = Wt.shape
    ws = ws or _Workspace(Wt.device, Wt.dtype)
    G, Gb = ws.get("grad_W", C, m, n), ws.get("grad_b", C, n)
    bc1, bc2 = 1 - S.beta1**t, 1 - S.beta2**t
    compiled = fused.update_ok(P) if compiled is None else compiled
    if compiled and path == "features" and fused.group_ok():
        # every cell's gradients in one compiled call (products through torch's own BLAS), unscaled
        losses = (fused.group_grads(Wt, P["b"], x, G, Gb, ws) / (x.B * x.n)).tolist()
        gscale = _grad_scale(x, S.loss_scale)
    else:
        losses = [
            _loss_and_grads_t(Wt[c], P["b"][c], x, path, S.loss_scale, ws, out=(G[c], Gb[c]))[0]
            for c in range(C)
        ]
        gscale = 1.0
    if compiled:
        # the compiled update: the gradient scale, decay and Adam in one pass over each cell's arrays
        fused.adam_group(P, G, Gb, gscale, lr_w, lr_b, S.beta1, S.beta2, bc1, bc2, S.eps, ws.get("norm", n))
        return torch.tensor(losses)
    # decay on W only, before Adam as the paper's AdamW does, cell by cell with scalar factors (so a
    # cell's numbers do not depend on the other cells of its job): γ ≥ 0 scales W by 1 − γ·lr, γ < 0
    # adds lr·γ·W_i(1 − 1/‖W_i‖) (W_i: a row of W, a column of Wᵀ)
    for c, g in enumerate(P["gamma"].tolist()):
        Wc = Wt[c]
        if g >= 0:
            Wc.mul_(1.0 - g * lr_w)
        else:
            tmp = ws.get("decay", m, n)
            # ‖W_i‖ as √Σ w² over the column (linalg.vector_norm along dim 0 is 10× slower here)
            norms = torch.mul(Wc, Wc, out=tmp).sum(0, keepdim=True).sqrt_().add_(S.eps)
            Wc.add_(torch.mul(Wc, 1.0 - 1.0 / norms, out=tmp), alpha=lr_w * g)
    for X, grad, m1, v1, lr, name in (
        (Wt, G, P["mW"], P["vW"], lr_w, "denom_W"),
        (P["b"], Gb, P["mb"], P["vb"], lr_b, "denom_b"),
    ):
        m1.mul_(S.beta1).add_(grad, alpha=1 - S.beta1)
        v1.mul_(S.beta2).addcmul_(grad, grad, value=1 - S.beta2)
        denom = torch.sqrt(v1, out=ws.get(name, *v1.shape)).div_(math.sqrt(bc2)).add_(S.eps)
        X.addcdiv_(m1, denom, value=-lr / bc1)
    return torch.tensor(losses)


def remove_checkpoint(checkpoint: str | Path | None) -> None:
    """Delete a finished job's checkpoint and its seal (its outputs now hold everything)."""
    if checkpoint:
        unseal(checkpoint)


def settings_from_params(n: int, seed: int, params: dict) -> TrainSettings:
    """TrainSettings of one cell from the rule's params (the schema has filled in every default)."""
    return TrainSettings(
        n=int(n),
        batch=int(params["batch_size"]),
        steps=int(params["steps"]),
        warmup_steps=int(params["warmup_steps"]),
        lr=float(params["lr"]),
        min_lr_ratio=float(params["min_lr_ratio"]),
        lr_width_exponent=float(params["lr_width_exponent"]),
        lr_width_reference=float(params["lr_width_reference"]),
        lr_bias_over_m=params["lr_bias_over_m"],
        loss_scale=float(params["loss_scale"]),
        seed=int(seed),
    )


def cell_checkpoint(model_path: str | Path) -> Path:
    """Where a one-cell job checkpoints: ``checkpoint.pt`` beside the cell's ``model.safetensors``."""
    return Path(model_path).parent / "checkpoint.pt"


def superposition_train(
    dist: str,
    n: int,
    gamma: float,
    m: int,
    seed: int,
    params: dict,
    model_path: str,
    info_path: str,
    checkpoint_every: int = 0,
    threads: int = 1,
    device: str = "cpu",
) -> dict:
    """Train one cell (resuming from its checkpoint if any), write its model and train.json, return the
    latter's contents. ``params``: the rule's params (``pipeline.train_params``)."""
    ckpt = cell_checkpoint(model_path)
    (info,) = superposition_train_cells(
        dist,
        n,
        [gamma],
        [m],
        seed,
        params,
        [model_path],
        [info_path],
        ckpt,
        checkpoint_every,
        threads,
        device,
    )
    return info


def superposition_train_cells(
    dist: str,
    n: int,
    gammas: list[float],
    widths: list[int],
    seed: int,
    params: dict,
    model_paths: list[str],
    info_paths: list[str],
    checkpoint: str | Path,
    checkpoint_every: int = 0,
    threads: int = 1,
    device: str = "cpu",
) -> list[dict]:
    """Train the cells (γ_c, m_c) of one law, n and seed in one job on one input stream (``train_cells``:
    each cell's numbers are those it gets alone), resuming from ``checkpoint`` if it holds them; write each
    cell's model and train.json (its ``train_seconds`` is its share of the job's time)."""
    if not (len(gammas) == len(widths) == len(model_paths) == len(info_paths)):
        raise ValueError("gammas, widths, model_paths and info_paths must have equal lengths")
    S = settings_from_params(n, seed, params)
    ckpt = Path(checkpoint)
    ckpt.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    results = train_cells(
        dist,
        [float(g) for g in gammas],
        [int(m) for m in widths],
        S,
        checkpoint=ckpt,
        checkpoint_every=int(checkpoint_every),
        path=params["path"],
        threads=threads,
        device=device,
        job={"n": int(n), "seed": int(seed), "params": dict(params)},
    )
    seconds = (time.monotonic() - t0) / len(results)
    infos = []
    for gamma, m, res, model_path, info_path in zip(gammas, widths, results, model_paths, info_paths):
        model_path = Path(model_path)
        model_path.parent.mkdir(parents=True, exist_ok=True)
        tensors = {"W": res.W, "b": res.b, "loss_curve": res.losses}
        atomic_write(model_path, lambda p, t=tensors: save_file(t, str(p)))
        seal(model_path)  # rules superposition_tables and superposition_section check it before use
        info = {
            "dist": dist,
            "n": int(n),
            "gamma": float(gamma),
            "m": int(m),
            "seed": int(seed),
            "settings": dict(params),
            "train_seconds": seconds,
            "ms_per_step": 1e3 * seconds / max(S.steps, 1),
            "cells_in_job": len(results),
        }
        write_json(info_path, info)  # sealed, checked by rule superposition_section
        infos.append(info)
        log.info(
            "cell %s gamma=%s m=%s seed=%s done (%.1fs of the job's time), last loss %.4g",
            dist,
            gamma,
            m,
            seed,
            seconds,
            float(res.losses[-1]),
        )
    remove_checkpoint(ckpt)
    return infos


# ---------------------------------------------------------------------------------------------
# The plain reference: the paper's loop (dense random input, autograd, one cell at a time).


def reference_train(dist: str, gamma: float, m: int, settings: TrainSettings, seed_offset: int = 0):
    """Train one cell exactly as the paper's exp-10 script does (dense input draw, autograd,
    its AdamW with the signed decay rule). Returns (W (n, m), b (n,), losses (steps,)) as numpy."""
    S = settings
    n, B = S.n, S.batch
    p = feature_probabilities(parse_distribution(dist), n).to(torch.float32)
    W0, b0 = init_params(n, m, S.seed)
    W = W0.clone().requires_grad_(True)
    b = b0.clone().requires_grad_(True)
    lr_w0, lr_b0 = cell_lrs(S, m)
    state = {
        id(W): [torch.zeros_like(W), torch.zeros_like(W)],
        id(b): [torch.zeros_like(b), torch.zeros_like(b)],
    }
    torch.manual_seed(_seed_of("reference", S.seed, dist, n, B, seed_offset))
    losses = np.zeros(S.steps, dtype=np.float32)
    for step in range(S.steps):
        x = (torch.rand(B, n) < p).float() * torch.rand(B, n) * 2
        f = lr_factor(step, S.steps, S.warmup_steps, S.min_lr_ratio)
        y = torch.relu(x @ W @ W.T + b)
        loss = torch.nn.functional.mse_loss(y, x)
        W.grad = b.grad = None
        (loss * S.loss_scale).backward()
        losses[step] = loss.item()
        with torch.no_grad():
            t = step + 1
            for P, lr, wd in ((W, lr_w0 * f, gamma), (b, lr_b0 * f, 0.0)):
                if wd >= 0:
                    P.mul_(1 - wd * lr)
                else:
                    norms = P.norm(dim=1, keepdim=True).add_(S.eps)
                    P.add_(wd * P * (1 - 1 / norms), alpha=lr)
                m1, v1 = state[id(P)]
                m1.mul_(S.beta1).add_(P.grad, alpha=1 - S.beta1)
                v1.mul_(S.beta2).addcmul_(P.grad, P.grad, value=1 - S.beta2)
                denom = (v1.sqrt() / math.sqrt(1 - S.beta2**t)).add_(S.eps)
                P.addcdiv_(m1, denom, value=-lr / (1 - S.beta1**t))
    return W.detach().numpy(), b.detach().numpy(), losses
