"""The LM-head stage's comparisons with the superposition paper, as data (rule lm_head_compare):
``results/lm_head/comparisons.csv`` through the one verdict procedure (``depthwidth.verdicts``).

- the width exponent α_m of the LLM losses against the paper's 0.91 ± 0.04, with the bootstrap over
  models that rule lm_head_width_fit ran (the covariance error only where it is within 1.25× of it);
- the LM-head overlaps: m·⟨(ŵᵢ·ŵⱼ)²⟩ per model (shown, not a test: the paper claims a scaling, not a
  constant) and the slope of log overlap on log m across widths against the paper's −1, its error from a
  bootstrap over models;
- α − 1 of the token frequencies (the weak-regime width exponent) against the LLMs' α_m: the paper's
  claim is that they differ, tested on the span of the fits over each half of the rank range.

The section (rule lm_head_section) only renders these records.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth import verdicts as v
from depthwidth.integrity import read_json, read_table
from depthwidth.laws.loglog import power_law_fit
from depthwidth.laws.resample import resample_indices
from depthwidth.papers import ALPHA_M_LLM, TOKEN_FREQUENCY_ALPHA

log = logging.getLogger("depthwidth.lm_head")

STAGE, PAPER, LINK = "lm_head", "superposition", "docs/stages/lm_head.md"
WIDTH_CLAIM = "LLM loss ∝ 1/m^α_m with α_m ≈ 0.91"
OVERLAP_CLAIM = "LM-head overlaps ∝ 1/m"
TOKEN_CLAIM = "weak superposition (α_m = α − 1) does not explain the LLMs' α_m"
# The paper draws the overlap scaling as 1/m without an error: a slope within this of −1 counts as it.
SLOPE_ALLOWANCE = 0.1
SLOPE_ALLOWANCE_REASON = "the paper states the overlap scaling as 1/m, without an error"


def _widths_words(widths: list[int]) -> str:
    n = len(widths)
    return f"{'one width' if n == 1 else f'{n} widths'} ({', '.join(map(str, widths))})"


def width_comparison(fit: dict) -> v.Comparison:
    """α_m of the loss-vs-width fit against the paper's 0.91 ± 0.04."""
    common = dict(
        paper_value=ALPHA_M_LLM.value,
        paper_err=ALPHA_M_LLM.err,
        paper_source=ALPHA_M_LLM.source,
        link=LINK,
    )
    if fit.get("status") != "ok":
        return v.compare(
            STAGE,
            "alpha_m_width",
            PAPER,
            WIDTH_CLAIM,
            "α_m (LLM loss vs width)",
            v.not_tested(f"no width fit: {fit.get('reason', 'no loss was measured')}"),
            value_text="not fitted",
            **common,
        )
    boot = fit.get("alpha_bootstrap") or []
    err = v.NONE
    note = f"{fit['n_points']} points, {len(fit.get('models', []))} models, {fit['n_widths']} widths"
    if len([b for b in boot if np.isfinite(b)]) >= v.MIN_RESAMPLES:
        err = v.choose_error(
            fit.get("alpha_err"), v.bootstrap_error(boot, fit.get("bootstrap_unit", "models"))
        )
        if fit.get("alpha_err"):
            note += f"; covariance error {fit['alpha_err']:.2g}"
        verdict = v.difference_test(fit["alpha"], err, ALPHA_M_LLM.value, ALPHA_M_LLM.err)
    else:
        verdict = v.not_tested(
            f"only {len(boot)} of the bootstrap's resamples over models could fit the width exponent, fewer "
            f"than the {v.MIN_RESAMPLES} an error needs"
        )
    bound = v.at_bound({"alpha": fit["alpha"], "A": fit["A"]}, {"alpha": (0.0, 5.0), "A": (0.0, None)})
    if bound:
        verdict = v.not_tested(f"the fit ends at a bound of its range ({', '.join(bound)})")
    return v.compare(
        STAGE,
        "alpha_m_width",
        PAPER,
        WIDTH_CLAIM,
        "α_m (LLM loss vs width)",
        verdict,
        value=fit["alpha"],
        err=err,
        bound_params=bound,
        note=f"{note}; groups: {', '.join(fit['groups'])}",
        **common,
    )


def overlap_slope(geo: pd.DataFrame, resamples: int, seed: int) -> dict | None:
    """Slope of log mean_sq_overlap on log m across models (random directions: −1), its OLS error, and
    the slopes of ``resamples`` resamples over models (NaN where a resample has fewer than two widths);
    None with fewer than three widths."""
    m, y = geo["m"].to_numpy(float), geo["mean_sq_overlap"].to_numpy(float)
    fit = power_law_fit(m, y)
    if fit["n_x"] < 3:
        return None
    rng = np.random.default_rng(seed)
    boots = np.full(resamples, np.nan)
    for b in range(resamples):
        idx = resample_indices(len(m), rng)
        if len(np.unique(m[idx])) >= 2:
            boots[b] = -power_law_fit(m[idx], y[idx])["exponent"]
    return {"slope": -fit["exponent"], "stderr": fit["stderr"], "bootstrap": boots}


