"""The paper's plain training loop (exp-10: dense random input, autograd, one cell at a time), kept as the
ground truth for the tests and the benchmark of the sparse trainer (``train``).

It shares nothing with the trainer it checks: the feature frequencies, the initialisation, the learning-rate
schedule and AdamW with the signed decay rule are written out here as the paper's script writes them (only
the name of a frequency law is parsed by ``grid``, the config's own vocabulary). ``settings`` is any object
with the fields of ``train.TrainSettings``.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from depthwidth.superposition.grid import parse_distribution


def paper_probabilities(dist: str, n: int) -> torch.Tensor:
    """p_i for i = 1..n as the paper's scripts build them: the law, normalised to Σp = 1, then the
    activation density s rescales p ← p·(1 + s(1/p_1 − 1)), clipped to 1."""
    d = parse_distribution(dist)
    i = torch.arange(1, n + 1, dtype=torch.float64)
    if d.law == "power":
        p = i ** (-d.alpha)
    elif d.law == "exponential":
        p = torch.exp(-(i - 1) / d.k)
    else:
        p = (n - i + 1) / n
    p = p / p.sum()
    return (p * (1.0 + d.density * (1.0 / p[0] - 1.0))).clamp(max=1.0)


def paper_lr(step: int, steps: int, warmup_steps: int, min_ratio: float) -> float:
    """exp-10's ``get_lr`` as a fraction of the peak at iteration ``it = step + 1``: linear warm-up, then a
    cosine down to ``min_ratio``."""
    it = step + 1
    if warmup_steps < steps:
        if it < warmup_steps:
            return it / warmup_steps
        decay = (it - warmup_steps) / (steps - warmup_steps)
    else:  # no room for a warm-up: the cosine over all steps
        decay = it / steps
    return min_ratio + 0.5 * (1.0 + math.cos(math.pi * decay)) * (1 - min_ratio)


def reference_train(dist: str, gamma: float, m: int, settings, seed_offset: int = 0):
    """Train one cell exactly as the paper's exp-10 script does (seed, W = randn/√m, b = randn, dense input
    draw, autograd, its AdamW with the signed decay rule). Returns (W (n, m), b (n,), losses (steps,)) as
    numpy. The learning rates follow the width rule of ``settings`` (exp-17's lr·(m_ref/m)^k, bias lr/m)."""
    S = settings
    n, B = S.n, S.batch
    p = paper_probabilities(dist, n).to(torch.float32)
    torch.manual_seed(1000 * S.seed + seed_offset)
    W = (torch.randn(n, m) / math.sqrt(m)).requires_grad_(True)
    b = torch.randn(n).requires_grad_(True)
    lr_w0 = S.lr * (S.lr_width_reference / m) ** S.lr_width_exponent
    lr_b0 = S.lr_bias_over_m / m if S.lr_bias_over_m is not None else lr_w0
    state = {
        id(W): [torch.zeros_like(W), torch.zeros_like(W)],
        id(b): [torch.zeros_like(b), torch.zeros_like(b)],
    }
    losses = np.zeros(S.steps, dtype=np.float32)
    for step in range(S.steps):
        x = (torch.rand(B, n) < p).float() * torch.rand(B, n) * 2
        f = paper_lr(step, S.steps, S.warmup_steps, S.min_lr_ratio)
        y = torch.relu(x @ W @ W.T + b)
        loss = torch.nn.functional.mse_loss(y, x)
        W.grad = b.grad = None
        (loss * S.loss_scale).backward()
        losses[step] = loss.item()
        with torch.no_grad():
            t = step + 1
            for P, lr, wd in ((W, lr_w0 * f, gamma), (b, lr_b0 * f, 0.0)):
                if wd >= 0:
                    P.mul_(1 - wd * lr)
                else:
                    norms = P.norm(dim=1, keepdim=True).add_(S.eps)
                    P.add_(wd * P * (1 - 1 / norms), alpha=lr)
                m1, v1 = state[id(P)]
                m1.mul_(S.beta1).add_(P.grad, alpha=1 - S.beta1)
                v1.mul_(S.beta2).addcmul_(P.grad, P.grad, value=1 - S.beta2)
                denom = (v1.sqrt() / math.sqrt(1 - S.beta2**t)).add_(S.eps)
                P.addcdiv_(m1, denom, value=-lr / (1 - S.beta1**t))
    return W.detach().numpy(), b.detach().numpy(), losses
