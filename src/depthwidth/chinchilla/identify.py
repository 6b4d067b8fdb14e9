"""Is the decomposed law identified by a sweep? Exponent correlations, profile-likelihood intervals and
a flag for tokens tied to model size.

The model is L = c_m/m^α_m + c_ℓ/ℓ^α_ℓ + c_D/D^α_D + L0 (L0 optionally one per group), fitted by the
stage's fitting core (``lawfit``) as the main fit is: least squares on log L − log L̂, the same
parameters, bounds, residual and Jacobian; what differs is a ``lawfit.LawFit`` option (``sweep_fit``:
offsets per group, fixed parameters, starts in the sweep's own units).

Units: m = width/width_unit, ℓ = depth/depth_unit, D = tokens/tokens_unit. By default each unit is the
geometric mean of that column over the sweep, which keeps any sweep well conditioned. Exponents, L0 and
the objective do not depend on the units; only the coefficients c do.

χ² for the profile is the objective scaled by the residual variance: Δχ²(α) = (SSR(α) − SSR_min)/s² with
s² = SSR_min/(n − p), p the number of free parameters of the full fit. The interval at Δχ² = 1 (3.84) is
the approximate 68 % (95 %) interval; an end where the profile does not rise that far within the grid is
reported as open (``None``), which is what a flat direction looks like.
"""

from __future__ import annotations

import logging
from itertools import combinations

import numpy as np
import pandas as pd

from depthwidth.laws import lawfit
from depthwidth.chinchilla.compare import compare_laws
from depthwidth.laws.law import ALPHA_BOUNDS, EXPONENTS, FitData
from depthwidth.laws.lawfit import LawFit
from depthwidth.laws.loglog import linear_r2
from depthwidth.laws.profile import CHI2_LEVELS, profile, profile_interval, refine_grid
from depthwidth.optimal_shape import shape_exponents
from depthwidth.integrity import read_table, write_json, write_table

log = logging.getLogger("depthwidth.chinchilla.identify")

# Above this |corr(log D, log N)| a sweep's tokens count as tied to model size.
TIED_THRESHOLD = 0.9
# Default profile grid of an exponent (refined around the best fit by ``refine_grid``).
DEFAULT_GRID = np.round(np.geomspace(0.05, 4.0, 25), 4)


def to_data(df: pd.DataFrame, units: dict | None = None) -> FitData:
    """Sweep table (columns width, depth, tokens, loss, optional group) → ``FitData`` with one group index
    per row. ``units`` maps width/depth/tokens to the value that is 1 in fit units (default: the column's
    geometric mean)."""
    units = dict(units or {})
    for col in ("width", "depth", "tokens"):
        if col not in units:
            units[col] = float(np.exp(np.log(df[col].to_numpy(float)).mean()))
    N = size(df)
    units.setdefault("params", float(np.exp(np.log(N).mean())))
    groups = sorted(df["group"].astype(str).unique()) if "group" in df.columns else ["all"]
    g = (
        pd.Categorical(df["group"].astype(str), categories=groups).codes
        if "group" in df.columns
        else np.zeros(len(df), int)
    )
    return FitData(
        df["width"].to_numpy(float) / units["width"],
        df["depth"].to_numpy(float) / units["depth"],
        df["tokens"].to_numpy(float) / units["tokens"],
        df["loss"].to_numpy(float),
        np.asarray(g, int),
        groups,
        units,
        N / units["params"],
    )


def size(df: pd.DataFrame) -> np.ndarray:
    """Parameter count of each run: ``params`` where every row has it, else 12·depth·width²
    (non-embedding)."""
    if "params" in df.columns and df["params"].notna().all():
        return df["params"].to_numpy(float)
    return 12.0 * df["depth"].to_numpy(float) * df["width"].to_numpy(float) ** 2


def sweep_fit(
    group_offsets: bool = False, fixed: dict | None = None, least_squares: dict | None = None
) -> LawFit:
    """How a sweep is fitted: the fitting core's decomposed law, one offset per group or one, ``fixed``
    held, random starts in the sweep's own units (``lawfit.unit_starts``), the objective of
    ``least_squares`` (``lawfit.loss_options``; none: the sum of squares)."""
    return LawFit(
        group_offsets=group_offsets,
        fixed=dict(fixed or {}),
        starts=lawfit.unit_starts,
        least_squares=dict(least_squares or {}),
    )


