"""The Chinchilla stage's comparisons with the papers, as data (rule chinchilla_compare): every row the
section and the headline show, built with the one verdict procedure (``depthwidth.verdicts``) from the
files of the fit grid, the dropped-points scans and the sweeps, and written to
``results/chinchilla/comparisons.csv``; with it the robustness table (``robustness.csv``) and the
loss-optimal shape table (``optimal_shape.csv``). The section only renders these files.

Errors. The decomposed fit's errors are the bootstrap over runs of the squared cell (rule chinchilla_fit,
``chinchilla.fit.bootstrap_resamples``); lmfit's covariance error is stated instead only where it is within
1.25× of that bootstrap (``verdicts.choose_error``). The Huber fit at the paper's cut takes its error from the
Huber scan's bootstrap at that cut (``chinchilla.huber.cut_bootstrap_resamples``). A bootstrap of fewer than
``verdicts.MIN_RESAMPLES`` resamples states no error. A fit with any parameter at a bound (an exponent at its
cap, an offset at 0, a coefficient whose term is under 0.1 % of the loss) states none either.

Calibration. Every profile statistic is read as χ²₁, for least squares and Huber alike: least squares
n·ln(SSR(a)/SSR_min), Huber 2(H(a) − H_min)·mean ψ′/mean ψ² (``robustness.profile_statistics``); the sweeps'
Δχ² = ΔSSR/s². The p-value of a value a is P(χ²₁ > statistic). Which way the data lean is the candidate
with the larger p-value (``verdicts.leans``).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
from scipy.stats import chi2

from depthwidth import verdicts as V
from depthwidth.chinchilla.identify import interval_text
from depthwidth.chinchilla.robustness import TESTED, choices_table, stat_column
from depthwidth.chinchilla.points import POINT_COLUMNS, POINTS_RULE
from depthwidth.chinchilla.shape import fit_scales, shape_table
from depthwidth.integrity import read_json, read_table, write_table
from depthwidth.laws.lawfit import LOG_C_BOUNDS
from depthwidth.laws.law import ALPHA_BOUNDS, EXPONENTS, PARAMS, decomposed_law, kept_mask, select_points
from depthwidth.optimal_shape import shape_exponents
from depthwidth.papers import ALPHA_L_CHINCHILLA, ALPHA_M_STRONG, CHINCHILLA_ADAM_FIT

STAGE, PAPER, LINK = "chinchilla", "depth", "docs/stages/chinchilla.md"
CLAIM_ALPHA_L = "α_ℓ from the Chinchilla runs"
CLAIM_ALPHA_M = "α_m from the Chinchilla runs"
CLAIM_SHAPE = "loss-optimal shape from the Chinchilla runs"
# The values of α_ℓ whose p-values say which way the data lean: ensemble averaging and the paper's value.
LEAN_VALUES = (1.0, 1.2)
LEVEL = 0.95
# A coefficient whose term is below this share of the median loss counts as at its bound 0.
TERM_SHARE_AT_ZERO = 1e-3
CHI2_TEST = "profile likelihood ratio read as χ²₁ (p = P(χ²₁ > statistic))"


def p_value(stat: float | None) -> float | None:
    """P(χ²₁ > stat); None where the statistic is missing."""
    if stat is None or not math.isfinite(stat):
        return None
    return float(chi2.sf(max(stat, 0.0), 1))


def scan_row(scan: pd.DataFrame, k: int) -> pd.Series | None:
    at = scan[scan["drop_highest"] == k]
    return at.iloc[0] if len(at) else None


def fit_bootstrap(boot: pd.DataFrame, column, unit: str = "runs") -> V.Error | None:
    """The bootstrap error of one column of a fit's bootstrap rows; None below ``verdicts.MIN_RESAMPLES``."""
    values = boot[column] if isinstance(column, str) else column
    try:
        return V.bootstrap_error(values, unit)
    except V.VerdictError:
        return None


