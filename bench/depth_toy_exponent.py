"""Train tied- and independent-teacher students of the depth toy and print the depth exponent α_ℓ at every
evaluation: does it settle, and where (the paper: ≈ 1 independent, ≈ 3 tied once converged)?

The pipeline's own trainer (depthwidth.depth_toy.train.train_students), outside Snakemake, so that one
command can run it on a borrowed GPU. Defaults: the paper's MSE variant (exp-9-2/9-6: batch 1024, depths
6-48, lr 6e-4·2/√depth, flat then linear decay); ``--teacher-depth 24`` gives exp-9-5.

    python bench/depth_toy_exponent.py --steps 20000 --device cuda --out exponent.json
    python bench/depth_toy_exponent.py --steps 12000 --batch 256 --depths 4 8 16 32 --lr-depth-factor 8
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from depthwidth.depth_toy.model import make_teacher  # noqa: E402
from depthwidth.depth_toy.train import TrainSettings, train_students  # noqa: E402
from depthwidth.laws.loglog import power_law_fit  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kinds", nargs="+", default=["tied", "independent"])
    ap.add_argument("--variant", default="mse", choices=["mse", "rk2_mse"])
    ap.add_argument("--depths", type=int, nargs="+", default=[6, 12, 16, 24, 32, 48])
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--teacher-depth", type=int, default=128, help="teacher blocks (exp-9-5: 24)")
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--lr", type=float, default=6e-4)
    ap.add_argument("--lr-depth-factor", type=float, default=2.0)
    ap.add_argument("--evals", type=int, default=10, help="evaluations during training")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", help="also write the trajectories as JSON here")
    a = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    torch.set_num_threads(a.threads)
    result = {"settings": vars(a), "kinds": {}}
    for kind in a.kinds:
        s = TrainSettings(
            variant=a.variant,
            depths=a.depths,
            temperatures=[None],
            steps=a.steps,
            lr=a.lr,
            lr_depth_factor=a.lr_depth_factor,
            schedule="flat_then_linear",
            batch_size=a.batch,
            test_batches=10,
            eval_every=max(a.steps // a.evals, 1),
            seed=a.seed,
        )
        t0 = time.perf_counter()
        records = train_students(
            make_teacher(kind, seed=a.seed, depth=a.teacher_depth), s, device=a.device, progress_every_s=60
        )
        seconds = time.perf_counter() - t0
        curves = {r["depth"]: r["test_curve"] for r in records}
        steps = [st for st, _ in curves[a.depths[0]]]
        traj = []
        for i, st in enumerate(steps):
            losses = [curves[d][i][1] for d in a.depths]
            fit = power_law_fit(a.depths, losses)
            traj.append({"step": st, "alpha": fit["exponent"], "alpha_se": fit["stderr"], "losses": losses})
            print(
                f"{kind:11s} step {st:6d}: alpha_l = {fit['exponent']:.3f} ± {fit['stderr']:.3f}   test losses "
                + " ".join(f"{v:.3e}" for v in losses),
                flush=True,
            )
        per_step_ms = 1e3 * seconds / (a.steps * len(a.depths))
        print(f"{kind}: {seconds:.0f} s on {a.device}, {per_step_ms:.2f} ms per student-step", flush=True)
        result["kinds"][kind] = {
            "trajectory": traj,
            "seconds": seconds,
            "ms_per_student_step": per_step_ms,
            "final_alpha": traj[-1]["alpha"],
            "local_exponents": [
                float(
                    -np.log(traj[-1]["losses"][j + 1] / traj[-1]["losses"][j])
                    / np.log(a.depths[j + 1] / a.depths[j])
                )
                for j in range(len(a.depths) - 1)
            ],
        }
    if a.out:
        Path(a.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
