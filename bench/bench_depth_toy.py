"""Speed of depth-toy training at the paper's settings: the paper's plain loop, the torch trainer and the
fused C trainer, side by side in one run, with the machine's matmul peak measured in the same run.

Default (``--setup mse``: the paper's exp-9-6, batch 1024, width 32, teacher depth 128, student depths
6, 12, 16, 24, 32, 48, one step of every student):
- plain loop (github liuyz0/DepthScaling exp/exp-9-6.py): for each student, every step recomputes the
  128-block teacher (a tied teacher's blocks sharing one set of weights, as there), then one
  forward/backward of that student with nn.Linear modules, F.mse_loss and its own Adam;
- torch trainer (``train.py``'s loop with the kernel off): the teacher once per step for all students, the
  hand-written block backward, torch's fused Adam;
- fused trainer (``fused.FusedStudents``, the kernel the pipeline uses for the mse setup on a CPU; on two
  threads the teacher runs beside the deepest student, which reads the teacher's rows as they are done).
Reported: milliseconds per student-step (a step of all students / their number: the shared teacher is
shared out), the speed-ups, the fused trainer's share of step time in its block products (timed inside
the kernel per block and batch tile: on the AVX-512 path the products together with the elementwise work
fused into them, on the generic path the BLAS calls alone), its GFLOP/s over the whole step and inside
the products, and the single-matmul peak (a 1024³ torch.mm, best of 10) of the same threads, measured in
every round: on a machine shared with other jobs the peak moves with the load, so the ratios use the
highest peak of the run (the machine's best, which a loaded round under-states), and every round's peak is
kept in ``--out``. GFLOP/s count the products a step needs, the same for every trainer: per sample,
2·D·H each, two per block forward, four per block backward (less the first block's input gradient, which
no trainer computes), two per teacher block.
Each trainer is timed ``--rounds`` times in turn (interleaved, so a change of load hits all three), and the
best round of each is reported; ``--out`` keeps every round.

``--setup learned_head``: the earlier comparison (KL with a learned head, 4 temperatures; the kernel
does not serve it): plain loop (as written and with subnormals flushed) against the torch trainer.

    nice -n 0 python bench/bench_depth_toy.py                 # mse, paper settings, one thread
    nice -n 0 python bench/bench_depth_toy.py --threads 2     # every trainer on two threads
    python bench/bench_depth_toy.py --quick                   # depths 6, 24, 48, fewer steps
    python bench/bench_depth_toy.py --setup learned_head      # the KL comparison
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time

import torch
import torch.nn.functional as F

from depthwidth.depth_toy import fused
from depthwidth.depth_toy.model import ReferenceModel, StudentGroup, make_teacher, rmsnorm
from depthwidth.depth_toy.train import (
    Targets,
    TrainSettings,
    adam_kernel,
    plain_loop_step,
    student_losses,
    train_students,
)

WIDTH, HIDDEN, TEACHER_DEPTH = 32, 128, 128


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def plain_ms_per_student_step(
    teacher, depths, temps, steps, batch, flush: bool, device: str = "cpu"
) -> float:
    torch.set_flush_denormal(flush)
    t_model = ReferenceModel.from_teacher(teacher).to(device)
    total, n = 0.0, 0
    for temp in temps:
        for depth in depths:
            student = ReferenceModel(depth).to(device)
            with torch.no_grad():  # the paper's student init: output projections and head zero
                for layer in student.layers:
                    layer.c_proj.weight.zero_()
                student.head.weight.zero_()
            opt = torch.optim.Adam(student.parameters(), lr=6e-4)
            for i in range(steps + 1):
                x = torch.randn(batch, 32, device=device)
                _sync(device)
                t0 = time.perf_counter()
                plain_loop_step(t_model, student, opt, x, temp)  # .item() inside waits for the device
                if i > 0:  # the first step warms up allocators
                    total += time.perf_counter() - t0
                    n += 1
    return 1e3 * total / n


def batched_ms_per_student_step(teacher, depths, temps, steps, batch, device: str = "cpu") -> float:
    settings = TrainSettings(
        variant="learned_head",
        depths=depths,
        temperatures=temps,
        steps=steps + 1,
        batch_size=batch,
        test_batches=1,
    )
    t0 = time.perf_counter()
    train_students(teacher, settings, device=device, progress_every_s=1e9)
    elapsed = time.perf_counter() - t0
    # subtract the one-off cost (test-target cache, final evaluation) measured by a 1-step run
    settings.steps = 1
    t1 = time.perf_counter()
    train_students(teacher, settings, device=device, progress_every_s=1e9)
    one = time.perf_counter() - t1
    return 1e3 * (elapsed - one) / (steps * len(depths) * len(temps))


def student_products(depths) -> int:
    """Dense products (of 2·D·H FLOP per sample) one step of these students needs: per block two forward
    (n W1, r² W2) and four backward (the two weight gradients, the gradients of r and of n), less the first
    block's gradient of n (its input is the data's)."""
    return sum(6 * d - 1 for d in depths)


def dense_flop(depths, batch: int) -> float:
    """FLOP of the dense products of one step of every student and the shared teacher (two per block)."""
    per = 2 * WIDTH * HIDDEN
    return batch * per * (student_products(depths) + 2 * TEACHER_DEPTH)


def matmul_peak(device: str) -> float:
    """GFLOP/s of a 1024³ float32 torch.mm at the current thread count, best of 10 (after one warm-up)."""
    a, b = torch.randn(1024, 1024, device=device), torch.randn(1024, 1024, device=device)
    c = torch.empty(1024, 1024, device=device)
    best = math.inf
    for i in range(11):
        _sync(device)
        t0 = time.perf_counter()
        torch.mm(a, b, out=c)
        _sync(device)
        if i > 0:  # the first call warms up
            best = min(best, time.perf_counter() - t0)
    return 2 * 1024**3 / best / 1e9


def _final_state(model: ReferenceModel, x: torch.Tensor) -> torch.Tensor:
    h = rmsnorm(x)
    for layer in model.layers:
        h = layer(h)
    return rmsnorm(h)


def plain_mse_ms(teacher, depths, steps, batch, device) -> float:
    """The paper's exp-9-6 loop: per student, the teacher recomputed every step, MSE, its own Adam."""
    t_model = ReferenceModel.from_teacher(teacher).to(device)
    total, n = 0.0, 0
    for depth in depths:
        student = ReferenceModel(depth).to(device)
        with torch.no_grad():
            for layer in student.layers:
                layer.c_proj.weight.zero_()
        opt = torch.optim.Adam(student.parameters(), lr=6e-4 * 2 / math.sqrt(depth))
        for i in range(steps + 1):
            x = torch.randn(batch, WIDTH, device=device)
            _sync(device)
            t0 = time.perf_counter()
            with torch.no_grad():
                target = _final_state(t_model, x)
            loss = F.mse_loss(_final_state(student, x), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            loss.item()
            if i > 0:  # the first step warms up allocators
                total += time.perf_counter() - t0
                n += 1
    return 1e3 * total / n


def _groups(depths, device):
    groups = [StudentGroup(1, d, WIDTH, seed=i).to(device) for i, d in enumerate(depths)]
    with torch.no_grad():  # a trained-looking state: nonzero output projections
        for g in groups:
            for p in g.proj_w:
                p.normal_(0, 0.02)
    opts = [
        torch.optim.Adam(g.parameters(), lr=6e-4 * 2 / math.sqrt(g.depth), **adam_kernel()) for g in groups
    ]
    return groups, opts


def torch_trainer_ms(teacher, depths, steps, batch, device) -> float:
    """train.py's step loop with the kernel off: one teacher forward, then each student group."""
    settings = TrainSettings(variant="mse", depths=depths, temperatures=[None], steps=steps, batch_size=batch)
    teacher = teacher.to(device)
    groups, opts = _groups(depths, device)
    total = 0.0
    for i in range(steps + 1):
        x = torch.randn(batch, WIDTH, device=device)
        _sync(device)
        t0 = time.perf_counter()
        targets = Targets(teacher, x, settings, None)
        for g, o in zip(groups, opts):
            losses = student_losses(g, x, targets, settings, None)
            o.zero_grad(set_to_none=True)
            losses.sum().backward()
            o.step()
            losses.detach().cpu().numpy()
        if i > 0:
            total += time.perf_counter() - t0
    return 1e3 * total / (steps * len(depths))


def fused_trainer(teacher, depths, steps, batch, threads) -> dict:
    """The kernel trainer: ms per student-step, dense-product seconds share, GFLOP/s."""
    groups, opts = _groups(depths, "cpu")
    fs = fused.FusedStudents(groups, opts, teacher, batch, WIDTH, threads)
    lrs = [1e-4] * len(depths)
    fs.step(torch.randn(batch, WIDTH), lrs)
    g0, total = fs.gemm_seconds(), 0.0
    for _ in range(steps):
        x = torch.randn(batch, WIDTH)
        t0 = time.perf_counter()
        fs.step(x, lrs)
        total += time.perf_counter() - t0
    gemm = fs.gemm_seconds() - g0
    fs.close()
    flop = dense_flop(depths, batch) * steps
    return {
        "ms": 1e3 * total / (steps * len(depths)),
        "threads": fs.threads,  # the threads the trainer used (at most one per student)
        # over all threads: the products' thread-seconds against the step's wall time times the threads
        "dense_share": gemm / (total * fs.threads),
        "fast_path": fused.kernel().fast_path(),
        "gflops": flop / total / 1e9,
        "gflops_in_products": flop / gemm / 1e9,
    }


def mse_main(args) -> dict:
    depths = [6, 24, 48] if args.quick else [6, 12, 16, 24, 32, 48]
    teacher = make_teacher("tied", seed=0, depth=TEACHER_DEPTH)
    dev = args.device
    on_cpu = torch.device(dev).type == "cpu"
    if on_cpu and fused.kernel() is None:
        raise SystemExit("the fused depth-toy kernel did not build here (see the log); nothing to compare")
    plain_steps, torch_steps, fused_steps = (1, 2, 4) if args.quick else (2, 4, 10)
    res = {"setup": "mse", "depths": depths, "batch": args.batch, "threads": args.threads, "device": dev}
    res["dense_gflop_per_step"] = dense_flop(depths, args.batch) / 1e9
    rounds: dict[str, list] = {"peak": [], "plain": [], "torch": [], "fused": []}
    for r in range(args.rounds):
        rounds["peak"].append(matmul_peak(dev))
        rounds["plain"].append(plain_mse_ms(teacher, depths, plain_steps, args.batch, dev))
        rounds["torch"].append(torch_trainer_ms(teacher, depths, torch_steps, args.batch, dev))
        if on_cpu:
            torch.set_num_threads(1)  # the kernel's BLAS runs one thread per student
            f = fused_trainer(teacher, depths, fused_steps, args.batch, args.threads)
            rounds["fused"].append({**f, "round_peak_gflops": rounds["peak"][-1]})
            torch.set_num_threads(args.threads)
        f = rounds["fused"][-1]["ms"] if on_cpu else float("nan")
        print(
            f"round {r + 1}: peak {rounds['peak'][-1]:6.1f} GFLOP/s; ms per student-step: plain "
            f"{rounds['plain'][-1]:7.1f}, torch trainer {rounds['torch'][-1]:6.1f}, fused {f:6.1f}",
            flush=True,
        )
    res["matmul_peak_gflops"] = max(rounds["peak"])
    res["plain_ms"] = min(rounds["plain"])
    res["batched_ms"] = min(rounds["torch"])  # the torch trainer (gpu_check.sh sizes its runs by it)
    if on_cpu:
        best = min(rounds["fused"], key=lambda d: d["ms"])
        res.update({f"fused_{k}": v for k, v in best.items()})
        res["speedup_vs_plain"] = res["plain_ms"] / res["fused_ms"]
        res["speedup_vs_torch_trainer"] = res["batched_ms"] / res["fused_ms"]
        # against the run's highest peak: a round under load under-states the machine's peak (a ratio to the
        # fused trainer's own round can pass 100 %)
        res["fused_gflops_vs_peak"] = res["fused_gflops"] / res["matmul_peak_gflops"]
        # the rate inside the products is per thread (FLOP over the threads' summed seconds in them); the
        # peak is that of all the threads together
        res["fused_products_vs_peak"] = (
            res["fused_gflops_in_products"] * res["fused_threads"] / res["matmul_peak_gflops"]
        )
        res["rounds"] = rounds
        # each round times the three trainers within seconds of each other, so a round's ratios see one
        # machine speed; their median and range say how much the best-of-run ratios above owe to the load
        fused_ms = [d["ms"] for d in rounds["fused"]]
        for key, base in (("plain", "plain"), ("torch_trainer", "torch")):
            ratios = [b / f for b, f in zip(rounds[base], fused_ms)]
            res[f"round_ratios_vs_{key}"] = ratios
            res[f"round_ratio_vs_{key}_median"] = statistics.median(ratios)
        res["torch_trainer_gflops"] = res["dense_gflop_per_step"] / (res["batched_ms"] * len(depths) / 1e3)
        res["plain_gflops"] = (
            (args.batch * 2 * WIDTH * HIDDEN * (student_products(depths) + 2 * TEACHER_DEPTH * len(depths)))
            / (res["plain_ms"] * len(depths) / 1e3)
            / 1e9
        )
        print(
            f"fused trainer: {res['fused_ms']:.1f} ms per student-step, {res['speedup_vs_plain']:.1f}x the "
            f"paper's loop ({res['plain_ms']:.1f} ms), {res['speedup_vs_torch_trainer']:.1f}x the torch trainer "
            f"({res['batched_ms']:.1f} ms); {res['fused_gflops']:.1f} GFLOP/s over the step "
            f"({res['fused_gflops_vs_peak']:.0%} of the run's highest matmul peak, {res['matmul_peak_gflops']:.1f} "
            f"GFLOP/s), {res['fused_dense_share']:.0%} of the step in dense products "
            f"({res['fused_gflops_in_products']:.1f} GFLOP/s per thread inside them, {res['fused_products_vs_peak']:.0%} of "
            "that peak); torch trainer "
            f"{res['torch_trainer_gflops']:.1f} GFLOP/s, plain loop {res['plain_gflops']:.1f} GFLOP/s"
        )
        rp, rt = res["round_ratios_vs_plain"], res["round_ratios_vs_torch_trainer"]
        print(
            f"round by round: {res['round_ratio_vs_plain_median']:.1f}x the paper's loop (median; "
            f"{min(rp):.1f}-{max(rp):.1f}x), {res['round_ratio_vs_torch_trainer_median']:.1f}x the torch trainer "
            f"({min(rt):.1f}-{max(rt):.1f}x)"
        )
    else:
        res["speedup_vs_plain"] = res["plain_ms"] / res["batched_ms"]
        print(
            f"torch trainer on {dev}: {res['speedup_vs_plain']:.1f}x the paper's loop (no fused kernel here)"
        )
    return res


def learned_head_main(args) -> dict:
    depths = [6, 24, 48] if args.quick else [6, 12, 16, 24, 32, 48]
    temps = [0.01, 1.0] if args.quick else [0.01, 0.0464, 0.215, 1.0]
    plain_steps = 2 if args.quick else 3
    batched_steps = 4 if args.quick else 10
    teacher = make_teacher("independent", seed=0, depth=128)
    dev = args.device
    res = {"setup": "learned_head", "depths": depths, "temperatures": temps, "batch": args.batch}
    res.update({"threads": args.threads, "device": dev})
    res["plain_as_written_ms"] = plain_ms_per_student_step(
        teacher, depths, temps, plain_steps, args.batch, False, dev
    )
    print(f"plain loop, as the paper wrote it:   {res['plain_as_written_ms']:8.1f} ms per student-step")
    res["plain_flushed_ms"] = plain_ms_per_student_step(
        teacher, depths, temps, plain_steps, args.batch, True, dev
    )
    print(f"plain loop, subnormals flushed:      {res['plain_flushed_ms']:8.1f} ms per student-step")
    res["batched_ms"] = batched_ms_per_student_step(teacher, depths, temps, batched_steps, args.batch, dev)
    print(f"batched, shared teacher:             {res['batched_ms']:8.1f} ms per student-step")
    res["speedup_vs_as_written"] = res["plain_as_written_ms"] / res["batched_ms"]
    res["speedup_vs_flushed"] = res["plain_flushed_ms"] / res["batched_ms"]
    print(
        f"speed-up: {res['speedup_vs_as_written']:.1f}x vs the paper's loop, "
        f"{res['speedup_vs_flushed']:.1f}x vs the loop with subnormals flushed"
    )
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--setup", choices=["mse", "learned_head"], default="mse")
    ap.add_argument("--quick", action="store_true", help="depths 6, 24, 48 and fewer steps")
    ap.add_argument("--threads", type=int, default=1, help="threads for every trainer (default 1)")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the best of each is kept")
    ap.add_argument("--device", default="cpu", help="cpu or cuda (the fused trainer: CPU only)")
    ap.add_argument("--out", help="write the numbers as JSON here")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.set_flush_denormal(True)  # as the trainers do (the learned-head comparison sets its own)
    res = mse_main(args) if args.setup == "mse" else learned_head_main(args)
    res["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    if args.out:
        with open(args.out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
