"""What a superposition checkpoint resumed on a CPU of another kind gives, next to uninterrupted runs.

"Another CPU" is played by a kernel built for the x86-64 baseline (``-march=x86-64``: SSE2, no FMA, so no
multiply-add is fused) in place of ``-march=native``; on this machine that is the kernel a CPU without
FMA/AVX builds. Two cells (γ = -1 and 0.5, m = 25, n = 300, 400 steps) are trained: uninterrupted with the
native build (the reference), uninterrupted with the baseline build, and stopped at step 200 with the
native build, then resumed from its checkpoint with each build. Each run is its own process (one build
per process). Prints, per run and cell, whether W and the loss curve are bit-identical to the reference,
the relative difference of W and the first step whose loss differs.

    PYTHONPATH=src .venv/bin/python bench/superposition_resume_other_cpu.py

About 20 s of CPU; the two builds go to a temporary cache folder.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

RUN = """
import sys, numpy as np, torch
torch.set_num_threads(1)
from depthwidth.superposition import fused, train as tr
march, ckpt, out = sys.argv[1], sys.argv[2], sys.argv[3]
fused.FLAGS = [f"-march={march}" if f == "-march=native" else f for f in fused.FLAGS]
assert fused.kernel() is not None and fused.group_ok(), "the kernel did not build"
S = tr.TrainSettings(n=300, batch=512, steps=400, warmup_steps=40, seed=1)
kw = dict(checkpoint=None if ckpt == "-" else ckpt, checkpoint_every=200, progress_every_s=1e9)
if out == "stop":  # killed in step 201: the checkpoint of step 200 stays
    real, calls = tr._step_group, [0]
    def dying(*a, **k):
        calls[0] += 1
        if calls[0] > 200:
            raise KeyboardInterrupt
        return real(*a, **k)
    tr._step_group = dying
    try:
        tr.train_cells("power-a1.5", [-1.0, 0.5], [25, 25], S, **kw)
    except KeyboardInterrupt:
        sys.exit(0)
res = tr.train_cells("power-a1.5", [-1.0, 0.5], [25, 25], S, **kw)
np.savez(out, **{f"W{i}": r.W for i, r in enumerate(res)}, **{f"L{i}": r.losses for i, r in enumerate(res)})
"""


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="resume_other_cpu_"))
    env = {**os.environ, "DEPTHWIDTH_CACHE_DIR": str(tmp / "cache")}

    def run(march: str, ckpt: str, out: str) -> None:
        subprocess.run([sys.executable, "-c", RUN, march, ckpt, out], env=env, check=True)

    run("native", "-", str(tmp / "reference.npz"))
    run("x86-64", "-", str(tmp / "other_cpu.npz"))
    for march in ("native", "x86-64"):
        ckpt = str(tmp / f"ckpt_{march}.pt")
        run("native", ckpt, "stop")
        run(march, ckpt, str(tmp / f"resumed_{march}.npz"))
    ref = np.load(tmp / "reference.npz")
    for name, label in (
        ("resumed_native", "stopped at 200, resumed on the same build"),
        ("resumed_x86-64", "stopped at 200, resumed on the other CPU's build"),
        ("other_cpu", "uninterrupted on the other CPU's build"),
    ):
        d = np.load(tmp / f"{name}.npz")
        for i, gamma in enumerate((-1.0, 0.5)):
            W, L, W0, L0 = d[f"W{i}"], d[f"L{i}"], ref[f"W{i}"], ref[f"L{i}"]
            same = np.array_equal(W, W0) and np.array_equal(L, L0)
            rel = float(np.linalg.norm(W - W0) / np.linalg.norm(W0))
            first = int(np.argmax(L != L0)) if (L != L0).any() else None
            print(
                f"{label}, gamma={gamma:g}: bit-identical {same}, |dW|/|W| = {rel:.1e}, first differing loss at "
                f"step {first}, final loss {L[-1]:.6g} vs {L0[-1]:.6g}"
            )


if __name__ == "__main__":
    main()
