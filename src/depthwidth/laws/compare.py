"""Model comparison: information criteria of a fit with Gaussian log residuals, and which of two fits of the
same data each criterion prefers. The held-out error of a fit is ``lawfit.held_out``."""

from __future__ import annotations

import numpy as np


def information_criteria(ssr: float, n: int, k: int) -> dict:
    """AIC = n ln(SSR/n) + 2k and BIC = n ln(SSR/n) + k ln n of a fit with Gaussian log residuals (SSR the
    sum of squared log residuals at the fit, k its free parameters)."""
    base = n * np.log(ssr / n)
    return {"aic": float(base + 2 * k), "bic": float(base + k * np.log(n)), "k": k}


def lower(a: dict, b: dict, names: tuple[str, str], keys=("aic", "bic")) -> dict:
    """Per criterion of ``keys``, the name (of ``names``) of the fit with the lower value."""
    return {key: (names[0] if a[key] < b[key] else names[1]) for key in keys}
