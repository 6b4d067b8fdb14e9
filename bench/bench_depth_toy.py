"""Speed of depth-toy training: the paper's plain loop vs the batched, shared-teacher trainer.

Plain loop (github liuyz0/DepthScaling exp/exp-9-1.py): for each student, every step recomputes the
128-block teacher, then one forward/backward of that student with nn.Linear modules, F.kl_div and its own
Adam. Batched (depthwidth.depth_toy.train.train_students): one teacher forward per step for all students
of that teacher (every temperature and depth), students of one depth stacked into batched matmuls.
Both at the paper's settings (batch 1024, width 32, teacher depth 128, depths 6..48, learned-head
variant), same thread count. Reported: wall-clock milliseconds per student-step, and the ratio.

The plain loop is timed twice: as the paper wrote it (subnormal floats on: low-temperature softmax makes
them, and x86 CPUs handle them 10-100x slower) and with subnormals flushed (what our trainer does), so the
ratio from batching alone is visible too.

    python bench/bench_depth_toy.py                 # full: 4 temperatures x 6 depths
    python bench/bench_depth_toy.py --quick         # 2 temperatures x 3 depths, fewer steps
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from depthwidth.depth_toy.model import ReferenceModel, make_teacher
from depthwidth.depth_toy.train import TrainSettings, plain_loop_step, train_students


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="2 temperatures x 3 depths, fewer steps")
    ap.add_argument("--threads", type=int, default=1, help="torch threads for both loops (default 1)")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--device", default="cpu", help="cpu or cuda (both loops on it)")
    ap.add_argument("--out", help="write the numbers as JSON here")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    depths = [6, 24, 48] if args.quick else [6, 12, 16, 24, 32, 48]
    temps = [0.01, 1.0] if args.quick else [0.01, 0.0464, 0.215, 1.0]
    plain_steps = 2 if args.quick else 3
    batched_steps = 4 if args.quick else 10
    teacher = make_teacher("independent", seed=0, depth=128)
    dev = args.device
    res = {
        "depths": depths,
        "temperatures": temps,
        "batch": args.batch,
        "threads": args.threads,
        "device": dev,
    }
    res["plain_as_written_ms"] = plain_ms_per_student_step(
        teacher, depths, temps, plain_steps, args.batch, False, dev
    )
    print(
        f"plain loop, as the paper wrote it:   {res['plain_as_written_ms']:8.1f} ms per student-step",
        flush=True,
    )
    res["plain_flushed_ms"] = plain_ms_per_student_step(
        teacher, depths, temps, plain_steps, args.batch, True, dev
    )
    print(
        f"plain loop, subnormals flushed:      {res['plain_flushed_ms']:8.1f} ms per student-step", flush=True
    )
    res["batched_ms"] = batched_ms_per_student_step(teacher, depths, temps, batched_steps, args.batch, dev)
    print(f"batched, shared teacher:             {res['batched_ms']:8.1f} ms per student-step")
    res["speedup_vs_as_written"] = res["plain_as_written_ms"] / res["batched_ms"]
    res["speedup_vs_flushed"] = res["plain_flushed_ms"] / res["batched_ms"]
    print(
        f"speed-up: {res['speedup_vs_as_written']:.1f}x vs the paper's loop, "
        f"{res['speedup_vs_flushed']:.1f}x vs the loop with subnormals flushed"
    )
    if args.out:
        with open(args.out, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
