"""The depth toy's compiled trainer (depthwidth.depth_toy.fused) against the torch code it replaces: the same
students trained a few hundred steps by both are equal to float rounding, for both teacher kinds, at width
16 (the generic path) and 32 (the AVX-512 path where the CPU has it); the generic build equals the torch
code at width 32 too; the thread count changes no number; setups it does not serve fall back to torch
with a log line; bad arguments are refused by name.

    PYTHONPATH=src .venv/bin/python -m pytest -n 0 tests/test_depth_toy_kernel.py
"""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

from depthwidth.depth_toy import fused
from depthwidth.depth_toy.model import make_teacher
from depthwidth.depth_toy.train import TrainSettings, train_students
from depthwidth.superposition import native


@pytest.fixture
def kernel(monkeypatch):
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the torch reference at one thread: these sizes are too small to share
    try:
        native.find_compiler()
    except RuntimeError as e:
        pytest.skip(f"no C compiler here ({e}): the trainer uses the torch code")
    k = fused.kernel()
    assert k is not None, "a C compiler is here, yet the depth-toy kernel did not build (see the log)"
    yield k
    torch.set_num_threads(threads)


def _train(teacher, mode: str, monkeypatch, threads: int = 1, **kw):
    """Train with the kernel (mode 'kernel') or the torch code (mode 'torch': the kernel switched off)."""
    if mode == "torch":
        monkeypatch.setattr(fused, "_kernel", None)
        monkeypatch.setattr(fused, "_tried", True)
    else:
        monkeypatch.undo()
    settings = TrainSettings(
        **{
            "variant": "mse",
            "depths": [1, 3, 5],
            "temperatures": [None],
            "steps": 240,
            "lr": 6e-4,
            "lr_depth_factor": 8,
            "schedule": "flat_then_linear",
            "batch_size": 300,  # a full and a partial batch tile
            "test_batches": 2,
            "eval_every": 80,
            "width": 16,
            **kw,
        }
    )
    return train_students(teacher, settings, progress_every_s=1e9, threads=threads)


@pytest.mark.parametrize("width", [16, 32])
@pytest.mark.parametrize("kind", ["tied", "independent"])
def test_kernel_and_torch_train_the_same_students(kernel, kind, width, monkeypatch):
    teacher = make_teacher(kind, 11, depth=8, width=width, vocab=8)
    ref = _train(teacher, "torch", monkeypatch, width=width)
    got = _train(teacher, "kernel", monkeypatch, width=width)
    assert [r["depth"] for r in got] == [1, 3, 5]
    for a, b in zip(ref, got):
        # the students learnt: 240 steps lower the test loss well below its start
        assert a["test_curve"][-1][1] < 0.8 * a["train_curve"][0][1]
        np.testing.assert_allclose(b["test_loss"], a["test_loss"], rtol=2e-4)
        np.testing.assert_allclose(
            np.array(b["test_curve"])[:, 1], np.array(a["test_curve"])[:, 1], rtol=2e-4
        )
        np.testing.assert_allclose(
            np.array(b["train_curve"])[:, 1], np.array(a["train_curve"])[:, 1], rtol=2e-4
        )
        sa, sb = a["_group"].student_state(0), b["_group"].student_state(0)
        for key in ("fc_w", "fc_b", "proj_w"):
            scale = float(sa[key].abs().max())
            assert float((sa[key] - sb[key]).abs().max()) <= 2e-3 * scale, key


@pytest.mark.parametrize("width", [16, 32])
@pytest.mark.parametrize("kind", ["tied", "independent"])
def test_thread_count_changes_no_number(kernel, kind, width, monkeypatch):
    """On two threads the teacher runs beside the deepest student, which reads the teacher's rows as they
    are published, tile after tile (batch 520 ends in a partial tile on either path)."""
    teacher = make_teacher(kind, 12, depth=6, width=width, vocab=8)
    kw = {"steps": 30, "batch_size": 520, "width": width}
    one = _train(teacher, "kernel", monkeypatch, threads=1, **kw)
    two = _train(teacher, "kernel", monkeypatch, threads=2, **kw)
    for a, b in zip(one, two):
        assert a["train_curve"] == b["train_curve"] and a["test_loss"] == b["test_loss"]
        assert torch.equal(a["_group"].student_state(0)["fc_w"], b["_group"].student_state(0)["fc_w"])


