"""The superposition trainer's compiled kernel (``kernel.c`` beside this file), behind a checked boundary.

What it computes: given the rows G_A = W_A Wᵀ (a × n) of the batch's distinct active features and b, the
fused pass forms for every active row pre = x_r G_A + b, y = ReLU(pre), the residual y − x (x is nonzero
only at the row's own entries), its square summed into the loss, and R = (y − x)·[pre > 0] summed into
dL/db and into D = x_Aᵀ R, without storing the (rows × n) block that the torch code passes over six or
seven times (single-feature rows a feature and 16 columns at a time in registers, the other rows one at a
time in a row buffer in the first-level cache, rows without an active feature in closed form).
``group_grads`` does a width group's whole features route in one call (gather, the three products through
torch's own BLAS, the pass, scatter) and ``adam_group`` its optimiser step (gradient scale, decay, Adam).

Build: the C source is compiled once per machine with the system C compiler (``native.cached_build``:
a user cache folder, ``~/.cache/depthwidth/kernels`` unless ``DEPTHWIDTH_CACHE_DIR`` or ``XDG_CACHE_HOME``
says otherwise, keyed by the source, the flags, the compiler and the CPU, built under a lock and renamed
into place, its size and SHA-256 recorded and checked before every load, so a damaged or foreign file is
built again instead of loaded) and loaded with ctypes; no torch headers are needed. A process that finds the build logs
"reused the build" and spends a few milliseconds on it. Without a compiler, or if the build or a
self-check against a plain torch computation fails, ``kernel()`` returns None (one log line) and the
trainer uses its torch code, which computes the same quantities (equal up to float rounding order).
``DEPTHWIDTH_FUSED=0`` turns the kernel off.

Boundary: every call goes through ``Kernel``'s keyword-only methods, which check each tensor argument's
dtype, shape, contiguity and device (and derive every size from the shapes) before the call, raising
``KernelArgumentError`` naming the argument; a batch's index arrays are checked for range once, when
``rows_of`` packs them.

CPU dependence: ``-march=native`` compiles for the build machine's instruction set, and
``-ffp-contract=fast`` lets the compiler fuse a multiply and an add into one FMA instruction (one
rounding instead of two) wherever the instruction set has one. So on CPUs with different instruction
sets (with and without FMA, AVX2 or AVX-512) the kernel rounds differently, and so do torch's BLAS and
its vectorised ops, which pick their code by CPU at run time. On one machine every run repeats bit for
bit (the cells do not depend on their job-mates, the thread count of these single-thread jobs, or a
resume). A checkpoint resumed on a CPU of another kind is accepted (its fingerprint does not hold the
CPU) and training continues from the saved weights, Adam moments and data-stream state: the same data
and schedule, a valid run of the same cell, but from the resume on its rounding is the other CPU's, and
its numbers differ from an uninterrupted run by rounding that grows over the remaining steps (as between
any two CPUs), not by more. The same holds where the other machine has no C compiler and runs the torch
code.
"""

from __future__ import annotations

import ctypes
import logging
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from depthwidth.superposition import native
from depthwidth.superposition.batch import Batch, Workspace
from depthwidth.superposition.data import SparseSampler, feature_probabilities

log = logging.getLogger("depthwidth.superposition")

SOURCE = Path(__file__).with_name("kernel.c")
NAME = "superposition-kernel"

# -Wall -Wextra: the source compiles without a warning (a test holds it to that); -Wno-psabi: GCC's note
# that 32-byte vector arguments pass differently on CPUs without AVX (only static functions of the file
# take them, so no ABI is crossed);
# -march=native: the build machine's instruction set (the cache key holds the CPU);
# -ffp-contract=fast: multiply-adds may be fused (one rounding instead of two; 3-8 % faster here, equal
# to the torch code up to float rounding);
# -fno-trapping-math (FP exceptions are not trapped anyway) lets the compiler vectorise the ReLU;
# -fno-math-errno lets it vectorise sqrtf (errno is never read).
FLAGS = [
    "-x",
    "c",
    "-std=c99",
    "-O3",
    "-march=native",
    "-ffp-contract=fast",
    "-fno-trapping-math",
    "-fno-math-errno",
    "-Wall",
    "-Wextra",
    "-Wno-psabi",
    "-fPIC",
    "-shared",
]
LIBS = ["-lm"]