def scan_bootstrap(row: pd.Series, name: str) -> V.Error | None:
    """The bootstrap error a scan row stores for ``name`` (sd, 95 % percentiles, resamples); None where the
    row has none or fewer than ``verdicts.MIN_RESAMPLES`` resamples."""
    n = int(row.get("bootstrap_resamples", 0) or 0)
    sd = row.get(f"{name}_bootstrap_std")
    if n < V.MIN_RESAMPLES or sd is None or not np.isfinite(sd):
        return None
    sd = float(sd)
    lo, hi = float(row[f"{name}_bootstrap_lo"]), float(row[f"{name}_bootstrap_hi"])
    return V.Error(sd, V.BOOTSTRAP, "runs", n, sd / math.sqrt(2 * (n - 1)), lo, hi, LEVEL)


def stated(covariance: float | None, boot: V.Error | None) -> V.Error:
    """The error to state: ``choose_error`` with the bootstrap's interval kept; none without a bootstrap."""
    if boot is None:
        return V.NONE
    err = V.choose_error(covariance, boot)
    return dataclasses.replace(err, low=boot.low, high=boot.high, level=boot.level)


def error_note(err: V.Error, covariance: float | None, boot: V.Error | None, resamples: int) -> str:
    if boot is None:
        return (
            f"no error stated: the bootstrap has {resamples} resamples, fewer than {V.MIN_RESAMPLES} "
            "(raise the bootstrap resample count)"
        )
    if err.method == V.COVARIANCE:
        return (
            f"covariance ± {covariance:.3g} within {V.COVARIANCE_WITHIN}× of the bootstrap's {boot.value:.3g}"
        )
    if covariance is not None and math.isfinite(covariance):
        return f"covariance ± {covariance:.2g} not stated: {covariance / boot.value:.2f}× the bootstrap's"
    return ""


def lean_verdict(p_values: dict[str, float | None], paper_key: str, test: str) -> V.Verdict:
    """The candidates' p-values as one verdict: "no" where the paper's value is excluded (p < 0.05),
    "yes" where it is kept and every other candidate excluded, else "cannot tell" with the lean."""
    ps = {k: p for k, p in p_values.items() if p is not None}
    if paper_key not in ps:
        return V.not_tested("no profile statistic of the paper's value")
    alpha = 1 - LEVEL
    lean = V.leans(ps)
    excludes = "values with p < 0.05"
    if ps[paper_key] < alpha:
        return V.Verdict(V.NO, f"{paper_key} excluded; {lean}", test, excludes, ps[paper_key])
    if all(p < alpha for k, p in ps.items() if k != paper_key) and len(ps) > 1:
        return V.Verdict(V.YES, "", test, excludes, ps[paper_key])
    return V.Verdict(V.CANNOT_TELL, lean, test, excludes, ps[paper_key])


def row_p_values(row: pd.Series | None, exponent: str, values) -> dict[str, float]:
    """The χ²₁ p-value of each value from a scan row's profile statistics (values without one left out)."""
    if row is None:
        return {}
    ps = {f"{v:g}": p_value(float(row.get(stat_column(exponent, v), np.nan))) for v in values}
    return {k: p for k, p in ps.items() if p is not None}


# ---------------------------------------------------------------- the decomposed law on the Chinchilla points
def fit_bounds(values: dict, lmin: float) -> list[str]:
    """The parameters of a decomposed-law fit on the Chinchilla points at a bound of the fitting core:
    an exponent at 0.001 or 10, ln c at −20 or 30, L0 at 0 or at the lowest loss ``lmin``."""
    vals, bounds = {}, {}
    for k, v in values.items():
        if k in EXPONENTS:
            vals[k], bounds[k] = v, ALPHA_BOUNDS
        elif k.startswith("c_"):
            vals[k], bounds[k] = math.log(v) if v > 0 else -math.inf, LOG_C_BOUNDS
        elif k == "L0":
            vals[k], bounds[k] = v, (0.0, lmin)
    return V.at_bound(vals, bounds) + [k for k, v in vals.items() if v == -math.inf]


