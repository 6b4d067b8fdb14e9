"""Teacher and student residual networks of the depth toy (Liu, Kangaslahti, Liu & Gore, arXiv 2602.05970).

Both are stacks of pre-norm residual MLP blocks acting on a width-``D`` state (paper: D = 32):

    h_0 = rmsnorm(x),   h_{l+1} = h_l + W2_l · relu(W1_l · rmsnorm(h_l) + b1_l)²,   out = rmsnorm(h_L)

with ``W1_l`` (D → 4D, bias) and ``W2_l`` (4D → D, no bias); RMSNorm has no learnable weight. The
network's output ``out`` (B, D) is read out by a head (D → V logits, V = 128) divided by a temperature,
or compared directly (MSE variants).

Weights are stored "x @ W" style so that a whole group of students can be run as one batched matmul:
``fc_w`` (D, H), ``fc_b`` (H,), ``proj_w`` (H, D) per block, with a leading student axis S for students.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F

KINDS = ("independent", "tied")


def rmsnorm(x: torch.Tensor) -> torch.Tensor:
    """RMSNorm over the last axis, no learnable weight (eps: PyTorch's default for the dtype)."""
    return F.rms_norm(x, (x.size(-1),))


def _uniform(gen: torch.Generator, shape: tuple[int, ...], bound: float) -> torch.Tensor:
    """U(-bound, bound): nn.Linear's default init (kaiming_uniform with a=√5 gives bound = 1/√fan_in)."""
    return (torch.rand(shape, generator=gen) * 2 - 1) * bound


@dataclass
class Teacher:
    """A frozen teacher of ``depth`` blocks.

    fc_w (L, D, H), fc_b (L, H), proj_w (L, H, D); ``head`` (D, V): nn.Linear default init, the learned-head
    variant's teacher readout; ``shared_head`` (D, V): randn/√D, the readout shared by teacher and student
    in the shared-head variant. For a tied teacher the (L, ...) tensors are views of block 0 with stride 0
    along L, so every block is literally the same memory.
    """

    kind: str
    fc_w: torch.Tensor
    fc_b: torch.Tensor
    proj_w: torch.Tensor
    head: torch.Tensor
    shared_head: torch.Tensor

    @property
    def depth(self) -> int:
        return self.fc_w.shape[0]

    def to(self, device) -> Teacher:
        # .to() on a stride-0 view would materialise copies; keep tied blocks shared on the device too.
        if self.kind == "tied":
            blocks = [t[:1].to(device).expand_as(t) for t in (self.fc_w, self.fc_b, self.proj_w)]
        else:
            blocks = [t.to(device) for t in (self.fc_w, self.fc_b, self.proj_w)]
        return Teacher(self.kind, *blocks, self.head.to(device), self.shared_head.to(device))


def make_teacher(kind: str, seed: int, depth: int = 128, width: int = 32, vocab: int = 128) -> Teacher:
    """Build a teacher as the paper's code does: PyTorch default init, each block's output projection
    scaled by 1/√depth. ``tied``: every block is block 0. The same ``seed`` gives the same block 0 for both
    kinds, so a tied teacher is the independent teacher's first block repeated."""
    if kind not in KINDS:
        raise ValueError(f"teacher kind {kind!r} unknown; use one of {KINDS}")
    gen = torch.Generator().manual_seed(int(seed))
    hidden = 4 * width
    fc_w = _uniform(gen, (depth, width, hidden), 1 / math.sqrt(width))
    fc_b = _uniform(gen, (depth, hidden), 1 / math.sqrt(width))
    proj_w = _uniform(gen, (depth, hidden, width), 1 / math.sqrt(hidden)) / math.sqrt(depth)
    head = _uniform(gen, (width, vocab), 1 / math.sqrt(width))
    shared_head = torch.randn((width, vocab), generator=gen) / math.sqrt(width)
    if kind == "tied":
        fc_w, fc_b, proj_w = (t[:1].expand_as(t) for t in (fc_w, fc_b, proj_w))
    return Teacher(kind, fc_w, fc_b, proj_w, head, shared_head)


def mlp(h: torch.Tensor, fc_w: torch.Tensor, fc_b: torch.Tensor, proj_w: torch.Tensor) -> torch.Tensor:
    """The block update W2 · relu(W1 · rmsnorm(h) + b1)²: h (..., B, D) -> (..., B, D).

    Unbatched weights (D, H), (H,), (H, D) or batched over students (S, D, H), (S, 1, H), (S, H, D)."""
    a = torch.matmul(rmsnorm(h), fc_w) + fc_b
    return torch.matmul(F.relu(a).square(), proj_w)


class _StudentMLP(torch.autograd.Function):
    """:func:`mlp` for a stack of students (weights (S, D, H), (S, 1, H), (S, H, D), state (S, B, D)) with a
    hand-written backward. Autograd's version makes about eight passes over the (S, B, H) activations
    (bias add, ReLU, square and their backward ops); this one makes three (ReLU in place, the square,
    one product in the backward), with the factor 2 of d(r²)/dr applied to the small outputs."""

    @staticmethod
    def forward(ctx, h, fc_w, fc_b, proj_w):
        eps = torch.finfo(h.dtype).eps  # F.rms_norm's default
        inv_rms = torch.rsqrt(h.square().mean(-1, keepdim=True).add_(eps))  # (S, B, 1)
        n = h * inv_rms
        r = torch.baddbmm(fc_b, n, fc_w).relu_()  # (S, B, H)
        sq = r * r
        ctx.save_for_backward(n, inv_rms, r, sq, fc_w, proj_w)
        return torch.bmm(sq, proj_w)

    @staticmethod
    def backward(ctx, g):
        n, inv_rms, r, sq, fc_w, proj_w = ctx.saved_tensors
        g = g.contiguous()
        d_proj = torch.bmm(sq.transpose(1, 2), g)  # (S, H, D)
        half_da = torch.bmm(g, proj_w.transpose(1, 2)).mul_(r)  # dL/da / 2 (zero where the ReLU is off)
        d_fc_w = torch.bmm(n.transpose(1, 2), half_da).mul_(2.0)
        d_fc_b = half_da.sum(1, keepdim=True).mul_(2.0)
        dn = torch.bmm(half_da, fc_w.transpose(1, 2)).mul_(2.0)  # (S, B, D)
        # through n = h / rms(h): dh = (dn − n · mean(dn · n)) / rms
        dh = dn.sub_(n * (dn * n).mean(-1, keepdim=True)).mul_(inv_rms)
        return dh, d_fc_w, d_fc_b, d_proj


def student_mlp(
    h: torch.Tensor, fc_w: torch.Tensor, fc_b: torch.Tensor, proj_w: torch.Tensor
) -> torch.Tensor:
    """:func:`mlp` for students: h (S, B, D), weights batched over S; the same values, a faster backward."""
    return _StudentMLP.apply(h, fc_w, fc_b, proj_w)


@torch.no_grad()
def teacher_forward(teacher: Teacher, x: torch.Tensor, hidden: bool = False):
    """Teacher output rmsnorm(h_L) (B, D) for inputs x (B, D); with ``hidden``, also the list of the
    L + 1 states h_0..h_L, each (B, D)."""
    h = rmsnorm(x)
    states = [h] if hidden else None
    for i in range(teacher.depth):
        h = h + mlp(h, teacher.fc_w[i], teacher.fc_b[i], teacher.proj_w[i])
        if hidden:
            states.append(h)
    out = rmsnorm(h)
    return (out, states) if hidden else out


class StudentGroup(torch.nn.Module):
    """``n_students`` students of the same depth and block type, stored stacked for batched matmuls.

    Every parameter tensor has the student axis first; student s only ever touches slice s, so its
    gradients and (elementwise) Adam updates are exactly those of training it alone.
    Block ``euler``: h + mlp(h) (the paper's student). Block ``rk2``: the midpoint rule with two MLPs,
    h + mlp2(h + mlp1(h)/2). Init as the paper: W1, b1 PyTorch default, W2 and the head zero.
    """

    def __init__(
        self,
        n_students: int,
        depth: int,
        width: int = 32,
        vocab: int = 128,
        block: str = "euler",
        learned_head: bool = False,
        seed: int = 0,
    ):
        super().__init__()
        if block not in ("euler", "rk2"):
            raise ValueError(f"student block {block!r} unknown; use 'euler' or 'rk2'")
        gen = torch.Generator().manual_seed(int(seed))
        S, D, H = n_students, width, 4 * width
        self.n_students, self.depth, self.block = S, depth, block
        n_mlp = 2 if block == "rk2" else 1
        self.fc_w = torch.nn.ParameterList()
        self.fc_b = torch.nn.ParameterList()
        self.proj_w = torch.nn.ParameterList()
        # One parameter per (block, MLP): indexing one big tensor would make autograd build a
        # full-size zero gradient for every slice, which costs more than the block itself.
        for _ in range(depth * n_mlp):
            self.fc_w.append(torch.nn.Parameter(_uniform(gen, (S, D, H), 1 / math.sqrt(D))))
            self.fc_b.append(torch.nn.Parameter(_uniform(gen, (S, 1, H), 1 / math.sqrt(D))))
            self.proj_w.append(torch.nn.Parameter(torch.zeros(S, H, D)))
        self.head = torch.nn.Parameter(torch.zeros(S, D, vocab)) if learned_head else None

    def forward(self, x: torch.Tensor, hidden: bool = False):
        """Outputs rmsnorm(h_L) (S, B, D) for shared inputs x (B, D); with ``hidden`` also the L + 1
        states, each (S, B, D)."""
        h = rmsnorm(x).expand(self.n_students, -1, -1)
        states = [h] if hidden else None
        for i in range(self.depth):
            if self.block == "euler":
                h = h + student_mlp(h, self.fc_w[i], self.fc_b[i], self.proj_w[i])
            else:
                j, k = 2 * i, 2 * i + 1
                mid = h + 0.5 * student_mlp(h, self.fc_w[j], self.fc_b[j], self.proj_w[j])
                h = h + student_mlp(mid, self.fc_w[k], self.fc_b[k], self.proj_w[k])
            if hidden:
                states.append(h)
        out = rmsnorm(h)
        return (out, states) if hidden else out

    def student_state(self, s: int) -> dict[str, torch.Tensor]:
        """Student ``s``'s weights as plain tensors: fc_w (n_mlp·L, D, H), fc_b (n_mlp·L, H),
        proj_w (n_mlp·L, H, D), head (D, V) when learned."""
        out = {
            "fc_w": torch.stack([p[s] for p in self.fc_w]).detach().cpu(),
            "fc_b": torch.stack([p[s, 0] for p in self.fc_b]).detach().cpu(),
            "proj_w": torch.stack([p[s] for p in self.proj_w]).detach().cpu(),
        }
        if self.head is not None:
            out["head"] = self.head[s].detach().cpu()
        return out


class ReferenceBlock(torch.nn.Module):
    """One block as the paper's code writes it (nn.Linear layers), for the plain-loop baseline."""

    def __init__(self, width: int = 32):
        super().__init__()
        self.c_fc = torch.nn.Linear(width, 4 * width, bias=True)
        self.c_proj = torch.nn.Linear(4 * width, width, bias=False)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h + self.c_proj(F.relu(self.c_fc(rmsnorm(h))) ** 2)


class ReferenceModel(torch.nn.Module):
    """The paper's ToyModel (exp-9-1) as a plain nn.Module: blocks, final rmsnorm, linear head.

    Used by the benchmark (the plain loop) and by the tests that check the batched code against it."""

    def __init__(self, depth: int, width: int = 32, vocab: int = 128):
        super().__init__()
        self.layers = torch.nn.ModuleList([ReferenceBlock(width) for _ in range(depth)])
        self.head = torch.nn.Linear(width, vocab, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = rmsnorm(x)
        for layer in self.layers:
            h = layer(h)
        return self.head(rmsnorm(h))

    @classmethod
    def from_teacher(cls, teacher: Teacher) -> ReferenceModel:
        """A plain copy of ``teacher`` with its learned-head readout. A tied teacher's blocks share block 0's
        parameters, as the paper's code makes them (it assigns block 0's ``.data`` to every block)."""
        width, vocab = teacher.head.shape
        m = cls(teacher.depth, width, vocab)
        with torch.no_grad():
            for i, layer in enumerate(m.layers):
                layer.c_fc.weight.copy_(teacher.fc_w[i].T)
                layer.c_fc.bias.copy_(teacher.fc_b[i])
                layer.c_proj.weight.copy_(teacher.proj_w[i].T)
            m.head.weight.copy_(teacher.head.T)
        if teacher.kind == "tied":
            first = m.layers[0]
            for layer in m.layers[1:]:
                layer.c_fc.weight, layer.c_fc.bias = first.c_fc.weight, first.c_fc.bias
                layer.c_proj.weight = first.c_proj.weight
        return m.requires_grad_(False)

    @classmethod
    def from_student(cls, group: StudentGroup, s: int) -> ReferenceModel:
        """Student ``s`` of an Euler ``group`` with a learned head, as a trainable plain model."""
        st = group.student_state(s)
        width, vocab = st["head"].shape
        m = cls(group.depth, width, vocab)
        with torch.no_grad():
            for i, layer in enumerate(m.layers):
                layer.c_fc.weight.copy_(st["fc_w"][i].T)
                layer.c_fc.bias.copy_(st["fc_b"][i])
                layer.c_proj.weight.copy_(st["proj_w"][i].T)
            m.head.weight.copy_(st["head"].T)
        return m