_kernel: Kernel | None = None
_tried = False
_group = False  # whether group_grads is usable (torch's BLAS found and checked)
_sgemm = None  # the address of torch's sgemm_, looked up once with the build
build_seconds = 0.0  # what kernel() spent: finding or building the library, loading it, the self-checks
build: native.Build | None = None


class KernelArgumentError(ValueError):
    """A tensor handed to the compiled kernel has the wrong dtype, shape, layout or device."""


_F32, _F64, _I64 = torch.float32, torch.float64, torch.int64


def _expect(fn: str, name: str, t, dtype: torch.dtype, shape: tuple) -> None:
    """Raise ``KernelArgumentError`` naming ``name`` unless ``t`` is a contiguous CPU tensor of ``dtype`` and
    ``shape``."""
    if (
        isinstance(t, torch.Tensor)
        and t.dtype is dtype
        and t.is_cpu
        and t.shape == shape
        and t.is_contiguous()
    ):
        return  # (the fast path: a few tenths of a microsecond; dtypes are singletons)
    if not isinstance(t, torch.Tensor):
        got = f"a {type(t).__name__}"
    else:
        layout = "contiguous" if t.is_contiguous() else f"not contiguous (strides {tuple(t.stride())})"
        got = f"{t.dtype} of shape {tuple(t.shape)}, {layout}, on {t.device}"
    want = f"{dtype} of shape {tuple(shape)}, contiguous, on the CPU"
    raise KernelArgumentError(f"fused.{fn}: argument '{name}' must be {want}; got {got}")


def _expect_1d(fn: str, name: str, t, dtype: torch.dtype) -> int:
    """``_expect`` for a 1-D argument of any length; returns the length."""
    _expect(fn, name, t, dtype, (t.shape[0],) if isinstance(t, torch.Tensor) and t.dim() == 1 else (-1,))
    return t.shape[0]


@dataclass(frozen=True)
class Rows:
    """A batch's part of a kernel call (``rows_of``): its active entries (``inv``, ``feats``, ``vals``, K
    each) by row (``starts``, ``ends``: Ba each), the single-feature rows' values grouped by feature
    (``s_off`` (a + 1), ``s_vals``), the other rows (``m_rows``), the a active features ``act``, and
    scratch (``buf`` (n,), ``pre_act`` (4 × the most entries of a row))."""

    n: int
    n_empty: int
    act: torch.Tensor
    s_off: torch.Tensor
    s_vals: torch.Tensor
    m_rows: torch.Tensor
    starts: torch.Tensor
    ends: torch.Tensor
    inv: torch.Tensor
    feats: torch.Tensor
    vals: torch.Tensor
    buf: torch.Tensor
    pre_act: torch.Tensor

    def check(self, fn: str) -> list:
        """Check every array (dtype, shape, contiguity, device); return the C arguments n .. vals."""
        a = _expect_1d(fn, "act", self.act, _I64)
        _expect(fn, "s_off", self.s_off, _I64, (a + 1,))
        _expect_1d(fn, "s_vals", self.s_vals, _F32)
        n_multi = _expect_1d(fn, "m_rows", self.m_rows, _I64)
        Ba = _expect_1d(fn, "starts", self.starts, _I64)
        _expect(fn, "ends", self.ends, _I64, (Ba,))
        K = _expect_1d(fn, "feats", self.feats, _I64)
        _expect(fn, "inv", self.inv, _I64, (K,))
        _expect(fn, "vals", self.vals, _F32, (K,))
        _expect(fn, "buf", self.buf, _F32, (self.n,))
        _expect_1d(fn, "pre_act", self.pre_act, _F32)
        return [
            self.n,
            a,
            self.n_empty,
            self.act.data_ptr(),
            self.s_off.data_ptr(),
            self.s_vals.data_ptr(),
            n_multi,
            self.m_rows.data_ptr(),
            self.starts.data_ptr(),
            self.ends.data_ptr(),
            self.inv.data_ptr(),
            self.feats.data_ptr(),
            self.vals.data_ptr(),
        ]


