"""One cell of the fit grid (rule chinchilla_fit): a law fitted to the Chinchilla points with one loss, and
its uncertainties.

The decomposed law (``run_fit``): the log residual log L − log L̂ minimised with the fitting core
(``lawfit``: lmfit, trust-region least squares, or the Huber loss), from several starts, to convergence.
Errors: lmfit's covariance (a Huber fit: the sandwich), the paper's linear-residual covariance
(``paper_stderrs``), the core's bootstrap and held-out check; variants. The Chinchilla law
(``run_chinchilla_law_fit``): the same core with that law, its bootstrap, and the fit on all points.
"""

from __future__ import annotations

import logging

import lmfit
import numpy as np
import pandas as pd

from depthwidth.laws import lawfit
from depthwidth.chinchilla.adam import fit_adam
from depthwidth.chinchilla.compare import law_summary
from depthwidth.chinchilla.replication import compute_optimal
from depthwidth.laws.law import CHINCHILLA, PARAMS, FitData, kept_mask, select_points, unit_scales
from depthwidth.optimal_shape import shape_exponents
from depthwidth.integrity import read_table, write_json, write_table

log = logging.getLogger("depthwidth.chinchilla")

# How the main fit, its variants and the dropped-points scan fit the law: the fitting core's decomposed
# law with one offset, from Liu et al.'s starting point and random starts in the paper's units.
MAIN = lawfit.LawFit(starts=lawfit.paper_starts)


def main_fit(cfg: dict) -> lawfit.LawFit:
    """``MAIN`` with the objective of ``cfg`` (keys ``loss``, ``huber_delta`` of ``chinchilla.fit``)."""
    return lawfit.LawFit(
        starts=lawfit.paper_starts, least_squares=lawfit.loss_options(cfg["loss"], cfg["huber_delta"])
    )


def fit_law(
    d: FitData,
    n_starts: int = 8,
    seed: int = 0,
    inits: list[dict] | None = None,
    how: lawfit.LawFit = MAIN,
) -> lmfit.minimizer.MinimizerResult:
    """The main fit's fit of log L over several starts (``lawfit.fit`` with ``how``, by default ``MAIN``:
    least squares)."""
    return lawfit.fit(d, how, n_starts=n_starts, seed=seed, inits=inits)


PAPER_STDERR_PRECISIONS = ("float64", "float32")


def paper_stderrs(d: FitData, v: dict, precision: str = "float64") -> dict:
    """Liu et al.'s standard errors at the parameters ``v``: J is the Jacobian of the linear residuals
    L − L̂ with respect to (ln c_m, ln c_ℓ, ln c_D, α_m, α_ℓ, α_D, E), s² = Σ residual² / (n − 7) and the
    covariance s²(JᵀJ)⁻¹ (pseudo-inverse if singular). The errors of ``c_*`` are those of ln c.

    ``precision="float64"`` computes all of it in float64. ``"float32"`` follows the dtypes of the paper's
    ``Scaling/scanignore.py``: the parameters are float32 tensors (ln c taken in float32), the residuals are
    float64 (its data are float64), the Jacobian that autograd returns for the float32 parameters is
    float32, and JᵀJ, its inverse (``torch.linalg.inv``, the pseudo-inverse only when that raises) and the
    covariance are float32. JᵀJ is ill-conditioned (condition number 9·10⁷ on the 203 points of k = 40), so
    float32 leaves the errors a few per cent off (α_ℓ: 0.250 in float32, 0.270 in float64 at k = 40), and
    the float32 digits depend on the order in which JᵀJ is summed (the same J stored column-major gives
    0.270; the paper's own BLAS may sum in yet another order).
    """
    if precision not in PAPER_STDERR_PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; choose from {PAPER_STDERR_PRECISIONS}")
    f32 = precision == "float32"
    logs = np.log(np.stack([d.m, d.ell, d.D]))  # (3, n)
    c = [v["c_m"], v["c_l"], v["c_D"]]
    alpha, L0 = np.array([v["alpha_m"], v["alpha_l"], v["alpha_D"]]), v["L0"]
    if f32:  # the parameters rounded to float32, ln c taken by torch in float32 (its bits matter, see above)
        import torch  # here: the float64 path does not need torch's import time

        log_c = torch.tensor(c, dtype=torch.float32).log().double().numpy()
        alpha, L0 = alpha.astype(np.float32).astype(float), float(np.float32(L0))
    else:
        log_c = np.log(c)
    terms = np.exp(log_c[:, None] - alpha[:, None] * logs)  # (3, n)
    resid = d.loss - (terms.sum(0) + L0)
    jac = -np.column_stack([terms.T, -(terms * logs).T, np.ones(len(d))])  # d resid / d theta, (n, 7)
    s2 = float(resid @ resid) / (len(d) - 7)
    if f32:
        # an (n, 7) row-major J as the paper's torch.stack builds it: JᵀJ's summation order changes its
        # float32 bits, and the ill-conditioned inverse magnifies that (see above)
        j = torch.from_numpy(np.ascontiguousarray(jac, dtype=np.float32))
        jtj = j.T @ j
        try:
            inv = torch.linalg.inv(jtj)
        except RuntimeError:  # singular, as the paper's script falls back
            inv = torch.linalg.pinv(jtj)
        var = (torch.tensor(s2, dtype=torch.float64) * inv).diagonal().numpy()  # float32, as in the paper
    else:
        jtj = jac.T @ jac
        inv = np.linalg.inv(jtj) if np.linalg.matrix_rank(jtj) == 7 else np.linalg.pinv(jtj)
        var = np.diag(s2 * inv)
    se = np.sqrt(np.clip(var, 0.0, None))
    order = ("c_m", "c_l", "c_D", "alpha_m", "alpha_l", "alpha_D", "L0")
    return {k: float(x) for k, x in zip(order, se)}


