"""The Chinchilla section's main fit: prose, the parameter table, the dropped-points scan and the optimal
shape, with their figures. Numbers come from the stage's files (fit.json, bootstrap.csv, drop_scan.csv,
fit_points.csv, optimal_shape.csv, comparisons.csv); nothing is fitted or compared here."""

from __future__ import annotations

import html

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from depthwidth.chinchilla.robustness import EXPONENT_NAMES, EXPONENT_WHAT
from depthwidth.papers import ALPHA_L_CHINCHILLA, CHINCHILLA_ADAM_FIT
from depthwidth.sections import Figures, fmt_pm, plain_log_ticks, table_html

# The decomposed law's parameters in the order fit.json lists them, and the exponents as figures label
# them (matplotlib mathtext), depth first.
PARAMS = ("c_m", "alpha_m", "c_l", "alpha_l", "c_D", "alpha_D", "L0")
COEFFICIENTS = ("c_m", "c_l", "c_D")


def mathtext(symbol: str) -> str:
    """An exponent's symbol ("α_ℓ") as matplotlib mathtext ("$\\alpha_\\ell$")."""
    return "$" + symbol.replace("α", r"\alpha").replace("ℓ", r"\ell") + "$"


MATH = {a: mathtext(s) for a, s in EXPONENT_NAMES.items()}
AXIS = {a: f"{MATH[a]} ({EXPONENT_WHAT[a]})" for a in EXPONENT_NAMES}
OBJECTIVE_TEXT = {"squared": "Σ(log L − log L̂)²", "huber": "Σ Huber_δ(log L − log L̂)"}
# How the text names a fit from its record's ``loss``.
LOSS_NAMES = {"squared": "least squares", "huber": "Huber"}


def intro_html(recon: dict, fit: dict) -> str:
    state = "converged" if fit["converged"] else "did not converge (see the fit's log)"
    return (
        f"<p>{recon['n_points']} points read off Chinchilla Fig. 4 (Epoch AI), each mapped to the Table A9 "
        f"architecture nearest in parameter count ({recon['n_architectures']} architectures; worst relative "
        f"mismatch {100 * recon['worst_params_rel_mismatch']:.2f} %). Tokens D = C/(6N). The fit keeps "
        f"{fit['n_points']} points (the {fit['drop_highest_loss']} highest-loss runs left out, as the paper) and "
        f"minimises {OBJECTIVE_TEXT[fit.get('loss', 'squared')]} with lmfit (trust-region, several starts); it "
        f"{state}, RMSE of log L = {fit['rmse_log']:.4f}.</p>"
    )


def parameter_table_html(fit: dict, rows: pd.DataFrame) -> str:
    """Each parameter: value, the error the comparisons state (method), the bootstrap 95 % interval, the
    paper's error formula at this optimum (for c converted from ln c to c: c·σ(ln c)), the paper's
    procedure repeated and the paper's numbers."""
    p, adam = fit["params"], fit["variants"].get("paper_adam")
    stated = rows.set_index("key")
    out = []
    for k in PARAMS:
        ci, se_p = p[k].get("bootstrap_ci95"), p[k].get("stderr_paper")
        key = "alpha_l_converged" if k == "alpha_l" else k
        r = stated.loc[key] if key in stated.index else None
        out.append(
            {
                "Parameter": k,
                "Value": p[k]["value"],
                "Error": r["err"] if r is not None else p[k].get("bootstrap_std"),
                "Error method": _method(r) if r is not None else "bootstrap sd over runs",
                "Bootstrap 95 %": f"{ci[0]:.4g} – {ci[1]:.4g}" if ci else "–",
                "Paper's error formula": se_p * p[k]["value"] if se_p and k in COEFFICIENTS else se_p,
                "Paper's procedure": f"{adam['params'][k]['value']:.5g}" if adam else "–",
                "Paper (Adam)": CHINCHILLA_ADAM_FIT[k].text if k in CHINCHILLA_ADAM_FIT else "–",
            }
        )
    return table_html(
        pd.DataFrame(out),
        f"Fitted parameters (units: m = {fit['units']['m']}, ℓ = {fit['units']['l']}, D = {fit['units']['D']}). "
        f"Error: the bootstrap sd over runs ({fit['bootstrap']['resamples']} resamples), or lmfit's covariance "
        "where it is within 1.25× of it. The paper's error formula s²(JᵀJ)⁻¹ of the linear residuals, at this "
        "optimum; for c_m, c_ℓ, c_D it gives the error of ln c, shown here as c·σ(ln c), the error of c.",
    )


def _method(r) -> str:
    m = str(r["err_method"])
    return "bootstrap sd over runs" if m.startswith("bootstrap") else m.split(" (")[0]


