"""The Chinchilla section of the report: figures, parameter table, width/depth implication."""

from __future__ import annotations

import html

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from depthwidth.chinchilla import PAPER_VALUES, PARAMS, decomposed_law, optimal_shape, select_points
from depthwidth.report import agree_within, figure_html, fmt_pm, headline_row, plain_log_ticks, table_html

PAPER_TEXT = "Liu et al. 2026 (their Adam fit, 50k steps)"


def shape_table(fit: dict, boot: pd.DataFrame, n_params: list[float]) -> pd.DataFrame:
    v = {k: fit["params"][k]["value"] for k in PARAMS}
    ws, ds = _scales(fit)
    rows = []
    for n in n_params:
        best = optimal_shape(v, n, ws, ds)
        row = {"n_params": n, "d_model_opt": best["d_model"], "n_layers_opt": best["n_layers"],
               "width_to_depth": best["width_to_depth"]}
        if len(boot):
            r = pd.DataFrame([optimal_shape(b, n, ws, ds) for b in boot[list(PARAMS)].to_dict("records")])
            for col, name in (("d_model", "d_model"), ("n_layers", "n_layers"), ("width_to_depth", "width_to_depth")):
                row[f"{name}_ci_lo"] = float(np.nanpercentile(r[col], 2.5))
                row[f"{name}_ci_hi"] = float(np.nanpercentile(r[col], 97.5))
        rows.append(row)
    return pd.DataFrame(rows)


def _scales(fit: dict) -> tuple[float, float]:
    return float(fit["units"]["m"].split("*")[1]), float(fit["units"]["l"].split("*")[1])