def bounded_note(bound, note: str) -> str:
    """A row's note, or for a fit at a bound why no error is stated (its errors are not an interior
    optimum's)."""
    return f"no error stated: the fit is at a bound ({', '.join(bound)})" if bound else note


def guarded(verdict: V.Verdict, bound: list[str]) -> V.Verdict:
    """``verdict``, or "not tested" where the fit has a parameter at a bound."""
    return V.not_tested(f"the fit is at a bound ({', '.join(bound)})") if bound else verdict


def alpha_l_rows(
    fit: dict, boot: pd.DataFrame, scan: pd.DataFrame, scan_huber: pd.DataFrame | None, lmin: float = math.inf
) -> list:
    """α_ℓ: the paper's procedure reproduced, the converged optimum, the Huber fit at the paper's cut."""
    cut, paper = fit["drop_highest_loss"], ALPHA_L_CHINCHILLA
    bound = fit_bounds({k: p["value"] for k, p in fit["params"].items()}, lmin)
    rows = []
    adam = fit["variants"].get("paper_adam")
    if adam:
        v, ref = adam["params"]["alpha_l"]["value"], CHINCHILLA_ADAM_FIT["alpha_l"]
        se = adam["params"]["alpha_l"].get("stderr_paper")
        rows.append(
            V.compare(
                STAGE,
                "alpha_l_paper_procedure",
                PAPER,
                CLAIM_ALPHA_L,
                "α_ℓ: the paper's procedure reproduced",
                V.procedure_test(v, ref.value),
                value=v,
                value_text=f"{v:.5g}",
                paper_value=ref.value,
                paper_text=f"{ref.value:g} (the notebook's Adam fit)",
                paper_source=ref.source,
                note=f"{adam['steps']} Adam steps from the paper's start with its notebook's dtypes; the same "
                "points and objective as the paper, so only the procedure is compared"
                + (f" (the paper's error formula at this point: ± {se:.2f})" if se else ""),
                link=LINK,
            )
        )
    a = fit["params"]["alpha_l"]
    b = fit_bootstrap(boot, "alpha_l")
    err = stated(a["stderr"], b)
    ps = row_p_values(scan_row(scan, cut), "alpha_l", LEAN_VALUES)
    rows.append(
        V.compare(
            STAGE,
            "alpha_l_converged",
            PAPER,
            CLAIM_ALPHA_L,
            "α_ℓ: converged optimum (least squares, the paper's points)",
            guarded(
                lean_verdict(ps, f"{paper.value:g}", CHI2_TEST + ", least squares n·ln(SSR/SSR_min)"), bound
            ),
            value=a["value"],
            bound_params=bound,
            err=err,
            paper_value=paper.value,
            paper_err=paper.err,
            paper_source=paper.source,
            note=bounded_note(
                bound,
                _join(
                    "the same 203 points and objective as the paper's 1.2, fitted to convergence (the paper's Adam "
                    "stopped at 50k steps): two procedures on one data set, so their noise is not compared",
                    _interval(err),
                    error_note(err, a["stderr"], b, len(boot)),
                ),
            ),
            link=LINK,
        )
    )
    if scan_huber is not None:
        rows += huber_rows(scan_huber, cut, paper, lmin)
    return rows


