"""The depth toy's compiled trainer (``kernel.c`` beside this file), behind a checked boundary.

What it computes: one training step of one MSE student (the ``mse`` setup: Euler blocks, no head) in one
call: the forward pass through its pre-norm residual ReLU² blocks (keeping each block's normalised input,
1/rms and ReLU output), the MSE on the final normalised state, the backward pass and torch.optim.Adam's
update. ``teacher_forward`` runs the teacher once per step for every student of the step. Two paths, chosen
by the build: on a CPU with AVX-512 at the paper's width (D = 32, H = 128), hand-written register-blocked
products with the elementwise work (RMSNorm and its backward, bias, ReLU, square, the bias gradient) done
on each group of rows while they are in registers, one batch tile of 64 rows at a time through every block
forward and back (so what the backward reads of a tile is still in the caches); elsewhere (other widths,
other CPUs, or built with ``-DDEPTH_TOY_GENERIC``), the dense products through torch's own BLAS (its
Fortran ``sgemm_``) with the elementwise work in passes over batch tiles of 256 rows. The torch code
(``model.StudentGroup``, ``torch.optim.Adam``) is the reference: ``tests/test_depth_toy_kernel.py`` holds
both paths equal to it to float rounding.

Build: as the superposition kernel (``depthwidth.superposition.native.cached_build``: a per-user cache
folder, ``~/.cache/depthwidth/kernels`` unless ``DEPTHWIDTH_CACHE_DIR`` or ``XDG_CACHE_HOME`` says
otherwise, keyed by the source, the flags, the compiler and the CPU, built under a lock and renamed into
place, its size and SHA-256 recorded and checked before every load, so a damaged or foreign file is built
again instead of loaded) and loaded with ctypes. Without a compiler, where torch's library exports no
``sgemm_``, or if the build or the self-check against the torch code fails, ``kernel()`` returns None
(one log line) and the trainer uses the torch code. ``DEPTHWIDTH_FUSED=0`` turns it off.

Boundary: every call goes through ``Kernel``'s keyword-only methods, which check each tensor argument's
dtype, shape, contiguity and device (deriving every size from the shapes) before the call, raising
``KernelArgumentError`` naming the argument.

Rounding: the kernel sums in another order than torch's batched matmuls (its batch tiles, the products
accumulating into the residual state), so its numbers equal the torch code's to float rounding, not bit
for bit; on one machine every run repeats bit for bit, whatever the thread count (each student is
computed by one thread). ``-march=native`` and ``-ffp-contract=fast`` make the rounding depend on the
CPU's instruction set, as for the superposition kernel.
"""

from __future__ import annotations

import ctypes
import logging
import math
import os
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import torch

from depthwidth.superposition import native

log = logging.getLogger("depthwidth.depth_toy")

SOURCE = Path(__file__).with_name("kernel.c")
NAME = "depth-toy-kernel"
# As the superposition kernel's flags (see depthwidth/superposition/fused.py for each one's reason). Kept as
# a copy: that module's flags, loader and sgemm lookup are part of the superposition trainer's code
# fingerprint, so moving them into a shared module would retrain every superposition cell of every work
# folder.
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
TILE = 256  # batch rows per tile: a tile's (TILE x 4D) activations are 128 KiB at D = 32

_F32, _F64 = torch.float32, torch.float64
_kernel: Kernel | None = None
_tried = False
build: native.Build | None = None


class KernelArgumentError(ValueError):
    """A tensor handed to the compiled kernel has the wrong dtype, shape, layout or device."""


def _expect(fn: str, name: str, t, dtype: torch.dtype, shape: tuple) -> None:
    """Raise ``KernelArgumentError`` naming ``name`` unless ``t`` is a contiguous CPU tensor of ``dtype`` and
    ``shape``."""
    if (
        isinstance(t, torch.Tensor)
        and t.dtype is dtype
        and t.is_cpu
        and tuple(t.shape) == tuple(shape)
        and t.is_contiguous()
    ):
        return
    if not isinstance(t, torch.Tensor):
        got = f"a {type(t).__name__}"
    else:
        layout = "contiguous" if t.is_contiguous() else f"not contiguous (strides {tuple(t.stride())})"
        got = f"{t.dtype} of shape {tuple(t.shape)}, {layout}, on {t.device}"
    want = f"{dtype} of shape {tuple(shape)}, contiguous, on the CPU"
    raise KernelArgumentError(f"depth_toy fused.{fn}: argument '{name}' must be {want}; got {got}")


