"""The paper's own fit of the decomposed law: torch Adam with the notebook's dtypes, stopped after a fixed
step count.

Liu et al. fit ln c_m, ln c_ℓ, ln c_D, α_m, α_ℓ, α_D and E (= L0) by full-batch Adam on
100·mean (ln L − ln L̂)², from ln c = (ln 200, ln 200, ln 10), α = (1, 1, 0.33), E = 1.69, learning rate
5e-3 for the ln c's and E and 5e-4 for the exponents, 50,000 steps. Their notebook builds the ln c tensor
from numpy float64 scalars, so it is float64, while the exponents and E are built from Python floats and
are float32; the data come from a CSV of floats and are float64. Every product is therefore computed in
float64, the gradients of α and E are rounded to float32, and their Adam moments and values are float32.
The objective is nearly flat along the direction that trades c_ℓ against α_ℓ, so where the fit stops
depends on that precision: with these dtypes it ends at the notebook's α_ℓ = 1.2014 (c_ℓ 1284.4); all
float64 ends at 1.1964 and all float32 at 1.2015–1.2017, depending on the order of summation.
"""

from __future__ import annotations

import numpy as np

from depthwidth.laws.law import DECOMPOSED, PARAMS, PAPER_INIT, FitData, decomposed_law

LR_LOG_C = 5e-3  # ln c_m, ln c_ℓ, ln c_D and E
LR_EXPONENTS = 5e-4  # α_m, α_ℓ, α_D
OBJECTIVE_SCALE = 100.0  # the paper minimises 100 · mean squared log residual


def _padded(datasets: list[FitData]) -> tuple:
    """float64 (B, 3, n_max) log m, log ℓ, log D; (B, n_max) log L; (B, n_max) mask; (B,) point counts.
    Padding has mask 0, so it adds exact zeros to each fit's sums."""
    import torch

    n_max = max(len(d) for d in datasets)
    logs = np.zeros((len(datasets), 3, n_max))
    log_loss = np.zeros((len(datasets), n_max))
    mask = np.zeros((len(datasets), n_max))
    for b, d in enumerate(datasets):
        n = len(d)
        logs[b, :, :n] = np.log(np.stack([d.m, d.ell, d.D]))
        log_loss[b, :n] = np.log(d.loss)
        mask[b, :n] = 1.0
    counts = np.array([len(d) for d in datasets], float)
    return tuple(torch.tensor(a, dtype=torch.float64) for a in (logs, log_loss, mask, counts))


def fit_adam_batch(datasets: list[FitData], steps: int = 50_000) -> list[dict]:
    """The paper's Adam fit run on each dataset of ``datasets`` at once (independent fits: Adam is
    elementwise and each fit's objective only sees its own points). Returns, per dataset, the dict of
    ``fit_adam``.

    The gradient is written out (what autograd computes for the objective, in float64, the α and E parts
    then rounded to float32 as autograd rounds them for float32 leaves) and the update is
    torch.optim.Adam's single-tensor step op for op: the same steps as the paper's autograd loop up to
    float64 rounding (tests/test_chinchilla.py: equal to 1e-6 after 300 steps) at a fifth of its cost."""
    import torch  # here, not at the top: the other fits do not need torch's import time

    logs, log_loss, mask, counts = _padded(datasets)
    batch = len(datasets)
    init_c = [np.log(PAPER_INIT[k]) for k in DECOMPOSED.coefficients]
    init_a = [PAPER_INIT[k] for k in DECOMPOSED.exponents]
    log_c = torch.tensor([init_c] * batch, dtype=torch.float64)  # (B, 3), float64 as in the notebook
    alpha = torch.tensor([init_a] * batch, dtype=torch.float32)  # (B, 3)
    E = torch.full((batch,), PAPER_INIT["L0"], dtype=torch.float32)  # (B,)
    groups = [(log_c, LR_LOG_C), (E, LR_LOG_C), (alpha, LR_EXPONENTS)]
    moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p, _ in groups]
    weight = (-2.0 * OBJECTIVE_SCALE) * mask / counts[:, None]  # d objective / d log L̂, over the residual
    with torch.no_grad():
        for step in range(1, steps + 1):
            terms = torch.exp(log_c[:, :, None] - alpha.double()[:, :, None] * logs)  # (B, 3, n)
            pred = terms.sum(1) + E.double()[:, None]  # (B, n)
            g = weight * (log_loss - torch.log(pred)) / pred  # d objective / d L̂, (B, n)
            grads = [
                (terms * g[:, None, :]).sum(2),
                g.sum(1).float(),
                (-(terms * logs * g[:, None, :]).sum(2)).float(),
            ]
            for (param, lr), (m1, m2), grad in zip(groups, moments, grads):
                _adam_step(param, grad, m1, m2, lr, step)
    out = []
    for b, d in enumerate(datasets):
        lc, a = log_c[b].double().numpy(), alpha[b].double().numpy()
        v = {
            "c_m": np.exp(lc[0]),
            "alpha_m": a[0],
            "c_l": np.exp(lc[1]),
            "alpha_l": a[1],
            "c_D": np.exp(lc[2]),
            "alpha_D": a[2],
            "L0": float(E[b]),
        }
        out.append(_summary({k: float(x) for k, x in v.items()}, d, steps))
    return out


def _adam_step(
    param,
    grad,
    exp_avg,
    exp_avg_sq,
    lr: float,
    step: int,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
) -> None:
    """One update of torch.optim.Adam (default settings, single-tensor path), in place."""
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    bias_correction2_sqrt = (1 - beta2**step) ** 0.5
    denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    param.addcdiv_(exp_avg, denom, value=-(lr / (1 - beta1**step)))


def fit_adam(d: FitData, steps: int = 50_000) -> dict:
    """The paper's procedure on one dataset. Returns ``params`` (value per parameter, stderr None: the
    paper's errors are ``fit.paper_stderrs`` at this point), ``n_points``, the sum of squared log
    residuals (``objective_sum_sq_log_residual``, float64 at the float32 parameters) and ``steps``."""
    return fit_adam_batch([d], steps)[0]


def _summary(v: dict, d: FitData, steps: int) -> dict:
    pred = decomposed_law(d.m, d.ell, d.D, *(v[k] for k in PARAMS))
    return {
        "params": {k: {"value": v[k], "stderr": None} for k in PARAMS},
        "n_points": len(d),
        "objective_sum_sq_log_residual": float(np.sum((np.log(d.loss) - np.log(pred)) ** 2)),
        "steps": steps,
        "precision": "ln c float64; exponents and E float32 (the notebook's dtypes)",
    }
