"""Snapshot of trained superposition cells, to show that a change of the trainer leaves its numbers
bit-identical on one machine.

Trains 17 cells (five laws and settings: several widths, both decay rules and several γ, n not a multiple
of the kernel's 16 or 32 columns, loss scale 100, both gradient routes and 'auto', the benchmark's
n = 1000 shape) for 40-300 steps and saves W, b and the loss curve of each; ``--compare`` checks two
snapshots with ``torch.equal``:

    PYTHONPATH=src .venv/bin/python bench/superposition_cells_snapshot.py /tmp/before.pt    # old code
    PYTHONPATH=src .venv/bin/python bench/superposition_cells_snapshot.py /tmp/after.pt     # new code
    PYTHONPATH=src .venv/bin/python bench/superposition_cells_snapshot.py --compare /tmp/before.pt /tmp/after.pt

About 10 s of CPU. ``DEPTHWIDTH_FUSED=0`` snapshots the torch code instead of the compiled kernel.
"""

from __future__ import annotations

import argparse

import torch

from depthwidth.superposition.train import TrainSettings, train_cells

CASES = [
    (
        "a",
        "power-a1.5",
        [-1.0, 0.0, 0.5, -0.3, 1.0, -1.0],
        [10, 10, 25, 25, 39, 39],
        TrainSettings(n=300, batch=512, steps=300, warmup_steps=30, seed=1),
        "auto",
    ),
    (
        "b",
        "linear",
        [-1.0, 0.2],
        [7, 13],
        TrainSettings(
            n=157,
            batch=256,
            steps=200,
            warmup_steps=20,
            seed=2,
            loss_scale=100.0,
            lr_width_exponent=0.25,
            lr_bias_over_m=2.0,
        ),
        "auto",
    ),
    ("c", "power-a1.2", [-1.0], [15], TrainSettings(n=250, batch=400, steps=300, warmup_steps=30), "auto"),
    (
        "d",
        "power-a1.2",
        [0.3, -1.0],
        [9, 9],
        TrainSettings(n=133, batch=300, steps=150, warmup_steps=10),
        "hidden",
    ),
    (
        "f",
        "power-a1.5",
        [-1.0, 1.0, -1.0, 0.0],
        [10, 10, 63, 100],
        TrainSettings(n=1000, batch=2048, steps=40, warmup_steps=4),
        "auto",
    ),
    (
        "e",
        "exponential-k40",
        [0.3, -1.0],
        [9, 20],
        TrainSettings(n=133, batch=300, steps=150, warmup_steps=10),
        "features",
    ),
]


def snapshot() -> dict[str, tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    out = {}
    for name, dist, gammas, widths, settings, path in CASES:
        for i, r in enumerate(train_cells(dist, gammas, widths, settings, path=path, progress_every_s=1e9)):
            out[f"{name}{i}"] = (torch.from_numpy(r.W), torch.from_numpy(r.b), torch.from_numpy(r.losses))
    return out


def compare(a: dict, b: dict) -> list[str]:
    """The cells whose W, b or loss curve differ in any bit."""
    if a.keys() != b.keys():
        raise SystemExit(f"the snapshots hold other cells: {sorted(a)} vs {sorted(b)}")
    return [k for k in a if not all(torch.equal(x, y) for x, y in zip(a[k], b[k]))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", help="the snapshot to write, or (with --compare) two to compare")
    ap.add_argument("--compare", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(1)
    if a.compare:
        before, after = (torch.load(f) for f in a.files)
        bad = compare(before, after)
        print(f"{len(before)} cells, {len(before) - len(bad)} bit-identical (W, b, losses); differ: {bad}")
        raise SystemExit(1 if bad else 0)
    cells = snapshot()
    torch.save(cells, a.files[0])
    print(f"{len(cells)} cells saved to {a.files[0]}")


if __name__ == "__main__":
    main()
