"""The Chinchilla section's sweeps: the law on other sweeps of training runs (identify.json of each sweep,
and its rows of comparisons.csv), with their profiles, depth parts, held-out checks and the two laws side by
side. Nothing is fitted or compared here; a loss-optimal split is printed only where a sweep identifies
both exponents."""

from __future__ import annotations


import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from depthwidth.chinchilla.identify import sweep_shape
from depthwidth.chinchilla.robustness import EXPONENT_NAMES
from depthwidth.sections import Figures, plain_log_ticks, table_html


def sweeps_html(figs: Figures, summaries: list[dict], rows: pd.DataFrame) -> tuple[str, pd.DataFrame]:
    """The sweeps: method, the exponents table, the sweeps table, the α_ℓ comparison rows (claim
    "sweep: …"), the tied-tokens sentence, the held-out check, and per sweep the Δχ²(α_ℓ) profile and
    the depth part. Returns (html, the exponents table)."""
    if not summaries:
        return "", pd.DataFrame()
    table = exponent_table(summaries, bounds_of(rows))
    parts = [
        "<h3>The law on other sweeps of training runs</h3>",
        "<p>The same law fitted to each sweep of <code>chinchilla.sweeps</code> (results/chinchilla/sweeps/), "
        "with profile-likelihood intervals: the exponent is fixed on a grid, the rest refitted, and the "
        "interval is where Δχ² = ΔSSR/s² stays below 1 (68 %) or 3.84 (95 %), s² = SSR_min/(n − p). An end "
        "marked “open” is not reached within the grid: a flat direction, not a measured bound. A fit with a "
        "parameter at a bound (an exponent at 0.001 or 10, an offset at 0, a coefficient whose term vanishes) "
        "states no interval.</p>",
        table_html(
            table, "Exponents per sweep: value and profile intervals (also results/chinchilla/sweeps.csv)."
        ),
        table_html(sweep_table(summaries), "Each sweep's fit: offsets, tokens against size, errors, shape."),
        verdict_table(rows),
        tied_html(summaries),
        heldout_sweeps_html(summaries),
    ]
    parts += [figure_profile(figs, s) for s in summaries if "alpha_l" in s["profiles"]]
    parts += [figure_sweep_depth(figs, s) for s in summaries if "depth_partial" in s]
    return "\n".join(parts), table


def _end(iv: dict, side: str) -> str:
    closed, value, edge = (
        (iv["closed_lo"], iv["lo"], iv["grid"][0])
        if side == "lo"
        else (iv["closed_hi"], iv["hi"], iv["grid"][1])
    )
    if closed:
        return f"{value:.3g}"
    return f"open (< {edge:.3g})" if side == "lo" else f"open (> {edge:.3g})"


def status(s: dict, a: str) -> str:
    if a in s["fixed"]:
        return "fixed"
    if a in s["at_bound"]:
        return "at its bound"
    if a not in s["profiles"]:
        return "not profiled"
    return "identified" if s.get("identified", {}).get(a) else "not identified"


def bounds_of(rows: pd.DataFrame) -> dict[str, str]:
    """Each sweep's parameters at a bound, as its comparison row names them (rule chinchilla_compare)."""
    r = rows[rows["claim"].astype(str).str.startswith("sweep:")]
    names = r["claim"].str.replace("sweep: ", "", regex=False)
    return {n: str(b) for n, b in zip(names, r["at_bound"].fillna("")) if str(b)}