def fit(
    df: pd.DataFrame,
    fixed: dict | None = None,
    *,
    units: dict | None = None,
    group_offsets: bool = False,
    **kw,
) -> tuple[dict, float, int]:
    """The small interface: (parameter values, SSR = Σ (log L − log L̂)², number of runs) of a sweep table;
    ``kw`` go to ``lawfit.fit`` (n_starts, seed, inits)."""
    d, how = to_data(df, units), sweep_fit(group_offsets, fixed)
    res = lawfit.fit(d, how, **kw)
    return how.values(res, d), float(res.chisqr), len(d)


def depth_partial(d: FitData, how: LawFit, v: dict) -> dict:
    """Partial dependence on depth: per run, L − c_m/m^α_m − c_D/D^α_D − L0 (its group's offset), which
    the law says equals c_ℓ/ℓ^α_ℓ. Returns depth in layers, the residual per run, and the fitted term at
    each run (so the curve can be drawn without the units)."""
    offs = np.array([v[name] for name, _ in how.offsets(d)])
    L0 = offs[d.g] if how.group_offsets else offs[0]
    partial = d.loss - v["c_m"] * d.m ** -v["alpha_m"] - v["c_D"] * d.D ** -v["alpha_D"] - L0
    return {
        "depth": (d.ell * d.units.get("depth", 1.0)).tolist(),
        "partial": partial.tolist(),
        "depth_term": (v["c_l"] * d.ell ** -v["alpha_l"]).tolist(),
        "depth_unit": d.units.get("depth", 1.0),
    }


# ---------------------------------------------------------------- identifiability
def _pairs(names=EXPONENTS) -> list[tuple[str, str]]:
    return list(combinations(names, 2))


def correlation_from_covariance(res) -> dict:
    """corr(α_i, α_j) from lmfit's covariance; None where the covariance is not available."""
    out = {}
    for a, b in _pairs():
        r = None
        if res.covar is not None and a in res.var_names and b in res.var_names:
            i, j = res.var_names.index(a), res.var_names.index(b)
            c = res.covar
            if c[i, i] > 0 and c[j, j] > 0 and np.isfinite(c[i, j]):
                r = float(c[i, j] / np.sqrt(c[i, i] * c[j, j]))
                r = r if abs(r) <= 1.0 + 1e-9 else None  # a covariance that is not positive definite
        out[f"{a},{b}"] = r
    return out


def correlation_from_bootstrap(samples: pd.DataFrame) -> dict:
    """Pearson correlation of the exponents over bootstrap refits."""
    return {
        f"{a},{b}": (float(np.corrcoef(samples[a], samples[b])[0, 1]) if len(samples) > 2 else None)
        for a, b in _pairs()
    }


def tokens_vs_size(df: pd.DataFrame, threshold: float = TIED_THRESHOLD) -> dict:
    """How far the sweep ties tokens to model size. N = ``params`` where every row has it, else
    12·depth·width² (non-embedding). Returns corr(log D, log N), R² of log D on (log width, log depth)
    (1 when tokens are a function of shape), the number of distinct token counts per shape, and
    ``tied`` = |corr| > threshold."""
    has_params = "params" in df.columns and df["params"].notna().all()
    N = size(df)
    logD = np.log(df["tokens"].to_numpy(float))
    r = float(np.corrcoef(logD, np.log(N))[0, 1]) if np.std(logD) > 0 else float("nan")
    shape = [np.ones(len(df)), np.log(df["width"].to_numpy(float)), np.log(df["depth"].to_numpy(float))]
    r2 = linear_r2(logD, shape)
    per_shape = df.groupby(["width", "depth"])["tokens"].nunique()
    return {
        "corr_logD_logN": r,
        "size": "params" if has_params else "12*depth*width^2",
        "r2_logD_on_shape": r2,
        "tokens_per_shape_max": int(per_shape.max()),
        "tied": bool(abs(r) > threshold),
        "threshold": threshold,
    }


