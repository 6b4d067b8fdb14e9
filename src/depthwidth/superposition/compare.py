"""The superposition stage's comparisons with the paper (rule superposition_compare):
``results/superposition/comparisons.csv``, one record per claim and cell (``depthwidth.verdicts``).

- Strong superposition (the most negative γ of the run, γ < 0): per α, our α_m against the paper's stated
  "≈ 1, independent of α" (difference test on the bootstrap-over-seeds error, with the config's allowance
  shown in the row with its reason) and, where the paper-figures stage runs, against what the paper draws at
  that cell (its Fig. 6e point, else its Fig. 4b heat map: the record of rule paperfigs_compare for Figs.
  4b/6e, copied, so the headline and the figure section give one answer for the same cell); and the test of
  the α-trend (the weighted slope of α_m on α against the paper's 0).
- Weak superposition (the largest γ > 0): per α > 1, α_m against the stated α − 1, and against the paper's
  drawn Fig. 5b point at that cell (copied from the Fig. 5b record).

Each row's note states the lack of fit of the pooled-seed line (its F-test against the width means) and the
exponent of the line through the width means with its error.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pandas as pd

from depthwidth import papers
from depthwidth import verdicts as V
from depthwidth.integrity import read_table

log = logging.getLogger("depthwidth.superposition")

STAGE = "superposition"
LINK = "docs/stages/superposition.md"
SOURCE = "Liu, Liu & Gore 2025 (arXiv 2505.10465), Sec. 4 and Figs. 4b, 5b, 6e"
STRONG_CLAIM = "strong superposition: loss ∝ 1/m, independent of α"
WEAK_CLAIM = "weak superposition: α_m = α − 1"
ALLOWANCE_REASON = (
    "finite n and training steps shift a toy exponent from its large-n limit "
    "(superposition.analysis.tolerance)"
)
#: the columns of exponents.csv this module reads
COLUMNS = (
    "distribution",
    "alpha",
    "gamma",
    "exponent",
    "stderr",
    "boot_sd",
    "boot_lo",
    "boot_hi",
    "boot_resamples",
    "n_seeds",
    "lof_p",
    "means_exponent",
    "means_stderr",
    "m_min",
    "m_max",
    "n_points",
)


def exponent_error(r) -> V.Error:
    """Our error of one exponent: the larger of its bootstrap over seeds and its bootstrap over widths
    (each width with all its seeds; where the log-log line lacks fit this one carries it), or the OLS
    error where that is within 1.25× of it (``verdicts.choose_error``); no error with fewer than two seeds
    or 200 resamples."""
    if not int(r["n_seeds"]) >= 2:
        return V.NONE  # a bootstrap over one seed draws the same cells every time
    boots = []
    for pre, unit in (
        ("boot", f"{int(r['n_seeds'])} seeds"),
        ("wboot", f"{int(r.get('n_widths', 0))} widths, seeds pooled"),
    ):
        if f"{pre}_sd" not in r:
            continue
        try:
            boots.append(
                V.bootstrap_summary_error(
                    float(r[f"{pre}_sd"]),
                    unit,
                    int(r[f"{pre}_resamples"]),
                    float(r[f"{pre}_lo"]),
                    float(r[f"{pre}_hi"]),
                )
            )
        except V.VerdictError:
            continue
    return V.larger_bootstrap(float(r["stderr"]), *boots)


def fit_note(r) -> str:
    """The fit's range, its lack of fit and the width-means line, for a row's note."""
    lof = float(r["lof_p"])
    lof_txt = (
        f"lack-of-fit F-test of the pooled-seed line against the width means p = {lof:.2g}"
        + (" (significant: the loss is not one straight line in log m)" if lof < 0.05 else "")
        if math.isfinite(lof)
        else "no lack-of-fit test (no replicate seeds)"
    )
    means = (
        f"; the line through the width means: {float(r['means_exponent']):.3f} ± {float(r['means_stderr']):.3f}"
        if math.isfinite(float(r["means_exponent"]))
        else ""
    )
    return f"fit over m = {r['m_min']:g}–{r['m_max']:g}, {int(r['n_points'])} cells; {lof_txt}{means}"


def cell_key(gamma: float, alpha: float) -> str:
    """The key of one cell's record in the paper-figures comparisons: ``gamma<γ>_alpha<α>``."""
    return f"gamma{gamma:g}_alpha{alpha:g}"