def exponent_table(summaries: list[dict], bounds: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per sweep and exponent: value, the 68 % and 95 % profile ends in columns of their own, and
    its status; no interval for a fit with any parameter at a bound (``bounds``: sweep → those names)."""
    bounds = bounds or {}
    rows = []
    for s in summaries:
        bound = bounds.get(s["sweep"], ", ".join(s["at_bound"]))
        for a, symbol in EXPONENT_NAMES.items():
            prof = s["profiles"].get(a) if not bound else None
            iv = prof["intervals"] if prof else None
            rows.append(
                {
                    "Sweep": s["sweep"],
                    "Exponent": symbol,
                    "Value": s["params"][a]["value"],
                    "68 % low": _end(iv["68%"], "lo") if iv else "–",
                    "68 % high": _end(iv["68%"], "hi") if iv else "–",
                    "95 % low": _end(iv["95%"], "lo") if iv else "–",
                    "95 % high": _end(iv["95%"], "hi") if iv else "–",
                    "Status": status(s, a) + (f"; the fit is at a bound ({bound})" if bound else ""),
                }
            )
    return pd.DataFrame(rows)


def sweep_table(summaries: list[dict]) -> pd.DataFrame:
    rows = []
    for s in summaries:
        h, shape = s.get("heldout"), sweep_shape(s)[0]
        tv = s["tokens_vs_size"]
        rows.append(
            {
                "Sweep": s["sweep"],
                "Runs": s["n"],
                "Offsets L0": len(s["groups"]) if s["group_offsets"] else 1,
                "Tokens tied to size": f"{'yes' if tv['tied'] else 'no'} (r = {tv['corr_logD_logN']:.2f})",
                "RMSE log L": s["rmse_log"],
                "Held-out RMSE log L": f"{h['rmse_log_test_mean']:.4f} ± {h['rmse_log_test_std']:.4f}"
                if h
                else "–",
                "Optimal shape m* ∝ N^a": f"{shape['width_exponent']:.3f}" if shape else "not identified",
                "ℓ* ∝ N^b": f"{shape['depth_exponent']:.3f}" if shape else "not identified",
            }
        )
    return pd.DataFrame(rows)


def verdict_table(rows: pd.DataFrame) -> str:
    """The sweeps' α_ℓ rows of comparisons.csv (never headline rows) as a table."""
    r = rows[rows["claim"].astype(str).str.startswith("sweep:")]
    if not len(r):
        return ""
    out = pd.DataFrame(
        {
            "Sweep": r["claim"].str.replace("sweep: ", "", regex=False),
            "α_ℓ": r["value"],
            "95 % low": r["low"],
            "95 % high": r["high"],
            "Against α_ℓ ≈ 1": r["verdict_text"],
            "Why": r["note"],
        }
    )
    return table_html(
        out,
        "α_ℓ of each sweep against α_ℓ ≈ 1 (ensemble averaging): the 95 % profile interval (none for a fit "
        "at a bound), which way the profile leans between 1 and 1.2 (p-values of Δχ² read as χ²₁), and why "
        "an exponent is not identified. Users' sweeps are not part of the papers' headline.",
    )


def tied_html(summaries: list[dict]) -> str:
    tied = [s for s in summaries if s["tokens_vs_size"]["tied"]]
    if not tied:
        return "<p>No sweep ties its training tokens to model size (|corr(log D, log N)| ≤ 0.9 in each).</p>"
    names = ", ".join(
        f"{s['sweep']} (corr(log D, log N) = {s['tokens_vs_size']['corr_logD_logN']:.3f})" for s in tied
    )
    return (
        f"<p>Tokens are tied to model size in {names}: there the data term c_D/D^α_D is nearly a function "
        "of width and depth, so α_D can trade against α_m, α_ℓ and L0; read those exponents with their "
        "profile intervals and correlations (identify.json), not alone.</p>"
    )


def figure_profile(figs: Figures, s: dict) -> str:
    prof = pd.DataFrame(s["profiles"]["alpha_l"]["rows"]).sort_values("value")
    ssr_min = min(s["ssr"], float(prof["ssr"].min()))
    chi = (prof["ssr"] - ssr_min) / (ssr_min / max(s["n"] - s["p"], 1))
    fig, ax = plt.subplots(figsize=(5.4, 3.8))
    ax.plot(prof["value"], chi, "o-", ms=3, color="C0")
    for lev, lab in ((1.0, "68 %"), (3.84, "95 %")):
        ax.axhline(lev, color="grey", lw=0.8, ls=":")
        ax.text(prof["value"].iloc[0], lev, lab, fontsize=8, va="bottom")
    ax.axvline(1.0, color="C3", lw=0.8, ls="--", label=r"$\alpha_\ell$ = 1")
    ax.set_xscale("log")
    ax.set_ylim(0, max(10.0, min(float(chi.max()), 30.0)))
    ax.set_xlabel(r"$\alpha_\ell$ (fixed; the rest refitted)")
    ax.set_ylabel(r"$\Delta\chi^2 = \Delta$SSR / $s^2$")
    ax.legend(fontsize=8)
    return figs.html(
        fig,
        f"profile_alpha_l_{s['sweep']}",
        f"Profile likelihood of α_ℓ on the sweep {s['sweep']} "
        f"({s['n']} runs): where the blue curve stays under the dotted lines is the 68 % / 95 % interval; the "
        "vermillion dashed line marks α_ℓ = 1. "
        "A curve that stays low to the edge of the grid means the sweep does not pin α_ℓ.",
    )


def heldout_sweeps_html(summaries: list[dict]) -> str:
    """One sentence on the held-out check of each sweep (the main fit's check, ``lawfit.held_out``)."""
    done = [s for s in summaries if "heldout" in s]
    if not done:
        return ""
    h0 = done[0]["heldout"]
    each = "; ".join(
        f"{s['sweep']} {s['heldout']['rmse_log_test_mean']:.4f} ± {s['heldout']['rmse_log_test_std']:.4f} "
        f"held out against {s['heldout']['rmse_log_train_mean']:.4f} in training"
        for s in done
    )
    return (
        f"<p>Held-out check per sweep (as for the main fit: {h0['n_splits']} random "
        f"{round(100 * (1 - h0['test_fraction']))}/{round(100 * h0['test_fraction'])} splits, the law refitted "
        f"on the larger part), RMSE of log L: {each}. A held-out error close to the training error means the "
        "law predicts runs it was not fitted to as well as those it was.</p>"
    )


def figure_sweep_depth(figs: Figures, s: dict) -> str:
    """Partial dependence on depth of one sweep: L − c_m/m^α_m − c_D/D^α_D − L0 per run against depth
    (log-log, so runs where it is ≤ 0 are left out and counted), with the fitted c_ℓ/ℓ^α_ℓ."""
    dp, p = s["depth_partial"], s["params"]
    depth, part = np.asarray(dp["depth"], float), np.asarray(dp["partial"], float)
    pos = part > 0
    fig, ax = plt.subplots(figsize=(5.8, 4.2))
    ax.scatter(
        depth[pos], part[pos], s=12, alpha=0.7, color="C0", label="L − (width + data terms + L0), per run"
    )
    grid = np.geomspace(depth.min(), depth.max(), 100)
    a_l = p["alpha_l"]["value"]
    ax.plot(
        grid,
        p["c_l"]["value"] * (grid / dp["depth_unit"]) ** -a_l,
        color="C3",
        label=rf"fitted $c_\ell/\ell^{{\alpha_\ell}}$, $\alpha_\ell$ = {a_l:.3g}",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("depth ℓ (layers)")
    ax.set_ylabel("depth part of the loss (nats/token)")
    plain_log_ticks(ax, "x")
    ax.legend(fontsize=8)
    left = int((~pos).sum())
    return figs.html(
        fig,
        f"depth_part_{s['sweep']}",
        (
            f"Partial dependence on depth, sweep {s['sweep']} ({s['n']} runs): each run's loss less the fitted width "
            f"and data terms and its offset L0 (blue), against depth, with the fitted depth term (vermillion; units: ℓ = depth/"
            f"{dp['depth_unit']:.3g}). Log-log axes; {left} run(s) where the remainder is ≤ 0 are not shown. Scatter "
            "about the curve is the fit's residual; points that do not follow it mean depth is not pinned."
        ),
    )


# ---------------------------------------------------------------- robustness across fitting choices


def split_text(s: dict, split: dict) -> str:
    """The split a law implies on a sweep: N*, D* at fixed C for the Chinchilla law; m*, ℓ* at fixed N for
    the decomposed law only where the sweep identifies α_m and α_ℓ, else why not."""
    if "a" in split:
        return f"N* ∝ C^{split['a']:.3f}, D* ∝ C^{split['b']:.3f}"
    shape, sentence = sweep_shape(s)
    if shape is None:
        return "not identified (" + sentence.split("(", 1)[-1]
    return f"m* ∝ N^{shape['width_exponent']:.3f}, ℓ* ∝ N^{shape['depth_exponent']:.3f}"


def laws_html(summaries: list[dict]) -> str:
    """Both laws on every sweep: AIC/BIC, held-out error and the split each implies."""
    rows = []
    for s in summaries:
        if "laws" not in s:
            continue
        for name in ("decomposed", "chinchilla"):
            e = s["laws"][name]
            rows.append(
                {
                    "Sweep": s["sweep"],
                    "Law": name,
                    "AIC": e["aic"],
                    "BIC": e["bic"],
                    "Held-out RMSE log L": (e["heldout"] or {}).get("rmse_log_test_mean"),
                    "Optimal split": split_text(s, e["split"]),
                }
            )
    if not rows:
        return ""
    return table_html(
        pd.DataFrame(rows),
        "The decomposed law beside the Chinchilla law on each sweep (same offsets and loss): AIC/BIC from the "
        "sum of squared log residuals (lower is better), held-out RMSE of log L, and the split each implies "
        "(none where the sweep does not identify the exponents it needs).",
    )
