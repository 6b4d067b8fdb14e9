"""The sparse trainer of the toy model y = ReLU(x W Wᵀ + b), W ∈ R^{n×m}, b ∈ R^n, MSE loss, and the
superposition_train rule's entry points.

``train_cells`` trains C cells (different weight decay γ and width m, same feature law, n, batch
and schedule) on one shared input stream drawn sparsely (only the ≈ batch·Σp active entries), with
hand-written gradients that use the sparsity of x (``grads``): rows without an active feature are summed
in closed form, and the dense products run over the batch's few distinct active features (or, where
that is cheaper, its active rows) instead of the whole batch. ``reference.reference_train`` is the
paper's plain loop (dense random input, autograd, one cell), kept as the ground truth for tests and the
benchmark.

Modules, each importing only those before it: ``batch`` (the input batch, scratch memory), ``fused``
(the compiled kernel behind a checked boundary), ``grads`` (loss and gradients), ``train`` (settings,
schedule, the job loop, checkpoints, the rule's entry points), ``reference`` (the paper's loop).

Mathematics (both trainers): W₀ = randn(n, m)/√m, b₀ = randn(n); loss = mean over batch and
features of (ReLU(x W Wᵀ + b) − x)²; Adam(β = 0.9, 0.999, ε = 1e-8) on W and b; before each Adam
step, decay on W only: γ ≥ 0 gives W ← W(1 − γ·lr), γ < 0 gives W_i ← W_i + lr·γ·W_i(1 − 1/‖W_i‖)
(row norms pulled to 1). Learning rate: linear warm-up, then cosine down to ``min_lr_ratio``×peak.

Where the compiled kernel runs, a cell's numbers depend on the CPU's instruction set (``fused``'s
docstring says which settings and what a checkpoint resumed on another CPU gives).
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
from depthwidth.superposition.batch import Batch, Workspace
from depthwidth.superposition.data import SparseSampler, feature_probabilities, parse_distribution
from depthwidth.superposition.grads import choose_path, grad_scale, loss_and_grads_t

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


def seed_of(*parts) -> int:
    """A 63-bit seed from any labels (stable across runs and machines, unlike ``hash``)."""
    h = hashlib.sha256("|".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(h[:8], "little") & (2**63 - 1)


def init_params(n: int, m: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """W₀ (n, m) = randn/√m and b₀ (n,) = randn, from a generator seeded by (seed, n, m) only, so cells
    that differ in γ start from the same weights and a cell's start never depends on its job."""
    g = torch.Generator().manual_seed(seed_of("init", seed, n, m))
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
    gen = torch.Generator().manual_seed(seed_of("data", S.seed, dist, n, B))
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
    ws = Workspace(device, torch.float32)
    fused_pass = torch.device(device).type == "cpu" and fused.kernel() is not None
    compiled = {m: fused.update_ok(params[m]) for m in groups}  # the compiled update, per width group
    t0 = time.monotonic()
    t_last = t0
    for step in range(start, S.steps):
        f = lr_factor(step, S.steps, S.warmup_steps, S.min_lr_ratio)
        batch = Batch(*(t.to(device) for t in sampler.sample()), B, n)
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


def _step_group(
    P: dict,
    x: Batch,
    path: str,
    lr_w: float,
    lr_b: float,
    t: int,
    S: TrainSettings,
    ws: Workspace | None = None,
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
    ws = ws or Workspace(Wt.device, Wt.dtype)
    G, Gb = ws.get("grad_W", C, m, n), ws.get("grad_b", C, n)
    bc1, bc2 = 1 - S.beta1**t, 1 - S.beta2**t
    compiled = fused.update_ok(P) if compiled is None else compiled
    if compiled and path == "features" and fused.group_ok():
        # every cell's gradients in one compiled call (products through torch's own BLAS), unscaled
        losses = (fused.group_grads(Wt, P["b"], x, G, Gb, ws) / (x.B * x.n)).tolist()
        gscale = grad_scale(x, S.loss_scale)
    else:
        losses = [
            loss_and_grads_t(Wt[c], P["b"][c], x, path, S.loss_scale, ws, out=(G[c], Gb[c]))[0]
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