def teacher_workspace(batch: int, width: int) -> int:
    """Floats of ``teacher_forward``'s workspace: the residual state of the batch and one tile's scratch."""
    return batch * width + TILE * (width + 2 * 4 * width)


def teacher_weights(teacher) -> list[torch.Tensor]:
    """``teacher``'s fc_w, fc_b, proj_w as ``teacher_forward`` takes them: block 0 alone for a tied teacher
    (every block is block 0), every block for an independent one."""
    ws = (teacher.fc_w, teacher.fc_b, teacher.proj_w)
    return [t[:1].contiguous() if teacher.kind == "tied" else t.contiguous() for t in ws]


def param_count(depth: int, width: int) -> int:
    """Floats of one student's flat parameter array: W1 (L, D, 4D), b1 (L, 4D), W2 (L, 4D, D)."""
    hidden = 4 * width
    return depth * (2 * width * hidden + hidden)


class Kernel:
    """The loaded library, one keyword-only method per C function; each checks its arguments first."""

    def __init__(self, dll: ctypes.CDLL):
        i64, p, d = ctypes.c_int64, ctypes.c_void_p, ctypes.c_double
        dll.set_sgemm.restype = None
        dll.set_sgemm.argtypes = [p]
        dll.student_workspace.restype = i64
        dll.student_workspace.argtypes = [i64] * 5
        dll.teacher_forward.restype = None
        dll.teacher_forward.argtypes = [i64] * 5 + [p] * 4 + [i64] * 3 + [p, p, p, p]
        dll.student_step.restype = d
        dll.student_step.argtypes = [i64] * 5 + [p] * 7 + [d] * 5 + [ctypes.c_int, p, p]
        dll.fast_path.restype = ctypes.c_int
        dll.fast_path.argtypes = []
        self._dll = dll

    def fast_path(self) -> bool:
        """Whether this build has the AVX-512 path (used at width 32); False: every width runs the generic
        path (products through torch's BLAS)."""
        return bool(self._dll.fast_path())

    def set_sgemm(self, address: int) -> None:
        self._dll.set_sgemm(address)

    def workspace_size(self, *, depth: int, batch: int, width: int) -> int:
        return int(self._dll.student_workspace(depth, batch, width, 4 * width, TILE))

    def teacher_forward(
        self, *, depth, x, fc_w, fc_b, proj_w, tied: bool, out, ws, stats, ready=None
    ) -> None:
        """out (B, D) = the teacher's rmsnorm(h_L) for x (B, D) through ``depth`` blocks. fc_w (depth, D, H),
        fc_b (depth, H), proj_w (depth, H, D), or (tied) (1, D, H), (1, H), (1, H, D), block 0 used for
        every block. ws: at least B·D + TILE·(D + 2H) floats; stats (1,) float64: seconds in the products
        are added. ready (1,) int64, optional: the count of out's rows finished so far, published as they
        are (for ``student_step``'s ``ready``)."""
        fn = "teacher_forward"
        B, D = x.shape
        H = 4 * D
        _expect(fn, "x", x, _F32, (B, D))
        L = 1 if tied else depth
        _expect(fn, "fc_w", fc_w, _F32, (L, D, H))
        _expect(fn, "fc_b", fc_b, _F32, (L, H))
        _expect(fn, "proj_w", proj_w, _F32, (L, H, D))
        _expect(fn, "out", out, _F32, (B, D))
        _expect(fn, "ws", ws, _F32, (ws.shape[0],) if ws.dim() == 1 else (-1,))
        if ws.shape[0] < teacher_workspace(B, D):
            raise KernelArgumentError(
                f"depth_toy fused.{fn}: argument 'ws' holds {ws.shape[0]} floats, too few"
            )
        _expect(fn, "stats", stats, _F64, (1,))
        strides = (0, 0, 0) if tied else (D * H, H, H * D)
        ptrs = [t.data_ptr() for t in (x, fc_w, fc_b, proj_w)]
        ends = (out.data_ptr(), ws.data_ptr(), stats.data_ptr(), _ready_ptr(fn, ready))
        self._dll.teacher_forward(depth, B, D, H, TILE, *ptrs, *strides, *ends)

    def student_step(
        self, *, depth, x, target, P, G, M, V, ws, step_size, bc2_sqrt, beta1, beta2, eps, stats, ready=None
    ) -> float:
        """One step of one student (see the C source); returns its loss. P, G, M, V: (param_count,);
        stats (1,) float64: seconds in the products are added. ready (1,) int64, optional: target's rows
        are read only once ``teacher_forward`` has published them there (a student may run beside the
        teacher); a negative count there (the teacher failed) returns NaN with P, M, V untouched."""
        fn = "student_step"
        B, D = x.shape
        H = 4 * D
        n = param_count(depth, D)
        _expect(fn, "x", x, _F32, (B, D))
        _expect(fn, "target", target, _F32, (B, D))
        for name, t in (("P", P), ("G", G), ("M", M), ("V", V)):
            _expect(fn, name, t, _F32, (n,))
        need = self.workspace_size(depth=depth, batch=B, width=D)
        _expect(fn, "ws", ws, _F32, (ws.shape[0],) if ws.dim() == 1 else (-1,))
        if ws.shape[0] < need:
            raise KernelArgumentError(
                f"depth_toy fused.{fn}: argument 'ws' holds {ws.shape[0]} floats, needs {need}"
            )
        _expect(fn, "stats", stats, _F64, (1,))
        ptrs = [t.data_ptr() for t in (x, target, P, G, M, V, ws)]
        adam = (step_size, bc2_sqrt, beta1, beta2, eps)
        ends = (1, stats.data_ptr(), _ready_ptr(fn, ready))
        return self._dll.student_step(depth, B, D, H, TILE, *ptrs, *adam, *ends)