@pytest.mark.parametrize("batch", [1024, 300])
def test_fast_and_generic_builds_equal_the_torch_gradient_at_width_32(kernel, batch):
    """Width 32: the build in use (the AVX-512 path where the CPU has it) and the generic build (products
    through torch's BLAS), each against autograd: loss to 1e-5, every gradient entry to 1e-3 of the largest,
    and the teachers' outputs to 1e-4. A batch of 300 ends in a partial tile of either path."""
    from depthwidth.depth_toy.model import StudentGroup, teacher_forward

    generic = fused.generic_kernel()
    assert not generic.fast_path()
    gen = torch.Generator().manual_seed(21)
    x = torch.randn(batch, 32, generator=gen)
    for kind in ("tied", "independent"):
        teacher = make_teacher(kind, 22, depth=7, width=32, vocab=8)
        want = teacher_forward(teacher, x)
        for k in (kernel, generic):
            got = fused.teacher_out(teacher, x, k)
            assert float((got - want).abs().max()) <= 1e-4, (kind, k.fast_path())
    target = want
    depth = 4
    g = StudentGroup(1, depth, 32, 8, seed=23)
    with torch.no_grad():
        for p in g.proj_w:  # nonzero, so that every gradient path is exercised
            p.copy_(torch.randn(p.shape, generator=gen) * 0.1)
    loss_t, grads = fused.torch_gradient(g, x, target)
    for k in (kernel, generic):
        loss_k, G = fused.kernel_gradient(k, g, x, target)
        assert loss_k == pytest.approx(loss_t, rel=1e-5), k.fast_path()
        assert float((G - grads).abs().max()) <= 1e-3 * float(grads.abs().max()), k.fast_path()


def test_a_student_reads_only_published_teacher_rows_and_gives_up_when_the_teacher_fails(kernel, monkeypatch):
    """teacher_forward publishes its finished rows (all B at the end); a student told the teacher failed (a
    negative count) returns NaN with its parameters and moments untouched, on both builds; and a step
    whose teacher raises raises that error on two threads instead of leaving the student waiting."""
    from depthwidth.depth_toy.model import StudentGroup

    B, D, depth = 300, 32, 3
    gen = torch.Generator().manual_seed(31)
    x = torch.randn(B, D, generator=gen)
    for k in (kernel, fused.generic_kernel()):
        for kind in ("tied", "independent"):
            ready = torch.zeros(1, dtype=torch.int64)
            fused.teacher_out(make_teacher(kind, 32, depth=5, width=D, vocab=8), x, k, ready=ready)
            assert int(ready) == B, (kind, k.fast_path())
        g = StudentGroup(1, depth, D, 8, seed=33)
        P = fused.flat_params(g)
        M, V = torch.full_like(P, 0.5), torch.full_like(P, 0.25)
        before = [t.clone() for t in (P, M, V)]
        loss = k.student_step(
            depth=depth,
            x=x,
            target=torch.zeros(B, D),
            P=P,
            G=torch.zeros_like(P),
            M=M,
            V=V,
            ws=torch.empty(k.workspace_size(depth=depth, batch=B, width=D)),
            step_size=1e-3,
            bc2_sqrt=1.0,
            beta1=0.9,
            beta2=0.999,
            eps=1e-8,
            stats=torch.zeros(1, dtype=torch.float64),
            ready=torch.full((1,), -1, dtype=torch.int64),
        )
        assert np.isnan(loss), k.fast_path()
        assert all(torch.equal(a, b) for a, b in zip(before, (P, M, V))), k.fast_path()

    groups = [StudentGroup(1, d, D, 8, seed=34 + d) for d in (1, 2, 4)]
    opts = [torch.optim.Adam(g.parameters(), lr=1e-3) for g in groups]
    fs = fused.FusedStudents(groups, opts, make_teacher("tied", 35, depth=4, width=D, vocab=8), B, D, 2)

    def broken(**kw):
        raise RuntimeError("teacher broke")

    monkeypatch.setattr(fs.k, "teacher_forward", broken)
    with pytest.raises(RuntimeError, match="teacher broke"):
        fs.step(x, [1e-3] * 3)
    assert int(fs.ready) == -1
    fs.close()


