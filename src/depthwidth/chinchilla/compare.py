"""Two laws on the same runs: the decomposed law beside the Chinchilla law L = E + A/N^α + B/D^β, each
fitted by the stage's core with the same options (offsets per group, loss), compared by held-out error and
information criteria, with the split each implies (width/depth at fixed N; N*, D* at fixed C = 6ND)."""

from __future__ import annotations

import pandas as pd

from depthwidth.laws import lawfit
from depthwidth.laws.compare import information_criteria, laplace_criteria, lower
from depthwidth.laws.law import CHINCHILLA, FitData
from depthwidth.laws.lawfit import LawFit
from depthwidth.chinchilla.replication import compute_optimal
from depthwidth.optimal_shape import shape_exponents


def law_summary(d: FitData, how: LawFit, res, boot: pd.DataFrame, heldout: dict | None) -> dict:
    """One law's entry: values with errors (lmfit's; the sandwich for Huber) and bootstrap intervals, SSR,
    objective, AIC/BIC (Gaussian for least squares, Laplace pseudo-likelihood for Huber: ``criteria``),
    held-out error."""
    v, se = how.values(res, d), how.stderrs(res, d)
    params = {}
    for k in v:
        params[k] = {"value": v[k], "stderr": se[k]}
        if k in boot.columns and len(boot) > 1:
            params[k].update(lawfit.bootstrap_spread(boot[k]))
    return {
        "law": how.law.name,
        "params": params,
        "ssr": float(res.chisqr),
        "objective": float(res.objective),
        **(
            laplace_criteria(how.residual(res.params, d), int(res.nvarys))
            if how.least_squares
            else information_criteria(float(res.chisqr), len(d), int(res.nvarys))
        ),
        "criteria": "Laplace pseudo-likelihood" if how.least_squares else "Gaussian likelihood",
        "heldout": heldout,
    }


def chinchilla_law_fit(d: FitData, how: LawFit) -> LawFit:
    """The Chinchilla law fitted as ``how`` fits the decomposed law (offsets per group, loss), from starts
    in the sweep's units; parameters ``how`` holds fixed are the decomposed law's and are not carried."""
    return LawFit(
        law=CHINCHILLA,
        group_offsets=how.group_offsets,
        starts=lawfit.chinchilla_unit_starts,
        least_squares=how.least_squares,
    )


def compare_laws(
    d: FitData,
    how: LawFit,
    res,
    boot: pd.DataFrame,
    heldout: dict | None,
    *,
    n_starts: int,
    seed: int,
    n_bootstrap: int,
    heldout_splits: int,
    heldout_fraction: float,
) -> dict:
    """Both laws side by side on ``d`` (which needs ``N``): the decomposed law's fit ``res`` (with its
    bootstrap rows and held-out check) as it stands, the Chinchilla law fitted here the same way."""
    dec = law_summary(d, how, res, boot, heldout)
    v = how.values(res, d)
    dec["split"] = {"kind": "width/depth at fixed N", **shape_exponents(v["alpha_m"], v["alpha_l"])}
    ch = chinchilla_law_fit(d, how)
    rc = lawfit.fit(d, ch, n_starts=n_starts, seed=seed)
    vc = ch.values(rc, d)
    bc = (
        lawfit.bootstrap(d, ch, vc, n_bootstrap, seed=seed, n_starts=1) if n_bootstrap > 0 else pd.DataFrame()
    )
    hc = (
        lawfit.held_out(d, ch, vc, heldout_splits, heldout_fraction, seed=seed)
        if heldout_splits > 0
        else None
    )
    chin = law_summary(d, ch, rc, bc, hc)
    chin["split"] = {
        "kind": "N* ∝ C^a, D* ∝ C^b at fixed C = 6ND",
        **compute_optimal(vc["alpha"], vc["beta"]),
    }
    better = lower(dec, chin, ("decomposed", "chinchilla"))
    if heldout and hc:
        # Huber: held-out mean |r|, which the points the fit discounts do not dominate; else RMSE
        key = "mean_abs_log_test_mean" if how.least_squares else "rmse_log_test_mean"
        better["heldout"] = "decomposed" if heldout[key] < hc[key] else "chinchilla"
        return {"decomposed": dec, "chinchilla": chin, "lower": better, "heldout_measure": key}
    return {"decomposed": dec, "chinchilla": chin, "lower": better}
