"""Benchmark: torch jobs that share CPUs, with OpenMP's default wait policy and with PASSIVE.

The documented command runs ``--cores 8`` on a 2-core laptop, so several jobs with ``threads: 2`` share
each CPU. Torch's OpenMP threads spin while they wait for each other; a spinning thread keeps the CPU from
a job that had work. ``rules/common.smk`` sets ``OMP_WAIT_POLICY=PASSIVE`` for local jobs when the cores
exceed the CPUs (``depthwidth.plan.shared_cpu_env``). This measures what that buys:

    .venv/bin/python bench/bench_cpu_sharing.py [--jobs 4] [--threads 2] [--seconds 20]

Each mode starts ``--jobs`` processes at once, each running a small transformer-like loop (matmuls of
SmolLM2-135M's width with elementwise work between them, the shape of our model jobs) with ``--threads``
torch threads for ``--seconds``; it prints the loop iterations all jobs finished together, their CPU
seconds, and iterations per CPU-second. A single job alone on the machine is the reference.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from depthwidth.plan import usable_cpus  # noqa: E402

WORKER = r"""
import resource, time, torch
torch.manual_seed(0)
a, w = torch.randn(256, 576), torch.randn(576, 1536) / 24
seconds = float({seconds})
t0 = time.perf_counter(); n = 0
while time.perf_counter() - t0 < seconds:
    for _ in range(20):
        x = torch.relu(a @ w)
        a = torch.tanh(a + 1e-3 * (x @ w.T))
    n += 1
r = resource.getrusage(resource.RUSAGE_SELF)
print(n, r.ru_utime + r.ru_stime)
"""


def run_mode(jobs: int, threads: int, seconds: float, policy: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    env["OMP_NUM_THREADS"] = str(threads)
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    code = f"import torch; torch.set_num_threads({threads})\n" + WORKER.format(seconds=seconds)
    procs = [
        subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(jobs)
    ]
    iters = cpu = 0.0
    for p in procs:
        out, _ = p.communicate()
        if p.returncode:
            raise SystemExit(f"worker failed with exit status {p.returncode}")
        n, c = out.split()
        iters += int(n)
        cpu += float(c)
    return {
        "policy": policy or "default",
        "jobs": jobs,
        "threads": threads,
        "iterations": int(iters),
        "cpu_s": round(cpu, 1),
        "iterations_per_cpu_s": round(iters / cpu, 3),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=4, help="concurrent jobs (default 4: 8 threads on 2 CPUs)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads per job (our model rules: 2)")
    ap.add_argument("--seconds", type=float, default=20.0)
    args = ap.parse_args()
    rows = [run_mode(1, args.threads, args.seconds, None)]
    for policy in (None, "PASSIVE"):
        rows.append(run_mode(args.jobs, args.threads, args.seconds, policy))
    for r in rows:
        print(json.dumps(r))
    shared, passive = rows[1], rows[2]
    print(
        f"{args.jobs} jobs x {args.threads} threads on {usable_cpus()} CPUs: "
        f"{shared['iterations']} iterations with the default wait policy, {passive['iterations']} with PASSIVE "
        f"({passive['iterations'] / max(shared['iterations'], 1):.2f}x); one job alone: {rows[0]['iterations']}"
    )


if __name__ == "__main__":
    main()