PAPER_STDERR_NOTE = (
    "stderr_paper: Liu et al.'s linear-residual covariance s²(JᵀJ)⁻¹ over (ln c, α, E); "
    "for c_m, c_l, c_D it is the error of ln c"
)


def _fit_summary(res, d: FitData, how: lawfit.LawFit = MAIN) -> dict:
    v, se = how.values(res, d), how.stderrs(res, d)
    # a Huber fit's stderr is the sandwich formula (lawfit.huber_covariance); its reported error is the
    # bootstrap std that run_fit adds. The paper's formula is a least-squares covariance: a Huber fit has none.
    huber = {"objective_huber": float(res.objective), "stderr_kind": "sandwich"} if how.least_squares else {}
    se_paper = {} if how.least_squares else paper_stderrs(d, v)
    return {
        "params": {
            k: {"value": v[k], "stderr": se[k], **({"stderr_paper": se_paper[k]} if se_paper else {})}
            for k in PARAMS
        },
        "n_points": len(d),
        **huber,
        "objective_sum_sq_log_residual": float(res.chisqr),
        "rmse_log": float(np.sqrt(res.chisqr / len(d))),
        "converged": bool(res.success),
        "message": str(res.message),
        "nfev": int(res.nfev),
    }


def _bootstrap_summary(out: dict, boot: pd.DataFrame, best: dict, n_boot: int) -> None:
    """Add bootstrap intervals of every parameter and of the shape exponents to ``out`` (fit.json)."""
    for k in PARAMS:
        out["params"][k].update(lawfit.bootstrap_spread(boot[k] if len(boot) else []))
    out["bootstrap"] = {
        "resamples": int(n_boot),
        "converged": int(boot["converged"].sum()) if len(boot) else 0,
    }
    if len(boot):
        sh = pd.DataFrame([shape_exponents(a, b) for a, b in zip(boot["alpha_m"], boot["alpha_l"])])
        out["shape_exponents"] = {
            k: {
                "value": shape_exponents(best["alpha_m"], best["alpha_l"])[k],
                **lawfit.bootstrap_spread(sh[k]),
            }
            for k in sh.columns
        }
    else:
        out["shape_exponents"] = {
            k: {"value": v, "bootstrap_ci95": None, "bootstrap_std": None}
            for k, v in shape_exponents(best["alpha_m"], best["alpha_l"]).items()
        }


def paper_adam_variant(d: FitData, steps: int) -> dict:
    """The paper's Adam fit (torch, the notebook's dtypes, ``adam.fit_adam``) with its standard errors at the point
    where it stops."""
    fit = fit_adam(d, steps)
    v = {k: fit["params"][k]["value"] for k in PARAMS}
    for k, se in paper_stderrs(d, v).items():
        fit["params"][k]["stderr_paper"] = se
    return {
        "description": f"the paper's procedure: Adam (ln c float64, exponents and E float32) from its starting point, stopped after "
        f"{steps} steps",
        **fit,
    }