def huber_rows(scan_huber: pd.DataFrame, cut: int, paper, lmin: float = math.inf) -> list:
    """The Huber fit at the paper's cut (error: the scan's bootstrap there; lean by the χ²₁ profile)."""
    r = scan_row(scan_huber, cut)
    if r is None:
        return []
    b = scan_bootstrap(r, "alpha_l")
    err = stated(float(r["alpha_l_stderr"]), b)
    ps = row_p_values(r, "alpha_l", LEAN_VALUES)
    test = CHI2_TEST + ", Huber 2ΔH·mean ψ′/mean ψ²"
    bound = fit_bounds({k: float(r[k]) for k in PARAMS}, lmin)
    return [
        V.compare(
            STAGE,
            "alpha_l_huber_cut",
            PAPER,
            CLAIM_ALPHA_L,
            f"α_ℓ: Huber (δ = {r['huber_delta']:g}) at the paper's cut",
            guarded(lean_verdict(ps, f"{paper.value:g}", test), bound),
            value=float(r["alpha_l"]),
            bound_params=bound,
            err=err,
            paper_value=paper.value,
            paper_err=paper.err,
            paper_source=paper.source,
            note=bounded_note(
                bound,
                _join(
                    f"the paper's {int(r['n_points'])} points with a robust loss: the same data as the paper's "
                    "value, so the procedures are compared, not their noise",
                    _interval(err),
                    error_note(err, float(r["alpha_l_stderr"]), b, int(r.get("bootstrap_resamples", 0) or 0)),
                ),
            ),
            link=LINK,
        )
    ]


def huber_all_points_row(fit_huber: dict, boot_huber: pd.DataFrame) -> V.Comparison:
    """The Huber cell on all points: a sensitivity on another point set, not a test of the paper's value."""
    p = fit_huber["params"]["alpha_l"]
    b = fit_bootstrap(boot_huber, "alpha_l")
    err = stated(p["stderr"], b)
    return V.compare(
        STAGE,
        "alpha_l_huber_all_points",
        PAPER,
        CLAIM_ALPHA_L,
        f"α_ℓ: Huber (δ = {fit_huber['huber_delta']:g}) on all {fit_huber['n_points']} points",
        V.not_tested("a sensitivity on another point set than the paper's (no runs left out)"),
        value=p["value"],
        err=err,
        paper_value=ALPHA_L_CHINCHILLA.value,
        paper_err=ALPHA_L_CHINCHILLA.err,
        paper_source=ALPHA_L_CHINCHILLA.source,
        note=_join(_interval(err), error_note(err, p["stderr"], b, len(boot_huber))),
        headline=False,
        link=LINK,
    )


def other_rows(fit: dict, boot: pd.DataFrame, scan: pd.DataFrame, lmin: float = math.inf) -> list:
    """α_m against ≈ 1, α_D and L0 (no paper number), the N-exponent β of the optimal shape against ≈ 1/3."""
    rows = []
    src = f"Chinchilla Fig. 4, {fit['n_points']} points"
    bound = fit_bounds({k: p["value"] for k, p in fit["params"].items()}, lmin)
    am = fit["params"]["alpha_m"]
    b = fit_bootstrap(boot, "alpha_m")
    err = stated(am["stderr"], b)
    ps = row_p_values(scan_row(scan, fit["drop_highest_loss"]), "alpha_m", TESTED["alpha_m"])
    verdict = (
        V.interval_test(b.low, b.high, ALPHA_M_STRONG.value, what="bootstrap interval")
        if b
        else V.not_tested("no bootstrap of 200 or more resamples")
    )
    rows.append(
        V.compare(
            STAGE,
            "alpha_m",
            PAPER,
            CLAIM_ALPHA_M,
            "α_m (least squares, the paper's points)",
            guarded(verdict, bound),
            value=am["value"],
            bound_params=bound,
            err=err,
            paper_value=ALPHA_M_STRONG.value,
            paper_text=f"≈ {ALPHA_M_STRONG.value:g} (strong superposition)",
            paper_source=ALPHA_M_STRONG.source,
            note=bounded_note(
                bound,
                _join(
                    V.leans(ps) + " (χ²₁ profile)" if ps else "", error_note(err, am["stderr"], b, len(boot))
                ),
            ),
            link=LINK,
        )
    )
    for key, quantity in (("alpha_D", "α_D (least squares)"), ("L0", "L0, irreducible loss (nats)")):
        p = fit["params"][key]
        b = fit_bootstrap(boot, key)
        err = stated(p["stderr"], b)
        rows.append(
            V.compare(
                STAGE,
                key,
                PAPER,
                CLAIM_ALPHA_L,
                quantity,
                V.no_paper_number(),
                value=p["value"],
                bound_params=bound,
                err=err,
                paper_source=src,
                note=bounded_note(bound, _join(_interval(err), error_note(err, p["stderr"], b, len(boot)))),
                link=LINK,
            )
        )
    rows.append(beta_row(fit, boot, bound))
    return rows