def alpha_l_html(fit: dict, rows: pd.DataFrame) -> str:
    """α_ℓ in prose: the converged optimum with its stated error and interval, the paper's procedure
    reproduced, and the lean, all from the comparison records."""
    by = rows.set_index("key")
    conv = by.loc["alpha_l_converged"]
    text = (
        f"<p>The paper reports α_ℓ = {ALPHA_L_CHINCHILLA.text} from an Adam fit stopped at 50k steps. Fitting "
        f"the same points to convergence gives α_ℓ = {fmt_pm(conv['value'], conv['err'])} ({_method(conv)}"
        + (f"; bootstrap 95 % interval {conv['low']:.3g}–{conv['high']:.3g}" if pd.notna(conv["low"]) else "")
        + f"): {html.escape(str(conv['verdict_text']))}. The two are estimates from the same points and "
        "objective, so their difference is the procedure's (below), not noise.</p>"
    )
    adam = fit["variants"].get("paper_adam")
    if adam and "alpha_l_paper_procedure" in by.index:
        pa, ref, row = adam["params"], CHINCHILLA_ADAM_FIT, by.loc["alpha_l_paper_procedure"]
        text += (
            f"<p>Repeating the paper's procedure (Adam with the notebook's dtypes from its start α_ℓ = 1, stopped "
            f"after {adam['steps']} steps) gives α_ℓ = {pa['alpha_l']['value']:.4f}, α_m = "
            f"{pa['alpha_m']['value']:.4f}, c_ℓ = {pa['c_l']['value']:.1f} (the paper's notebook: "
            f"{ref['alpha_l'].text}, {ref['alpha_m'].text}, {ref['c_l'].text}): {row['verdict_text']}. Its sum "
            f"of squared log residuals is {adam['objective_sum_sq_log_residual']:.6f}, against "
            f"{fit['objective_sum_sq_log_residual']:.6f} at the converged optimum: the objective is nearly flat "
            "along the direction that trades c_ℓ against α_ℓ, so a stopped optimiser is still drifting away from "
            "its start (all in float64 the same steps stop at α_ℓ ≈ 1.196, all in float32 at 1.2015).</p>"
        )
    return text


def heldout_html(fit: dict) -> str:
    if "heldout" not in fit:
        return ""
    h = fit["heldout"]
    return (
        f"<p>Held-out check ({h['n_splits']} random {int(100 * (1 - h['test_fraction']))}/"
        f"{int(100 * h['test_fraction'])} splits): RMSE of log L on held-out points "
        f"{h['rmse_log_test_mean']:.4f} ± {h['rmse_log_test_std']:.4f} against {h['rmse_log_train_mean']:.4f} "
        f"on the training part; mean relative loss error {100 * h['mean_abs_rel_error_test']:.2f} %.</p>"
    )


SCAN_COLUMNS = {
    "drop_highest": "k",
    "n_points": "Points kept",
    "alpha_l": "α_ℓ",
    "alpha_l_stderr": "± covariance",
    "alpha_l_adam": "α_ℓ (Adam)",
    "alpha_m": "α_m",
    "alpha_m_adam": "α_m (Adam)",
    "alpha_D": "α_D",
    "L0": "L0",
}


def drop_scan_html(scan: pd.DataFrame, fit: dict) -> str:
    """The scan table and one sentence on how much α_ℓ depends on the cut."""
    a, se = scan["alpha_l"], scan["alpha_l_stderr"]
    k_lo, k_hi = int(scan["drop_highest"].min()), int(scan["drop_highest"].max())
    spread = float(a.max() - a.min())
    text = (
        f"<p>Dropped-points scan (the paper's appendix): leaving out the k = {k_lo}…{k_hi} highest-loss runs "
        f"({int(scan['n_points'].max())} to {int(scan['n_points'].min())} points kept), the converged α_ℓ ranges "
        f"from {a.min():.3f} to {a.max():.3f} (a spread of {spread:.3f}, {spread / float(se.median()):.1f} times "
        f"its median covariance error of {float(se.median()):.3f}), and the paper's Adam procedure "
        f"({int(scan['adam_steps'].iloc[0])} steps) from {scan['alpha_l_adam'].min():.3f} to "
        f"{scan['alpha_l_adam'].max():.3f}. The headline cut (k = {fit['drop_highest_loss']}) is one point of "
        "this range, not a special one.</p>"
    )
    table = table_html(
        scan[list(SCAN_COLUMNS)].rename(columns=SCAN_COLUMNS),
        "Refits leaving out the k highest-loss points (rows with loss strictly below the k-th largest kept), "
        "converged least squares with lmfit's covariance error, and the paper's Adam procedure. Every parameter "
        "and the paper's error formula: results/chinchilla/fits/decomposed/squared/drop_scan.csv.",
    )
    return text + table