def _drawn(figure_rows: pd.DataFrame | None, alpha: float, gamma: float) -> pd.Series | None:
    """The paper-figures record of our cell (α, γ) in ``figure_rows`` (a per-figure compare.csv)."""
    if figure_rows is None or figure_rows.empty:
        return None
    k = figure_rows[figure_rows["key"] == cell_key(gamma, alpha)]
    return None if k.empty else k.iloc[0]


def _copy_drawn(rec: pd.Series, key: str, claim: str, quantity: str) -> V.Comparison:
    """A paper-figures record of one cell as a row of this stage (same numbers, test and verdict)."""
    verdict = V.Verdict(
        rec["verdict"],
        _why(rec),
        str(rec["test"] or ""),
        str(rec["excludes"] or ""),
        None if pd.isna(rec["p_value"]) else float(rec["p_value"]),
    )
    err = V.Error(
        None if pd.isna(rec["err"]) else float(rec["err"]),
        V.BOOTSTRAP
        if "bootstrap" in str(rec["err_method"])
        else (V.COVARIANCE if "covariance" in str(rec["err_method"]) else V.NO_ERROR),
        unit=str(rec["err_unit"] or ""),
        resamples=int(rec["err_resamples"] or 0),
        mc=None if pd.isna(rec["err_mc"]) else float(rec["err_mc"]),
        low=None if pd.isna(rec["low"]) else float(rec["low"]),
        high=None if pd.isna(rec["high"]) else float(rec["high"]),
    )
    return V.compare(
        STAGE,
        key,
        "superposition",
        claim,
        quantity,
        verdict,
        value=float(rec["value"]),
        err=err,
        paper_value=float(rec["paper_value"]),
        paper_err=None if pd.isna(rec["paper_err"]) else float(rec["paper_err"]),
        paper_text=str(rec["paper_text"]),
        paper_source=str(rec["paper_source"]),
        note=f"the paper-figures comparison of this cell ({rec['stage']}/{rec['key']}); {rec['note'] or ''}".rstrip(
            "; "
        ),
        link=LINK,
    )


def _why(rec) -> str:
    text, word = str(rec["verdict_text"]), str(rec["verdict"])
    if text == word:
        return ""
    rest = text[len(word) :]
    return rest.lstrip(":").strip().removeprefix("(").removesuffix(")") if rest else ""


def _not_drawn(key: str, claim: str, quantity: str, value: float, err: V.Error, why: str) -> V.Comparison:
    return V.compare(
        STAGE,
        key,
        "superposition",
        claim,
        quantity,
        V.not_tested(why),
        value=value,
        err=err,
        paper_text="the value the paper draws at this cell",
        paper_source=SOURCE,
        link=LINK,
    )


def _stated_test(value: float, err: V.Error, claim: float, tolerance: float) -> V.Verdict:
    """Our exponent against a value the paper states without error: the difference test on our bootstrap
    error with the allowance; no test without our error."""
    if err.value is None:
        return V.not_tested(
            "our exponent has no bootstrap error (fewer than two seeds, or fewer than 200 resamples)"
        )
    return V.difference_test(value, err, claim, None, allowance=tolerance)