def _variants(
    points: pd.DataFrame, d: FitData, best: dict, cfg: dict, scales: dict, how: lawfit.LawFit = MAIN
) -> dict:
    """Extra fits beside the main one, as listed in ``cfg["variants"]``."""
    out = {}
    for variant in cfg["variants"]:
        if variant == "layers_minus_2":
            dv = select_points(points, cfg["drop_highest_loss"], depth_offset=-2.0, **scales)
            desc = "l = n_layers - 2 (embedding and head layers not counted)"
        elif variant == "keep_all_points":
            dv = select_points(points, 0, **scales)
            desc = "all points kept (no high-loss cut)"
        elif variant == "paper_adam":
            out[variant] = paper_adam_variant(d, cfg["adam_steps"])
            p = out[variant]["params"]
            log.info(
                "variant paper_adam: alpha_l = %.4f, alpha_m = %.4f, c_l = %.1f, c_m = %.2f, E = %.4f",
                p["alpha_l"]["value"],
                p["alpha_m"]["value"],
                p["c_l"]["value"],
                p["c_m"]["value"],
                p["L0"]["value"],
            )
            continue
        else:
            raise ValueError(f"unknown chinchilla.fit.variants entry '{variant}'")
        rv = fit_law(dv, n_starts=cfg["n_starts"], seed=cfg["seed"], inits=[best], how=how)
        out[variant] = {"description": desc, **_fit_summary(rv, dv, how)}
        log.info("variant %s: alpha_l = %.3f", variant, rv.params["alpha_l"].value)
    return out


def run_fit(points: pd.DataFrame, cfg: dict) -> tuple[dict, pd.DataFrame]:
    """The whole fit stage: main fit (stderr from lmfit's covariance and the paper's), bootstrap intervals,
    held-out check, variants. ``cfg`` is the ``chinchilla.fit`` config section (defaults filled in by the
    schema). Returns (fit.json content, bootstrap rows)."""
    scales = unit_scales(cfg)
    seed, n_starts = cfg["seed"], cfg["n_starts"]
    d = select_points(points, cfg["drop_highest_loss"], **scales)
    how = main_fit(cfg)
    log.info("fitting the decomposed law to %d points (%d starts, %s loss)", len(d), n_starts, cfg["loss"])
    res = fit_law(d, n_starts=n_starts, seed=seed, how=how)
    if not res.success:
        log.warning("main fit did not report convergence: %s", res.message)
    out = {"law": "decomposed", "loss": cfg["loss"], **_fit_summary(res, d, how)}
    if cfg["loss"] == "huber":
        out["huber_delta"] = cfg["huber_delta"]
    if cfg["loss"] != "huber":
        out["stderr_paper_note"] = PAPER_STDERR_NOTE
    out["units"] = {
        "m": f"d_model * {cfg['width_scale']}",
        "l": f"n_layers * {cfg['depth_scale']}",
        "D": f"tokens * {cfg['tokens_scale']}",
    }
    out["drop_highest_loss"] = cfg["drop_highest_loss"]
    best = how.values(res, d)
    log.info("main fit: %s", {k: round(x, 4) for k, x in best.items()})

    n_boot = cfg["bootstrap_resamples"]
    boot = (
        lawfit.bootstrap(d, how, best, n_boot, seed=seed)
        if n_boot > 0
        else pd.DataFrame(columns=[*PARAMS, "converged"])
    )
    _bootstrap_summary(out, boot, best, n_boot)
    if cfg["heldout_splits"] > 0:
        out["heldout"] = lawfit.held_out(
            d, how, best, cfg["heldout_splits"], cfg["heldout_fraction"], seed=seed
        )
        log.info(
            "held-out: rmse(log L) test %.4f ± %.4f, train %.4f",
            out["heldout"]["rmse_log_test_mean"],
            out["heldout"]["rmse_log_test_std"],
            out["heldout"]["rmse_log_train_mean"],
        )
    out["variants"] = _variants(points, d, best, cfg, scales, how)
    return out, boot