def identify(
    df: pd.DataFrame,
    *,
    units: dict | None = None,
    group_offsets: bool = False,
    fixed: dict | None = None,
    n_starts: int = 8,
    seed: int = 0,
    n_bootstrap: int = 100,
    profile_grids: dict | None = None,
    heldout_splits: int = 0,
    heldout_fraction: float = 0.2,
    loss: str = "squared",
    huber_delta: float = 1e-3,
) -> dict:
    """Everything about whether ``df`` identifies the law, JSON-ready: the fit (values, lmfit stderr,
    SSR, n, p, s²), exponent correlations (covariance, bootstrap), profiles and their Δχ² = 1 / 3.84
    intervals for each exponent in ``profile_grids`` (default: α_ℓ on 0.05 … 4), tokens vs size, the
    exponents that ran to a bound (``at_bound``), ``identified`` (per profiled exponent), the partial
    dependence on depth per run (``depth_partial``) and, with ``heldout_splits`` > 0, the held-out check
    of the fitting core (``lawfit.held_out``, as for the main fit; ``heldout``)."""
    fixed = dict(fixed or {})
    d, how = to_data(df, units), sweep_fit(group_offsets, fixed, lawfit.loss_options(loss, huber_delta))
    res = lawfit.fit(d, how, n_starts=n_starts, seed=seed)
    best = how.values(res, d)
    n, p = len(d), int(res.nvarys)
    ssr = float(res.chisqr)
    out = {
        "n": n,
        "p": p,
        "ssr": ssr,
        "s2": ssr / max(n - p, 1),
        "rmse_log": float(np.sqrt(ssr / n)),
        **(
            {"loss": loss, "huber_delta": huber_delta, "objective_huber": float(res.objective)}
            if how.least_squares
            else {}
        ),
        "converged": bool(res.success),
        "group_offsets": group_offsets,
        "groups": d.groups,
        "fixed": fixed,
        "units": d.units,
        "params": {k: {"value": best[k], "stderr": se} for k, se in how.stderrs(res, d).items()},
        "corr_covariance": correlation_from_covariance(res),
        "tokens_vs_size": tokens_vs_size(df),
        "depth_partial": depth_partial(d, how, best),
    }
    if heldout_splits > 0:
        out["heldout"] = lawfit.held_out(d, how, best, heldout_splits, heldout_fraction, seed=seed)
    boot = pd.DataFrame()
    if n_bootstrap > 0 and not fixed:
        boot = lawfit.bootstrap(d, how, best, n_bootstrap, seed=seed, n_starts=1)
        out["corr_bootstrap"] = correlation_from_bootstrap(boot)
        spread = {a: lawfit.bootstrap_spread(boot[a]) for a in EXPONENTS}
        out["bootstrap"] = {
            a: {"std": s["bootstrap_std"], "ci95": s["bootstrap_ci95"]} for a, s in spread.items()
        }
        out["bootstrap"]["resamples"] = len(boot)
    grids = profile_grids if profile_grids is not None else {"alpha_l": DEFAULT_GRID}
    out["at_bound"] = [
        a for a in EXPONENTS if a not in fixed and min(abs(best[a] - b) for b in ALPHA_BOUNDS) < 1e-6
    ]
    out["profiles"] = {}
    for param, grid in grids.items():
        if param in fixed:
            continue
        grid = refine_grid(grid, best[param], out["params"][param]["stderr"])
        prof = profile(d, how, param, grid, best=best, seed=seed)
        obj_min = min(float(res.objective), float(prof["objective"].min()))
        factor, calibration = 1.0, "Δχ² = (SSR − SSR_min)/s², s² = SSR_min/(n − p): Gaussian errors"
        if how.least_squares:
            # Huber: the drop-in-dispersion statistic 2ΔH·mean ψ′/mean ψ² (Schrader & Hettmansperger
            # 1980), χ²₁ under errors independent of the design; written as factor·ΔH/s² for profile_interval
            r = how.residual(res.params, d)
            dlt = how.least_squares["f_scale"]
            m1, m2 = lawfit.mean_psi_prime(r, dlt), float(np.mean(np.clip(r, -dlt, dlt) ** 2))
            factor = 2.0 * m1 / m2 * obj_min / max(n - p, 1)
            calibration = "2(H − H_min)·mean ψ′/mean ψ² (drop in dispersion), χ²₁ for independent errors"
        out["profiles"][param] = {
            "calibration": calibration,
            "rows": prof.to_dict(orient="records"),
            "intervals": {
                lab: profile_interval(prof, obj_min, n, p, lev, "objective", factor)
                for lab, lev in CHI2_LEVELS.items()
            },
        }
    out["identified"] = identified(out)
    out["laws"] = compare_laws(
        d,
        how,
        res,
        boot,
        out.get("heldout"),
        n_starts=n_starts,
        seed=seed,
        n_bootstrap=n_bootstrap,
        heldout_splits=heldout_splits,
        heldout_fraction=heldout_fraction,
    )
    return out