def rows_of(x: Batch) -> Rows:
    """The kernel's view of batch ``x`` (built once per batch, on its first call: it serves every cell),
    with the index ranges the C code relies on checked once here (it reads memory at these indices)."""
    rows = getattr(x, "_kernel_rows", None)
    if rows is not None:
        return rows
    s_off, s_vals, m_rows = x.row_kinds
    width = x.max_row_entries
    rows = Rows(
        n=x.n,
        n_empty=x.B - x.Ba,
        act=x.act,
        s_off=s_off,
        s_vals=s_vals,
        m_rows=m_rows,
        starts=x.row_offsets,
        ends=x.row_ends,
        inv=x.inv,
        feats=x.feats,
        vals=x.vals,
        buf=torch.empty(x.n, dtype=_F32),
        pre_act=torch.empty(4 * width, dtype=_F32),
    )
    rows.check("rows_of")
    problem = _index_problem(rows, x.Ba, width)
    if problem:
        raise KernelArgumentError(f"fused.rows_of: the batch's index arrays are inconsistent: {problem}")
    x._kernel_rows = rows
    return rows


def _below(v: np.ndarray, hi: int) -> bool:
    """Whether every value of the int64 array ``v`` lies in [0, hi), with one reduction: read as unsigned, a
    negative value is above 2**63."""
    return v.size == 0 or int(v.view(np.uint64).max()) < hi


def _index_problem(rows: Rows, Ba: int, width: int) -> str:
    """The first index array that would make the C code read or write outside its arrays, or ''. In numpy
    (views of the checked CPU tensors), one reduction per array: about 25 µs per batch."""
    act, s_off, m_rows, starts, ends, inv, feats = (
        t.numpy() for t in (rows.act, rows.s_off, rows.m_rows, rows.starts, rows.ends, rows.inv, rows.feats)
    )
    a, K = act.size, feats.size
    checks = (
        ("act outside [0, n)", lambda: _below(act, rows.n)),
        ("s_off not from 0 to len(s_vals)", lambda: s_off[0] == 0 and s_off[a] == rows.s_vals.numel()),
        ("s_off decreasing", lambda: _below(np.diff(s_off), K + 1)),
        ("m_rows outside [0, Ba)", lambda: _below(m_rows, Ba)),
        ("starts, ends outside [0, K]", lambda: _below(starts, K) and _below(ends, K + 1)),
        (
            "a row empty or longer than pre_act allows",
            lambda: _below(ends - starts - 1, width) and 4 * width <= rows.pre_act.numel(),
        ),
        ("inv outside [0, a)", lambda: _below(inv, a)),
        ("feats outside [0, n)", lambda: _below(feats, rows.n)),
        ("n_empty < 0", lambda: rows.n_empty >= 0),
    )
    return next((what for what, ok in checks if not ok()), "")


