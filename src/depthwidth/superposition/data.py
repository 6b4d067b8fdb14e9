"""Feature frequencies and an exact sparse sampler for the toy model's inputs.

The toy input is x ∈ R^n with x_i = Bernoulli(p_i) · U(0, 2), drawn fresh every step. With
Σ p_i = 1 a sample has one active feature on average, so a dense (batch × n) draw, as the
paper's code does, wastes almost all of its random numbers. ``SparseSampler`` draws the same
distribution exactly but only touches the active entries.
"""

from __future__ import annotations

import numpy as np
import torch

from depthwidth.superposition.grid import Distribution, parse_distribution


def feature_probabilities(dist: Distribution | str, n: int) -> torch.Tensor:
    """Activation probabilities p (shape (n,), float64, sorted decreasing, Σp = 1 before the density
    rescaling, entries clipped to 1 after it), exactly as the paper's scripts build them."""
    if isinstance(dist, str):
        dist = parse_distribution(dist)
    i = torch.arange(1, n + 1, dtype=torch.float64)
    if dist.law == "power":
        p = i ** (-dist.alpha)
    elif dist.law == "exponential":
        p = torch.exp(-(i - 1) / dist.k)
    else:
        p = (n - i + 1) / n
    p = p / p.sum()
    if dist.density:
        p = p * (1.0 + dist.density * (1.0 / p[0] - 1.0))
    return p.clamp(max=1.0)


class SparseSampler:
    """Exact sampler of x_i = Bernoulli(p_i)·U(0,2) for a batch, returned in COO form.

    Features with p_i ≥ ``dense_threshold`` are drawn as dense Bernoulli columns (few of them).
    For the rest, k_i ~ Binomial(batch, p_i) and the k_i active rows are a uniform k_i-subset of the
    batch: drawn uniformly, with duplicates redrawn until all are distinct. That procedure commutes
    with relabelling the batch rows, so each subset of size k_i is equally likely: exact, not an
    approximation. Cost ∝ number of active entries (≈ batch · Σp), not batch · n.
    """

    def __init__(
        self, p: torch.Tensor, batch: int, generator: torch.Generator, dense_threshold: float = 0.05
    ):
        self.batch = int(batch)
        self.n = p.numel()
        self.gen = generator
        p32 = p.to(torch.float32)
        dense = p32 >= dense_threshold
        self.dense_idx = torch.nonzero(dense).flatten()
        self.p_dense = p32[self.dense_idx]
        self.sparse_idx = torch.nonzero(~dense).flatten()
        self.p_sparse = p32[self.sparse_idx]
        self.count_b = torch.full_like(self.p_sparse, float(batch))

    def sample(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Return (rows, features, values): int64 (K,), int64 (K,), float32 (K,), the K active entries
        of a (batch × n) input, sorted by row. Values are U(0, 2)."""
        B, g = self.batch, self.gen
        rows_l, feat_l = [], []
        if self.dense_idx.numel():
            mask = torch.rand(B, self.dense_idx.numel(), generator=g) < self.p_dense
            r, c = np.nonzero(mask.numpy())  # row-major, as torch.nonzero
            rows_l.append(torch.from_numpy(r.astype(np.int64)))
            feat_l.append(self.dense_idx[torch.from_numpy(c)])
        if self.sparse_idx.numel():
            counts = torch.binomial(self.count_b, self.p_sparse, generator=g).to(torch.int64)
            # feature of each active slot, each feature repeated by its count
            feats = torch.from_numpy(np.repeat(self.sparse_idx.numpy(), counts.numpy()))
            rows = torch.randint(0, B, (feats.numel(),), generator=g)
            # Redraw rows that repeat within the same feature until every (feature, row) is distinct.
            # (The bookkeeping runs in numpy on the same memory: for these few thousand entries its
            # per-call cost is a fraction of torch's; the draws stay torch's, so the stream is the same.)
            r_np, key = rows.numpy(), feats.numpy() * B
            while feats.numel():
                k = key + r_np
                # keep the first occurrence of each (feature, row) key, redraw the rest
                order = np.argsort(k, kind="stable")
                ks = k[order]
                first = np.ones(k.size, dtype=bool)
                first[order[1:]] = ks[1:] != ks[:-1]
                if first.all():
                    break
                redo = ~first
                r_np[redo] = torch.randint(0, B, (int(redo.sum()),), generator=g).numpy()
            rows_l.append(rows)
            feat_l.append(feats)
        rows = torch.cat(rows_l)
        feats = torch.cat(feat_l)
        order = torch.from_numpy(np.argsort(rows.numpy(), kind="stable"))
        rows, feats = rows[order], feats[order]
        values = torch.rand(rows.numel(), generator=g) * 2.0
        return rows, feats, values


def dense_from_coo(rows, feats, values, batch: int, n: int) -> torch.Tensor:
    """The dense (batch × n) float32 input from COO entries (for tests and the reference loop)."""
    x = torch.zeros(batch, n)
    x[rows, feats] = values
    return x


def expected_active(p: torch.Tensor) -> float:
    """Mean number of active features per sample, Σ p_i."""
    return float(p.sum())


__all__ = [
    "Distribution",
    "SparseSampler",
    "dense_from_coo",
    "expected_active",
    "feature_probabilities",
    "parse_distribution",
]
