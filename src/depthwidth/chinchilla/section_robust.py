"""The Chinchilla section's robustness panel (each exponent across losses and cuts, from robustness.csv,
which rule chinchilla_compare writes) and the runs' leverage (delta_scan.csv, leverage.csv). Nothing is
fitted or compared here."""

from __future__ import annotations

import html

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator

from depthwidth.chinchilla.robustness import EXPONENT_NAMES, TESTED, sentence
from depthwidth.chinchilla.section_fit import AXIS, LOSS_NAMES
from depthwidth.papers import ALPHA_L_CHINCHILLA
from depthwidth.sections import Figures, table_html

# Each fit's colour in the robustness figure and its name in the caption: C0 and C3 of the report's
# colour-blind palette (sections.THEME), #0173b2 and #d55e00.
LOSS_COLOURS = {"squared": ("C0", "blue"), "huber": ("C3", "vermillion")}
Z95_ERR = 1.959964


def robustness_html(figs: Figures, table: pd.DataFrame, rows: pd.DataFrame, fit_huber: dict, deltas) -> str:
    """The robustness panel: like for like at the paper's cut (the comparison records), the Huber fit on all
    points as a sensitivity, one sentence per exponent, the figure and the α_ℓ rows of each choice."""
    by = rows.set_index("key")
    like = "; ".join(
        f"{r['quantity']}: {r['value']:.3f}"
        + (f" ± {r['err']:.3f}" if pd.notna(r["err"]) else "")
        + f" ({r['verdict_text']})"
        for key in ("alpha_l_converged", "alpha_l_huber_cut")
        if key in by.index
        for r in [by.loc[key]]
    )
    hub = fit_huber["params"]["alpha_l"]
    intro = (
        "<h3>What the points say about the exponents</h3>"
        f"<p>Like for like at the paper's cut: {html.escape(like)}. The p-values are those of the profile "
        "statistics read as χ²₁, for least squares and Huber alike. "
        f"The Huber fit on all {fit_huber['n_points']} points gives α_ℓ = {hub['value']:.3f}, a sensitivity to "
        "the cut and to δ, not a like-for-like comparison with the paper: on all points α_ℓ is "
        + ", ".join(
            f"{r['alpha_l']:.2f} ({LOSS_NAMES[r['loss']] if r['loss'] == 'squared' else f'δ = {r.huber_delta:g}'})"
            for _, r in deltas.iterrows()
        )
        + ".</p>"
    )
    sentences = "".join(f"<p><b>{html.escape(sentence(table, a))}</b></p>" for a in EXPONENT_NAMES)
    return intro + sentences + figure_robustness(figs, table) + choices_html(table)


def choices_html(table: pd.DataFrame) -> str:
    t = table[table["exponent"] == "alpha_l"]
    out = pd.DataFrame(
        {
            "Loss": t["loss"].map(LOSS_NAMES),
            "δ": t["huber_delta"],
            "k": t["drop_highest"],
            "Points": t["n_points"],
            "α_ℓ": t["value"],
            "Error": t["error"],
            "Error from": [
                f"bootstrap, {n} resamples" if kind == "bootstrap std" else "covariance"
                for kind, n in zip(t["error_kind"], t["resamples"])
            ],
            **{f"p(α_ℓ = {v:g})": t[f"p_{v:g}"] for v in TESTED["alpha_l"]},
        }
    )
    return table_html(
        out,
        "α_ℓ at each choice (loss × k highest-loss runs left out): estimate and error (the Huber rows' "
        "bootstrap sd over runs has a Monte Carlo error of 1/√(2(B − 1)): 13 % at 30 resamples, 5 % at 200), "
        "and the p-value of α_ℓ = 1, 1.2, 1.3 from the profile statistic read as χ²₁ (least squares: "
        "n ln(SSR/SSR_min); Huber: 2ΔH·mean ψ′/mean ψ²). All exponents: robustness.csv.",
    )


