"""Profiles of a fitted law: one parameter held at each value of a grid, the rest refitted, and the
intervals where the profiled objective rises by Δχ² = 1 (68 %) or 3.84 (95 %).

χ² for the profile is the objective scaled by the residual variance: Δχ²(θ) = (SSR(θ) − SSR_min)/s² with
s² = SSR_min/(n − p), p the number of free parameters of the full fit. An end where the profile does not
rise that far within the grid is reported as open (``None``), which is what a flat direction looks like.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from depthwidth.laws import lawfit
from depthwidth.laws.law import ALPHA_BOUNDS, FitData
from depthwidth.laws.lawfit import LawFit

CHI2_LEVELS = {"68%": 1.0, "95%": 3.84}


def profile(
    d: FitData,
    how: LawFit,
    param: str,
    grid,
    *,
    best: dict | None = None,
    n_starts: int = 2,
    seed: int = 0,
) -> pd.DataFrame:
    """``param`` fixed at each grid value, the rest refitted (``how.fixed`` stays fixed): one row per value
    with ``value``, ``ssr`` and the refitted exponents. Each refit starts from its neighbour's solution
    (continuation, both directions from the point nearest ``best``), from ``best`` and from ``n_starts``
    random starts. ``objective`` is what ``how`` minimises (``ssr`` itself for the sum of squares)."""
    grid = np.sort(np.asarray(grid, float))
    if best is None:
        best = how.values(lawfit.fit(d, how, seed=seed), d)
    centre = int(np.argmin(np.abs(grid - best[param])))
    out: dict[int, dict] = {}
    for order in (range(centre, len(grid)), range(centre, -1, -1)):
        prev = best
        for i in order:
            at = how.holding(**{param: grid[i]})
            res = lawfit.fit(d, at, n_starts=n_starts, seed=seed + 7 * i, inits=[prev, best])
            v = at.values(res, d)
            if i not in out or res.objective < out[i]["objective"]:
                out[i] = {
                    "value": float(grid[i]),
                    "ssr": float(res.chisqr),
                    **{a: v[a] for a in how.law.exponents},
                    "objective": float(res.objective),
                }
            prev = v
    return pd.DataFrame([out[i] for i in sorted(out)])


def refine_grid(grid, best: float, stderr: float | None, n_fine: int = 17, width: float = 4.0) -> np.ndarray:
    """``grid`` plus the best value and ``n_fine`` points across best ± ``width``·stderr (within the
    exponent bounds), so that a narrow interval is resolved as well as a wide one."""
    pts = [np.asarray(grid, float), [best]]
    if stderr is not None and np.isfinite(stderr) and stderr > 0:
        pts.append(best + stderr * np.linspace(-width, width, n_fine))
    g = np.unique(np.round(np.concatenate(pts), 6))
    return g[(g >= ALPHA_BOUNDS[0]) & (g <= ALPHA_BOUNDS[1])]


def profile_interval(
    prof: pd.DataFrame, ssr_min: float, n: int, p: int, level: float, column: str = "ssr", factor: float = 1.0
) -> dict:
    """Where Δχ² = factor·(SSR − SSR_min)/s² ≤ ``level`` (s² = SSR_min/(n − p)), by linear interpolation
    between grid values. An end that the grid does not close (Δχ² never reaches ``level`` on that side) is
    None. ``column``: the profile's objective (``ssr``, or ``objective`` for the Huber loss with the
    ``factor`` that makes it the drop-in-dispersion statistic, see ``chinchilla.identify``). Returns {"level", "lo", "hi", "closed_lo",
    "closed_hi"}."""
    s2 = ssr_min / max(n - p, 1)
    x = prof["value"].to_numpy(float)
    chi = factor * (prof[column].to_numpy(float) - ssr_min) / s2
    i0 = int(np.argmin(chi))
    lo = hi = None
    for i in range(i0, 0, -1):
        if chi[i - 1] > level:
            lo = float(np.interp(level, [chi[i], chi[i - 1]], [x[i], x[i - 1]]))
            break
    for i in range(i0, len(x) - 1):
        if chi[i + 1] > level:
            hi = float(np.interp(level, [chi[i], chi[i + 1]], [x[i], x[i + 1]]))
            break
    return {
        "level": level,
        "lo": lo,
        "hi": hi,
        "closed_lo": lo is not None,
        "closed_hi": hi is not None,
        "grid": [float(x[0]), float(x[-1])],
    }
