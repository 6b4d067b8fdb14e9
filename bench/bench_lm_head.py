"""Benchmark: LM-head geometry on a matrix of a real model's shape (random values, no download).

    python bench/bench_lm_head.py                          # SmolLM2-135M's head: V = 49152, m = 576
    python bench/bench_lm_head.py --V 151936 --m 8192      # Qwen2.5-72B's head (needs ~10 GB RAM)

Measures seconds for

- ``gram``: the exact mean squared overlap through the m x m Gram matrix (O(V m²));
- ``pairs_block``: the same sum over explicit V x V blocks (O(V² m)), extrapolated from ``--block-rows``
  rows, i.e. the brute force that the Gram identity replaces; target: ``gram`` >= 20x faster;
- ``abs_sample``: the sampled mean |overlap| with ``--rows`` rows (each against all V rows);
- ``abs_exact``: the exact mean |overlap| (O(V² m)), extrapolated from ``--block-rows`` rows.

Prints one JSON object; ``--out`` also writes it to a file.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from depthwidth.lm_head.geometry import mean_abs_overlap, mean_sq_overlap, normalized_rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--V", type=int, default=49152)
    ap.add_argument("--m", type=int, default=576)
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--block-rows", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    w = torch.randn(a.V, a.m, generator=torch.Generator().manual_seed(0))
    t = time.perf_counter()
    msq = mean_sq_overlap(w)
    gram_s = time.perf_counter() - t

    wn = torch.cat([c for _, c in normalized_rows(w)])
    t = time.perf_counter()
    block = wn[: a.block_rows] @ wn.T
    _ = float((block**2).sum())
    block_s = (time.perf_counter() - t) * a.V / a.block_rows

    t = time.perf_counter()
    mabs, err = mean_abs_overlap(w, n_rows=a.rows)
    sample_s = time.perf_counter() - t

    t = time.perf_counter()
    _ = float((wn[: a.block_rows] @ wn.T).abs().sum())
    exact_s = (time.perf_counter() - t) * a.V / a.block_rows
    res = {
        "V": a.V,
        "m": a.m,
        "threads": a.threads,
        "m_times_mean_sq_overlap": a.m * msq,
        "gram_s": gram_s,
        "pairs_block_s_extrapolated": block_s,
        "speedup_gram_vs_pairs": block_s / gram_s,
        "target_speedup": 20.0,
        "abs_sample_s": sample_s,
        "abs_sample_rows": a.rows,
        "abs_sample_value": mabs,
        "abs_sample_err": err,
        "abs_exact_s_extrapolated": exact_s,
    }
    res["meets_target"] = res["speedup_gram_vs_pairs"] >= res["target_speedup"]
    print(json.dumps(res, indent=2))
    if a.out:
        Path(a.out).write_text(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