def render(points: pd.DataFrame, recon: dict, fit: dict, boot: pd.DataFrame, n_params: list[float]):
    """Returns (body html, headline rows, optimal-shape table)."""
    p = fit["params"]
    v = {k: p[k]["value"] for k in PARAMS}
    ws, ds = _scales(fit)
    ts = float(fit["units"]["D"].split("*")[1])
    parts = []

    parts.append(
        f"<p>{recon['n_points']} points read off Chinchilla Fig. 4 (Epoch AI), each mapped to the Table A9 "
        f"architecture nearest in parameter count ({recon['n_architectures']} architectures; worst relative "
        f"mismatch {100 * recon['worst_params_rel_mismatch']:.2f} %). Tokens D = C/(6N). The fit keeps "
        f"{fit['n_points']} points (the {fit['drop_highest_loss']} highest-loss runs left out, as the paper) and "
        f"minimises Σ(log L − log L̂)² with lmfit (trust-region least squares, several starts): "
        f"{'converged' if fit['converged'] else 'NOT converged'} ({html.escape(fit['message'])}), "
        f"RMSE of log L = {fit['rmse_log']:.4f}.</p>")

    # 1. the points
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    sc = ax.scatter(points["tokens"], points["loss"], c=points["n_layers"], cmap="viridis", s=18)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("training tokens D")
    ax.set_ylabel("final loss L (nats/token)")
    plain_log_ticks(ax, "y")
    fig.colorbar(sc, ax=ax, label="depth ℓ (layers)")
    parts.append(figure_html(fig, "Chinchilla runs: loss against training tokens, coloured by depth. "
                             "At equal D, deeper (and wider) models reach lower loss."))

    # 2. fitted vs observed
    d_all = select_points(points, 0, ws, ds, ts)
    pred = decomposed_law(d_all.m, d_all.ell, d_all.D, *(v[k] for k in PARAMS))
    cut = np.sort(points["loss"].to_numpy())[-fit["drop_highest_loss"]] if fit["drop_highest_loss"] else np.inf
    used = points["loss"].to_numpy() < cut
    fig, ax = plt.subplots(figsize=(5.2, 4.6))
    ax.scatter(d_all.loss[used], pred[used], s=14, label="fitted points")
    ax.scatter(d_all.loss[~used], pred[~used], s=14, marker="x", color="grey", label="left out (highest loss)")
    lo, hi = d_all.loss.min() * 0.95, d_all.loss.max() * 1.05
    ax.plot([lo, hi], [lo, hi], "k--", lw=1, label="y = x")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("observed loss (nats/token)")
    ax.set_ylabel("fitted law L̂ (nats/token)")
    plain_log_ticks(ax, "x")
    plain_log_ticks(ax, "y")
    ax.legend(fontsize=8)
    parts.append(figure_html(fig, "Fitted against observed loss. Points on the dashed line are fitted exactly; "
                             "the crosses are the high-loss runs the paper leaves out."))

    # 3. partial dependence on depth
    d_fit = select_points(points, fit["drop_highest_loss"], ws, ds, ts)
    rest = v["c_m"] * d_fit.m ** -v["alpha_m"] + v["c_D"] * d_fit.D ** -v["alpha_D"] + v["L0"]
    depth_part = d_fit.loss - rest
    fig, ax = plt.subplots(figsize=(5.8, 4.2))
    ax.scatter(d_fit.ell / ds, depth_part, s=12, alpha=0.7, label="L − (width + data terms + L0)")
    grid = np.linspace(d_fit.ell.min(), d_fit.ell.max(), 100)
    ax.plot(grid / ds, v["c_l"] * grid ** -v["alpha_l"], "r-",
            label=f"c_ℓ/ℓ^α_ℓ, α_ℓ = {fmt_pm(v['alpha_l'], p['alpha_l']['stderr'])}")
    ax.set_xscale("log")
    ax.set_xlabel("depth (layers)")
    plain_log_ticks(ax, "x")
    ax.set_ylabel("depth part of the loss (nats/token)")
    ax.axhline(0, color="k", lw=0.5)
    ax.legend(fontsize=8)
    parts.append(figure_html(fig, "Partial dependence on depth: what is left of each loss after subtracting the "
                             "fitted width, data and constant terms, against depth, with the fitted depth term. "
                             "The term falls roughly like 1/ℓ, the ensemble-averaging prediction."))

    # 4. parameter table
    rows = []
    for k in PARAMS:
        ci = p[k].get("bootstrap_ci95")
        paper = PAPER_VALUES.get(k)
        rows.append({"parameter": k, "value": p[k]["value"], "stderr (covariance)": p[k]["stderr"],
                     "bootstrap 95% CI": f"[{ci[0]:.4g}, {ci[1]:.4g}]" if ci else "–",
                     "paper": f"{paper[0]} ± {paper[1]}" if paper else "–"})
    for name, var in fit.get("variants", {}).items():
        a = var["params"]["alpha_l"]
        if a["stderr"] is None and name == "paper_adam":
            a = {**a, "stderr": float("nan")}
        rows.append({"parameter": f"alpha_l [{name}]", "value": a["value"], "stderr (covariance)": a["stderr"],
                     "bootstrap 95% CI": "–", "paper": "–"})
    parts.append(table_html(pd.DataFrame(rows), f"Fitted parameters (units: m = {fit['units']['m']}, "
                            f"ℓ = {fit['units']['l']}, D = {fit['units']['D']}); bootstrap over "
                            f"{fit['bootstrap']['resamples']} resamples. Variants refit α_ℓ with another "
                            "definition of depth or without the high-loss cut."))
    a_l, se_l = p["alpha_l"]["value"], p["alpha_l"]["stderr"]
    why = ""
    adam = fit.get("variants", {}).get("paper_adam")
    if adam:
        a_adam = adam["params"]["alpha_l"]["value"]
        why = (f" Repeating the paper's procedure (Adam from its start α_ℓ = 1, stopped after {adam['steps']} steps) "
               f"gives α_ℓ = {a_adam:.3f} at a sum of squared log residuals of "
               f"{adam['objective_sum_sq_log_residual']:.6f}, against {fit['objective_sum_sq_log_residual']:.6f} "
               "for the converged fit: the objective is nearly flat along the direction that trades c_ℓ against "
               "α_ℓ, so a stopped optimiser is still drifting away from its starting point.")
    parts.append(
        f"<p>The paper reports α_ℓ = 1.2 ± 0.3 from an Adam fit stopped at 50k steps. Fitting to convergence "
        f"here gives α_ℓ = {fmt_pm(a_l, se_l)}, {a_l - 1.2:+.2f} from the paper's value "
        f"({abs(a_l - 1.2) / 0.3:.1f} of its stated error).{why}</p>")
    if "heldout" in fit:
        h = fit["heldout"]
        parts.append(f"<p>Held-out check ({h['n_splits']} random {int(100 * (1 - h['test_fraction']))}/"
                     f"{int(100 * h['test_fraction'])} splits): RMSE of log L on held-out points "
                     f"{h['rmse_log_test_mean']:.4f} ± {h['rmse_log_test_std']:.4f} against {h['rmse_log_train_mean']:.4f} "
                     f"on the training part; mean relative loss error {100 * h['mean_abs_rel_error_test']:.2f} %.</p>")

    # 5. width/depth implication
    shape = shape_table(fit, boot, n_params)
    se = fit["shape_exponents"]

    def ci(k):
        c = se[k].get("bootstrap_ci95")
        return f"{se[k]['value']:.3f}" + (f" (95% CI {c[0]:.3f}–{c[1]:.3f})" if c else "")
    fig, ax = plt.subplots(figsize=(5.8, 4.2))
    ax.plot(shape["n_params"], shape["d_model_opt"], "o-", label="d_model*")
    ax.plot(shape["n_params"], shape["n_layers_opt"], "s-", label="n_layers*")
    if "d_model_ci_lo" in shape:
        ax.fill_between(shape["n_params"], shape["d_model_ci_lo"], shape["d_model_ci_hi"], alpha=0.2)
        ax.fill_between(shape["n_params"], shape["n_layers_ci_lo"], shape["n_layers_ci_hi"], alpha=0.2)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("non-embedding parameters N = 12·ℓ·d_model²")
    ax.set_ylabel("loss-optimal size")
    ax.legend(fontsize=8)
    parts.append(figure_html(fig, "Loss-optimal width and depth at fixed parameter count from the fitted law "
                             "(bands: bootstrap 95 % intervals). Parallel lines mean m ∝ ℓ."))
    parts.append(
        f"<p>At fixed N ∝ ℓm², the optimum has m* ∝ N^a, ℓ* ∝ N^b with a = α_ℓ/(α_m+2α_ℓ) = {ci('width_exponent')}, "
        f"b = α_m/(α_m+2α_ℓ) = {ci('depth_exponent')}; the width-plus-depth loss falls as N^−β with "
        f"β = α_mα_ℓ/(α_m+2α_ℓ) = {ci('N_exponent')} (Chinchilla: N^−1/3; the paper: m ∝ ℓ when α_m = α_ℓ). "
        f"The width-to-depth ratio m*/ℓ* grows as N^{ci('ratio_exponent')}.</p>")
    parts.append(table_html(shape, "Loss-optimal shape per parameter count."))

    rows_h = [
        headline_row("α_ℓ (Chinchilla decomposed fit)", "1.2 ± 0.3", a_l, se_l,
                     agree_within(a_l, se_l, 1.2, 0.3), f"Chinchilla Fig. 4, {fit['n_points']} points",
                     "converged lmfit fit; the paper's Adam fit stopped at 50k steps"),
        headline_row("α_m (Chinchilla decomposed fit)", "≈ 1 (strong superposition)", p["alpha_m"]["value"],
                     p["alpha_m"]["stderr"], None, f"Chinchilla Fig. 4, {fit['n_points']} points", ""),
        headline_row("α_D (Chinchilla decomposed fit)", "–", p["alpha_D"]["value"], p["alpha_D"]["stderr"], None,
                     "Chinchilla Fig. 4", ""),
        headline_row("L0 (irreducible loss, nats)", "–", p["L0"]["value"], p["L0"]["stderr"], None,
                     "Chinchilla Fig. 4", ""),
        headline_row("N-exponent of the optimal shape β", "≈ 1/3 (Chinchilla)", se["N_exponent"]["value"],
                     se["N_exponent"].get("bootstrap_std"), agree_within(se["N_exponent"]["value"],
                     se["N_exponent"].get("bootstrap_std"), 1 / 3, 0.0), "from α_m, α_ℓ of the fit",
                     "β = α_mα_ℓ/(α_m+2α_ℓ); error from the bootstrap"),
    ]
    return "\n".join(parts), rows_h, shape