def beta_row(fit: dict, boot: pd.DataFrame, bound: list[str] = ()) -> V.Comparison:
    """β = α_mα_ℓ/(α_m + 2α_ℓ), the N-exponent of the width-plus-depth loss at the optimal shape, against
    Chinchilla's ≈ 1/3 (stated without error): the bootstrap interval over runs holds it or not."""
    v = shape_exponents(fit["params"]["alpha_m"]["value"], fit["params"]["alpha_l"]["value"])["N_exponent"]
    samples = [shape_exponents(m, ell)["N_exponent"] for m, ell in zip(boot["alpha_m"], boot["alpha_l"])]
    b = fit_bootstrap(boot, np.asarray(samples, float)) if len(boot) else None
    verdict = (
        V.interval_test(b.low, b.high, 1 / 3, what="bootstrap interval")
        if b
        else V.not_tested("no bootstrap of 200 or more resamples")
    )
    return V.compare(
        STAGE,
        "shape_beta",
        PAPER,
        CLAIM_SHAPE,
        "N-exponent β of the loss-optimal shape",
        guarded(verdict, list(bound)),
        bound_params=list(bound),
        value=v,
        err=b or V.NONE,
        paper_value=1 / 3,
        paper_text="≈ 1/3 (Chinchilla)",
        paper_source="Hoffmann et al. 2022: loss ∝ N^−1/3 at the compute-optimal shape",
        note=bounded_note(
            bound, _join("β = α_mα_ℓ/(α_m + 2α_ℓ) of each bootstrap fit", _interval(b or V.NONE))
        ),
        link=LINK,
    )


# ---------------------------------------------------------------- sweeps
def sweep_bounds(s: dict, runs: pd.DataFrame) -> list[str]:
    """The parameters of a sweep's fit at a bound: an exponent at its cap, an offset at 0 or at its group's
    lowest loss, a coefficient whose term at the sweep's geometric-mean shape is under
    ``TERM_SHARE_AT_ZERO`` of the median loss (the fit is in geometric-mean units, so that term is c)."""
    p = {k: v["value"] for k, v in s["params"].items() if k not in s["fixed"]}
    loss = runs["loss"].to_numpy(float)
    values, bounds = {}, {}
    for k, v in p.items():
        if k in EXPONENTS:
            values[k], bounds[k] = v, ALPHA_BOUNDS
        elif k.startswith("L0"):
            g = k[3:-1] if "[" in k else None
            lmin = float(runs.loc[runs["group"].astype(str) == g, "loss"].min()) if g else float(loss.min())
            values[k], bounds[k] = v, (0.0, lmin)
        elif k.startswith("c_"):
            values[k], bounds[k] = v / float(np.median(loss)), (0.0, 1.0)
    return V.at_bound(values, bounds, rtol=TERM_SHARE_AT_ZERO)


def profile_p_values(s: dict, exponent: str, values) -> dict[str, float | None]:
    """P(χ²₁ > Δχ²) at each value, Δχ² = ΔSSR/s² read off the sweep's profile (interpolated in log α);
    none for a Huber sweep, whose profile rows carry the objective without its calibration factor."""
    prof = s["profiles"].get(exponent)
    if prof is None or s.get("loss", "squared") != "squared":
        return {}
    rows = pd.DataFrame(prof["rows"]).sort_values("value")
    x, ssr = rows["value"].to_numpy(float), rows["ssr"].to_numpy(float)
    ssr_min = min(s["ssr"], float(ssr.min()))
    stat = (ssr - ssr_min) / (ssr_min / max(s["n"] - s["p"], 1))
    out = {}
    for v in values:
        inside = x.min() <= v <= x.max()
        out[f"{v:g}"] = p_value(float(np.interp(np.log(v), np.log(x), stat))) if inside else None
    return out


