"""One fused pass over the active rows of a batch (the features route's elementwise work), in C.

Given the rows G_A = W_A Wᵀ (a × n) of the batch's distinct active features and b, the kernel forms
for every active row pre = x_r G_A + b, y = ReLU(pre), the residual y − x (x is nonzero only at the
row's own entries), its square summed into the loss, and R = (y − x)·[pre > 0] summed into dL/db and
into D = x_Aᵀ R. The (rows × n) block of pre-activations is never stored, where the torch code makes
six or seven passes over it in memory:

- rows with one active feature j (most rows) are taken a feature at a time and 16 columns at a time,
  their terms summed over the rows in registers (the feature's own column fixed up after);
- the other rows one at a time in a row buffer that stays in the first-level cache, grouped by their
  first feature so that its rows of G_A and D stay in cache too;
- rows with no active feature in closed form (pre = b there).

The source is compiled once per process with the system C compiler (about half a second) into a
temporary directory and loaded with ctypes; no torch headers are needed. Without a compiler, or if
the build or a self-check against the torch code fails, ``kernel()`` returns None (with one log line)
and the trainer uses its torch code, which computes the same quantities (equal up to float rounding
order).
"""

from __future__ import annotations

import ctypes
import logging
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import torch

log = logging.getLogger("depthwidth.superposition")

