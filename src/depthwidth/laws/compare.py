"""Model comparison: information criteria of a fit with Gaussian log residuals, and which of two fits of the
same data each criterion prefers. The held-out error of a fit is ``lawfit.held_out``."""

from __future__ import annotations

import numpy as np


def information_criteria(ssr: float, n: int, k: int) -> dict:
    """AIC = n ln(SSR/n) + 2k and BIC = n ln(SSR/n) + k ln n of a fit with Gaussian log residuals (SSR the
    sum of squared log residuals at the fit, k its free parameters)."""
    base = n * np.log(ssr / n)
    return {"aic": float(base + 2 * k), "bic": float(base + k * np.log(n)), "k": k}


def laplace_criteria(r: np.ndarray, k: int) -> dict:
    """AIC and BIC of a Huber fit from the Laplace pseudo-likelihood of its log residuals ``r`` (the
    likelihood a small-δ Huber fit maximises): −ln L = n ln(2b) + n with b = mean |r|, k + 1 parameters
    (the scale b counted)."""
    n = len(r)
    base = 2 * n * np.log(2 * float(np.mean(np.abs(r)))) + 2 * n
    return {"aic": float(base + 2 * (k + 1)), "bic": float(base + (k + 1) * np.log(n)), "k": k}


def lower(a: dict, b: dict, names: tuple[str, str], keys=("aic", "bic")) -> dict:
    """Per criterion of ``keys``, the name (of ``names``) of the fit with the lower value."""
    return {key: (names[0] if a[key] < b[key] else names[1]) for key in keys}