def shape_html(fit: dict, shape: pd.DataFrame) -> str:
    se = fit["shape_exponents"]

    def ci(k):
        c = se[k].get("bootstrap_ci95")
        return f"{se[k]['value']:.3f}" + (f" (95 % bootstrap interval {c[0]:.3f}–{c[1]:.3f})" if c else "")

    cols = {
        "n_params": "N",
        "d_model_opt": "d_model*",
        "n_layers_opt": "n_layers*",
        "width_to_depth": "d_model*/n_layers*",
    }
    return (
        f"<p>At fixed N ∝ ℓm², the optimum has m* ∝ N^a, ℓ* ∝ N^b with a = α_ℓ/(α_m+2α_ℓ) = {ci('width_exponent')}, "
        f"b = α_m/(α_m+2α_ℓ) = {ci('depth_exponent')}; the width-plus-depth loss falls as N^−β with "
        f"β = α_mα_ℓ/(α_m+2α_ℓ) = {ci('N_exponent')} (Chinchilla: N^−1/3; the paper: m ∝ ℓ when α_m = α_ℓ). "
        f"The width-to-depth ratio m*/ℓ* grows as N^{ci('ratio_exponent')}.</p>"
        + table_html(
            shape[[c for c in cols if c in shape]].rename(columns=cols),
            "Loss-optimal shape per parameter count (bootstrap intervals: optimal_shape.csv).",
        )
    )


# ---------------------------------------------------------------- figures
def figure_points(figs: Figures, points: pd.DataFrame) -> str:
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    sc = ax.scatter(points["tokens"], points["loss"], c=points["n_layers"], cmap="viridis", s=18)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("training tokens D")
    ax.set_ylabel("final loss L (nats/token)")
    plain_log_ticks(ax, "y")
    bar = fig.colorbar(sc, ax=ax, label=r"depth $\ell$ (layers)")
    bar.locator = MaxNLocator(integer=True)
    bar.update_ticks()
    return figs.html(
        fig,
        "points",
        "Chinchilla runs: loss against training tokens, coloured by depth (yellow deep, purple shallow). "
        "At equal D, deeper (and wider) models reach lower loss.",
    )


def figure_fitted(figs: Figures, fp: pd.DataFrame) -> str:
    used = fp["used"].astype(bool).to_numpy()
    fig, ax = plt.subplots(figsize=(5.2, 4.6))
    ax.scatter(fp["loss"][used], fp["predicted"][used], s=14, color="C0", label="fitted points")
    ax.scatter(
        fp["loss"][~used],
        fp["predicted"][~used],
        s=14,
        marker="x",
        color="grey",
        label="left out (highest loss)",
    )
    lo, hi = fp["loss"].min() * 0.95, fp["loss"].max() * 1.05
    ax.plot([lo, hi], [lo, hi], "k--", lw=1, label="y = x")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("observed loss (nats/token)")
    ax.set_ylabel(r"fitted law $\hat{L}$ (nats/token)")
    plain_log_ticks(ax, "x")
    plain_log_ticks(ax, "y")
    ax.legend(fontsize=8)
    return figs.html(
        fig,
        "fitted_vs_observed",
        "Fitted against observed loss: blue dots the fitted points (on the dashed line where fitted exactly), "
        "grey crosses the high-loss runs the paper leaves out.",
    )


