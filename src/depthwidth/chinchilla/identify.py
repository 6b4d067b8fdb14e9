"""Is the decomposed law identified by a sweep? Exponent correlations, profile-likelihood intervals and
a flag for tokens tied to model size.

The model is L = c_m/m^α_m + c_ℓ/ℓ^α_ℓ + c_D/D^α_D + L0 (L0 optionally one per group), fitted as in the
stage's main fit: least squares on log L − log L̂ with lmfit (trust region), coefficients as logs, from
several starts (``law.decomposed_law``, the same parameter names and exponent bounds as the main fit; the
offset may be one per group).

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
from dataclasses import dataclass, field
from itertools import combinations

import lmfit
import numpy as np
import pandas as pd

from depthwidth.chinchilla.fit import held_out
from depthwidth.chinchilla.law import (
    ALPHA_BOUNDS,
    PARAMS,
    best_of_starts,
    decomposed_law,
    law_values,
    log_residual_jacobian,
)
from depthwidth.integrity import read_table, write_json, write_table

log = logging.getLogger("depthwidth.chinchilla.identify")

EXPONENTS = ("alpha_m", "alpha_l", "alpha_D")
# Above this |corr(log D, log N)| a sweep's tokens count as tied to model size.
TIED_THRESHOLD = 0.9
CHI2_LEVELS = {"68%": 1.0, "95%": 3.84}
# Default profile grid of an exponent (refined around the best fit by ``refine_grid``).
DEFAULT_GRID = np.round(np.geomspace(0.05, 4.0, 25), 4)


@dataclass
class Data:
    """A sweep in fit units: m, ell, D, loss of shape (n,); ``g`` the group index per row (0 … G−1)."""

    m: np.ndarray
    ell: np.ndarray
    D: np.ndarray
    loss: np.ndarray
    g: np.ndarray
    groups: list[str]
    units: dict = field(default_factory=dict)

    def take(self, idx) -> "Data":
        return Data(
            self.m[idx], self.ell[idx], self.D[idx], self.loss[idx], self.g[idx], self.groups, self.units
        )

    def __len__(self) -> int:
        return len(self.loss)


def to_data(df: pd.DataFrame, units: dict | None = None) -> Data:
    """Sweep table (columns width, depth, tokens, loss, optional group) → ``Data``. ``units`` maps
    width/depth/tokens to the value that is 1 in fit units (default: the column's geometric mean)."""
    units = dict(units or {})
    for col in ("width", "depth", "tokens"):
        if col not in units:
            units[col] = float(np.exp(np.log(df[col].to_numpy(float)).mean()))
    groups = sorted(df["group"].astype(str).unique()) if "group" in df.columns else ["all"]
    g = (
        pd.Categorical(df["group"].astype(str), categories=groups).codes
        if "group" in df.columns
        else np.zeros(len(df), int)
    )
    return Data(
        df["width"].to_numpy(float) / units["width"],
        df["depth"].to_numpy(float) / units["depth"],
        df["tokens"].to_numpy(float) / units["tokens"],
        df["loss"].to_numpy(float),
        np.asarray(g, int),
        groups,
        units,
    )


def _offsets(d: Data, group_offsets: bool) -> list[tuple[str, str]]:
    """(model name, lmfit name) of each offset: ("L0", "L0") or ("L0[<group>]", "L0_<index>")."""
    return [(f"L0[{g}]", f"L0_{i}") for i, g in enumerate(d.groups)] if group_offsets else [("L0", "L0")]


def _make_params(d: Data, init: dict, fixed: dict, group_offsets: bool) -> lmfit.Parameters:
    p = lmfit.Parameters()
    for c in ("c_m", "c_l", "c_D"):
        p.add(f"log_{c}", value=float(np.log(init[c])), min=-30, max=30)
        p.add(c, expr=f"exp(log_{c})")
    for a in EXPONENTS:
        p.add(a, value=float(np.clip(init[a], *ALPHA_BOUNDS)), min=ALPHA_BOUNDS[0], max=ALPHA_BOUNDS[1])
    for i, (name, lm) in enumerate(_offsets(d, group_offsets)):
        lmin = float(d.loss[d.g == i].min()) if group_offsets else float(d.loss.min())
        start = init.get(name, init.get("L0", 0.5 * lmin))
        p.add(lm, value=float(np.clip(start, 0.0, 0.99 * lmin)), min=0.0, max=lmin)
    lm_of = dict(_offsets(d, group_offsets))
    for k, v in fixed.items():
        if k in ("c_m", "c_l", "c_D"):
            p[f"log_{k}"].set(value=float(np.log(v)), vary=False)
        elif k in p:
            p[k].set(value=float(v), vary=False)
        elif k in lm_of:
            p[lm_of[k]].set(value=float(v), vary=False)
        else:
            raise KeyError(
                f"cannot fix '{k}': the model's parameters are {list(PARAMS)} and offsets {list(lm_of)}"
            )
    return p


def _predict(v: dict, d: Data, group_offsets: bool) -> np.ndarray:
    offs = np.array([v[lm] for _, lm in _offsets(d, group_offsets)])
    L0 = offs[d.g] if group_offsets else offs[0]
    return decomposed_law(
        d.m, d.ell, d.D, v["c_m"], v["alpha_m"], v["c_l"], v["alpha_l"], v["c_D"], v["alpha_D"], L0
    )


def _residual(p, d: Data, group_offsets: bool):
    pred = _predict(law_values(p), d, group_offsets)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.log(d.loss) - np.log(pred)
    return np.where(np.isfinite(r), r, 1e3)


def _jacobian(p, d: Data, group_offsets: bool):
    """The analytic Jacobian of ``_residual`` (rows it sets to a constant are zero)."""
    pred = _predict(law_values(p), d, group_offsets)
    rows = {lm: (d.g == i) if group_offsets else 1.0 for i, (_, lm) in enumerate(_offsets(d, group_offsets))}
    return log_residual_jacobian(p, d.m, d.ell, d.D, pred, rows)


def _random_starts(d: Data, n: int, rng: np.random.Generator) -> list[dict]:
    """Starts in fit units (variables ~1): coefficients a fraction of the loss, offsets below its minimum."""
    lmin = float(d.loss.min())
    starts = [
        {"c_m": 0.3, "alpha_m": 0.5, "c_l": 0.3, "alpha_l": 1.0, "c_D": 0.3, "alpha_D": 0.3, "L0": 0.6 * lmin}
    ]
    for _ in range(max(n - 1, 0)):
        s = {c: float(np.exp(rng.uniform(np.log(0.01), np.log(3.0)))) for c in ("c_m", "c_l", "c_D")}
        s.update({a: float(np.exp(rng.uniform(np.log(0.1), np.log(3.0)))) for a in EXPONENTS})
        s["L0"] = float(rng.uniform(0.1, 0.95) * lmin)
        starts.append(s)
    return starts


def fit_result(
    df_or_data,
    fixed: dict | None = None,
    *,
    units: dict | None = None,
    group_offsets: bool = False,
    n_starts: int = 8,
    seed: int = 0,
    inits: list[dict] | None = None,
    max_nfev: int = 20000,
) -> tuple[lmfit.minimizer.MinimizerResult, Data]:
    """Best lmfit fit over ``inits`` and ``n_starts`` random starts; ``fixed`` holds parameters at values
    (e.g. {"alpha_l": 1.0}). Returns (result with params/stderr/covar/chisqr, the data in fit units)."""
    d = df_or_data if isinstance(df_or_data, Data) else to_data(df_or_data, units)
    fixed = dict(fixed or {})
    rng = np.random.default_rng(seed)
    starts = (
        _make_params(d, {**init, **fixed}, fixed, group_offsets)
        for init in list(inits or []) + _random_starts(d, n_starts, rng)
    )
    return best_of_starts(_residual, starts, (d, group_offsets), max_nfev, jac=_jacobian), d


def values(res, d: Data, group_offsets: bool = False) -> dict:
    """Parameter values by model name (offsets as L0 or L0[<group>])."""
    v = {k: float(res.params[k].value) for k in PARAMS if k != "L0"}
    for name, lm in _offsets(d, group_offsets):
        v[name] = float(res.params[lm].value)
    return v


def stderrs(res, d: Data, group_offsets: bool = False) -> dict:
    """lmfit's standard errors from the covariance (None where it could not be estimated, or fixed)."""
    names = [(k, k) for k in PARAMS if k != "L0"] + _offsets(d, group_offsets)
    out = {}
    for name, lm in names:
        p = res.params[lm]
        free = res.params[f"log_{lm}"].vary if lm in ("c_m", "c_l", "c_D") else p.vary
        ok = free and p.stderr is not None and np.isfinite(p.stderr)
        out[name] = float(p.stderr) if ok else None
    return out


def fit(df: pd.DataFrame, fixed: dict | None = None, **kw) -> tuple[dict, float, int]:
    """The small interface: (parameter values, SSR = Σ (log L − log L̂)², number of runs)."""
    res, d = fit_result(df, fixed, **kw)
    return values(res, d, kw.get("group_offsets", False)), float(res.chisqr), len(d)


def sweep_refit(best: dict, fixed: dict | None = None, group_offsets: bool = False, n_starts: int = 2):
    """The adapter that lets ``fit.held_out`` (the main fit's held-out check) run on a sweep: refit(train,
    seed) → (training residuals of log L, predict(test) → L̂), with this module's fit (offsets per group,
    ``fixed`` held), started from ``best``."""

    def refit(train: Data, seed: int):
        if group_offsets and len(np.unique(train.g)) < len(train.groups):
            raise ValueError(
                "a held-out split left a whole group out of the training part; its offset is "
                "undefined (use fewer held-out runs or turn group_offsets off)"
            )
        res, _ = fit_result(
            train, fixed, group_offsets=group_offsets, n_starts=n_starts, seed=seed, inits=[best]
        )
        v = res.params.valuesdict()
        return res.residual, lambda dt: _predict(v, dt, group_offsets)

    return refit


def depth_partial(d: Data, v: dict, group_offsets: bool = False) -> dict:
    """Partial dependence on depth: per run, L − c_m/m^α_m − c_D/D^α_D − L0 (its group's offset), which
    the law says equals c_ℓ/ℓ^α_ℓ. Returns depth in layers, the residual per run, and the fitted term at
    each run (so the curve can be drawn without the units)."""
    offs = np.array([v[name] for name, _ in _offsets(d, group_offsets)])
    L0 = offs[d.g] if group_offsets else offs[0]
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


def bootstrap(
    df: pd.DataFrame,
    best: dict,
    n_resamples: int,
    *,
    units: dict | None = None,
    group_offsets: bool = False,
    seed: int = 0,
    n_starts: int = 1,
) -> pd.DataFrame:
    """Refit on resamples of the runs (with replacement), each starting from ``best``; one row per resample."""
    d = to_data(df, units)
    rng = np.random.default_rng(seed)
    rows = []
    for b in range(n_resamples):
        idx = rng.integers(0, len(d), len(d))
        db = d.take(idx)
        if group_offsets and len(np.unique(db.g)) < len(d.groups):
            continue  # a group left out: its offset is not defined on this resample
        res, _ = fit_result(
            db, None, group_offsets=group_offsets, n_starts=n_starts, seed=seed + 1 + b, inits=[best]
        )
        rows.append({**values(res, d, group_offsets), "converged": bool(res.success)})
    return pd.DataFrame(rows)


def correlation_from_bootstrap(samples: pd.DataFrame) -> dict:
    """Pearson correlation of the exponents over bootstrap refits."""
    return {
        f"{a},{b}": (float(np.corrcoef(samples[a], samples[b])[0, 1]) if len(samples) > 2 else None)
        for a, b in _pairs()
    }


def profile(
    df: pd.DataFrame,
    param: str,
    grid,
    *,
    best: dict | None = None,
    units: dict | None = None,
    group_offsets: bool = False,
    fixed: dict | None = None,
    n_starts: int = 2,
    seed: int = 0,
) -> pd.DataFrame:
    """``param`` fixed at each grid value, the rest refitted (``fixed`` stays fixed): one row per value
    with ``value``, ``ssr`` and the refitted exponents. Each refit starts from its neighbour's solution
    (continuation, both directions from the point nearest ``best``), from ``best`` and from ``n_starts``
    random starts."""
    d = to_data(df, units)
    fixed = dict(fixed or {})
    grid = np.sort(np.asarray(grid, float))
    if best is None:
        res0, _ = fit_result(d, fixed, group_offsets=group_offsets, seed=seed)
        best = values(res0, d, group_offsets)
    centre = int(np.argmin(np.abs(grid - best[param])))
    out: dict[int, dict] = {}
    for order in (range(centre, len(grid)), range(centre, -1, -1)):
        prev = best
        for i in order:
            res, _ = fit_result(
                d,
                {**fixed, param: grid[i]},
                group_offsets=group_offsets,
                n_starts=n_starts,
                seed=seed + 7 * i,
                inits=[prev, best],
            )
            v = values(res, d, group_offsets)
            if i not in out or res.chisqr < out[i]["ssr"]:
                out[i] = {"value": float(grid[i]), "ssr": float(res.chisqr), **{a: v[a] for a in EXPONENTS}}
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


def profile_interval(prof: pd.DataFrame, ssr_min: float, n: int, p: int, level: float) -> dict:
    """Where Δχ² = (SSR − SSR_min)/s² ≤ ``level`` (s² = SSR_min/(n − p)), by linear interpolation between
    grid values. An end that the grid does not close (Δχ² never reaches ``level`` on that side) is None.
    Returns {"level", "lo", "hi", "closed_lo", "closed_hi"}."""
    s2 = ssr_min / max(n - p, 1)
    x = prof["value"].to_numpy(float)
    chi = (prof["ssr"].to_numpy(float) - ssr_min) / s2
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


def tokens_vs_size(df: pd.DataFrame, threshold: float = TIED_THRESHOLD) -> dict:
    """How far the sweep ties tokens to model size. N = ``params`` where every row has it, else
    12·depth·width² (non-embedding). Returns corr(log D, log N), R² of log D on (log width, log depth)
    (1 when tokens are a function of shape), the number of distinct token counts per shape, and
    ``tied`` = |corr| > threshold."""
    has_params = "params" in df.columns and df["params"].notna().all()
    N = (
        df["params"].to_numpy(float)
        if has_params
        else 12.0 * df["depth"].to_numpy(float) * df["width"].to_numpy(float) ** 2
    )
    logD = np.log(df["tokens"].to_numpy(float))
    r = float(np.corrcoef(logD, np.log(N))[0, 1]) if np.std(logD) > 0 else float("nan")
    X = np.column_stack(
        [np.ones(len(df)), np.log(df["width"].to_numpy(float)), np.log(df["depth"].to_numpy(float))]
    )
    coef, *_ = np.linalg.lstsq(X, logD, rcond=None)
    resid = logD - X @ coef
    ss = float(((logD - logD.mean()) ** 2).sum())
    r2 = 1.0 - float((resid**2).sum()) / ss if ss > 0 else float("nan")
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
) -> dict:
    """Everything about whether ``df`` identifies the law, JSON-ready: the fit (values, lmfit stderr,
    SSR, n, p, s²), exponent correlations (covariance, bootstrap), profiles and their Δχ² = 1 / 3.84
    intervals for each exponent in ``profile_grids`` (default: α_ℓ on 0.05 … 4), tokens vs size, the
    exponents that ran to a bound (``at_bound``), ``identified`` (per profiled exponent), the partial
    dependence on depth per run (``depth_partial``) and, with ``heldout_splits`` > 0, the held-out check
    of ``fit.held_out`` (``heldout``)."""
    fixed = dict(fixed or {})
    res, d = fit_result(df, fixed, units=units, group_offsets=group_offsets, n_starts=n_starts, seed=seed)
    best = values(res, d, group_offsets)
    n, p = len(d), int(res.nvarys)
    ssr = float(res.chisqr)
    out = {
        "n": n,
        "p": p,
        "ssr": ssr,
        "s2": ssr / max(n - p, 1),
        "rmse_log": float(np.sqrt(ssr / n)),
        "converged": bool(res.success),
        "group_offsets": group_offsets,
        "groups": d.groups,
        "fixed": fixed,
        "units": d.units,
        "params": {k: {"value": best[k], "stderr": se} for k, se in stderrs(res, d, group_offsets).items()},
        "corr_covariance": correlation_from_covariance(res),
        "tokens_vs_size": tokens_vs_size(df),
        "depth_partial": depth_partial(d, best, group_offsets),
    }
    if heldout_splits > 0:
        out["heldout"] = held_out(
            d,
            best,
            heldout_splits,
            heldout_fraction,
            seed=seed,
            refit=sweep_refit(best, fixed, group_offsets),
        )
    if n_bootstrap > 0 and not fixed:
        boot = bootstrap(df, best, n_bootstrap, units=d.units, group_offsets=group_offsets, seed=seed)
        out["corr_bootstrap"] = correlation_from_bootstrap(boot)
        out["bootstrap"] = {
            a: {
                "std": float(boot[a].std(ddof=1)),
                "ci95": [float(boot[a].quantile(0.025)), float(boot[a].quantile(0.975))],
            }
            for a in EXPONENTS
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
        prof = profile(
            df, param, grid, best=best, units=d.units, group_offsets=group_offsets, fixed=fixed, seed=seed
        )
        ssr_min = min(ssr, float(prof["ssr"].min()))
        out["profiles"][param] = {
            "rows": prof.to_dict(orient="records"),
            "intervals": {
                lab: profile_interval(prof, ssr_min, n, p, lev) for lab, lev in CHI2_LEVELS.items()
            },
        }
    out["identified"] = identified(out)
    return out


def identified(summary: dict, level: str = "95%") -> dict:
    """Per profiled exponent: True when its best value is inside the bounds and its profile interval at
    ``level`` is closed on both sides within the grid (a flat direction or a runaway to a bound is not)."""
    out = {}
    for a, prof in summary["profiles"].items():
        iv = prof["intervals"][level]
        out[a] = bool(a not in summary["at_bound"] and iv["closed_lo"] and iv["closed_hi"])
    return out


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
    )
    out = {"sweep": cfg["name"], "n_exponents": cfg["n_exponents"], **out}
    rows = [dict(param=a, **r) for a, prof in out["profiles"].items() for r in prof["rows"]]
    cols = ["param", "value", "ssr", *EXPONENTS]
    write_table(pd.DataFrame(rows, columns=cols), profile_out)
    write_json(json_out, out)  # sealed: rule chinchilla_section checks it
    log.info("sweep %s: %s", cfg["name"], {a: round(out["params"][a]["value"], 4) for a in EXPONENTS})
    return out