class Kernel:
    """The loaded library, one keyword-only method per C function; each checks its arguments first."""

    def __init__(self, dll: ctypes.CDLL):
        i64, p, d = ctypes.c_int64, ctypes.c_void_p, ctypes.c_double
        batch = [i64, i64, i64, p, p, p, i64, p, p, p, p, p, p]  # Rows.check's list: n .. vals
        dll.fused_step.restype = d
        dll.fused_step.argtypes = batch + [p] * 6
        dll.group_grads.restype = None
        dll.group_grads.argtypes = [i64, i64] + batch + [p] * 11
        dll.adam_group.restype = None
        dll.adam_group.argtypes = [i64, i64, i64] + [p] * 9 + [d] * 8 + [p]
        dll.set_sgemm.restype = None
        dll.set_sgemm.argtypes = [p, ctypes.c_int]
        dll.gemm_seconds.restype = d
        dll.gemm_seconds.argtypes = []
        self._dll = dll

    def fused_step(self, *, rows: Rows, GA, b, D, gb) -> float:
        """The fused pass: fills D = x_Aᵀ R (a × n) and gb = Σ_rows R (n,), returns the summed squared
        error. GA (a × n), b (n,)."""
        fn = "fused_step"
        head = rows.check(fn)
        n, a = rows.n, head[1]
        _expect(fn, "GA", GA, _F32, (a, n))
        _expect(fn, "b", b, _F32, (n,))
        _expect(fn, "D", D, _F32, (a, n))
        _expect(fn, "gb", gb, _F32, (n,))
        ptrs = (t.data_ptr() for t in (GA, b, D, gb, rows.buf, rows.pre_act))
        return self._dll.fused_step(*head, *ptrs)

    def group_grads(self, *, rows: Rows, Wt, b, G, Gb, WAt, GA, D, DW, sq) -> None:
        """The unscaled gradients of the C cells of a width group: G (C, m, n), Gb (C, n) and the summed
        squared errors sq (C,) float64, from Wt (C, m, n) and b (C, n); WAt (m, a), GA, D (a, n) and DW
        (m, a) are scratch. Needs ``set_sgemm`` first."""
        fn = "group_grads"
        head = rows.check(fn)
        n, a = rows.n, head[1]
        if not (isinstance(Wt, torch.Tensor) and Wt.dim() == 3):
            _expect(fn, "Wt", Wt, _F32, ("C", "m", n))
        C, m = Wt.shape[0], Wt.shape[1]
        for name, t, dtype, shape in (
            ("Wt", Wt, _F32, (C, m, n)),
            ("b", b, _F32, (C, n)),
            ("G", G, _F32, (C, m, n)),
            ("Gb", Gb, _F32, (C, n)),
            ("WAt", WAt, _F32, (m, a)),
            ("GA", GA, _F32, (a, n)),
            ("D", D, _F32, (a, n)),
            ("DW", DW, _F32, (m, a)),
            ("sq", sq, _F64, (C,)),
        ):
            _expect(fn, name, t, dtype, shape)
        ptrs = (t.data_ptr() for t in (Wt, b, G, Gb, WAt, GA, D, DW, rows.buf, rows.pre_act, sq))
        self._dll.group_grads(C, m, *head, *ptrs)

    def adam_group(
        self,
        *,
        Wt,
        G,
        mW,
        vW,
        b,
        Gb,
        mb,
        vb,
        gammas,
        norm,
        gscale: float,
        lr_w: float,
        lr_b: float,
        beta1: float,
        beta2: float,
        bc1: float,
        bc2: float,
        eps: float,
    ) -> None:
        """One optimiser step of C cells, in place (see the C source): Wt, G, mW, vW (C, m, n); b, Gb, mb,
        vb (C, n); gammas (C,) float64; norm (n,) scratch."""
        fn = "adam_group"
        if not (isinstance(Wt, torch.Tensor) and Wt.dim() == 3):
            _expect(fn, "Wt", Wt, _F32, ("C", "m", "n"))
        C, m, n = Wt.shape
        for name, t, dtype, shape in (
            ("Wt", Wt, _F32, (C, m, n)),
            ("G", G, _F32, (C, m, n)),
            ("mW", mW, _F32, (C, m, n)),
            ("vW", vW, _F32, (C, m, n)),
            ("b", b, _F32, (C, n)),
            ("Gb", Gb, _F32, (C, n)),
            ("mb", mb, _F32, (C, n)),
            ("vb", vb, _F32, (C, n)),
            ("gammas", gammas, _F64, (C,)),
            ("norm", norm, _F32, (n,)),
        ):
            _expect(fn, name, t, dtype, shape)
        ptrs = [t.data_ptr() for t in (Wt, G, mW, vW, b, Gb, mb, vb, gammas)]
        scalars = (gscale, lr_w, lr_b, beta1, beta2, bc1, bc2, eps)
        self._dll.adam_group(C, m, n, *ptrs, *map(float, scalars), norm.data_ptr())

    def set_sgemm(self, address: int, timed: bool) -> None:
        """Hand the kernel the BLAS sgemm_ (Fortran calling convention) its products use."""
        self._dll.set_sgemm(address, int(timed))

    def gemm_seconds(self) -> float:
        return self._dll.gemm_seconds()


def _torch_sgemm() -> int | None:
    """Address of the Fortran BLAS sgemm_ in torch's own CPU library (MKL or OpenBLAS builds export it),
    so the kernel's products are the ones torch.mm runs; None where it is not exported."""
    lib = Path(torch.__file__).parent / "lib"
    for name in ("libtorch_cpu.so", "libtorch_cpu.dylib"):
        if (lib / name).exists():
            try:
                return ctypes.cast(ctypes.CDLL(str(lib / name)).sgemm_, ctypes.c_void_p).value
            except (OSError, AttributeError):
                return None
    return None


def _load() -> tuple[Kernel, native.Build]:
    """Find or build the library and load it (a cached build that fails to load is built again)."""
    b = native.cached_build(NAME, SOURCE, FLAGS, LIBS)
    try:
        dll = ctypes.CDLL(str(b.path))
    except OSError as e:
        if not b.reused:
            raise
        log.warning("fused C kernel: the cached build %s does not load (%s); building it again", b.path, e)
        b = native.cached_build(NAME, SOURCE, FLAGS, LIBS, rebuild=True)
        dll = ctypes.CDLL(str(b.path))
    return Kernel(dll), b