def figure_depth_part(figs: Figures, fp: pd.DataFrame, fit: dict, err: float | None) -> str:
    p = fit["params"]
    d = fp[fp["used"].astype(bool)]
    fig, ax = plt.subplots(figsize=(5.8, 4.2))
    ax.scatter(
        d["n_layers"], d["depth_part"], s=12, alpha=0.7, color="C0", label="L − (width + data terms + L0)"
    )
    order = np.argsort(d["n_layers"].to_numpy())
    label = rf"$c_\ell/\ell^{{\alpha_\ell}}$, $\alpha_\ell$ = {fmt_pm(p['alpha_l']['value'], err)}"
    ax.plot(d["n_layers"].to_numpy()[order], d["depth_term"].to_numpy()[order], color="C3", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("depth (layers)")
    plain_log_ticks(ax, "x")
    ax.set_ylabel("depth part of the loss (nats/token)")
    ax.axhline(0, color="k", lw=0.5)
    ax.legend(fontsize=8)
    return figs.html(
        fig,
        "depth_part",
        "Partial dependence on depth: what is left of each loss (blue) after subtracting the fitted width, "
        "data and constant terms, against depth, with the fitted depth term (vermillion line). The term falls "
        "roughly like 1/ℓ, the ensemble-averaging prediction.",
    )


def figure_drop_scan(figs: Figures, scan: pd.DataFrame) -> str:
    fig, axes = plt.subplots(1, len(AXIS), figsize=(10, 3.4))
    k, steps = scan["drop_highest"].to_numpy(), int(scan["adam_steps"].iloc[0])
    for ax, (name, label) in zip(axes, AXIS.items()):
        ax.errorbar(
            k,
            scan[name],
            yerr=scan[f"{name}_stderr"],
            fmt="o-",
            ms=4,
            capsize=3,
            color="C0",
            label="converged (± covariance)",
        )
        ax.plot(k, scan[f"{name}_adam"], "s--", ms=4, color="C1", label=f"paper's Adam, {steps} steps")
        ax.set_xlabel("highest-loss points left out, k")
        ax.set_ylabel(label)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0].axhline(
        ALPHA_L_CHINCHILLA.value, color="grey", lw=0.8, ls=":", label=f"paper {ALPHA_L_CHINCHILLA.text}"
    )
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return figs.html(
        fig,
        "drop_scan",
        "Fitted exponents against the number k of highest-loss points left out "
        f"({int(scan['n_points'].max())} to {int(scan['n_points'].min())} points kept). Blue dots: the converged "
        "fit, error bars lmfit's covariance errors; orange squares: the paper's Adam procedure.",
    )


_BOX = {"boxstyle": "round", "facecolor": "white", "alpha": 0.8, "edgecolor": "none"}


def figure_bootstrap_pairs(figs: Figures, boot: pd.DataFrame, fit: dict) -> str:
    """The three exponents of every bootstrap fit in pairs (seaborn's PairGrid), with the main fit and each
    pair's correlation; fits that did not converge in their own colour. "" with under 3 fits."""
    import seaborn as sns

    if len(boot) < 3:
        return ""
    data = boot[list(AXIS)].rename(columns=AXIS)
    data["fit"] = np.where(boot["converged"].astype(bool), "converged", "not converged")
    order = [h for h in ("converged", "not converged") if h in set(data["fit"])]
    grid = sns.PairGrid(data, hue="fit", hue_order=order, corner=True, height=2.0, diag_sharey=False)
    grid.map_lower(sns.scatterplot, s=10, alpha=0.6, edgecolor="none")
    grid.map_diag(sns.histplot, bins="auto", element="step", fill=False)
    grid.add_legend(title="bootstrap fit")
    best = [fit["params"][k]["value"] for k in AXIS]
    for i, row in enumerate(grid.axes):
        for j, ax in enumerate(row):
            if ax is None:
                continue
            if i == j:
                ax.axvline(best[i], color="k", lw=1)
                continue
            ax.plot(best[j], best[i], "X", color="k", ms=8)
            r = np.corrcoef(boot[list(AXIS)[j]], boot[list(AXIS)[i]])[0, 1]
            ax.text(0.03, 0.95, f"r = {r:.2f}", transform=ax.transAxes, va="top", fontsize=8, bbox=_BOX)
    n_conv = int(boot["converged"].astype(bool).sum())
    return figs.html(
        grid.figure,
        "bootstrap_pairs",
        f"The exponents of the {len(boot)} bootstrap fits over runs ({n_conv} converged, blue), in pairs: r is "
        "their correlation; the black cross and lines mark the fit to all points. A strong correlation means the "
        "data fix a combination of the two exponents better than either alone.",
    )


def figure_shape(figs: Figures, shape: pd.DataFrame) -> str:
    fig, ax = plt.subplots(figsize=(5.8, 4.2))
    ax.plot(shape["n_params"], shape["d_model_opt"], "o-", color="C0", label="d_model*")
    ax.plot(shape["n_params"], shape["n_layers_opt"], "s-", color="C1", label="n_layers*")
    if "d_model_ci_lo" in shape:
        ax.fill_between(
            shape["n_params"], shape["d_model_ci_lo"], shape["d_model_ci_hi"], color="C0", alpha=0.2
        )
        ax.fill_between(
            shape["n_params"], shape["n_layers_ci_lo"], shape["n_layers_ci_hi"], color="C1", alpha=0.2
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(r"non-embedding parameters $N = 12\,\ell\,d_{model}^2$")
    ax.set_ylabel("loss-optimal size")
    ax.legend(fontsize=8)
    return figs.html(
        fig,
        "optimal_shape",
        "Loss-optimal width (blue) and depth (orange) at fixed parameter count from the fitted law (bands: "
        "bootstrap 95 % intervals over runs). Parallel lines mean m ∝ ℓ.",
    )