def _ready_ptr(fn: str, ready) -> int | None:
    """The address of a ``ready`` row count (None: not given), checked as the other arguments."""
    if ready is None:
        return None
    _expect(fn, "ready", ready, torch.int64, (1,))
    return ready.data_ptr()


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


def _load(name: str = NAME, flags: list[str] = FLAGS) -> tuple[Kernel, native.Build]:
    """Find or build the library and load it (a cached build that fails to load is built again)."""
    b = native.cached_build(name, SOURCE, flags, LIBS)
    try:
        dll = ctypes.CDLL(str(b.path))
    except OSError as e:
        if not b.reused:
            raise
        log.warning(
            "depth-toy C kernel: the cached build %s does not load (%s); building it again", b.path, e
        )
        b = native.cached_build(name, SOURCE, flags, LIBS, rebuild=True)
        dll = ctypes.CDLL(str(b.path))
    return Kernel(dll), b


def generic_kernel() -> Kernel:
    """The same source built without the fast path (``-DDEPTH_TOY_GENERIC``): what a CPU without AVX-512
    runs. The trainer never uses it; the tests hold both paths to the torch code on a machine that has
    both. Raises where it cannot be built."""
    sgemm = _torch_sgemm()
    if sgemm is None:
        raise RuntimeError("torch's library exports no sgemm_")
    k, _ = _load(NAME + "-generic", [*FLAGS, "-DDEPTH_TOY_GENERIC"])
    k.set_sgemm(sgemm)
    return k