def overlap_comparisons(geo: pd.DataFrame, resamples: int, seed: int) -> list[v.Comparison]:
    """One record per model (m·overlap, shown, not tested) and the slope across widths (the test)."""
    widths = sorted({int(x) for x in geo["m"]}) if len(geo) else []
    slope = overlap_slope(geo, resamples, seed) if len(geo) else None
    paper = dict(paper_text="overlaps ∝ 1/m across widths (random directions: m·overlap = 1)", link=LINK)
    out = []
    for r in geo.itertuples():
        centered = getattr(r, "m_times_mean_sq_overlap_centered", None)
        note = f"{r.family}, V = {int(r.V)}, m = {int(r.m)}" + (
            f"; with the mean row removed: {float(centered):.3g}" if centered is not None else ""
        )
        out.append(
            v.compare(
                STAGE,
                f"m_overlap_{r.model}",
                PAPER,
                OVERLAP_CLAIM,
                f"m·mean squared overlap, {r.model}",
                v.not_tested(
                    "the paper claims how the overlap scales with width, not its value for one model; the "
                    "slope across widths tests that"
                ),
                value=float(r.m_times_mean_sq_overlap),
                note=note,
                headline=False,
                paper_source="superposition paper, LLM LM heads (Fig. 8a)",
                **paper,
            )
        )
    quantity = "slope of log mean squared overlap vs log m"
    common = dict(
        paper_value=-1.0,
        paper_text="−1 (overlaps ∝ 1/m)",
        paper_source="superposition paper, LLM LM heads (Fig. 8a)",
        link=LINK,
    )
    if slope is None:
        out.append(
            v.compare(
                STAGE,
                "overlap_slope",
                PAPER,
                OVERLAP_CLAIM,
                quantity,
                v.not_tested(
                    f"this run's LM heads have {_widths_words(widths)}; a slope needs three or more widths"
                    if widths
                    else "no LM head was measured"
                ),
                value_text="not fitted",
                **common,
            )
        )
        return out
    boot = slope["bootstrap"]
    n_ok = int(np.isfinite(boot).sum())
    note = f"{len(geo)} models, {len(widths)} widths; OLS error {slope['stderr']:.2g}"
    if n_ok >= v.MIN_RESAMPLES:
        err = v.choose_error(slope["stderr"], v.bootstrap_error(boot, "models"))
        verdict = v.difference_test(slope["slope"], err, -1.0, None, SLOPE_ALLOWANCE)
        allowance = SLOPE_ALLOWANCE
    else:
        err, allowance = v.NONE, None
        verdict = v.not_tested(
            f"only {n_ok} bootstrap resamples over models have two widths, fewer than {v.MIN_RESAMPLES}"
        )
    out.append(
        v.compare(
            STAGE,
            "overlap_slope",
            PAPER,
            OVERLAP_CLAIM,
            quantity,
            verdict,
            value=slope["slope"],
            err=err,
            allowance=allowance,
            allowance_reason=SLOPE_ALLOWANCE_REASON if allowance else "",
            note=note,
            **common,
        )
    )
    return out


def token_comparisons(token_fit: pd.DataFrame, fit: dict) -> list[v.Comparison]:
    """α − 1 per (tokenizer, corpus) against the LLMs' α_m: the paper's claim holds where the span of the
    fits over each half of the rank range (and the whole range) lies outside 0.91 ± 2·0.04."""
    out = []
    for r in token_fit.itertuples():
        lo = min(r.alpha, r.alpha_lower, r.alpha_upper) - 1
        hi = max(r.alpha, r.alpha_lower, r.alpha_upper) - 1
        whole = ", the whole corpus" if r.exhausted else ""
        out.append(
            v.compare(
                STAGE,
                f"weak_alpha_m_{r.tokenizer}_{r.corpus}",
                PAPER,
                TOKEN_CLAIM,
                f"α − 1 from token frequencies (weak-regime α_m), {r.tokenizer} / {r.corpus}",
                v.outside_test(lo, hi, ALPHA_M_LLM.value, ALPHA_M_LLM.err),
                value=r.weak_alpha_m,
                paper_value=TOKEN_FREQUENCY_ALPHA.value - 1,
                paper_text=(
                    f"≈ {TOKEN_FREQUENCY_ALPHA.value - 1:g} (α ≈ {TOKEN_FREQUENCY_ALPHA.value:g}), "
                    f"not the LLMs' α_m = {ALPHA_M_LLM.text}"
                ),
                paper_source=TOKEN_FREQUENCY_ALPHA.source,
                note=(
                    f"α = {r.alpha:.3f} over ranks {r.rank_min}–{r.rank_max} ({r.n_tokens} tokens, {r.n_docs} "
                    f"documents{whole}); the range is α − 1 over all ranks and each half. No sampling error: "
                    f"the OLS error ({r.alpha_err:.2g}) treats ranks as independent, and the range matters more"
                ),
                link=LINK,
            )
        )
    return out


def lm_head_compare(
    geometry_csv: str | Path,
    fit_json: str | Path,
    token_fit_csv: str | Path,
    *,
    bootstrap_resamples: int,
    seed: int,
    comparisons_csv: str | Path,
) -> list[v.Comparison]:
    """Rule lm_head_compare: every comparison of the stage, written to ``comparisons_csv``."""
    geo = read_table(geometry_csv, "lm_head_width_fit", ("model", "family", "width"))
    fit = read_json(fit_json, "lm_head_width_fit", ("status",))
    token_fit = read_table(token_fit_csv, "lm_head_token_fit")
    rows = [
        width_comparison(fit),
        *overlap_comparisons(geo, bootstrap_resamples, seed),
        *token_comparisons(token_fit, fit),
    ]
    v.write_comparisons(comparisons_csv, rows)
    for c in rows:
        log.info("%s: %s", c.quantity, c.verdict_text)
    return rows