def figure_robustness(figs: Figures, table: pd.DataFrame) -> str:
    fig, axes = plt.subplots(1, len(EXPONENT_NAMES), figsize=(10, 3.6))
    for ax, name in zip(axes, EXPONENT_NAMES):
        t = table[table["exponent"] == name]
        for loss, g in t.groupby("loss"):
            shift = 1.0 if loss == "huber" else -1.0
            ax.errorbar(
                g["drop_highest"] + shift,
                g["value"],
                yerr=Z95_ERR * g["error"],
                fmt="o",
                ms=4,
                capsize=2,
                color=LOSS_COLOURS[loss][0],
                label=LOSS_NAMES[loss],
            )
        for v in TESTED[name]:
            ax.axhline(v, color="grey", lw=0.8, ls=":")
        ax.set_xlabel("k (highest-loss runs left out)")
        ax.set_ylabel(AXIS[name])
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[0].axhspan(
        ALPHA_L_CHINCHILLA.value - ALPHA_L_CHINCHILLA.err,
        ALPHA_L_CHINCHILLA.value + ALPHA_L_CHINCHILLA.err,
        color="grey",
        alpha=0.12,
        label=f"paper {ALPHA_L_CHINCHILLA.text}",
    )
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    deltas = sorted(set(table.loc[table["loss"] == "huber", "huber_delta"]))
    return figs.html(
        fig,
        "robustness",
        f"Each exponent against the cut k, with 95 % intervals (± 1.96 errors): {LOSS_COLOURS['squared'][1]} "
        f"least squares (lmfit's covariance), {LOSS_COLOURS['huber'][1]} Huber δ = "
        f"{', '.join(f'{x:g}' for x in deltas)} (bootstrap sd over runs). Dotted: the tested values; shaded: "
        f"the paper's α_ℓ = {ALPHA_L_CHINCHILLA.text}.",
    )


def leverage_html(figs: Figures, lev: pd.DataFrame, deltas: pd.DataFrame, fit: dict) -> str:
    """Why the cut moves α_ℓ: the runs it leaves out are high-leverage runs at small D, not residual
    outliers under the Huber fit; and the all-points fit at each δ."""
    out, kept = lev[lev["left_out_by_cut"]], lev[~lev["left_out_by_cut"]]
    med = lambda s: float(np.median(s))  # noqa: E731
    text = (
        f"<p>The cut of the {fit['drop_highest_loss']} highest losses leaves out {len(out)} runs (ties at "
        f"the threshold). They are not residual outliers under the Huber fit on all points (median |r| "
        f"{med(np.abs(out['residual_huber'])):.4f} against {med(np.abs(kept['residual_huber'])):.4f}) but "
        f"high-leverage runs at small D (median D {med(out['tokens']) / 1e9:.1f}B against "
        f"{med(kept['tokens']) / 1e9:.1f}B tokens; mean hat value {out['hat'].mean():.3f} against "
        f"{kept['hat'].mean():.3f}; mean Cook's distance {out['cooks_distance'].mean():.3f} against "
        f"{kept['cooks_distance'].mean():.3f}). A Huber M-estimator bounds the influence of residuals, not "
        "of leverage, so the robust loss does not replace the cut.</p>"
    )
    cols = {
        "loss": "Loss",
        "huber_delta": "δ",
        "n_points": "Points",
        "n_inside": "Runs with |r| ≤ δ",
        "alpha_l": "α_ℓ",
        "alpha_m": "α_m",
        "alpha_D": "α_D",
        "L0": "L0",
    }
    d = deltas[list(cols)].rename(columns=cols)
    d["Loss"] = d["Loss"].map(LOSS_NAMES)
    return (
        text
        + figure_leverage(figs, kept, out)
        + table_html(d, "The fit on all points at each Huber δ and with least squares.")
    )


def figure_leverage(figs: Figures, kept: pd.DataFrame, out: pd.DataFrame) -> str:
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for g, c, lab in ((kept, "C0", "kept"), (out, "C3", f"left out by the cut ({len(out)} runs)")):
        axes[0].scatter(g["tokens"], g["hat"], s=12, color=c, label=lab)
        axes[1].scatter(g["tokens"], np.abs(g["residual_huber"]), s=12, color=c, label=lab)
    axes[0].set_ylabel("hat value (least squares, all points)")
    axes[1].set_ylabel("|log residual|, Huber fit on all points")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("tokens D")
    axes[1].set_yscale("log")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return figs.html(
        fig,
        "leverage",
        "Each run's hat value under least squares on all points, and its |log residual| under the Huber fit "
        "on all points, against D; blue: the runs kept, vermillion: the runs the paper's cut leaves out.",
    )