def not_identified_why(s: dict, runs: pd.DataFrame, exponent: str = "alpha_l") -> str:
    """Why a sweep does not identify an exponent, in words: collinear width and depth, tokens tied to size,
    too few distinct values, a profile open at an end (flat), a bound."""
    why = []
    lw, ld = np.log(runs["width"].to_numpy(float)), np.log(runs["depth"].to_numpy(float))
    if np.std(lw) > 0 and np.std(ld) > 0:
        r = float(np.corrcoef(lw, ld)[0, 1])
        if abs(r) > 0.8:
            why.append(f"width and depth move together (corr(log m, log ℓ) = {r:.2f})")
    n_depths = int(runs["depth"].nunique())
    if n_depths < 3:
        why.append(f"only {n_depths} distinct depths")
    tv = s["tokens_vs_size"]
    if tv["tied"]:
        why.append(f"tokens tied to size (corr(log D, log N) = {tv['corr_logD_logN']:.2f})")
    prof = s["profiles"].get(exponent)
    if prof is not None:
        iv = prof["intervals"]["95%"]
        open_ends = [
            side for side, closed in (("below", iv["closed_lo"]), ("above", iv["closed_hi"])) if not closed
        ]
        if open_ends:
            why.append(f"flat profile: the 95 % interval is open {' and '.join(open_ends)}")
    if exponent in s["at_bound"]:
        why.append("at its bound")
    return "; ".join(why)


def sweep_rows(s: dict, runs: pd.DataFrame) -> list:
    """α_ℓ of one sweep (claim "sweep: <name>", never a headline row): its 95 % profile interval (no error
    for a fit at a bound) against α_ℓ ≈ 1, the lean between 1 and 1.2, and why it is not identified."""
    name = s["sweep"]
    if "alpha_l" in s["fixed"]:
        return []
    a = s["params"]["alpha_l"]
    bound = sweep_bounds(s, runs)
    why = not_identified_why(s, runs)
    ps = {k: p for k, p in profile_p_values(s, "alpha_l", LEAN_VALUES).items() if p is not None}
    lean = V.leans(ps) if ps else ""
    err = V.NONE
    if bound:
        verdict = V.not_tested(f"the fit is at a bound ({', '.join(bound)}): no error or interval is stated")
    elif "alpha_l" not in s["profiles"]:
        verdict = V.not_tested("α_ℓ not profiled on this sweep")
    else:
        iv = s["profiles"]["alpha_l"]["intervals"]["95%"]
        err = V.Error(None, V.PROFILE, low=iv["lo"], high=iv["hi"], level=LEVEL)
        if ps:  # which way the profile leans between 1 and 1.2, as for the main fit
            verdict = lean_verdict(ps, "1", CHI2_TEST + ", Δχ² = ΔSSR/s²")
        elif iv["closed_lo"] and iv["closed_hi"]:
            verdict = V.interval_test(iv["lo"], iv["hi"], 1.0, what="profile interval")
        else:
            verdict = V.cannot_tell(lean or f"the 95 % profile interval is open: {why}")
            verdict = dataclasses.replace(verdict, test="the claim inside our 95 % profile interval")
    return [
        V.compare(
            STAGE,
            f"sweep_{name}_alpha_l",
            PAPER,
            f"sweep: {name}",
            f"α_ℓ (sweep {name}, {s['n']} runs)",
            verdict,
            value=a["value"],
            err=err,
            paper_value=1.0,
            paper_text="≈ 1 (ensemble averaging)",
            paper_source="depth paper: α_ℓ ≈ 1 when layers average",
            bound_params=bound,
            note=_join(
                f"95 % profile interval {interval_text(s, 'alpha_l', '95%')}" if not bound else "",
                lean if verdict.word not in (V.CANNOT_TELL, V.NO) and not bound else "",
                f"not identified: {why}" if why and not s["identified"].get("alpha_l", False) else "",
            ),
            # on the first screen in the sweeps' own table (claim "sweep: …"), never among the papers' rows
            headline=True,
            link=LINK,
        )
    ]