def identified(summary: dict, level: str = "95%") -> dict:
    """Per profiled exponent: True when its best value is inside the bounds and its profile interval at
    ``level`` is closed on both sides within the grid (a flat direction or a runaway to a bound is not)."""
    out = {}
    for a, prof in summary["profiles"].items():
        iv = prof["intervals"][level]
        out[a] = bool(a not in summary["at_bound"] and iv["closed_lo"] and iv["closed_hi"])
    return out


# ---------------------------------------------------------------- a sweep's summary in words
def interval_text(s: dict, a: str, level: str) -> str:
    """An exponent's profile interval at ``level`` of a sweep summary as text ("lo – hi", an open end as
    "open (< grid end)"), "–" where it is not profiled."""
    prof = s["profiles"].get(a)
    if prof is None:
        return "–"
    iv = prof["intervals"][level]
    lo = f"{iv['lo']:.3g}" if iv["closed_lo"] else f"open (< {iv['grid'][0]:.3g})"
    hi = f"{iv['hi']:.3g}" if iv["closed_hi"] else f"open (> {iv['grid'][1]:.3g})"
    return f"{lo} – {hi}"


def sweep_shape(s: dict) -> tuple[dict | None, str]:
    """(shape exponents, a sentence) of a sweep's loss-optimal shape at fixed N; None where α_m or α_ℓ is
    not identified (its 95 % profile interval open, not profiled, fixed or at a bound)."""
    ident = s.get("identified", {})
    missing = [a for a in ("alpha_m", "alpha_l") if not ident.get(a, False)]
    if missing:

        def reason(a):
            return (
                "fixed"
                if a in s["fixed"]
                else "at its bound"
                if a in s["at_bound"]
                else "not profiled"
                if a not in s["profiles"]
                else "95 % profile interval open"
            )

        why = ", ".join(f"{a} {reason(a)}" for a in missing)
        return None, f"{s['sweep']}: loss-optimal shape not identified ({why})."
    sh = shape_exponents(s["params"]["alpha_m"]["value"], s["params"]["alpha_l"]["value"])
    return sh, (
        f"{s['sweep']}: loss-optimal shape m* ∝ N^{sh['width_exponent']:.3f}, "
        f"ℓ* ∝ N^{sh['depth_exponent']:.3f} (width+depth loss ∝ N^−{sh['N_exponent']:.3f})."
    )


def chinchilla_sweep_identify(runs_csv, cfg: dict, json_out, profile_out) -> dict:
    """Rule chinchilla_sweep_identify: ``identify`` on a sweep's runs.csv with the sweep's settings
    (``cfg``: group_offsets, fixed, bootstrap, profile, profile_points, n_starts, seed, heldout_splits,
    heldout_fraction). Writes the JSON
    summary (with the sweep's name and n_exponents) and the profile rows as a CSV (column ``param``)."""
    df = read_table(
        runs_csv,
        "chinchilla_sweep_points",
        ("width", "depth", "tokens", "loss", "group"),
        dtype={"group": str},
    )
    grid = np.round(np.geomspace(0.05, 4.0, cfg["profile_points"]), 4)
    out = identify(
        df,
        group_offsets=cfg["group_offsets"],
        fixed=cfg["fixed"],
        n_starts=cfg["n_starts"],
        seed=cfg["seed"],
        n_bootstrap=cfg["bootstrap"],
        profile_grids={a: grid for a in cfg["profile"]},
        heldout_splits=cfg["heldout_splits"],
        heldout_fraction=cfg["heldout_fraction"],
        loss=cfg["loss"],
        huber_delta=cfg["huber_delta"],
    )
    out = {"sweep": cfg["name"], "n_exponents": cfg["n_exponents"], **out}
    rows = [dict(param=a, **r) for a, prof in out["profiles"].items() for r in prof["rows"]]
    cols = ["param", "value", "ssr", *EXPONENTS, "objective"]
    write_table(pd.DataFrame(rows, columns=cols), profile_out)
    write_json(json_out, out)  # sealed: rule chinchilla_section checks it
    log.info("sweep %s: %s", cfg["name"], {a: round(out["params"][a]["value"], 4) for a in EXPONENTS})
    return out
