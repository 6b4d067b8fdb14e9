"""Benchmark: the paper's plain per-cell training loop vs our batched sparse trainer, same settings.

Runs both on identical settings (default: the paper's exp-10 shape, n = 1000, batch 2048, the six
widths 10..100, ``--gammas`` cells per width) for a few steps each and prints ms per model-step, the
speed-up, the share of our step time spent in the dense products (timed in place, by a clock around
each BLAS call inside the trainer's compiled per-group call, and timed alone with the trainer's shapes
and layouts), their GFLOP/s against a measured square-matmul peak, and the exp-10 grid time this
implies. Our trainer's elementwise pass is a small C kernel built once per machine into a user cache
(``depthwidth.superposition.fused``); the time this process spent getting it ready (a build, or loading
the cached build) is printed on its own and counted in the grid estimate, but not in the per-step
times. ``--fallback`` also times our trainer with its torch code in place of the kernel (what runs where
no C compiler is found), interleaved with the rest.

    .venv/bin/python bench/bench_superposition.py [--steps 20] [--threads 1] [--gammas 10] [--fallback]
    PYTHONPATH=src .venv/bin/python bench/bench_superposition.py --steps 40 --ref-steps 8 --threads 1

All trainers are timed in the same process, interleaved, with the same thread count, so background
load on a shared machine hits them alike.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import torch

from depthwidth.superposition import fused
from depthwidth.superposition.data import feature_probabilities
from depthwidth.superposition.grads import choose_path
from depthwidth.superposition.reference import reference_train
from depthwidth.superposition.train import TrainSettings, train_cells


def matmul_peak_gflops(size: int = 1024, reps: int = 10) -> float:
    a, b = torch.randn(size, size), torch.randn(size, size)
    a @ b
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    return 2 * size**3 * reps / (time.perf_counter() - t) / 1e9


def dense_flops_per_step(n: int, m: int, active: float, path: str) -> float:
    """Flops of our dense products in one step of one cell: three products of (active × n × m), where
    ``active`` is the batch's distinct active features (features path: W_A Wᵀ, Dᵀ W_A, D W) or its
    samples with an active feature (hidden path: h Wᵀ, R W, Rᵀ h)."""
    return 6.0 * active * n * m


def dense_seconds_per_step(n: int, m: int, active: float, path: str, reps: int = 10) -> float:
    """Time of the dense products alone, with the shapes, layouts and calls ``loss_and_grads`` uses."""
    W = torch.randn(n, m)
    Wt = W.t().contiguous()
    if path == "features":
        a = max(int(active), 1)
        WAt, D = torch.randn(m, a), torch.randn(a, n)
        GA, gWt, DW = torch.empty(a, n), torch.empty(m, n), torch.empty(m, a)
        ops, blocks = (
            [
                lambda: torch.mm(WAt.t(), Wt, out=GA),
                lambda: torch.mm(WAt, D, out=gWt),
                lambda: torch.mm(Wt, D.t(), out=DW),
            ],
            1.0,
        )
    else:
        rows = min(int(active), 512)
        blocks = max(int(active) / rows, 1.0)
        R, h = torch.randn(rows, n), torch.randn(rows, m)
        ops = [lambda: torch.addmm(R[0], h, Wt), lambda: Wt @ R.t(), lambda: h.t() @ R]
    for op in ops:
        op()
    t = time.perf_counter()
    for _ in range(reps):
        for op in ops:
            op()
    return (time.perf_counter() - t) / reps * blocks


def timed_cells(dist, gammas, widths, S, path, use_kernel=True, gemm_share=None) -> float:
    """Seconds per model-step of ``train_cells`` (with the compiled kernel or its torch fallback).
    ``gemm_share``: a list that gets the share of the time spent inside the products (timed in place,
    where the compiled kernel runs them)."""
    saved = fused._kernel
    if not use_kernel:
        fused._kernel = None
    try:
        fused.time_gemms(gemm_share is not None)
        g0 = fused.gemm_seconds()
        t = time.perf_counter()
        train_cells(dist, gammas, widths, S, path=path, progress_every_s=1e9)
        dt = time.perf_counter() - t
        if gemm_share is not None:
            gemm_share.append((fused.gemm_seconds() - g0) / dt)
        return dt / (S.steps * len(gammas))
    finally:
        fused.time_gemms(False)
        fused._kernel = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=2048)
    ap.add_argument("--widths", type=int, nargs="+", default=[10, 15, 25, 39, 63, 100])
    ap.add_argument("--gammas", type=int, default=10, help="cells per width (gamma values, batched in ours)")
    ap.add_argument("--dist", default="power-a1.5")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--ref-steps", type=int, default=5, help="reference steps per width (it is slow)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--path", default="auto", choices=["auto", "features", "hidden"], help="our gradient route"
    )
    ap.add_argument(
        "--pretrain-steps",
        type=int,
        default=0,
        help="also time ours after this many (untimed) steps, in a trained state as in most of a long run",
    )
    ap.add_argument(
        "--fallback",
        action="store_true",
        help="also time ours with the torch code in place of the compiled kernel",
    )
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    S = TrainSettings(n=a.n, batch=a.batch, steps=a.steps, warmup_steps=max(a.steps // 10, 1))
    Sr = TrainSettings(n=a.n, batch=a.batch, steps=a.ref_steps, warmup_steps=1)
    gammas = [float(g) for g in torch.linspace(-1, 1, a.gammas)]
    peak = matmul_peak_gflops()
    print(
        f"settings: n={a.n} batch={a.batch} widths={a.widths} cells/width={a.gammas} dist={a.dist} "
        f"threads={a.threads}; square-matmul peak {peak:.1f} GFLOP/s"
    )
    t = time.perf_counter()
    kernel = fused.kernel()
    build_s = time.perf_counter() - t
    if kernel is None:
        print("fused C kernel: unavailable, ours runs its torch code (see the log line above)")
    else:
        print(
            f"fused C kernel: ready in {build_s:.3f} s ({'reused the cached build' if fused.build.reused else 'built'}"
            f" {fused.build.path}; not in the per-step times); one call "
            f"per width group with the products through torch's BLAS: {fused.group_ok()}"
        )
    p = feature_probabilities(a.dist, a.n)
    q = 1 - p.clamp(max=1 - 1e-12)
    rows = a.batch * (1.0 - float(torch.prod(q)))  # expected samples with an active feature
    feats = float((1 - q**a.batch).sum())  # expected distinct active features per batch
    print(
        f"per batch (expected): {rows:.0f} samples with an active feature, {feats:.0f} distinct active features"
    )
    ref_ms, ours_ms, flops, dense_s, trained_ms = {}, {}, 0.0, 0.0, {}
    tmp = Path(tempfile.mkdtemp(prefix="bench_superposition_"))
    all_gammas = gammas * len(a.widths)
    all_widths = [m for m in a.widths for _ in gammas]
    train_cells(
        a.dist,
        all_gammas,
        all_widths,
        TrainSettings(n=a.n, batch=a.batch, steps=2, warmup_steps=1),
        path=a.path,
        progress_every_s=1e9,
    )  # warm
    all_ms, one_ms, fb_ms, in_place = [], {}, {}, []
    for m in a.widths:
        reference_train(a.dist, 0.0, m, TrainSettings(n=a.n, batch=a.batch, steps=1, warmup_steps=1))  # warm
        t = time.perf_counter()
        reference_train(a.dist, gammas[0], m, Sr)
        ref_ms[m] = (time.perf_counter() - t) / a.ref_steps * 1e3
        ours_ms[m] = timed_cells(a.dist, gammas, [m] * len(gammas), S, a.path) * 1e3
        # one cell alone, as a pipeline job trains it (its input batch serves only that cell)
        one_ms[m] = timed_cells(a.dist, gammas[:1], [m], S, a.path) * 1e3
        if a.fallback:
            fb_ms[m] = timed_cells(a.dist, gammas, [m] * len(gammas), S, a.path, use_kernel=False) * 1e3
        # every width in one job: one input batch per step serves all of them
        all_ms.append(timed_cells(a.dist, all_gammas, all_widths, S, a.path, gemm_share=in_place) * 1e3)
        path = choose_path(m, rows, feats) if a.path == "auto" else a.path
        active = feats if path == "features" else rows
        flops += dense_flops_per_step(a.n, m, active, path)
        dense_s += dense_seconds_per_step(a.n, m, active, path)
        line = (
            f"m={m:4d}: reference {ref_ms[m]:7.1f} ms/model-step, ours {ours_ms[m]:6.2f} ms/model-step "
            f"({path} path), ratio {ref_ms[m] / ours_ms[m]:5.1f}x; one cell alone {one_ms[m]:6.2f} ms "
            f"({ref_ms[m] / one_ms[m]:5.1f}x)"
        )
        if a.fallback:
            line += f"; ours with the torch fallback {fb_ms[m]:6.2f} ms ({ref_ms[m] / fb_ms[m]:5.1f}x)"
        if a.pretrain_steps:
            St = TrainSettings(
                n=a.n,
                batch=a.batch,
                steps=a.pretrain_steps + a.steps,
                warmup_steps=max(a.pretrain_steps // 10, 1),
            )
            ck = tmp / f"m{m}.pt"
            train_cells(
                a.dist,
                gammas,
                [m] * len(gammas),
                St,
                checkpoint=ck,
                checkpoint_every=a.pretrain_steps,
                path=a.path,
                progress_every_s=1e9,
            )  # leaves a checkpoint at pretrain_steps
            t = time.perf_counter()
            train_cells(
                a.dist, gammas, [m] * len(gammas), St, checkpoint=ck, path=a.path, progress_every_s=1e9
            )
            trained_ms[m] = (time.perf_counter() - t) / (a.steps * len(gammas)) * 1e3
            line += f"; after {a.pretrain_steps} steps ours {trained_ms[m]:6.2f} ms, ratio {ref_ms[m] / trained_ms[m]:5.1f}x"
        print(line, flush=True)
    k = len(a.widths)
    mean = lambda d: sum(d.values()) / k  # noqa: E731
    ref, ours, ours_all, one = mean(ref_ms), mean(ours_ms), sum(all_ms) / k, mean(one_ms)
    print(
        f"all widths, one job per width: reference {ref:.1f} ms/model-step, ours {ours:.2f} ms/model-step, "
        f"speed-up {ref / ours:.1f}x"
    )
    print(
        f"all widths in one job (one batch per step for all {len(all_widths)} cells; mean of {k} timings "
        f"interleaved with the reference): ours {ours_all:.2f} ms/model-step, speed-up {ref / ours_all:.1f}x"
    )
    print(
        f"one cell per job (as the pipeline runs it; the input draw is not shared): ours {one:.2f} "
        f"ms/model-step, speed-up {ref / one:.1f}x"
    )
    if fb_ms:
        fb = mean(fb_ms)
        print(
            f"ours with the torch fallback instead of the kernel, one job per width: {fb:.2f} ms/model-step, "
            f"speed-up {ref / fb:.1f}x"
        )
    if trained_ms:
        tr_ms = mean(trained_ms)
        print(
            f"all widths after {a.pretrain_steps} steps: ours {tr_ms:.2f} ms/model-step, speed-up {ref / tr_ms:.1f}x"
        )
    dense_ms = dense_s * 1e3 / k  # per model-step, averaged over the widths
    print(
        f"dense part of ours (one step of each width): {flops / 1e9:.2f} GFLOP in {dense_s * 1e3:.1f} ms = "
        f"{flops / 1e9 / dense_s:.1f} GFLOP/s vs square-matmul peak {peak:.1f} GFLOP/s; the dense products are "
        f"{100 * dense_ms / ours:.0f}% of our step time (one job per width), {100 * dense_ms / ours_all:.0f}% "
        f"(all widths in one job), {100 * dense_ms / one:.0f}% (one cell per job)"
    )
    if fused.group_ok() and in_place:
        print(
            f"dense products timed in place (inside the compiled per-group call, all widths in one job): "
            f"{100 * sum(in_place) / len(in_place):.0f}% of our step time (per timing: "
            f"{', '.join(f'{100 * v:.0f}%' for v in in_place)})"
        )
    cells, steps, cores = 540, 20000, 2
    hours = lambda ms: cells * steps * ms / 1e3 / 3600 / cores  # noqa: E731
    builds = cells * build_s / cores / 3600 if kernel is not None else 0.0  # each job finds or builds it
    print(
        f"exp-10 grid ({cells} cells x {steps:,} steps, {cores} single-thread jobs at a time on {cores} cores) at "
        f"these rates: reference {hours(ref):.1f} h; ours {hours(ours):.2f} h with {a.gammas} cells per job, "
        f"{hours(ours_all):.2f} h with all widths in one job, {hours(one):.2f} h with one cell per job (the "
        f"pipeline); getting the kernel ready adds at most {builds * 60:.1f} min ({cells} jobs x {build_s:.3f} s), i.e. "
        f"{hours(one) + builds:.2f} h for the pipeline with them"
    )
    print(f"load: {' '.join(f'{v:.2f}' for v in os.getloadavg())} (1, 5, 15 min) on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