def kernel() -> Kernel | None:
    """The compiled kernel (found in the build cache or built on first use), or None where it cannot be
    built or does not check out; then the trainer uses its torch code (logged once). ``DEPTHWIDTH_FUSED=0``
    turns it off."""
    global _kernel, _tried, build
    if _tried:
        return _kernel
    _tried = True
    if os.environ.get("DEPTHWIDTH_FUSED", "1") == "0":
        log.info("depth-toy C kernel off (DEPTHWIDTH_FUSED=0); using the torch code")
        return None
    t = time.perf_counter()
    try:
        sgemm = _torch_sgemm()
        if sgemm is None:
            raise RuntimeError("torch's library exports no sgemm_")
        k, build = _load()
        k.set_sgemm(sgemm)
        _kernel = k
        _self_check()
    except Exception as e:  # noqa: BLE001 - any failure means: use the torch code
        _kernel = None
        msg = (e.stderr or str(e)) if isinstance(e, subprocess.CalledProcessError) else str(e)
        log.warning("depth-toy C kernel unavailable (%s); using the torch code", msg.strip()[:300])
        return None
    if build.warnings:
        log.warning("depth-toy C kernel: the compiler warned:\n%s", build.warnings.strip()[:2000])
    how = "reused the build" if build.reused else f"built (in {build.seconds:.2f}s, cached for later jobs)"
    log.info(
        "depth-toy C kernel: %s %s (key %s: source, flags, compiler, CPU); ready in %.3fs",
        how,
        build.path,
        build.key,
        time.perf_counter() - t,
    )
    return _kernel


def _self_check() -> None:
    """One step of a small student and a small teacher against the torch code; raise where they differ."""
    from depthwidth.depth_toy.model import StudentGroup, make_teacher, teacher_forward

    # two batch tiles, the second a partial one; width 32: the fast path's shape where the build has it
    B, D, depth = TILE + 44, 32, 3
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(B, D, generator=gen)
    for kind in ("independent", "tied"):
        teacher = make_teacher(kind, 3, depth=5, width=D, vocab=4)
        want = teacher_forward(teacher, x)
        got = teacher_out(teacher, x)
        if not torch.allclose(got, want, rtol=1e-4, atol=1e-5):
            raise RuntimeError(f"self-check: the {kind} teacher's forward differs from the torch code")
    target = teacher_forward(make_teacher("independent", 4, depth=5, width=D, vocab=4), x)
    g = StudentGroup(1, depth, D, 4, seed=1)
    with torch.no_grad():
        for p in g.proj_w:  # nonzero, so that every gradient path is exercised
            p.copy_(torch.randn(p.shape, generator=gen) * 0.1)
    loss_t, grads = torch_gradient(g, x, target)
    loss_k, G = kernel_gradient(_kernel, g, x, target)
    if not (math.isclose(loss_k, loss_t, rel_tol=1e-4) and torch.allclose(G, grads, rtol=1e-3, atol=1e-6)):
        raise RuntimeError("self-check: a student's loss or gradient differs from the torch code")


def torch_gradient(group, x: torch.Tensor, target: torch.Tensor) -> tuple[float, torch.Tensor]:
    """The torch code's MSE of ``group``'s student 0 (a one-student group) and its gradient (autograd), flat
    in the kernel's layout; the group's parameters keep the gradient."""
    loss = (group(x) - target).square().mean()
    loss.backward()
    ps = (group.fc_w, group.fc_b, group.proj_w)
    return float(loss.detach()), torch.cat([torch.cat([p.grad.reshape(-1) for p in q]) for q in ps])


def kernel_gradient(k: Kernel, group, x: torch.Tensor, target: torch.Tensor) -> tuple[float, torch.Tensor]:
    """One student_step of ``group``'s student 0 by kernel ``k`` at a zero learning rate (its parameters
    unchanged): its loss and its gradient, flat in the kernel's layout (as ``flat_params``)."""
    P = flat_params(group)
    G, M, V = torch.zeros_like(P), torch.zeros_like(P), torch.zeros_like(P)
    B, D = x.shape
    ws = torch.empty(k.workspace_size(depth=group.depth, batch=B, width=D))
    loss = k.student_step(
        depth=group.depth,
        x=x,
        target=target,
        P=P,
        G=G,
        M=M,
        V=V,
        ws=ws,
        step_size=0.0,
        bc2_sqrt=1.0,
        beta1=0.9,
        beta2=0.999,
        eps=1e-8,
        stats=torch.zeros(1, dtype=_F64),
    )
    return loss, G


