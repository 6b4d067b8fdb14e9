"""The paper's appendix scan: refit the decomposed law leaving out the k highest-loss points.

At each k the rows with loss strictly below the k-th largest are kept (``law.kept_mask``; k = 1, 10, …,
100 keep 244, 235, …, 144 of the 245 points), and the law is fitted twice: with lmfit to convergence
(lmfit's and the paper's standard errors) and with the paper's Adam procedure (all k at once). With the
Huber loss the row's error is a bootstrap over runs (``scan_bootstrap_resamples``; at the paper's cut
``paper_cut``, ``cut_bootstrap_resamples``, the headline row's error), beside the sandwich formula, and the
paper's least-squares formula is left out. Each row carries the profile statistics of the tested exponent
values (``robustness.profile_statistics``, read as χ²₁ for both losses).
"""

from __future__ import annotations

import logging

import pandas as pd

from depthwidth.laws import lawfit
from depthwidth.chinchilla.adam import fit_adam_batch
from depthwidth.chinchilla.fit import fit_law, main_fit, paper_stderrs
from depthwidth.laws.law import PARAMS, select_points, unit_scales
from depthwidth.chinchilla.robustness import profile_statistics
from depthwidth.integrity import read_table, write_table

log = logging.getLogger("depthwidth.chinchilla")


def drop_scan(points: pd.DataFrame, params: dict) -> pd.DataFrame:
    """One row per k of ``params["drop_highest"]``: ``drop_highest, n_points, converged``, then per
    parameter p of ``PARAMS``: ``p`` and ``p_stderr`` (lmfit), ``p_stderr_paper`` (the paper's, of ln c
    for the c's); with the squared loss (the paper's), ``adam_steps`` and per parameter ``p_adam`` and
    ``p_adam_stderr_paper`` (the paper's Adam fit and its errors there). The objective is ``params``'
    ``loss`` (``huber_delta``); with ``scan_bootstrap_resamples``, per parameter ``p_bootstrap_std``.
    With the squared loss, the paper's errors are computed in ``params["paper_stderr_precision"]``
    (float64, or float32 as the paper's ``scanignore.py``; :func:`depthwidth.chinchilla.fit.paper_stderrs`),
    named in the column ``stderr_paper_precision``; a Huber scan has neither."""
    scales = unit_scales(params)
    how = main_fit(params)
    ks = list(params["drop_highest"])
    datasets = [select_points(points, k, **scales) for k in ks]
    log.info("dropped-points scan: k = %s keep %s points", ks, [len(d) for d in datasets])
    huber = params["loss"] == "huber"
    # the paper's Adam procedure minimises the squared loss: a Huber scan has no Adam columns
    adam_fits = [None] * len(ks) if huber else fit_adam_batch(datasets, params["adam_steps"])
    prec = None if huber else params["paper_stderr_precision"]
    n_boot = params.get("scan_bootstrap_resamples", 0)
    n_boot_cut = max(n_boot, params.get("cut_bootstrap_resamples", 0))
    rows = []
    for k, d, a in zip(ks, datasets, adam_fits):
        res = fit_law(d, n_starts=params["n_starts"], seed=params["seed"], how=how)
        v, se = how.values(res, d), how.stderrs(res, d)
        row = {"drop_highest": k, "n_points": len(d), "loss": params["loss"]}
        if huber:
            row["huber_delta"] = params["huber_delta"]
        row["converged"] = bool(res.success)
        if a is not None:
            row["adam_steps"] = a["steps"]
        if not huber:  # the paper's formula is a least-squares covariance
            row["stderr_paper_precision"] = prec
            se_paper = paper_stderrs(d, v, prec)
        nb = n_boot_cut if k == params.get("paper_cut") else n_boot
        boot = lawfit.bootstrap(d, how, v, nb, seed=params["seed"], n_starts=1) if nb else None
        if boot is not None:
            row["bootstrap_resamples"] = len(boot)
        for p in PARAMS:
            row.update({p: v[p], f"{p}_stderr": se[p]})
            if not huber:
                row[f"{p}_stderr_paper"] = se_paper[p]
            if boot is not None:
                spread = lawfit.bootstrap_spread(boot[p])
                row[f"{p}_bootstrap_std"] = spread["bootstrap_std"]
                row[f"{p}_bootstrap_lo"], row[f"{p}_bootstrap_hi"] = spread["bootstrap_ci95"]
        row.update(profile_statistics(d, how, res, seed=params["seed"]))
        if a is not None:
            va = {p: a["params"][p]["value"] for p in PARAMS}
            se_paper_adam = paper_stderrs(d, va, prec)
            for p in PARAMS:
                row.update({f"{p}_adam": va[p], f"{p}_adam_stderr_paper": se_paper_adam[p]})
        rows.append(row)
        log.info(
            "k = %d (%d points): alpha_l = %.4f ± %.4f (lmfit), %.4f (Adam)",
            k,
            len(d),
            v["alpha_l"],
            se["alpha_l"] or float("nan"),
            a["params"]["alpha_l"]["value"] if a is not None else float("nan"),
        )
    return pd.DataFrame(rows)


def chinchilla_drop_scan(points_csv, params: dict, scan_out) -> pd.DataFrame:
    """Rule chinchilla_drop_scan: the scan of one cell of the fit grid over ``params["drop_highest"]``,
    written as a CSV table."""
    from depthwidth.chinchilla.points import POINT_COLUMNS, POINTS_RULE

    table = drop_scan(read_table(points_csv, POINTS_RULE, POINT_COLUMNS), params)
    write_table(table, scan_out)  # sealed: rule chinchilla_section checks it
    return table