def _interval(err: V.Error) -> str:
    if err.low is None or err.high is None or err.method == V.PROFILE:
        return ""
    return f"bootstrap 95 % [{err.low:.3g}, {err.high:.3g}]"


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


# ---------------------------------------------------------------- the rule
def comparisons(inputs: dict, n_params: list[float]) -> tuple:
    """(comparison records, optimal-shape table, robustness table, the fit's points table) from the rule's
    input files."""
    fit = read_json(inputs["fit"], "chinchilla_fit", ("params", "law", "loss", "variants"))
    boot = read_table(inputs["bootstrap"], "chinchilla_fit")
    scan = read_table(inputs["scan"], "chinchilla_drop_scan")
    scan_huber = (
        read_table(inputs["scan_huber"], "chinchilla_drop_scan") if inputs.get("scan_huber") else None
    )
    points = read_table(inputs["points"], POINTS_RULE, POINT_COLUMNS)
    lmin = float(points["loss"].min())
    rows = alpha_l_rows(fit, boot, scan, scan_huber, lmin) + other_rows(fit, boot, scan, lmin)
    if inputs.get("fit_huber"):
        fit_huber = read_json(inputs["fit_huber"], "chinchilla_fit", ("params", "n_points", "huber_delta"))
        rows.append(huber_all_points_row(fit_huber, read_table(inputs["bootstrap_huber"], "chinchilla_fit")))
    for path, runs_path in zip(_list(inputs.get("sweeps")), _list(inputs.get("runs"))):
        s = read_json(path, "chinchilla_sweep_identify", ("sweep", "params"))
        runs = read_table(
            runs_path, "chinchilla_sweep_points", ("width", "depth", "loss"), dtype={"group": str}
        )
        rows += sweep_rows(s, runs)
    robust = choices_table([scan] + ([scan_huber] if scan_huber is not None else []))
    return rows, shape_table(fit, boot, n_params), robust, fit_points(points, fit)


def _list(x) -> list:
    if not x:
        return []
    return [x] if isinstance(x, str) else list(x)


def chinchilla_compare(inputs: dict, n_params: list[float], out: dict) -> list:
    """Rule chinchilla_compare: write ``out["comparisons"]`` (sealed, ``verdicts.write_comparisons``),
    ``out["shape"]``, ``out["robustness"]`` and ``out["fit_points"]`` (sealed tables)."""
    rows, shape, robust, fp = comparisons(inputs, n_params)
    write_table(shape, out["shape"])
    write_table(robust, out["robustness"])
    write_table(fp, out["fit_points"])
    V.write_comparisons(out["comparisons"], rows)
    return rows


def fit_points(points: pd.DataFrame, fit: dict) -> pd.DataFrame:
    """What the section's fit figures draw, per point: loss, the fitted law L̂, whether the fit used it,
    depth in layers, its depth part L − (width + data terms + L0) and the fitted depth term c_ℓ/ℓ^α_ℓ."""
    v = {k: fit["params"][k]["value"] for k in PARAMS}
    d = select_points(points, 0, *fit_scales(fit))
    pred = decomposed_law(d.m, d.ell, d.D, *(v[k] for k in PARAMS))
    rest = v["c_m"] * d.m ** -v["alpha_m"] + v["c_D"] * d.D ** -v["alpha_D"] + v["L0"]
    return pd.DataFrame(
        {
            "loss": d.loss,
            "predicted": pred,
            "used": kept_mask(points["loss"].to_numpy(float), fit["drop_highest_loss"]),
            "n_layers": points["n_layers"].to_numpy(float),
            "depth_part": d.loss - rest,
            "depth_term": v["c_l"] * d.ell ** -v["alpha_l"],
        }
    )