# ---------------------------------------------------------------- the grid's chinchilla cells
def chinchilla_data(points: pd.DataFrame, n_excluded: int) -> FitData:
    """The points as ``FitData`` for the Chinchilla law (N = params, D = flops/(6N), the ``n_excluded``
    highest losses left out); m, ℓ as d_model and n_layers (not used by the law)."""
    keep = kept_mask(points["loss"].to_numpy(float), n_excluded)
    p = points[keep]
    N = p["params"].to_numpy(float)
    return FitData(
        p["d_model"].to_numpy(float),
        p["n_layers"].to_numpy(float),
        p["flops"].to_numpy(float) / (6 * N),
        p["loss"].to_numpy(float),
        N=N,
    )


def core_fit(d: FitData, cfg: dict) -> tuple[dict, pd.DataFrame]:
    """The Chinchilla law fitted to ``d`` by the fitting core (lmfit, trust-region, analytic Jacobian) with
    the cell's loss, summarised as the sweeps' laws are (``compare.law_summary``: values, lmfit errors,
    bootstrap std and 95 % interval with one start per refit, objective, AIC/BIC), with the compute-optimal
    split; and the bootstrap rows."""
    loss, delta, seed, n_boot = cfg["loss"], cfg["huber_delta"], cfg["seed"], cfg["bootstrap_resamples"]
    how = lawfit.LawFit(
        law=CHINCHILLA, starts=lawfit.chinchilla_starts, least_squares=lawfit.loss_options(loss, delta)
    )
    res = lawfit.fit(d, how, n_starts=cfg["n_starts"], seed=seed)
    v = how.values(res, d)
    boot = (
        lawfit.bootstrap(d, how, v, n_boot, seed=seed, n_starts=1)
        if n_boot > 0
        else pd.DataFrame(columns=[*CHINCHILLA.params, "converged"])
    )
    summary = law_summary(d, how, res, boot, None)
    del summary["heldout"]  # a cell of this law has no held-out check
    out = {
        "loss": loss,
        **({"huber_delta": delta} if loss == "huber" else {}),
        "n_points": len(d),
        **summary,
        "converged": bool(res.success),
        "bootstrap_resamples": int(len(boot)),
        "compute_optimal": compute_optimal(v["alpha"], v["beta"]),
    }
    return out, boot


def run_chinchilla_law_fit(points: pd.DataFrame, cfg: dict) -> tuple[dict, pd.DataFrame]:
    """A chinchilla cell of the grid: the Chinchilla law on the points less the cell's cut
    (``drop_highest_loss``), and its variants (``keep_all_points``: no cut). Returns (fit.json content,
    bootstrap rows of the main fit)."""
    cut = cfg["drop_highest_loss"]
    d = chinchilla_data(points, cut)
    log.info(
        "fitting the Chinchilla law to %d points (%d starts, %s loss)", len(d), cfg["n_starts"], cfg["loss"]
    )
    fit, boot = core_fit(d, cfg)
    log.info("chinchilla cell: %s", {k: round(p["value"], 4) for k, p in fit["params"].items()})
    out = {"law": "chinchilla", **fit, "drop_highest_loss": cut, "variants": {}}
    for variant in cfg["variants"]:
        if variant != "keep_all_points":
            raise ValueError(f"unknown variant '{variant}' of a chinchilla cell (it has: keep_all_points)")
        v, _ = core_fit(chinchilla_data(points, 0), cfg)
        out["variants"][variant] = {"description": "all points kept (no high-loss cut)", **v}
        log.info("variant %s: %s", variant, {k: round(p["value"], 4) for k, p in v["params"].items()})
    return out, boot


# Each law of the grid (chinchilla.pipeline.LAWS) and the function that fits one of its cells.
CELL_FITS = {"decomposed": run_fit, "chinchilla": run_chinchilla_law_fit}


def chinchilla_fit(points_csv, fit_cfg: dict, fit_out, bootstrap_out) -> dict:
    """Rule chinchilla_fit: fit the cell's law to the points; write fit.json and the bootstrap rows."""
    from depthwidth.chinchilla.points import POINT_COLUMNS, POINTS_RULE

    points = read_table(points_csv, POINTS_RULE, POINT_COLUMNS)
    if fit_cfg.get("law") not in CELL_FITS:
        raise ValueError(f"no fit for law {fit_cfg.get('law')!r}; the grid's laws are {sorted(CELL_FITS)}")
    fit, boot = CELL_FITS[fit_cfg["law"]](points, fit_cfg)
    # sealed: rule chinchilla_section and the report's synthesis check them before use
    write_table(boot, bootstrap_out)
    write_json(fit_out, fit)
    return fit
