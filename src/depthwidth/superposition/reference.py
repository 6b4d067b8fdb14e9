"""The paper's plain training loop (exp-10: dense random input, autograd, one cell at a time), kept as the
ground truth for the tests and the benchmark of the sparse trainer (``train``)."""

from __future__ import annotations

import math

import numpy as np
import torch

from depthwidth.superposition.data import feature_probabilities, parse_distribution
from depthwidth.superposition.train import TrainSettings, cell_lrs, init_params, lr_factor, seed_of


def reference_train(dist: str, gamma: float, m: int, settings: TrainSettings, seed_offset: int = 0):
    """Train one cell exactly as the paper's exp-10 script does (dense input draw, autograd,
    its AdamW with the signed decay rule). Returns (W (n, m), b (n,), losses (steps,)) as numpy."""
    S = settings
    n, B = S.n, S.batch
    p = feature_probabilities(parse_distribution(dist), n).to(torch.float32)
    W0, b0 = init_params(n, m, S.seed)
    W = W0.clone().requires_grad_(True)
    b = b0.clone().requires_grad_(True)
    lr_w0, lr_b0 = cell_lrs(S, m)
    state = {
        id(W): [torch.zeros_like(W), torch.zeros_like(W)],
        id(b): [torch.zeros_like(b), torch.zeros_like(b)],
    }
    torch.manual_seed(seed_of("reference", S.seed, dist, n, B, seed_offset))
    losses = np.zeros(S.steps, dtype=np.float32)
    for step in range(S.steps):
        x = (torch.rand(B, n) < p).float() * torch.rand(B, n) * 2
        f = lr_factor(step, S.steps, S.warmup_steps, S.min_lr_ratio)
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
