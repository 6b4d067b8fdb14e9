"""How robust the decomposed law's exponents are across fitting choices: one table of each exponent with
its 95 % interval under least squares with the paper's cut, Huber on all points, both losses at each k of
the dropped-points scan, the paper's Adam procedure, and the bootstrap and profile intervals; and the
sentence that says under which of them α_ℓ ≈ 1 holds. Covariance intervals are lmfit's for least squares
and Huber's M-estimator covariance for the Huber fits (``lawfit.huber_stderrs``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

EXPONENTS = ("alpha_l", "alpha_m", "alpha_D")
Z95 = 1.959964
COLUMNS = [
    "exponent",
    "method",
    "loss",
    "drop_highest",
    "n_points",
    "interval",
    "value",
    "lo",
    "hi",
    "contains_one",
]


def _row(a, method, loss, k, n, interval, value, lo, hi) -> dict:
    lo = float(lo) if lo is not None and np.isfinite(lo) else np.nan
    hi = float(hi) if hi is not None and np.isfinite(hi) else np.nan
    inside = bool(lo <= 1.0 <= hi) if np.isfinite(lo) and np.isfinite(hi) else None
    return dict(zip(COLUMNS, [a, method, loss, int(k), int(n), interval, float(value), lo, hi, inside]))


def _se_row(a, method, loss, k, n, interval, value, se) -> dict:
    ok = se is not None and np.isfinite(se)
    return _row(
        a,
        method,
        loss,
        k,
        n,
        interval,
        value,
        value - Z95 * se if ok else None,
        value + Z95 * se if ok else None,
    )


def _fit_rows(a: str, fit: dict, method: str, loss: str) -> list[dict]:
    p, k, n = fit["params"][a], fit["drop_highest_loss"], fit["n_points"]
    rows = [_se_row(a, method, loss, k, n, "covariance ± 1.96 SE", p["value"], p["stderr"])]
    if p.get("bootstrap_ci95"):
        rows.append(_row(a, method, loss, k, n, "bootstrap 95 %", p["value"], *p["bootstrap_ci95"]))
    return rows


def robustness_table(
    fit: dict, fit_huber: dict, scan: pd.DataFrame, scan_huber: pd.DataFrame, profile_sweep: dict | None
) -> pd.DataFrame:
    """One row per (exponent, method, interval): ``value`` and its 95 % interval [``lo``, ``hi``] (NaN
    where open or not available) and ``contains_one``. ``profile_sweep``: the identify.json of the sweep
    on the main fit's points (its profile intervals), or None."""
    rows = []
    for a in EXPONENTS:
        rows += _fit_rows(a, fit, "least squares, the paper's cut", "squared")
        if profile_sweep and a in profile_sweep["profiles"]:
            iv = profile_sweep["profiles"][a]["intervals"]["95%"]
            rows.append(
                _row(
                    a,
                    "least squares, the paper's cut",
                    "squared",
                    fit["drop_highest_loss"],
                    profile_sweep["n"],
                    "profile Δχ² = 3.84",
                    profile_sweep["params"][a]["value"],
                    iv["lo"],
                    iv["hi"],
                )
            )
        rows += _fit_rows(a, fit_huber, "Huber", "huber")
        adam = fit["variants"].get("paper_adam")
        if adam:
            p = adam["params"][a]
            rows.append(
                _se_row(
                    a,
                    "the paper's Adam procedure",
                    "squared",
                    fit["drop_highest_loss"],
                    fit["n_points"],
                    "the paper's formula ± 1.96 SE",
                    p["value"],
                    p.get("stderr_paper"),
                )
            )
        for table, method, loss in (
            (scan, "least squares, scan", "squared"),
            (scan_huber, "Huber, scan", "huber"),
        ):
            for _, r in table.iterrows():
                rows.append(
                    _se_row(
                        a,
                        method,
                        loss,
                        r["drop_highest"],
                        r["n_points"],
                        "covariance ± 1.96 SE",
                        r[a],
                        r[f"{a}_stderr"],
                    )
                )
    return pd.DataFrame(rows, columns=COLUMNS)


def label(r) -> str:
    """A row's short name: method, k and interval."""
    return f"{r['method']}, k = {r['drop_highest']} ({r['interval']})"


def verdict(table: pd.DataFrame, exponent: str = "alpha_l", headline_se: float | None = None) -> str:
    """The sentence: under which rows 1 lies inside the 95 % interval and under which not (α_ℓ and α_m),
    and how far the estimate moves (range of the values, in units of ``headline_se`` where given)."""
    t = table[table["exponent"] == exponent]
    name = {"alpha_l": "α_ℓ", "alpha_m": "α_m", "alpha_D": "α_D"}[exponent]
    values = t.drop_duplicates(["method", "drop_highest", "loss"])
    lo, hi = values.loc[values["value"].idxmin()], values.loc[values["value"].idxmax()]
    spread = hi["value"] - lo["value"]
    in_se = f" ({spread / headline_se:.1f} headline standard errors)" if headline_se else ""
    moves = (
        f"The estimate of {name} moves from {lo['value']:.3f} ({lo['method']}, k = {lo['drop_highest']}) to "
        f"{hi['value']:.3f} ({hi['method']}, k = {hi['drop_highest']}), a spread of {spread:.3f}{in_se}."
    )
    if exponent == "alpha_D":
        return moves
    holds = t[t["contains_one"] == True]  # noqa: E712 (None: an open interval)
    fails = t[t["contains_one"] == False]  # noqa: E712
    fail_list = "; ".join(label(r) for _, r in fails.iterrows()) or "none"
    return (
        f"{name} ≈ 1 (1 inside the 95 % interval) holds under {len(holds)} of {len(holds) + len(fails)} "
        f"closed intervals and fails under {len(fails)}: {fail_list}. {moves}"
    )
