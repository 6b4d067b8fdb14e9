"""Depth exponents of the depth toy: the test loss of students of depth ℓ is fitted as L = c · ℓ^(−α_ℓ) by
least squares on log L vs log ℓ (``depthwidth.laws.loglog.power_law_fit``; all replicates pooled). The standard
error of α_ℓ is the OLS one, so it includes the scatter between replicates and around the power law.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from depthwidth.laws.loglog import power_law_fit


def fit_depth_exponent(depths, losses) -> dict:
    """L = c · ℓ^(−α) on (depth, loss) points. Returns the columns of exponents.csv: alpha, alpha_se (NaN with
    fewer than 3 distinct depths), log_c, n_points, n_depths. Non-positive losses are an error."""
    fit = power_law_fit(depths, losses)
    return {
        "alpha": fit["exponent"],
        "alpha_se": fit["stderr"],
        "log_c": fit["log_c"],
        "n_points": fit["n_points"],
        "n_depths": fit["n_x"],
    }


def exponents(runs: pd.DataFrame, by: tuple[str, ...] = ()) -> pd.DataFrame:
    """α_ℓ ± SE per (kind, variant, temperature, *by) from ``runs`` (columns RUN_COLUMNS, plus ``by``)."""
    rows = []
    keys = ["kind", "variant", "temperature", *by]
    key = runs.assign(temperature=runs["temperature"].fillna(-1.0))
    for (kind, variant, temp, *extra), grp in key.groupby(keys, sort=True):
        fit = fit_depth_exponent(grp["depth"], grp["test_loss"])
        rows.append(
            {
                "kind": kind,
                "variant": variant,
                "temperature": np.nan if temp < 0 else temp,
                **dict(zip(by, extra)),
                "replicates": grp["replicate"].nunique(),
                **fit,
            }
        )
    return pd.DataFrame(rows)


def exponent_trajectory(curves: pd.DataFrame) -> pd.DataFrame:
    """α_ℓ ± SE per (kind, variant, temperature) at every evaluated training step, from ``curves`` with
    columns kind, variant, temperature, replicate, depth, step, test_loss (every student's test curve).
    Shows whether the exponent has settled: a student far from convergence has a rising α_ℓ."""
    cols = ["kind", "variant", "temperature", "step", "alpha", "alpha_se"]
    if curves.empty:
        return pd.DataFrame(columns=cols)
    ex = exponents(curves, by=("step",))
    return ex.loc[ex["n_depths"] >= 2, cols].reset_index(drop=True)


def combined_exponent(ex: pd.DataFrame, kind: str, variant: str) -> tuple[float, float, int]:
    """Inverse-variance weighted mean α_ℓ over the temperatures of (kind, variant), with its SE and the
    number of fits (one fit without SE: its value and NaN)."""
    sel = ex[(ex["kind"] == kind) & (ex["variant"] == variant) & np.isfinite(ex["alpha"])]
    if sel.empty:
        return float("nan"), float("nan"), 0
    se = sel["alpha_se"].to_numpy()
    if len(sel) == 1 or not np.isfinite(se).all() or (se <= 0).any():
        a = sel["alpha"].to_numpy()
        err = float(a.std(ddof=1) / np.sqrt(len(a))) if len(a) > 1 else float(se[0])
        return float(a.mean()), err, len(sel)
    w = 1 / se**2
    return float((w * sel["alpha"]).sum() / w.sum()), float(1 / np.sqrt(w.sum())), len(sel)


# The convergence test: over the last WINDOW of training (the evaluations from step (1 − WINDOW)·steps on),
# the test loss of every depth changes by at most LOSS_TOL (relative), and α_ℓ by at most ALPHA_TOL.
WINDOW = 0.2
LOSS_TOL = 0.05
ALPHA_TOL = 0.1
_KEYS = ["kind", "variant", "temperature"]


def _keyed(curves: pd.DataFrame) -> pd.DataFrame:
    return curves.assign(temperature=curves["temperature"].fillna(-1.0))


def _unkeyed(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(temperature=df["temperature"].where(df["temperature"] >= 0, np.nan))


def local_exponents(curves: pd.DataFrame) -> pd.DataFrame:
    """The local depth exponent between neighbouring depths, −Δlog L / Δlog ℓ, at every evaluated step, from
    the test curves (columns kind, variant, temperature, replicate, depth, step, test_loss; replicates
    averaged first). Columns: kind, variant, temperature, step, depth_lo, depth_hi, alpha_local."""
    cols = [*_KEYS, "step", "depth_lo", "depth_hi", "alpha_local"]
    if curves.empty:
        return pd.DataFrame(columns=cols)
    mean = _keyed(curves).groupby([*_KEYS, "step", "depth"], as_index=False)["test_loss"].mean()
    rows = []
    for key, g in mean.groupby([*_KEYS, "step"], sort=True):
        g = g.sort_values("depth")
        d, loss = g["depth"].to_numpy(float), g["test_loss"].to_numpy(float)
        for i in range(len(d) - 1):
            ok = loss[i] > 0 and loss[i + 1] > 0
            a = -np.log(loss[i + 1] / loss[i]) / np.log(d[i + 1] / d[i]) if ok else np.nan
            rows.append(
                dict(zip([*_KEYS, "step"], key), depth_lo=int(d[i]), depth_hi=int(d[i + 1]), alpha_local=a)
            )
    return _unkeyed(pd.DataFrame(rows, columns=cols))


def convergence_test(curves: pd.DataFrame, window: float = WINDOW) -> pd.DataFrame:
    """Per (kind, variant, temperature): how much the test loss of each depth and the fitted α_ℓ still move
    over the last ``window`` of training, from the last evaluation at or before (1 − window)·steps (where
    evaluations are sparse this spans more than the window, which makes the test stricter) to the last. Columns: kind, variant, temperature, steps, step_from, loss_change (the largest relative change
    of any depth's replicate-mean test loss, (L_from − L_last) / L_last: positive while the loss falls),
    depth_moving (that depth), alpha_from, alpha_last, alpha_change (α_last − α_from), converged (both
    within LOSS_TOL and ALPHA_TOL). A run with a single evaluation cannot pass: it has nothing to compare
    (converged False, the changes NaN)."""
    cols = [*_KEYS, "steps", "step_from", "loss_change", "depth_moving", "alpha_from", "alpha_last"]
    cols += ["alpha_change", "converged"]
    if curves.empty:
        return pd.DataFrame(columns=cols)
    mean = _keyed(curves).groupby([*_KEYS, "step", "depth"], as_index=False)["test_loss"].mean()
    rows = []
    for key, g in mean.groupby(_KEYS, sort=True):
        last = int(g["step"].max())
        # the last evaluation at or before (1 − window)·steps (with sparse evaluations, a longer span:
        # a stricter test), else the first after it
        before = [s for s in g["step"].unique() if s <= (1 - window) * last]
        start = int(max(before)) if before else int(min(g["step"].unique()))
        row = dict(zip(_KEYS, key), steps=last, step_from=start)
        if start == last:
            rows.append({**row, "loss_change": np.nan, "depth_moving": np.nan, "alpha_from": np.nan})
            rows[-1].update(alpha_last=np.nan, alpha_change=np.nan, converged=False)
            continue
        a = g[g["step"] == start].set_index("depth")["test_loss"]
        b = g[g["step"] == last].set_index("depth")["test_loss"]
        change = ((a - b) / b).dropna()
        worst = change.abs().idxmax()
        fa = fit_depth_exponent(a.index, a.to_numpy())["alpha"]
        fb = fit_depth_exponent(b.index, b.to_numpy())["alpha"]
        ok = abs(change[worst]) <= LOSS_TOL and abs(fb - fa) <= ALPHA_TOL
        rows.append(
            {
                **row,
                "loss_change": float(change[worst]),
                "depth_moving": int(worst),
                "alpha_from": fa,
                "alpha_last": fb,
                "alpha_change": fb - fa,
                "converged": bool(ok),
            }
        )
    return _unkeyed(pd.DataFrame(rows, columns=cols))


def convergence_verdict(test: dict | None, alpha: float) -> tuple[str, str]:
    """Whether one (kind, variant) run may be compared with the paper: ("converged", the test's numbers) or
    ("still moving", why). ``test``: its row of :func:`convergence_test` (None: no test curves). A run that
    fails the test is a lower bound of a moving number; the comparison itself is
    ``depth_toy.compare`` (the one verdict procedure, ``depthwidth.verdicts``)."""
    pct = 100 * WINDOW
    if test is None or not np.isfinite(test.get("loss_change", np.nan)):
        return (
            "still moving",
            "no test curve with two evaluations: nothing to test convergence with",
        )
    moved = (
        f"from step {test['step_from']} to {test['steps']} (the last {pct:.0f} % of training or more) the test loss of "
        f"depth {test['depth_moving']} fell by {100 * test['loss_change']:+.1f} % of its last value "
        f"(limit ±{100 * LOSS_TOL:g} %) and α_ℓ changed by {test['alpha_change']:+.2f} (limit ±{ALPHA_TOL:g})"
    )
    if not test["converged"]:
        return "still moving", moved
    if not np.isfinite(alpha):
        return "still moving", "converged, but α_ℓ could not be fitted"
    return "converged", moved