def _stated_verdict(v: float, err: V.Error, claim: float, tolerance: float, rec) -> V.Verdict:
    """The stated-value test, its "yes" qualified where the paper's own drawn value at the cell says no."""
    out = _stated_test(v, err, claim, tolerance)
    if rec is not None and out.word == V.YES and rec["verdict"] == V.NO:
        why = (
            f"against the stated value only; the paper's own drawn {float(rec['paper_value']):.3g} at this cell "
            "is not (no)"
        )
        return V.Verdict(V.YES, why, out.test, out.excludes, out.p_value)
    return out


def strong_rows(pw: pd.DataFrame, tolerance: float, drawn: pd.DataFrame | None) -> list[V.Comparison]:
    """Per α at the run's most negative γ: ours against the stated ≈ 1 and against the drawn value; the
    α-trend test."""
    g = pw.gamma.min()
    if not g < 0:
        return []
    strong = pw[pw.gamma == g].sort_values("alpha")
    out = []
    for _, r in strong.iterrows():
        a, v, err = float(r["alpha"]), float(r["exponent"]), exponent_error(r)
        q = f"α_m, strong superposition (γ = {g:g}, α = {a:g})"
        k = f"strong_gamma{g:g}_alpha{a:g}"
        rec = _drawn(drawn, a, g)
        drawn_txt = (
            f"; the paper draws {float(rec['paper_value']):.3g} here ({rec['paper_source']}): {rec['verdict_text']}"
            if rec is not None
            else ""
        )
        out.append(
            V.compare(
                STAGE,
                f"{k}_stated",
                "superposition",
                STRONG_CLAIM,
                q + ", against the stated value",
                _stated_verdict(v, err, papers.ALPHA_M_STRONG.value, tolerance, rec),
                value=v,
                err=err,
                paper_value=papers.ALPHA_M_STRONG.value,
                paper_text="≈ 1, independent of α (stated, no error)",
                paper_source=SOURCE,
                allowance=tolerance or None,
                allowance_reason=ALLOWANCE_REASON if tolerance else "",
                note=fit_note(r) + drawn_txt,
                link=LINK,
            )
        )
        if rec is not None:
            out.append(_copy_drawn(rec, f"{k}_drawn", STRONG_CLAIM, q + ", against the paper's drawn value"))
        else:
            out.append(
                _not_drawn(
                    f"{k}_drawn",
                    STRONG_CLAIM,
                    q + ", against the paper's drawn value",
                    v,
                    err,
                    "the paper's Figs. 4b/6e are not read in this run (paperfigs stage off) or do not draw this cell",
                )
            )
    out.append(trend_row(strong, g))
    return out


def trend_row(strong: pd.DataFrame, g: float) -> V.Comparison:
    """The α-trend of the strong-regime exponents: the weighted least-squares slope of α_m on α (weights
    1/bootstrap variance) against the paper's 0 ("independent of α"), its error propagated from the
    per-α bootstrap errors."""
    errs = [exponent_error(r) for _, r in strong.iterrows()]
    q = f"dα_m/dα, strong superposition (γ = {g:g}, {len(strong)} α)"
    ok = len(strong) >= 2 and all(e.value for e in errs)
    if not ok:
        return V.compare(
            STAGE,
            f"strong_gamma{g:g}_alpha_trend",
            "superposition",
            STRONG_CLAIM,
            q,
            V.not_tested("fewer than two α with a bootstrap error at this γ"),
            paper_value=0.0,
            paper_text="0 (α_m independent of α)",
            paper_source=SOURCE,
            link=LINK,
        )
    x = strong["alpha"].to_numpy(float)
    y = strong["exponent"].to_numpy(float)
    w = 1 / np.array([e.value for e in errs]) ** 2
    xc = x - (w * x).sum() / w.sum()
    slope = float((w * xc * y).sum() / (w * xc * xc).sum())
    se = float(1 / math.sqrt((w * xc * xc).sum()))
    n_res = min(e.resamples for e in errs)
    err = V.Error(se, V.BOOTSTRAP, unit=f"{errs[0].unit} (each α's bootstrap, propagated)", resamples=n_res)
    return V.compare(
        STAGE,
        f"strong_gamma{g:g}_alpha_trend",
        "superposition",
        STRONG_CLAIM,
        q,
        V.difference_test(slope, err, 0.0, None),
        value=slope,
        err=err,
        paper_value=0.0,
        paper_text="0 (α_m independent of α)",
        paper_source=SOURCE,
        note="α_m by α: " + ", ".join(f"{a:g}: {b:.3f}" for a, b in zip(x, y)),
        link=LINK,
    )


