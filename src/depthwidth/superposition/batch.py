"""The superposition trainer's input batch and scratch memory.

``Batch``: one sparse input batch (the active entries, grouped by row and by feature, and the compiled
kernel's view of its rows); ``Workspace``: named scratch tensors reused from step to step. Neither
depends on the gradient code or the kernel, which both read them.
"""

from __future__ import annotations

import math

import numpy as np
import torch


class Batch:
    """One sparse input batch: the K active entries (row, feature, value) sorted by row, their row
    index among the Ba distinct active rows (``rid``), row chunks for cache-sized blocks, and the
    same entries grouped by feature: the a distinct active features ``act``, each entry's index
    among them (``inv``) and, in feature order, the entries' rows, values and group offsets."""

    def __init__(self, rows, feats, vals, B: int, n: int, chunk_rows: int = 512):
        # The bookkeeping runs in numpy on the CPU (for a few thousand entries its per-call cost is a
        # fraction of torch's); the index tensors then go to the entries' device.
        dev = feats.device
        r, f = rows.cpu().numpy(), feats.cpu().numpy()
        K = f.size
        self.B, self.n, self.K = B, n, K
        self.feats, self.vals, self.chunk_rows = feats, vals, chunk_rows
        to = lambda a: torch.from_numpy(np.ascontiguousarray(a, dtype=np.int64)).to(dev)  # noqa: E731
        new_row = np.ones(K, dtype=bool)
        new_row[1:] = r[1:] != r[:-1]
        starts = np.flatnonzero(new_row)
        self.Ba = starts.size
        self.row_offsets = to(starts)  # (Ba,) first entry of each active row
        self.counts = to(np.diff(np.append(starts, K)))  # (Ba,) its number of entries
        rid = np.cumsum(new_row) - 1  # each entry's index among the active rows
        self.rid = to(rid)
        # group the entries by feature with one stable sort (by feature, then row): the distinct
        # features act, each entry's index among them (inv), and in that order rows, values, offsets
        order = np.argsort(f, kind="stable")
        sf = f[order]
        new = np.ones(K, dtype=bool)
        new[1:] = sf[1:] != sf[:-1]
        self.act = to(sf[new])
        group = np.cumsum(new) - 1  # feature index of each entry in feature order
        inv = np.empty(K, dtype=np.int64)
        inv[order] = group
        self.inv = to(inv)
        self.f_rid, self.f_vals = to(rid[order]), vals[to(order)]
        self.f_offsets = to(np.flatnonzero(new))
        self._np = (order, group, rid[order], starts)

    @property
    def chunks(self) -> list[tuple[int, int, int, int]]:
        """Chunks of ≤ chunk_rows active rows: (row0, row1, entry0, entry1) (the hidden route's blocks)."""
        if not hasattr(self, "_chunks"):
            e = torch.cumsum(self.counts, 0).tolist()
            self._chunks = []
            for r0 in range(0, self.Ba, self.chunk_rows):
                r1 = min(r0 + self.chunk_rows, self.Ba)
                self._chunks.append((r0, r1, 0 if r0 == 0 else e[r0 - 1], e[r1 - 1]))
        return self._chunks

    @property
    def row_ends(self) -> torch.Tensor:
        """(Ba,) one past the last entry of each active row."""
        if not hasattr(self, "_row_ends"):
            self._row_ends = self.row_offsets + self.counts
        return self._row_ends

    @property
    def row_kinds(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The fused kernel's view of the active rows: those with one active feature grouped by it
        (offsets (a + 1,) into their values, in row order within a feature) and the others, ordered by
        their first (most frequent) feature so that its rows of G_A and D stay in cache."""
        if not hasattr(self, "_row_kinds"):
            # in the entries' feature order (by feature, then row), so no further sort is needed
            order, group, f_rid, starts = self._np
            counts = self.counts.cpu().numpy()
            single = (counts == 1)[f_rid]  # the entry's row has one active feature
            s_vals = self.f_vals[torch.from_numpy(single).to(self.f_vals.device)]
            s_off = np.zeros(self.n_features + 1, dtype=np.int64)
            np.cumsum(np.bincount(group[single], minlength=self.n_features), out=s_off[1:])
            # the other rows, each named by its first entry, ordered by that entry's feature
            first = np.zeros(self.K, dtype=bool)
            first[starts] = True
            m_rows = f_rid[first[order] & ~single]
            dev = self.feats.device
            self._row_kinds = (torch.from_numpy(s_off).to(dev), s_vals, torch.from_numpy(m_rows).to(dev))
        return self._row_kinds

    @property
    def max_row_entries(self) -> int:
        if not hasattr(self, "_max_row_entries"):
            self._max_row_entries = int(self.counts.max()) if self.Ba else 1
        return self._max_row_entries

    @property
    def n_features(self) -> int:
        return self.act.numel()


class Workspace:
    """Scratch tensors reused from step to step (named, grown on demand): a fresh tensor of more than
    ≈ 128 kB is a fresh memory mapping, whose page faults cost as much as the work done in it."""

    def __init__(self, device="cpu", dtype=torch.float32):
        self.device, self.dtype = device, dtype
        self._flat: dict[str, torch.Tensor] = {}
        self._views: dict[tuple, torch.Tensor] = {}  # (name, *shape) -> view of the current buffer

    def get(self, name: str, *shape: int) -> torch.Tensor:
        view = self._views.get((name, *shape))
        if view is not None:
            return view
        size = math.prod(shape)
        flat = self._flat.get(name)
        if flat is None or flat.numel() < size:
            size_new = max(size, int(1.25 * size) if flat is not None else size)
            flat = torch.empty(size_new, device=self.device, dtype=self.dtype)
            self._flat[name] = flat
            self._views = {k: v for k, v in self._views.items() if k[0] != name}
        view = self._views[(name, *shape)] = flat[:size].view(shape)
        return view