_SOURCE = r"""
#include <stdint.h>

/* 8 floats, loaded and stored unaligned (GCC/Clang vector extension; a machine without 256-bit
   registers runs it as two halves) */
typedef float v8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef int32_t v8i __attribute__((vector_size(32), aligned(4), may_alias));

static inline v8 relu8(v8 p)
{   /* max(p, 0) with NaN kept (p < 0 is false for NaN): a diverged run shows in the loss */
    const v8 zero = {0.0f};
    return (v8)(~(p < zero) & (v8i)p);
}

/* Rows with one active feature j, values v[0..cnt), over the 16 columns at g, bb, gbq, dq:
   pre = v*g + b, R = ReLU(pre), summed over the rows in registers into dL/db (gbq), D's row (dq) and
   the squared error (returned). The feature's own column, where x = v, is fixed up by the caller. */
static inline double singles16(const float *restrict g, const float *restrict bb,
                               const float *restrict v, int64_t cnt, float *restrict gbq,
                               float *restrict dq)
{
    const v8 g0 = *(const v8 *)g, g1 = *(const v8 *)(g + 8);
    const v8 b0 = *(const v8 *)bb, b1 = *(const v8 *)(bb + 8);
    v8 s00 = {0.0f}, s01 = {0.0f}, s10 = {0.0f}, s11 = {0.0f}, s20 = {0.0f}, s21 = {0.0f};
    for (int64_t r = 0; r < cnt; r++) {
        const float vr = v[r];
        const v8 y0 = relu8(vr * g0 + b0), y1 = relu8(vr * g1 + b1);
        s00 += y0;
        s01 += y1;
        s10 += vr * y0;
        s11 += vr * y1;
        s20 += y0 * y0;
        s21 += y1 * y1;
    }
    *(v8 *)gbq += s00;
    *(v8 *)(gbq + 8) += s01;
    *(v8 *)dq = s10; /* the first contribution to D's row: the caller did not zero it */
    *(v8 *)(dq + 8) = s11;
    double acc = 0.0;
    for (int l = 0; l < 8; l++) acc += (double)s20[l] + (double)s21[l];
    return acc;
}

/* The same over one column (the last n mod 16 columns, and the fix-ups) */
static inline double singles1(float g, float bb, const float *restrict v, int64_t cnt,
                              float *restrict gbq, float *restrict dq)
{
    float s0 = 0.0f, s1 = 0.0f;
    double acc = 0.0;
    for (int64_t r = 0; r < cnt; r++) {
        const float p = v[r] * g + bb;
        const float y = p < 0.0f ? 0.0f : p;
        s0 += y;
        s1 += v[r] * y;
        acc += (double)y * (double)y;
    }
    *gbq += s0;
    *dq = s1;
    return acc;
}

/* See fused.py. GA (a x n): rows of W W^T of the batch's distinct active features; act[j]: the
   column of feature j. n_empty rows have no active feature (pre = b). The rows with one active
   feature come grouped by it: feature j's values are s_vals[s_off[j] .. s_off[j+1]). The other
   n_multi rows are visited in the order m_rows, their entries [starts[r], ends[r]) given by inv, feats
   and vals. Writes gb (n) and D (a x n); buf (n) and pre_act
   (max entries per row) are scratch. Returns the batch's summed squared error. */
double fused_step(int64_t n, int64_t a, int64_t n_empty, const int64_t *restrict act,
                  const int64_t *restrict s_off, const float *restrict s_vals, int64_t n_multi,
                  const int64_t *restrict m_rows, const int64_t *restrict starts,
                  const int64_t *restrict ends, const int64_t *restrict inv,
                  const int64_t *restrict feats, const float *restrict vals,
                  const float *restrict GA, const float *restrict b, float *restrict D,
                  float *restrict gb, float *restrict buf, float *restrict pre_act)
{
    double sq = 0.0;
    {   /* the empty rows in closed form: each contributes ||ReLU(b)||^2 and ReLU(b) */
        float lane[32] = {0.0f};
        const float ne = (float)n_empty;
        for (int64_t i = 0; i < n; i++) {
            const float y = b[i] < 0.0f ? 0.0f : b[i];
            gb[i] = ne * y;
            lane[i & 31] += y * y;
        }
        double acc = 0.0;
        for (int j = 0; j < 32; j++) acc += (double)lane[j];
        sq = (double)n_empty * acc;
    }
    /* the rows with one active feature, a feature at a time, 16 columns at a time */
    for (int64_t j = 0; j < a; j++) {
        const int64_t cnt = s_off[j + 1] - s_off[j];
        float *restrict d = D + j * n;
        if (!cnt) {
            for (int64_t i = 0; i < n; i++) d[i] = 0.0f;
            continue;
        }
        const float *restrict v = s_vals + s_off[j];
        const float *restrict g = GA + j * n;
        int64_t q = 0;
        for (; q + 16 <= n; q += 16) sq += singles16(g + q, b + q, v, cnt, gb + q, d + q);
        for (; q < n; q++) sq += singles1(g[q], b[q], v, cnt, gb + q, d + q);
        /* the feature's own column c: the residual y - v in the loss, its gradient only where
           pre > 0; the same pre as above, so its ReLU terms are replaced */
        const int64_t c = act[j];
        float f0 = 0.0f, f1 = 0.0f;
        for (int64_t r = 0; r < cnt; r++) {
            const float vr = v[r];
            const float p = vr * g[c] + b[c];
            const float y = p < 0.0f ? 0.0f : p;
            const float res = y - vr;
            const float R = p > 0.0f ? res : (p == p ? 0.0f : p);
            f0 += R - y;
            f1 += vr * R - vr * y;
            sq += (double)res * (double)res - (double)y * (double)y;
        }
        gb[c] += f0;
        d[c] += f1;
    }
    /* the rows with several active features, one at a time in a row buffer */
    for (int64_t rr = 0; rr < n_multi; rr++) {
        const int64_t r = m_rows[rr];
        const int64_t k0 = starts[r], k1 = ends[r];
        const float v0 = vals[k0];
        const float *restrict g0 = GA + inv[k0] * n;
        /* pre-activations at the row's own columns, before the ReLU overwrites them */
        for (int64_t k = k0; k < k1; k++) {
            const int64_t c = feats[k];
            float p = v0 * g0[c];
            for (int64_t e = k0 + 1; e < k1; e++) p = p + vals[e] * GA[inv[e] * n + c];
            pre_act[k - k0] = p + b[c];
        }
        for (int64_t i = 0; i < n; i++) buf[i] = v0 * g0[i];
        for (int64_t k = k0 + 1; k < k1 - 1; k++) {
            const float v = vals[k];
            const float *restrict g = GA + inv[k] * n;
            for (int64_t i = 0; i < n; i++) buf[i] = buf[i] + v * g[i];
        }
        /* the last entry, + b, ReLU, and the row's squared error in 32 float lanes */
        const float vl = vals[k1 - 1];
        const float *restrict gl = GA + inv[k1 - 1] * n;
        float lane[32] = {0.0f};
        int64_t q = 0;
        for (; q + 32 <= n; q += 32)
            for (int j = 0; j < 32; j++) {
                const float p = (buf[q + j] + vl * gl[q + j]) + b[q + j];
                const float y = p < 0.0f ? 0.0f : p;
                buf[q + j] = y;
                lane[j] += y * y;
            }
        for (; q < n; q++) {
            const float p = (buf[q] + vl * gl[q]) + b[q];
            const float y = p < 0.0f ? 0.0f : p;
            buf[q] = y;
            lane[q & 31] += y * y;
        }
        double acc = 0.0;
        for (int j = 0; j < 32; j++) acc += (double)lane[j];
        /* the row's own entries: residual y - x in the loss; its gradient only where pre > 0 */
        for (int64_t k = k0; k < k1; k++) {
            const float p = pre_act[k - k0];
            const float y = p < 0.0f ? 0.0f : p;
            const float res = y - vals[k];
            acc += (double)res * (double)res - (double)y * (double)y;
            buf[feats[k]] = p > 0.0f ? res : (p == p ? 0.0f : p);
        }
        sq += acc;
        /* R = buf: into dL/db and D = x_A^T R */
        {
            float *restrict d = D + inv[k0] * n;
            for (int64_t i = 0; i < n; i++) {
                const float R = buf[i];
                gb[i] += R;
                d[i] += v0 * R;
            }
        }
        for (int64_t k = k0 + 1; k < k1; k++) {
            const float v = vals[k];
            float *restrict d = D + inv[k] * n;
            for (int64_t i = 0; i < n; i++) d[i] += v * buf[i];
        }
    }
    return sq;
}
"""