def kernel() -> Kernel | None:
    """The compiled kernel (found in the build cache or built on first use), or None where it cannot be
    built; then the trainer falls back to torch (logged once). ``DEPTHWIDTH_FUSED=0`` turns it off."""
    global _kernel, _tried, _group, _sgemm, build_seconds, build
    if _tried:
        return _kernel
    _tried = True
    if os.environ.get("DEPTHWIDTH_FUSED", "1") == "0":
        log.info("fused C kernel off (DEPTHWIDTH_FUSED=0); using the torch code")
        return None
    t = time.perf_counter()
    try:
        _kernel, build = _load()
        _self_check()
    except Exception as e:  # noqa: BLE001 - any failure means: use the torch code
        _kernel = None
        msg = (e.stderr or str(e)) if isinstance(e, subprocess.CalledProcessError) else str(e)
        log.warning("fused C kernel unavailable (%s); using the torch code", msg.strip()[:300])
        return None
    _sgemm = _torch_sgemm()
    try:
        if _sgemm is None:
            raise RuntimeError("torch's library exports no sgemm_")
        _kernel.set_sgemm(_sgemm, False)
        _group_self_check()
        _group = True
    except Exception as e:  # noqa: BLE001 - then each cell's products go through torch.mm
        log.info("fused C kernel: one call per cell, products through torch.mm (%s)", str(e)[:200])
    build_seconds = time.perf_counter() - t
    if build.warnings:
        log.warning("fused C kernel: the compiler warned:\n%s", build.warnings.strip()[:2000])
    how = "reused the build" if build.reused else f"built (in {build.seconds:.2f}s, cached for later jobs)"
    log.info(
        "fused C kernel: %s %s (key %s: source, flags, compiler, CPU); ready in %.3fs; one call per width "
        "group: %s",
        how,
        build.path,
        build.key,
        build_seconds,
        _group,
    )
    return _kernel


def group_ok() -> bool:
    """Whether ``group_grads`` is usable (the kernel built and torch's sgemm_ found and checked)."""
    return kernel() is not None and _group


def time_gemms(on: bool) -> None:
    """Time the products inside ``group_grads`` (for the benchmark); read with ``gemm_seconds``."""
    if group_ok():
        _kernel.set_sgemm(_sgemm, on)


def gemm_seconds() -> float:
    """Seconds spent in the products of ``group_grads`` while timed (see ``time_gemms``)."""
    return _kernel.gemm_seconds() if group_ok() else 0.0


def fused_rows(GA, b, x: Batch, D, gb) -> float:
    """Run the fused pass on batch ``x``: fills D = x_Aᵀ R (a × n) and gb = Σ_rows R (n,) with
    R = dL/dpre · (B n / 2), returns the batch's summed squared error."""
    return _kernel.fused_step(rows=rows_of(x), GA=GA, b=b, D=D, gb=gb)


def group_grads(Wt, b, x: Batch, G, Gb, ws) -> torch.Tensor:
    """The features route for every cell of a width group in one call (``group_ok()``): fills G (C, m, n)
    and Gb (C, n) with the unscaled gradients (R-based, as ``fused_rows``) and returns the C summed
    squared errors (float64). ``ws``: the trainer's scratch tensors (``batch.Workspace``)."""
    C, m, n = Wt.shape
    a = x.n_features
    sq = torch.empty(C, dtype=_F64)
    _kernel.group_grads(
        rows=rows_of(x),
        Wt=Wt,
        b=b,
        G=G,
        Gb=Gb,
        WAt=ws.get("WAt", m, a),
        GA=ws.get("GA", a, n),
        D=ws.get("D", a, n),
        DW=ws.get("DW", m, a),
        sq=sq,
    )
    return sq


def update_ok(P: dict) -> bool:
    """Whether ``adam_group`` can step the width group P (the kernel built; float32 on the CPU)."""
    Wt = P["Wt"]
    return (
        Wt.device.type == "cpu"
        and kernel() is not None
        and all(
            P[k].dtype == torch.float32 and P[k].is_contiguous() for k in ("Wt", "b", "mW", "vW", "mb", "vb")
        )
    )


