"""Chinchilla points and the decomposed scaling law L = c_m/m^α_m + c_ℓ/ℓ^α_ℓ + c_D/D^α_D + L0.

Units follow Liu et al. (2026): m = d_model · width_scale, ℓ = n_layers · depth_scale (100 by default),
D = tokens · tokens_scale (1e-6 by default). The fit minimises the squared log residual
log L − log L̂ with lmfit (trust-region least squares), from several starts, to convergence.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import lmfit
import numpy as np
import pandas as pd
from scipy.optimize import brentq

from depthwidth.logs import Progress

log = logging.getLogger("depthwidth.chinchilla")

PARAMS = ("c_m", "alpha_m", "c_l", "alpha_l", "c_D", "alpha_D", "L0")
# Liu et al.'s starting point (their Adam fit starts here).
PAPER_INIT = {"c_m": 200.0, "alpha_m": 1.0, "c_l": 200.0, "alpha_l": 1.0, "c_D": 10.0, "alpha_D": 0.33, "L0": 1.69}
# Liu et al. (arXiv 2602.05970) report α_ℓ = 1.2 ± 0.3; their other values are in their notebook only.
PAPER_VALUES = {"alpha_l": (1.2, 0.3)}


# ---------------------------------------------------------------- reconstruction
def reconstruct_points(points: pd.DataFrame, table: pd.DataFrame) -> tuple[pd.DataFrame, float]:
    """Map each Fig. 4 point to the Table A9 architecture nearest in parameter count.

    points: columns ``Model Size`` (N, parameters), ``Training FLOP`` (C), ``loss`` (nats/token).
    table: columns ``params_millions, d_model, n_layers, ...``.
    Returns (points with ``params, flops, tokens, loss, d_model, n_layers, arch_params,
    params_rel_mismatch``; the worst relative mismatch |N − N_arch| / N).
    """
    for col in ("Model Size", "Training FLOP", "loss"):
        if col not in points.columns:
            raise ValueError(f"Chinchilla points file lacks column '{col}' (has {list(points.columns)})")
    for col in ("params_millions", "d_model", "n_layers"):
        if col not in table.columns:
            raise ValueError(f"Table A9 file lacks column '{col}' (has {list(table.columns)})")
    n = points["Model Size"].to_numpy(float)
    arch_params = table["params_millions"].to_numpy(float) * 1e6
    idx = np.abs(np.log(n[:, None]) - np.log(arch_params[None, :])).argmin(axis=1)
    out = pd.DataFrame({
        "params": n,
        "flops": points["Training FLOP"].to_numpy(float),
        "tokens": points["Training FLOP"].to_numpy(float) / (6.0 * n),  # C = 6 N D
        "loss": points["loss"].to_numpy(float),
        "d_model": table["d_model"].to_numpy(int)[idx],
        "n_layers": table["n_layers"].to_numpy(int)[idx],
        "arch_params": arch_params[idx],
    })
    out["params_rel_mismatch"] = np.abs(out["params"] - out["arch_params"]) / out["params"]
    return out, float(out["params_rel_mismatch"].max())


# ---------------------------------------------------------------- the law and its fit
def decomposed_law(m, ell, D, c_m, alpha_m, c_l, alpha_l, c_D, alpha_D, L0):
    """Loss (nats/token) of the decomposed law; m, ell, D already in fit units."""
    return c_m * m ** (-alpha_m) + c_l * ell ** (-alpha_l) + c_D * D ** (-alpha_D) + L0


@dataclass
class FitData:
    """Arrays in fit units: m (width), ell (depth), D (tokens), loss (nats/token), all shape (n,)."""

    m: np.ndarray
    ell: np.ndarray
    D: np.ndarray
    loss: np.ndarray

    def take(self, idx) -> "FitData":
        return FitData(self.m[idx], self.ell[idx], self.D[idx], self.loss[idx])

    def __len__(self) -> int:
        return len(self.loss)


def select_points(points: pd.DataFrame, drop_highest: int, width_scale: float, depth_scale: float,
                  tokens_scale: float, depth_offset: float = 0.0) -> FitData:
    """Drop the ``drop_highest`` highest-loss points (as Liu et al.: keep loss < the k-th highest) and
    convert to fit units. ``depth_offset`` = −2 gives the variant without embedding and head layers."""
    loss = points["loss"].to_numpy(float)
    keep = np.ones(len(loss), bool)
    if drop_highest > 0:
        if drop_highest >= len(loss):
            raise ValueError(f"chinchilla.fit.drop_highest_loss={drop_highest} leaves no points (have {len(loss)})")
        keep = loss < np.sort(loss)[-drop_highest]
    layers = points["n_layers"].to_numpy(float)[keep] + depth_offset
    if (layers <= 0).any():
        raise ValueError(f"depth offset {depth_offset} makes some depths non-positive")
    return FitData(
        m=points["d_model"].to_numpy(float)[keep] * width_scale,
        ell=layers * depth_scale,
        D=points["tokens"].to_numpy(float)[keep] * tokens_scale,
        loss=loss[keep],
    )


def _make_params(init: dict, loss_min: float) -> lmfit.Parameters:
    # Coefficients are fitted as logs (they span orders of magnitude); lmfit carries their
    # uncertainty through to c = exp(log c).
    p = lmfit.Parameters()
    for name in ("c_m", "c_l", "c_D"):
        p.add(f"log_{name}", value=np.log(init[name]), min=-20, max=30)
        p.add(name, expr=f"exp(log_{name})")
    for name in ("alpha_m", "alpha_l", "alpha_D"):
        p.add(name, value=init[name], min=1e-3, max=10.0)
    p.add("L0", value=min(init["L0"], 0.99 * loss_min), min=0.0, max=loss_min)
    return p


def _residual(p, d: FitData):
    v = p.valuesdict()
    pred = decomposed_law(d.m, d.ell, d.D, *(v[k] for k in PARAMS))
    return np.log(d.loss) - np.log(pred)


def _starts(n_starts: int, rng: np.random.Generator) -> list[dict]:
    starts = [dict(PAPER_INIT)]
    for _ in range(max(n_starts - 1, 0)):
        s = dict(PAPER_INIT)
        for k in ("alpha_m", "alpha_l", "alpha_D"):
            s[k] = float(np.exp(rng.uniform(np.log(0.1), np.log(3.0))))
        for k in ("c_m", "c_l", "c_D"):
            s[k] = float(np.exp(rng.uniform(np.log(1.0), np.log(1e4))))
        s["L0"] = float(rng.uniform(0.5, 2.0))
        starts.append(s)
    return starts


def fit_law(d: FitData, n_starts: int = 8, seed: int = 0, inits: list[dict] | None = None,
            max_nfev: int = 20000) -> lmfit.minimizer.MinimizerResult:
    """Best least-squares fit of log L over several starts. The result has ``success`` (converged),
    ``message``, ``params`` (with stderr from the covariance) and ``chisqr`` (sum of squared log residuals)."""
    rng = np.random.default_rng(seed)
    best = None
    for init in (inits or []) + _starts(n_starts, rng):
        params = _make_params(init, float(d.loss.min()))
        try:
            res = lmfit.minimize(_residual, params, args=(d,), method="least_squares",
                                 max_nfev=max_nfev, ftol=1e-12, xtol=1e-12, gtol=1e-12)
        except (ValueError, FloatingPointError):
            continue
        if not np.isfinite(res.chisqr):
            continue
        if best is None or res.chisqr < best.chisqr - 1e-14:
            best = res
    if best is None:
        raise RuntimeError("every start of the decomposed-law fit failed")
    return best


def fit_adam(d: FitData, steps: int = 50_000) -> dict:
    """The paper's own procedure: Adam on the mean squared log residual from ``PAPER_INIT``, stopped
    after ``steps`` steps (learning rates 5e-3 for log-coefficients and L0, 5e-4 for exponents, as in
    Liu et al.'s bootstrap.py). Used to show how far a stopped optimiser is from the converged fit.
    Plain NumPy with the analytic gradient: the same updates as torch.optim.Adam, ~50x faster here."""
    logs = np.log(np.stack([d.m, d.ell, d.D]))  # (3, n)
    y = np.log(d.loss)
    # theta = [log c_m, log c_l, log c_D, alpha_m, alpha_l, alpha_D, L0]
    theta = np.array([np.log(PAPER_INIT["c_m"]), np.log(PAPER_INIT["c_l"]), np.log(PAPER_INIT["c_D"]),
                      PAPER_INIT["alpha_m"], PAPER_INIT["alpha_l"], PAPER_INIT["alpha_D"], PAPER_INIT["L0"]])
    lr = np.array([5e-3, 5e-3, 5e-3, 5e-4, 5e-4, 5e-4, 5e-3])
    b1, b2, eps = 0.9, 0.999, 1e-8
    mom, vel = np.zeros(7), np.zeros(7)
    n = len(y)
    for t in range(1, steps + 1):
        terms = np.exp(theta[:3, None] - theta[3:6, None] * logs)  # (3, n)
        pred = terms.sum(0) + theta[6]
        g = -2.0 * (y - np.log(pred)) / (n * pred)  # d objective / d pred
        grad = np.concatenate([terms @ g, -(terms * logs) @ g, [g.sum()]])
        mom = b1 * mom + (1 - b1) * grad
        vel = b2 * vel + (1 - b2) * grad**2
        theta -= lr * (mom / (1 - b1**t)) / (np.sqrt(vel / (1 - b2**t)) + eps)
    v = {"c_m": np.exp(theta[0]), "alpha_m": theta[3], "c_l": np.exp(theta[1]), "alpha_l": theta[4],
         "c_D": np.exp(theta[2]), "alpha_D": theta[5], "L0": theta[6]}
    v = {k: float(x) for k, x in v.items()}
    pred = decomposed_law(d.m, d.ell, d.D, *(v[k] for k in PARAMS))
    return {"params": {k: {"value": v[k], "stderr": None} for k in PARAMS}, "n_points": len(d),
            "objective_sum_sq_log_residual": float(np.sum((np.log(d.loss) - np.log(pred)) ** 2)),
            "steps": steps}


def values(res) -> dict:
    return {k: float(res.params[k].value) for k in PARAMS}


def stderrs(res) -> dict:
    return {k: (float(res.params[k].stderr) if res.params[k].stderr is not None else None) for k in PARAMS}


def bootstrap(d: FitData, best: dict, n_resamples: int, seed: int = 0, n_starts: int = 2) -> pd.DataFrame:
    """Refit on ``n_resamples`` resamples (with replacement); each refit starts from the full-data fit."""
    rng = np.random.default_rng(seed)
    rows = []
    prog = Progress(n_resamples, "bootstrap fits")
    for b in range(n_resamples):
        idx = rng.integers(0, len(d), len(d))
        res = fit_law(d.take(idx), n_starts=n_starts, seed=seed + 1 + b, inits=[best])
        rows.append({**values(res), "converged": bool(res.success)})
        prog.update()
    return pd.DataFrame(rows)


def held_out(d: FitData, best: dict, n_splits: int, test_fraction: float = 0.2, seed: int = 0) -> dict:
    """Repeated random splits: fit on 1 − test_fraction, error of log L on the held-out part."""
    rng = np.random.default_rng(seed)
    n_test = max(1, int(round(test_fraction * len(d))))
    rmse_test, rmse_train, mape_test = [], [], []
    for s in range(n_splits):
        perm = rng.permutation(len(d))
        te, tr = perm[:n_test], perm[n_test:]
        res = fit_law(d.take(tr), n_starts=2, seed=seed + 1000 + s, inits=[best])
        v = values(res)
        dt = d.take(te)
        pred = decomposed_law(dt.m, dt.ell, dt.D, *(v[k] for k in PARAMS))
        rmse_test.append(float(np.sqrt(np.mean((np.log(dt.loss) - np.log(pred)) ** 2))))
        mape_test.append(float(np.mean(np.abs(pred - dt.loss) / dt.loss)))
        rmse_train.append(float(np.sqrt(np.mean(res.residual ** 2))))
    return {
        "n_splits": n_splits, "test_fraction": test_fraction,
        "rmse_log_test_mean": float(np.mean(rmse_test)), "rmse_log_test_std": float(np.std(rmse_test)),
        "rmse_log_train_mean": float(np.mean(rmse_train)),
        "mean_abs_rel_error_test": float(np.mean(mape_test)),
    }


# ---------------------------------------------------------------- what the law implies
def shape_exponents(alpha_m: float, alpha_l: float) -> dict:
    """At fixed N ∝ ℓ m², the optimum balances α_m c_m m^-α_m = 2 α_ℓ c_ℓ ℓ^-α_ℓ, so
    m* ∝ N^a, ℓ* ∝ N^b with a = α_ℓ/(α_m + 2α_ℓ), b = α_m/(α_m + 2α_ℓ), and the width+depth part of
    the loss falls as N^-β with β = α_m α_ℓ/(α_m + 2α_ℓ). α_m = α_ℓ = 1 gives a = b = β = 1/3 (m ∝ ℓ)."""
    den = alpha_m + 2 * alpha_l
    return {"width_exponent": alpha_l / den, "depth_exponent": alpha_m / den,
            "N_exponent": alpha_m * alpha_l / den, "ratio_exponent": (alpha_l - alpha_m) / den}


def optimal_shape(v: dict, n_params: float, width_scale: float, depth_scale: float) -> dict:
    """Loss-optimal d_model and n_layers at ``n_params`` non-embedding parameters (N = 12 n_layers d_model²)."""
    def gap(log_dm):
        dm = np.exp(log_dm)
        nl = n_params / (12 * dm**2)
        m, ell = dm * width_scale, nl * depth_scale
        return v["alpha_m"] * v["c_m"] * m ** (-v["alpha_m"]) - 2 * v["alpha_l"] * v["c_l"] * ell ** (-v["alpha_l"])
    lo, hi = np.log(1.0), np.log(np.sqrt(n_params / 12 / 1e-3))
    try:
        log_dm = brentq(gap, lo, hi)
    except ValueError:
        return {"n_params": n_params, "d_model": np.nan, "n_layers": np.nan, "width_to_depth": np.nan}
    dm = float(np.exp(log_dm))
    nl = float(n_params / (12 * dm**2))
    return {"n_params": n_params, "d_model": dm, "n_layers": nl, "width_to_depth": dm / nl}


def _fit_summary(res, d: FitData) -> dict:
    v, se = values(res), stderrs(res)
    return {
        "params": {k: {"value": v[k], "stderr": se[k]} for k in PARAMS},
        "n_points": len(d),
        "objective_sum_sq_log_residual": float(res.chisqr),
        "rmse_log": float(np.sqrt(res.chisqr / len(d))),
        "converged": bool(res.success),
        "message": str(res.message),
        "nfev": int(res.nfev),
    }


def run_fit(points: pd.DataFrame, cfg: dict) -> tuple[dict, pd.DataFrame]:
    """The whole fit stage: main fit (stderr from the covariance), bootstrap intervals, held-out check,
    variants. ``cfg`` is the ``chinchilla.fit`` config section. Returns (fit.json content, bootstrap rows)."""
    scales = dict(width_scale=cfg["width_scale"], depth_scale=cfg["depth_scale"], tokens_scale=cfg["tokens_scale"])
    seed, n_starts = cfg.get("seed", 0), cfg.get("n_starts", 8)
    d = select_points(points, cfg["drop_highest_loss"], **scales)
    log.info("fitting the decomposed law to %d points (%d starts)", len(d), n_starts)
    res = fit_law(d, n_starts=n_starts, seed=seed)
    if not res.success:
        log.warning("main fit did not report convergence: %s", res.message)
    out = _fit_summary(res, d)
    out["units"] = {"m": f"d_model * {cfg['width_scale']}", "l": f"n_layers * {cfg['depth_scale']}",
                    "D": f"tokens * {cfg['tokens_scale']}"}
    out["drop_highest_loss"] = cfg["drop_highest_loss"]
    best = values(res)
    log.info("main fit: %s", {k: round(x, 4) for k, x in best.items()})

    n_boot = cfg.get("bootstrap_resamples", 200)
    boot = bootstrap(d, best, n_boot, seed=seed) if n_boot > 0 else pd.DataFrame(columns=[*PARAMS, "converged"])
    for k in PARAMS:
        col = boot[k].to_numpy(float) if len(boot) else np.array([])
        out["params"][k]["bootstrap_ci95"] = (
            [float(np.percentile(col, 2.5)), float(np.percentile(col, 97.5))] if len(col) else None)
        out["params"][k]["bootstrap_std"] = float(col.std(ddof=1)) if len(col) > 1 else None
    out["bootstrap"] = {"resamples": int(n_boot), "converged": int(boot["converged"].sum()) if len(boot) else 0}
    if len(boot):
        sh = pd.DataFrame([shape_exponents(a, b) for a, b in zip(boot["alpha_m"], boot["alpha_l"])])
        out["shape_exponents"] = {
            k: {"value": shape_exponents(best["alpha_m"], best["alpha_l"])[k],
                "bootstrap_ci95": [float(sh[k].quantile(0.025)), float(sh[k].quantile(0.975))],
                "bootstrap_std": float(sh[k].std(ddof=1)) if len(sh) > 1 else None}
            for k in sh.columns}
    else:
        out["shape_exponents"] = {k: {"value": v, "bootstrap_ci95": None, "bootstrap_std": None}
                                  for k, v in shape_exponents(best["alpha_m"], best["alpha_l"]).items()}

    n_splits = cfg.get("heldout_splits", 20)
    if n_splits > 0:
        out["heldout"] = held_out(d, best, n_splits, cfg.get("heldout_fraction", 0.2), seed=seed)
        log.info("held-out: rmse(log L) test %.4f ± %.4f, train %.4f", out["heldout"]["rmse_log_test_mean"],
                 out["heldout"]["rmse_log_test_std"], out["heldout"]["rmse_log_train_mean"])

    out["variants"] = {}
    for variant in cfg.get("variants", []):
        if variant == "layers_minus_2":
            dv = select_points(points, cfg["drop_highest_loss"], depth_offset=-2.0, **scales)
            desc = "l = n_layers - 2 (embedding and head layers not counted)"
        elif variant == "keep_all_points":
            dv = select_points(points, 0, **scales)
            desc = "all points kept (no high-loss cut)"
        elif variant == "paper_adam":
            steps = cfg.get("adam_steps", 50_000)
            out["variants"][variant] = {
                "description": f"the paper's procedure: Adam from its starting point, stopped after {steps} steps",
                **fit_adam(d, steps)}
            log.info("variant paper_adam: alpha_l = %.3f", out["variants"][variant]["params"]["alpha_l"]["value"])
            continue
        else:
            raise ValueError(f"unknown chinchilla.fit.variants entry '{variant}'")
        rv = fit_law(dv, n_starts=n_starts, seed=seed, inits=[best])
        out["variants"][variant] = {"description": desc, **_fit_summary(rv, dv)}
        log.info("variant %s: alpha_l = %.3f", variant, rv.params["alpha_l"].value)
    return out, boot