# -ffp-contract=off: no fused multiply-adds, every product and sum rounds on its own as in torch;
# -fno-trapping-math (FP exceptions are not trapped anyway) lets the compiler vectorise the ReLU.
_FLAGS = [
    "-O3",
    "-march=native",
    "-ffp-contract=off",
    "-fno-trapping-math",
    "-fPIC",
    "-shared",
]

_kernel = None
_tried = False
build_seconds = 0.0


def _build() -> ctypes.CDLL:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("g++")
    if not cc:
        raise RuntimeError("no C compiler (cc, gcc or g++) on PATH")
    d = Path(tempfile.mkdtemp(prefix="depthwidth_fused_"))
    try:
        src, lib = d / "fused.c", d / "fused.so"
        src.write_text(_SOURCE)
        subprocess.run(
            [cc, "-x", "c", "-std=c99", *_FLAGS, str(src), "-o", str(lib)],
            check=True,
            capture_output=True,
            text=True,
        )
        dll = ctypes.CDLL(str(lib))
    finally:
        shutil.rmtree(d, ignore_errors=True)  # the loaded library stays mapped
    f = dll.fused_step
    f.restype = ctypes.c_double
    i64, p = ctypes.c_int64, ctypes.c_void_p
    f.argtypes = [i64, i64, i64, p, p, p, i64] + [p] * 12
    return dll


def kernel():
    """The compiled kernel (built on first use), or None where it cannot be built; then the trainer
    falls back to torch (logged once). ``DEPTHWIDTH_FUSED=0`` turns it off."""
    global _kernel, _tried, build_seconds
    if _tried:
        return _kernel
    _tried = True
    if os.environ.get("DEPTHWIDTH_FUSED", "1") == "0":
        log.info("fused C kernel off (DEPTHWIDTH_FUSED=0); using the torch code")
        return None
    t = time.perf_counter()
    try:
        dll = _build()
        _kernel = dll
        _self_check()
    except Exception as e:  # noqa: BLE001 - any failure means: use the torch code
        _kernel = None
        msg = getattr(e, "stderr", "") or str(e)
        log.warning("fused C kernel unavailable (%s); using the torch code", msg.strip()[:300])
        return None
    build_seconds = time.perf_counter() - t
    log.info("fused C kernel built in %.2fs", build_seconds)
    return _kernel


def _ptr(t: torch.Tensor) -> int:
    return t.data_ptr()


def fused_rows(GA, b, x, D, gb) -> float:
    """Run the kernel on batch ``x`` (a ``train._Batch``): fills D = x_Aᵀ R (a × n) and gb = Σ_rows R
    (n,) with R = dL/dpre · (B n / 2), returns the batch's summed squared error. All float32 / int64,
    contiguous, on the CPU."""
    buf = torch.empty(x.n, dtype=torch.float32)
    pre = torch.empty(x.max_row_entries, dtype=torch.float32)
    s_off, s_vals, m_rows = x.row_kinds
    return _kernel.fused_step(
        x.n,
        x.n_features,
        x.B - x.Ba,
        _ptr(x.act),
        _ptr(s_off),
        _ptr(s_vals),
        m_rows.numel(),
        _ptr(m_rows),
        _ptr(x.row_offsets),
        _ptr(x.row_ends),
        _ptr(x.inv),
        _ptr(x.feats),
        _ptr(x.vals),
        _ptr(GA),
        _ptr(b),
        _ptr(D),
        _ptr(gb),
        _ptr(buf),
        _ptr(pre),
    )


def _self_check() -> None:
    """Compare the kernel with the torch code on a small random batch; raise if they disagree."""
    from depthwidth.superposition.data import SparseSampler, feature_probabilities
    from depthwidth.superposition.train import _Batch, _empty_rows, _residual_into

    n, B = 70, 96  # n not a multiple of the kernel's 32 lanes
    p = feature_probabilities("power-a1.2", n)
    x = _Batch(*SparseSampler(p, B, torch.Generator().manual_seed(0)).sample(), B, n)
    a = x.n_features
    g = torch.Generator().manual_seed(1)
    GA = torch.randn(a, n, generator=g)
    b = torch.randn(n, generator=g)
    D, gb = torch.empty(a, n), torch.empty(n)
    sq = fused_rows(GA, b, x, D, gb)
    emb = torch.nn.functional.embedding_bag
    y = emb(x.inv, GA, x.row_offsets, mode="sum", per_sample_weights=x.vals).add_(b).clamp_min_(0.0)
    R, sq_t = _residual_into(y, x.rid, x.feats, x.vals)
    sq_e, gb_t = _empty_rows(b, x)
    D_t = emb(x.f_rid, R, x.f_offsets, mode="sum", per_sample_weights=x.f_vals)
    ok = (
        x.B > x.Ba
        and abs(sq - sq_t - sq_e) <= 1e-4 * abs(sq_t + sq_e)
        and torch.allclose(D, D_t, rtol=1e-4, atol=1e-4)
        and torch.allclose(gb, gb_t + R.sum(0), rtol=1e-4, atol=1e-4)
    )
    if not ok:
        raise RuntimeError("self-check against the torch code failed")