def teacher_out(teacher, x: torch.Tensor, k: Kernel | None = None, ready=None) -> torch.Tensor:
    """The teacher's rmsnorm(h_L) for x (B, D) by kernel ``k`` (default: the loaded one; ``kernel()`` must
    have loaded it); ``ready`` as ``Kernel.teacher_forward``'s."""
    B, D = x.shape
    w = teacher_weights(teacher)
    out = torch.empty(B, D)
    ws = torch.empty(teacher_workspace(B, D))
    (k or _kernel).teacher_forward(
        depth=teacher.depth,
        x=x.contiguous(),
        fc_w=w[0],
        fc_b=w[1],
        proj_w=w[2],
        tied=teacher.kind == "tied",
        out=out,
        ws=ws,
        stats=torch.zeros(1, dtype=_F64),
        ready=ready,
    )
    return out


def flat_params(group) -> torch.Tensor:
    """Student 0 of ``group`` (a one-student Euler ``StudentGroup``) as one flat float32 array in the kernel's
    layout [W1 | b1 | W2] (a copy)."""
    return torch.cat(
        [torch.cat([p.detach()[0].reshape(-1) for p in ps]) for ps in (group.fc_w, group.fc_b, group.proj_w)]
    ).contiguous()


def unserved(setup: dict, device: str, opts) -> str:
    """Why the kernel cannot train these students ('' where it can): it serves the ``mse`` setup (Euler
    blocks, no head, one student per group) on the CPU with plain Adam."""
    if setup["loss"] != "mse" or setup["block"] != "euler" or setup["head"] is not None:
        return f"it serves the mse setup only (this one: {setup['loss']} loss, {setup['block']} blocks)"
    if torch.device(device).type != "cpu":
        return f"it runs on the CPU (device {device})"
    for o in opts:
        pg = o.param_groups[0]
        if pg.get("weight_decay", 0) or pg.get("amsgrad") or pg.get("maximize"):
            return "it implements plain Adam (no weight decay, amsgrad or maximize)"
    return ""