def test_kernel_checkpoint_resumes_on_the_torch_code(kernel, monkeypatch, tmp_path):
    """A kernel run's checkpoint holds its Adam moments as torch.optim.Adam state: the torch code resumes
    it and ends where the kernel would have, to float rounding."""
    teacher = make_teacher("tied", 13, depth=6, width=16, vocab=8)
    kw = {"steps": 40, "checkpoint_every": 20}
    straight = _train(teacher, "kernel", monkeypatch, **kw)
    settings = TrainSettings(
        variant="mse",
        depths=[1, 3, 5],
        temperatures=[None],
        steps=40,
        lr=6e-4,
        lr_depth_factor=8,
        schedule="flat_then_linear",
        batch_size=300,
        test_batches=2,
        eval_every=80,
        width=16,
        checkpoint_every=20,
    )
    ckpt = tmp_path / "c.pt"
    calls = {"n": 0}
    real = fused.FusedStudents.step

    def killed(self, x, lrs):
        calls["n"] += 1
        if calls["n"] == 25:
            raise KeyboardInterrupt
        return real(self, x, lrs)

    monkeypatch.setattr(fused.FusedStudents, "step", killed)
    with pytest.raises(KeyboardInterrupt):
        train_students(teacher, settings, checkpoint=ckpt, progress_every_s=1e9)
    monkeypatch.undo()
    monkeypatch.setattr(fused, "_kernel", None)
    monkeypatch.setattr(fused, "_tried", True)
    resumed = train_students(teacher, settings, checkpoint=ckpt, progress_every_s=1e9)
    for a, b in zip(straight, resumed):
        assert a["train_curve"][0] == b["train_curve"][0]  # the first 20 steps came from the checkpoint
        np.testing.assert_allclose(b["test_loss"], a["test_loss"], rtol=2e-4)


@pytest.mark.parametrize("variant", ["rk2_mse", "learned_head"])
def test_setups_the_kernel_does_not_serve_fall_back_to_torch(kernel, variant, caplog, monkeypatch):
    teacher = make_teacher("tied", 14, depth=4, width=16, vocab=8)
    temps = [None] if variant == "rk2_mse" else [0.5]
    with caplog.at_level(logging.INFO, logger="depthwidth.depth_toy"):
        recs = _train(
            teacher,
            "kernel",
            monkeypatch,
            variant=variant,
            temperatures=temps,
            steps=3,
            depths=[1, 2],
            vocab=8,
        )
    assert len(recs) == 2 and all(np.isfinite(r["test_loss"]) for r in recs)
    assert (
        f"depth_toy {variant}: trained by the torch code, not the fused kernel: it serves the mse setup"
        in (caplog.text)
    )


def test_kernel_refuses_bad_arguments_by_name(kernel):
    x = torch.ones(8, 4)
    n = fused.param_count(2, 4)
    good = {
        "depth": 2,
        "x": x,
        "target": torch.zeros(8, 4),
        "P": torch.zeros(n),
        "G": torch.zeros(n),
        "M": torch.zeros(n),
        "V": torch.zeros(n),
        "ws": torch.zeros(kernel.workspace_size(depth=2, batch=8, width=4)),
        "step_size": 0.0,
        "bc2_sqrt": 1.0,
        "beta1": 0.9,
        "beta2": 0.999,
        "eps": 1e-8,
        "stats": torch.zeros(1, dtype=torch.float64),
    }
    # zero weights leave rmsnorm(x) = 1 unchanged; against a zero target the MSE is 1
    assert kernel.student_step(**good) == pytest.approx(1.0, rel=1e-6)
    for name, bad in (
        ("P", torch.zeros(n - 1)),
        ("target", torch.zeros(4, 8).t()),
        ("V", torch.zeros(n, dtype=torch.float64)),
        ("ws", torch.zeros(10)),
        ("ready", torch.zeros(1, dtype=torch.int32)),
    ):
        with pytest.raises(fused.KernelArgumentError, match=f"argument '{name}'"):
            kernel.student_step(**{**good, name: bad})