def adam_group(P: dict, G, Gb, gscale, lr_w, lr_b, beta1, beta2, bc1, bc2, eps, norm) -> None:
    """One optimiser step of the width group P (see the C source): the gradients G · gscale, Gb · gscale
    (shaped as P['Wt'] and P['b']), decay by P['gamma'], then Adam."""
    _kernel.adam_group(
        Wt=P["Wt"],
        G=G,
        mW=P["mW"],
        vW=P["vW"],
        b=P["b"],
        Gb=Gb,
        mb=P["mb"],
        vb=P["vb"],
        gammas=P["gamma"].to(_F64).contiguous(),
        norm=norm,
        gscale=gscale,
        lr_w=lr_w,
        lr_b=lr_b,
        beta1=beta1,
        beta2=beta2,
        bc1=bc1,
        bc2=bc2,
        eps=eps,
    )


def check_batch() -> Batch:
    """The small random batch the self-checks use: n = 70 (not a multiple of the kernel's 16 or 32
    columns), batch 96, p_i ∝ i^-1.2."""
    n, B = 70, 96
    sampler = SparseSampler(feature_probabilities("power-a1.2", n), B, torch.Generator().manual_seed(0))
    return Batch(*sampler.sample(), B, n)


def dense_rows(x: Batch, GA: torch.Tensor, b: torch.Tensor) -> tuple[float, torch.Tensor, torch.Tensor]:
    """The fused pass's result by dense torch ops over the active rows (plain and slow: for checks):
    (summed squared error, D (a × n), gb (n,))."""
    Ba, a, n = x.Ba, x.n_features, x.n
    xa, xf = torch.zeros(Ba, a, dtype=torch.float64), torch.zeros(Ba, n, dtype=torch.float64)
    xa[x.rid, x.inv] = x.vals.double()
    xf[x.rid, x.feats] = x.vals.double()
    pre = xa @ GA.double() + b.double()
    res = pre.clamp_min(0.0) - xf
    R = res * (pre > 0)
    relu_b = b.double().clamp_min(0.0)
    n_empty = x.B - x.Ba
    sq = float((res**2).sum() + n_empty * (relu_b**2).sum())
    return sq, (xa.t() @ R).float(), (R.sum(0) + n_empty * relu_b).float()


def _self_check() -> None:
    """Compare the fused pass with ``dense_rows`` on a small random batch; raise if they disagree."""
    x = check_batch()
    g = torch.Generator().manual_seed(1)
    GA = torch.randn(x.n_features, x.n, generator=g)
    b = torch.randn(x.n, generator=g)
    D, gb = torch.empty_like(GA), torch.empty_like(b)
    sq = fused_rows(GA, b, x, D, gb)
    sq_t, D_t, gb_t = dense_rows(x, GA, b)
    ok = (
        x.B > x.Ba
        and abs(sq - sq_t) <= 1e-4 * abs(sq_t)
        and torch.allclose(D, D_t, rtol=1e-4, atol=1e-4)
        and torch.allclose(gb, gb_t, rtol=1e-4, atol=1e-4)
    )
    if not ok:
        raise RuntimeError("self-check against a dense torch computation failed")


def _group_self_check() -> None:
    """Compare ``group_grads`` with the same route in torch ops (``dense_rows``, torch.mm) on a small
    random problem."""
    x = check_batch()
    n, C, m = x.n, 3, 5
    g = torch.Generator().manual_seed(2)
    Wt, b = torch.randn(C, m, n, generator=g), torch.randn(C, n, generator=g)
    G, Gb = torch.empty(C, m, n), torch.empty(C, n)
    sq = group_grads(Wt, b, x, G, Gb, Workspace())
    for c in range(C):
        WAt = Wt[c][:, x.act]
        sq_t, D, gb = dense_rows(x, WAt.t() @ Wt[c], b[c])
        gW = (WAt @ D).index_add_(1, x.act, Wt[c] @ D.t())
        if not (
            abs(float(sq[c]) - sq_t) <= 1e-5 * abs(sq_t)
            and torch.allclose(G[c], gW, rtol=1e-4, atol=1e-4)
            and torch.allclose(Gb[c], gb, rtol=1e-4, atol=1e-4)
        ):
            raise RuntimeError("self-check of the per-group call against torch.mm failed")