class FusedStudents:
    """A job's one-student Euler groups trained by the kernel. Each group's parameters become views of one
    flat array (so the torch code, checkpoints and the angle table see the kernel's updates), and its Adam
    moments views of two more, registered in its ``torch.optim.Adam``'s state (so a checkpoint holds them as
    the torch code would, and either code resumes from the other's checkpoint). ``threads`` > 1: a step is
    one task for the teacher, then one per student (the deepest first), on that many threads, each task on
    one; the teacher publishes its output rows as they are done, so a student started beside it waits only
    for rows not there yet. The BLAS runs single-threaded inside, so the numbers do not depend on the thread
    count."""

    def __init__(self, groups, opts, teacher, batch: int, width: int, threads: int = 1):
        self.k = kernel()
        self.groups, self.opts = groups, opts
        self.width, self.batch = width, batch
        self.threads = max(1, min(int(threads), len(groups)))
        self.bufs = []
        for g, o in zip(groups, opts):
            P = flat_params(g)
            M, V = torch.zeros_like(P), torch.zeros_like(P)
            step, off = 0, 0
            params = [p for ps in (g.fc_w, g.fc_b, g.proj_w) for p in ps]
            for p in params:
                n = p.numel()
                st = o.state.get(p)
                if st:
                    M[off : off + n] = st["exp_avg"].reshape(-1)
                    V[off : off + n] = st["exp_avg_sq"].reshape(-1)
                    step = int(st["step"])
                off += n
            off = 0
            for p in params:
                n = p.numel()
                p.data = P[off : off + n].view(p.shape)
                o.state[p] = {
                    "step": torch.tensor(float(step)),  # one per parameter, as torch's Adam keeps it
                    "exp_avg": M[off : off + n].view(p.shape),
                    "exp_avg_sq": V[off : off + n].view(p.shape),
                }
                off += n
            pg = o.param_groups[0]
            self.bufs.append(
                {"P": P, "G": torch.zeros_like(P), "M": M, "V": V, "step": step, "params": params, "pg": pg}
            )
        self.ws = [
            torch.empty(max(self.k.workspace_size(depth=g.depth, batch=batch, width=width) for g in groups))
            for _ in range(self.threads)
        ]
        self.stats = [torch.zeros(1, dtype=_F64) for _ in range(self.threads)]
        self.teacher = teacher
        self.tw = teacher_weights(teacher)
        self.tws = torch.empty(teacher_workspace(batch, width))
        self.tstats = torch.zeros(1, dtype=_F64)
        self.target = torch.empty(batch, width)
        self.ready = torch.zeros(1, dtype=torch.int64)  # the teacher's finished rows in this step
        self.pool = None
        if self.threads > 1:
            self.pool = ThreadPoolExecutor(self.threads)
        # the deepest students first, so that the threads finish together
        self.order = sorted(range(len(groups)), key=lambda i: -groups[i].depth)

    def close(self) -> None:
        self.sync()
        if self.pool is not None:
            self.pool.shutdown()

    def _teacher(self, x: torch.Tensor) -> None:
        try:
            self.k.teacher_forward(
                depth=self.teacher.depth,
                x=x,
                fc_w=self.tw[0],
                fc_b=self.tw[1],
                proj_w=self.tw[2],
                tied=self.teacher.kind == "tied",
                out=self.target,
                ws=self.tws,
                stats=self.tstats,
                ready=self.ready,
            )
        except BaseException:
            self.ready.fill_(-1)  # the students waiting for its rows return NaN instead of waiting forever
            raise

    def _student(self, gi: int, x: torch.Tensor, lr: float, slot: int) -> float:
        b, pg = self.bufs[gi], self.bufs[gi]["pg"]
        beta1, beta2 = pg["betas"]
        b["step"] += 1
        t = b["step"]
        return self.k.student_step(
            depth=self.groups[gi].depth,
            x=x,
            target=self.target,
            P=b["P"],
            G=b["G"],
            M=b["M"],
            V=b["V"],
            ws=self.ws[slot],
            step_size=lr / (1 - beta1**t),
            bc2_sqrt=math.sqrt(1 - beta2**t),
            beta1=beta1,
            beta2=beta2,
            eps=pg["eps"],
            stats=self.stats[slot],
            ready=self.ready,
        )

    def step(self, x: torch.Tensor, lrs: list[float]) -> list[float]:
        """One step of every student on batch x (B, D) at learning rates ``lrs`` (one per group): the
        teacher once, then each student; returns the losses (one per group)."""
        x = x.contiguous()
        losses = [0.0] * len(self.groups)
        self.ready.zero_()
        if self.pool is None:
            self._teacher(x)
            for gi in self.order:
                losses[gi] = self._student(gi, x, lrs[gi], 0)
        else:
            slots: dict[int, int] = {}
            lock = threading.Lock()

            def run(gi: int) -> None:
                if gi < 0:
                    self._teacher(x)
                    return
                tid = threading.get_ident()
                with lock:
                    slot = slots.setdefault(tid, len(slots))
                losses[gi] = self._student(gi, x, lrs[gi], slot)

            # the teacher first: the pool takes tasks in order, so no student waits on a teacher not started
            list(self.pool.map(run, [-1, *self.order]))
        return losses

    def sync(self) -> None:
        """Write each group's step count into its optimiser's state (the moments are views already): call
        before saving the optimisers' state."""
        for b, o in zip(self.bufs, self.opts):
            for p in b["params"]:
                o.state[p]["step"].fill_(float(b["step"]))

    def gemm_seconds(self) -> float:
        """Seconds spent in the dense products so far, the teacher's and the students' (all threads summed)."""
        return float(sum(float(s[0]) for s in self.stats) + float(self.tstats[0]))
