"""The width law L = A / m^α + B_g refitted on Fig. 8b's points (losses = read model part + the notebook's
offsets B_g).

- ``refits``: the fitting layer's group-offset law (``depthwidth.laws.group_offsets``, lmfit least squares
  with standard errors): the converged fit with a bootstrap over models, per-family fits and
  leave-one-family-out.
- ``notebook_fit``: the paper's procedure as its notebook ran it (Adam, 20,000 steps, the notebook's
  learning rates and start: A = 500, B = 1, α = 1), on our points; like the Chinchilla stage's ``adam`` module it repeats
  a published procedure step by step and stays beside the stage rather than in the fitting layer.
- ``stationarity``: per group, the mean of (A/m^α − model part) at the printed α, A; a converged fit has
  every group's mean at 0, so this checks the reading against the printed fit.
- ``unplottable``: the point a log axis cannot draw. At the notebook's optimum every group's residuals sum
  to 0 (the offset B_g is free), so a point's value is implied by the others of its group; a point whose
  implied model part L − B_g is ≤ 0 has no place on the figure's log axis, and the reading's value for it
  is only the drawing model's start. It is left out of the fits (``plotted`` False) and its implied value
  kept for the sensitivity fit.
- ``slope_error_parts``: the notebook's printed slope error recomputed term by term, with the share of its
  sum of squares that comes from a NaN log (a non-positive L − B_g) set to 0.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from depthwidth.laws.group_offsets import fit_group_offsets


def losses(points: pd.DataFrame, offsets: dict) -> pd.DataFrame:
    """Fig. 8b's points with their group and loss L = model part + B_g (the notebook's printed offsets)."""
    out = points.copy()
    out["group"] = out["family"] + " / " + out["dataset"]
    missing = sorted(set(out["group"]) - set(offsets))
    if missing:
        raise ValueError(f"no offset B_g printed for groups {missing}")
    out["loss"] = out["model_part"] + out["group"].map(offsets)
    return out


#: the notebook's start (A = 500, every B_g = 1, α = 1), learning rates and step count
NOTEBOOK_START = {"A": 500.0, "B": 1.0, "alpha": 1.0}
NOTEBOOK_LR = {"A": 1.0, "B": 1e-3, "alpha": 1e-3}
NOTEBOOK_STEPS = 20000
# torch.optim.Adam's defaults, which the notebook keeps
BETAS, EPS = (0.9, 0.999), 1e-8


def notebook_fit(df: pd.DataFrame, groups: list[str], steps: int = NOTEBOOK_STEPS) -> dict:
    """The notebook's fit: mean squared error over all points, full-batch Adam from its start with its
    learning rates, in float32 as its torch parameters are. The gradient is written out (what autograd
    computes for that objective) and the update is torch.optim.Adam's step op for op, in numpy: the
    notebook's steps up to float32 rounding (tests/test_paperfigs.py compares the two after 300 steps) at a
    small fraction of the cost of 20,000 autograd steps."""
    f32 = np.float32
    g = np.array([groups.index(x) for x in df["group"]])
    m = df["m"].to_numpy(f32)
    y = df["loss"].to_numpy(f32)
    log_m = np.log(m)
    n = f32(len(y))
    p = {
        "A": np.array([NOTEBOOK_START["A"]], f32),
        "B": np.full(len(groups), NOTEBOOK_START["B"], f32),
        "alpha": np.array([NOTEBOOK_START["alpha"]], f32),
    }
    mom = {k: np.zeros_like(v) for k, v in p.items()}
    var = {k: np.zeros_like(v) for k, v in p.items()}
    b1, b2 = f32(BETAS[0]), f32(BETAS[1])
    loss = np.nan
    for t in range(1, steps + 1):
        pw = np.power(m, -p["alpha"][0])  # m^-α
        r = p["A"][0] * pw + p["B"][g] - y
        loss = float((r * r).sum() / n)
        two_r = f32(2) * r / n
        grad = {
            "A": np.array([(two_r * pw).sum()], f32),
            "B": np.bincount(g, weights=two_r, minlength=len(groups)).astype(f32),
            "alpha": np.array([-(two_r * p["A"][0] * pw * log_m).sum()], f32),
        }
        c1, c2 = 1 - BETAS[0] ** t, 1 - BETAS[1] ** t
        for k in p:
            mom[k] = b1 * mom[k] + (1 - b1) * grad[k]
            var[k] = b2 * var[k] + (1 - b2) * grad[k] * grad[k]
            denom = np.sqrt(var[k]) / f32(np.sqrt(c2)) + f32(EPS)
            p[k] = (p[k] - f32(NOTEBOOK_LR[k] / c1) * mom[k] / denom).astype(f32)
    return {
        "alpha": float(p["alpha"][0]),
        "A": float(p["A"][0]),
        "final_loss": loss,
        "steps": steps,
        "B": dict(zip(groups, (float(v) for v in p["B"]))),
    }


def stationarity(df: pd.DataFrame, alpha: float, A: float) -> pd.DataFrame:
    r = df["model_part"] - A / df["m"] ** alpha
    return (
        r.groupby(df["group"])
        .agg(["mean", "count"])
        .rename(columns={"mean": "mean_residual", "count": "n"})
        .reset_index()
    )


def unplottable(df: pd.DataFrame, alpha: float, A: float, err_slope: float) -> pd.DataFrame:
    """``df`` (Fig. 8b's points with group, m, model_part) with ``implied_model_part`` (the value that puts
    its group's residual sum at 0, the others held: model_part − Σ_group (model_part − A/m^α)),
    ``plotted`` and ``excluded_why``.

    Candidates: in each group the point with the smallest implied value, where that value is ≤ 0 (a log
    axis cannot draw it). A group whose residuals do not sum to 0 has either such a point or misread
    markers; the notebook's printed slope error (``err_slope``), whose formula counts the log of a
    non-positive L − B_g as 0, tells which: the set of candidates left out is the one whose recomputed
    error (``slope_error_parts``) is nearest the printed one."""
    from itertools import combinations

    out = df.copy()
    resid = out["model_part"] - A / out["m"].astype(float) ** alpha
    out["implied_model_part"] = out["model_part"] - resid.groupby(out["group"]).transform("sum")
    out["plotted"] = True
    out["excluded_why"] = ""
    cand = [
        i
        for i in (g["implied_model_part"].idxmin() for _, g in out.groupby("group"))
        if out.at[i, "implied_model_part"] <= 0
    ]
    best, best_d, errs = (), np.inf, {}
    for k in range(len(cand) + 1):
        for sub in combinations(cand, k):
            trial = out.assign(plotted=~out.index.isin(sub))
            e = slope_error_parts(trial, alpha, A)["err_slope"]
            errs[sub] = e
            if abs(e - err_slope) < best_d:
                best, best_d = sub, abs(e - err_slope)
    for i in best:
        v = float(out.at[i, "implied_model_part"])
        out.at[i, "plotted"] = False
        out.at[i, "excluded_why"] = (
            f"L − B_g = {v:.4f} ≤ 0 at the notebook's fit (implied by its group's other points): a log axis "
            f"cannot draw it; the notebook's printed slope error {err_slope:.4f} is recomputed as {errs[best]:.4f} "
            f"with this point's log counted as 0 (without: {errs[()]:.4f}); the reading's "
            f"{float(out.at[i, 'model_part']):.4f} is the drawing model's start"
        )
    return out


def slope_error_parts(df: pd.DataFrame, alpha: float, A: float, n_params: int = 3) -> dict:
    """The notebook's "Error in slope" recomputed on ``df`` (plotted points at their read value, a left-out
    point at its implied value): sqrt(Σ (log(L − B_g) − log(A/m^α))² / Σ (log m − mean)² / (N − 3)), the
    notebook's NaN log of a non-positive L − B_g counted as 0 (``nan_to_num``); with the share of the sum
    of squares from those NaN terms and the error without them (their points left out of both sums)."""
    v = np.where(df["plotted"], df["model_part"], df["implied_model_part"]).astype(float)
    log_m = np.log(df["m"].to_numpy(float))
    pred = np.log(A) - alpha * log_m
    nan = v <= 0
    term = np.where(nan, (0.0 - pred) ** 2, (np.log(np.where(nan, 1.0, v)) - pred) ** 2)
    x = (log_m - log_m.mean()) ** 2
    n = len(v)
    keep = ~nan
    xk = (log_m[keep] - log_m[keep].mean()) ** 2
    return {
        "err_slope": float(np.sqrt(term.sum() / x.sum() / (n - n_params))),
        "n_points": int(n),
        "n_nan_terms": int(nan.sum()),
        "nan_share": float(term[nan].sum() / term.sum()),
        "err_slope_without_nan": float(np.sqrt(term[keep].sum() / xk.sum() / (keep.sum() - n_params))),
    }


def refits(df: pd.DataFrame, n_boot: int = 200, seed: int = 0) -> pd.DataFrame:
    """One row per fit of L = A/m^α + B_g: all points (with the percentile 95 % interval of α over
    ``n_boot`` resamples of whole models), each family alone, and each family left out."""
    rows = []

    def row(name, sub, n_bootstrap=0):
        f = fit_group_offsets(
            sub["m"], sub["loss"], sub["group"], unit=sub["model"], n_bootstrap=n_bootstrap, seed=seed
        )
        rows.append(
            {
                "subset": name,
                "n_points": len(sub),
                "n_models": sub["model"].nunique(),
                "alpha": f.alpha,
                "alpha_se": np.nan if f.alpha_err is None else f.alpha_err,
                "A": f.A,
                "status": f.status,
            }
        )
        return f

    f = row("all", df, n_bootstrap=n_boot)
    if f.bootstrap is not None and len(f.bootstrap):
        boots = f.bootstrap["alpha"]
        rows[0].update(
            {
                "boot_lo": float(np.percentile(boots, 2.5)),
                "boot_hi": float(np.percentile(boots, 97.5)),
                "n_boot": len(boots),
                "boot_sd": float(np.std(boots, ddof=1)),
            }
        )
    for fam in sorted(df["family"].unique()):
        row(fam, df[df["family"] == fam])
    for fam in sorted(df["family"].unique()):
        row(f"without {fam}", df[df["family"] != fam])
    return pd.DataFrame(rows)