def weak_rows(pw: pd.DataFrame, tolerance: float, drawn: pd.DataFrame | None) -> list[V.Comparison]:
    """Per α > 1 at the run's largest γ > 0: ours against the stated α − 1 and the drawn Fig. 5b point."""
    g = pw.gamma.max()
    if not g > 0:
        return []
    out = []
    for _, r in pw[(pw.gamma == g) & (pw.alpha > 1)].sort_values("alpha").iterrows():
        a, v, err = float(r["alpha"]), float(r["exponent"]), exponent_error(r)
        q = f"α_m, weak superposition (γ = {g:g}, α = {a:g})"
        k = f"weak_gamma{g:g}_alpha{a:g}"
        rec = _drawn(drawn, a, g)
        drawn_txt = (
            f"; the paper draws {float(rec['paper_value']):.3g} here ({rec['paper_source']}): {rec['verdict_text']}"
            if rec is not None
            else ""
        )
        out.append(
            V.compare(
                STAGE,
                f"{k}_stated",
                "superposition",
                WEAK_CLAIM,
                q + ", against the stated value",
                _stated_verdict(v, err, a - 1, tolerance, rec),
                value=v,
                err=err,
                paper_value=a - 1,
                paper_text=f"α − 1 = {a - 1:g} (stated, no error)",
                paper_source=SOURCE,
                allowance=tolerance or None,
                allowance_reason=ALLOWANCE_REASON if tolerance else "",
                note=fit_note(r) + drawn_txt,
                link=LINK,
            )
        )
        if rec is not None:
            out.append(_copy_drawn(rec, f"{k}_drawn", WEAK_CLAIM, q + ", against the paper's drawn value"))
        else:
            out.append(
                _not_drawn(
                    f"{k}_drawn",
                    WEAK_CLAIM,
                    q + ", against the paper's drawn value",
                    v,
                    err,
                    "the paper's Fig. 5b is not read in this run (paperfigs stage off) or draws no point at this cell",
                )
            )
    return out


def comparisons(
    exps: pd.DataFrame, tolerance: float, drawn_strong=None, drawn_weak=None
) -> list[V.Comparison]:
    """Every record of this stage from exponents.csv (power laws only) and the paper-figures records of
    Figs. 4b/6e (``drawn_strong``) and 5b (``drawn_weak``) where that stage runs."""
    pw = exps[exps.alpha.notna()]
    if pw.empty:
        return []
    return strong_rows(pw, tolerance, drawn_strong) + weak_rows(pw, tolerance, drawn_weak)


def _figure_rows(path: str | None) -> pd.DataFrame | None:
    if not path:
        return None
    return V.read_comparisons(path, "paperfigs_compare")


def superposition_compare(
    exponents_csv: str,
    tolerance: float,
    comparisons_csv: str,
    fig4b_compare: str | None = None,
    fig5b_compare: str | None = None,
) -> list[V.Comparison]:
    """Rule superposition_compare: write results/superposition/comparisons.csv."""
    exps = read_table(exponents_csv, "superposition_tables", COLUMNS)
    recs = comparisons(exps, float(tolerance), _figure_rows(fig4b_compare), _figure_rows(fig5b_compare))
    V.write_comparisons(comparisons_csv, recs)
    log.info("%d comparisons written (%s)", len(recs), ", ".join(f"{c.key}: {c.verdict}" for c in recs))
    return recs
