"""One record per compared figure of the superposition paper: its name, the pinned PDF it is read from, the
readings it compares, our tables it needs, the compared quantity, and its ``compare`` function. Rule
paperfigs_compare runs one figure's ``compare`` per job and writes ``results/paperfigs/<figure>/compare.csv``
(its verdict records, ``depthwidth.verdicts``), ``table.csv`` (the per-cell table the section shows) and
``extra.csv`` (a second table where the figure has one); rule paperfigs_comparisons gathers the records
into ``results/paperfigs/comparisons.csv``. The section only renders these files.

Every verdict is computed here: per cell of ours, the figure's test as data (the test's words, its
allowance with the reason, the verdict word from ``verdicts.VERDICTS``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from depthwidth import verdicts as V
from depthwidth.paperfigs.outputs import COMPARED, FIGURE_INPUTS
from depthwidth.papers import ALPHA_M_LLM

STAGE = "paperfigs"
LINK = "docs/stages/paperfigs.md"
PAPER = "superposition"
#: the paper draws the Fig. 8a overlap line with slope 1 and states no error
SLOPE_CLAIM = 1.0


@dataclass(frozen=True)
class FigureRecord:
    """One compared figure: ``name`` (the job's wildcard), ``pdf`` (the pinned file read), ``readings``
    (input name -> file of the reading rules), ``ours`` (the superposition tables it needs: "cells",
    "exponents"), ``quantity`` (what is compared), ``caption`` (the section's one-line description)."""

    name: str
    pdf: str
    readings: dict
    ours: tuple = ()
    quantity: str = ""
    caption: str = ""
    claim: str = ""
    extra: dict = field(default_factory=dict)


def _figure(name: str, quantity: str, caption: str, claim: str) -> FigureRecord:
    readings, ours = FIGURE_INPUTS[name]
    return FigureRecord(name, _PDF[name], dict(readings), tuple(ours), quantity, caption, claim)


_PDF = {
    "fig8a": "Fig-8-2.pdf", "fig8b": "Fig-8-2.pdf", "fig4b": "Fig-4-3.pdf, Fig-6-3.pdf", "fig5b": "Fig-5-1.pdf",
    "fig1": "Fig-1-2.pdf", "fig3": "Fig-3-2.pdf", "fig4a": "Fig-4-3.pdf", "fig5a": "Fig-5-1.pdf",
    "fig6c": "Fig-6-3.pdf", "fig6d": "Fig-6-3.pdf", "fig7": "Fig-7-2.pdf",
}  # fmt: skip
_GEOMETRY, _LOSSES = "toy geometry as drawn", "toy losses as drawn"
FIGURES = {
    f.name: f
    for f in (
        _figure("fig8a", "slope of the LM-head overlaps against 1/m", "Fig. 8a: 27 LLMs' mean square overlaps against 1/m", "LM-head overlaps ∝ 1/m"),
        _figure("fig8b", "α_m of L = A/m^α + B_g on the paper's points", "Fig. 8b: the width law on the paper's own plotted points", "LLM loss ∝ 1/m^α_m"),
        _figure("fig4b", "toy α_m per (γ, α) against Figs. 4b and 6e", "Figs. 4b/6e: α_m over (γ, α)", "toy α_m per cell, as drawn"),
        _figure("fig5b", "toy α_m in the weak regime against Fig. 5b", "Fig. 5b: the weak regime's α_m against α", "toy α_m per cell, as drawn"),
        _figure("fig1", "toy loss against m (Fig. 1b weak, 1d strong)", "Fig. 1b/1d: toy losses against m", _LOSSES),
        _figure("fig3", "represented fraction φ_1/2 over γ", "Fig. 3: represented fraction", _GEOMETRY),
        _figure("fig4a", "R² of the loss-width line per law", "Fig. 4a: R² of three laws", _LOSSES),
        _figure("fig5a", "excess loss over the loss by unlearned features", "Fig. 5a: loss against the loss by unlearned features", _LOSSES),
        _figure("fig6c", "strong representation fraction φ_1 against m", "Fig. 6c: φ_1 against m", _GEOMETRY),
        _figure("fig6d", "mean square overlap of strongly represented rows against m", "Fig. 6d: overlaps against m", _GEOMETRY),
        _figure("fig7", "toy loss against activation density E and m", "Fig. 7: activation density", _LOSSES),
    )
}  # fmt: skip


def cell_key(gamma: float, alpha: float) -> str:
    """The key of one toy cell's record, ``gamma<γ>_alpha<α>``: rule superposition_compare finds the
    record of its cell by this key in the file (the stages share the file, not code)."""
    return f"gamma{gamma:g}_alpha{alpha:g}"


def _f(x) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def boot_error(sd, n, unit, low=None, high=None) -> V.Error:
    """A stored bootstrap summary as an error, or no error where it has fewer than 200 resamples."""
    try:
        return V.bootstrap_summary_error(_f(sd), unit, int(n or 0), _f(low), _f(high))
    except V.VerdictError:
        return V.NONE


def _rec(key, claim, quantity, verdict, headline=False, **kw) -> V.Comparison:
    return V.compare(STAGE, key, PAPER, claim, quantity, verdict, headline=headline, link=LINK, **kw)


def _agree_verdict(agree, test: str, why: str = "", decided=True) -> V.Verdict:
    if decided is False or agree is None or (isinstance(agree, float) and math.isnan(agree)):
        return V.not_tested(why or "the figure draws no point to compare at this cell")
    return V.Verdict(V.YES if bool(agree) else V.NO, "" if bool(agree) else why, test)


# ---------------------------------------------------------------------------------------------- Fig. 8


def compare_fig8a(r: dict, summed: bool) -> tuple[pd.DataFrame, pd.DataFrame, list[V.Comparison]]:
    fits = r["fits"]
    a = fits[fits["subset"] == "all"].iloc[0]
    boot = boot_error(a.get("boot_sd"), a.get("n_boot"), "27 models", a.get("boot_lo"), a.get("boot_hi"))
    err = V.choose_error(_f(a["slope_se"]), boot) if boot.value else V.NONE
    verdict = (
        V.interval_test(boot.low, boot.high, SLOPE_CLAIM, what="bootstrap interval over models")
        if boot.value
        else V.not_tested("the bootstrap over models has fewer than 200 resamples (paperfigs.n_boot)")
    )
    rec = _rec(
        "overlap_slope",
        "LM-head overlaps ∝ 1/m",
        "LM-head overlaps ∝ 1/m: slope on the paper's Fig. 8a points",
        verdict,
        headline=True,
        value=float(a["slope"]),
        err=err,
        paper_value=SLOPE_CLAIM,
        paper_text="slope 1 (drawn, no error)",
        paper_source="Fig. 8a (the drawn slope-1 line), read off the vector PDF",
        note=f"{int(a['n_points'])} of 27 points read off the vector PDF, {int(a['n_widths'])} widths",
    )
    return fits, r["points"], [rec]


def compare_fig8b(r: dict, summed: bool) -> tuple[pd.DataFrame, pd.DataFrame, list[V.Comparison]]:
    s, fits, nb = r["summary"], r["fits"], r["notebook"]["notebook"]
    a = fits[fits["subset"] == "all"].iloc[0]
    plotted = int(s["read"].get("plotted", s["read"]["found"]))
    boot = boot_error(a.get("boot_sd"), a.get("n_boot"), "27 models", a.get("boot_lo"), a.get("boot_hi"))
    left = s.get("left_out", [])
    sens = fits[fits["subset"].str.startswith("all, left-out")]
    left_txt = (
        "; ".join(f"{x['model']} on {x['dataset']} left out: {x['why']}" for x in left) or "no point left out"
    )
    sens_txt = (
        f"; with the left-out point at its implied value the converged fit gives α = {float(sens['alpha'].iloc[0]):.3f}"
        if len(sens)
        else ""
    )
    verdict = (
        V.interval_test(boot.low, boot.high, ALPHA_M_LLM.value, what="bootstrap interval over models")
        if boot.value
        else V.not_tested("the bootstrap over models has fewer than 200 resamples (paperfigs.law_n_boot)")
    )
    parts = s.get("err_slope_parts", {})
    err_txt = (
        f"; the paper's ± {parts['printed']:.3f} is the notebook's formula, {100 * parts['nan_share']:.0f} % of whose sum "
        f"of squares is the NaN log of the left-out point set to 0 ({parts['err_slope_without_nan']:.3f} without it)"
        if parts.get("n_nan_terms")
        else ""
    )
    recs = [
        _rec(
            "alpha_m",
            "LLM loss ∝ 1/m^α_m",
            "LLM loss vs width, α_m (converged least squares on the paper's Fig. 8b points)",
            verdict,
            headline=True,
            value=float(a["alpha"]),
            err=boot,
            paper_value=ALPHA_M_LLM.value,
            paper_err=ALPHA_M_LLM.err,
            paper_text=ALPHA_M_LLM.text,
            paper_source=ALPHA_M_LLM.source,
            note=f"{plotted} points plotted (of {s['read']['expected']}); {left_txt}{sens_txt}{err_txt}; the same "
            "data as the paper's fit, so our bootstrap interval (not the two errors combined) is the test",
        )
    ]
    rr = s["notebook_rerun"]
    recs.append(
        _rec(
            "notebook_rerun",
            "LLM loss ∝ 1/m^α_m",
            f"α_m by the notebook's procedure (Adam, 20,000 steps) on the {plotted} plotted points",
            V.procedure_test(float(rr["alpha"]), float(nb["alpha"])),
            value=float(rr["alpha"]),
            err=V.Error(None, V.EXACT_VALUE),
            paper_value=float(nb["alpha"]),
            paper_text=f"{nb['alpha']} (the notebook's printed α)",
            paper_source="LLMs/nonlinearfit-3.ipynb, stored output",
        )
    )
    if "notebook_rerun_implied" in s and left:
        ri = s["notebook_rerun_implied"]
        recs.append(
            _rec(
                "notebook_rerun_implied",
                "LLM loss ∝ 1/m^α_m",
                "α_m by the notebook's procedure, the left-out point at its implied value (sensitivity)",
                V.procedure_test(float(ri["alpha"]), float(nb["alpha"])),
                value=float(ri["alpha"]),
                err=V.Error(None, V.EXACT_VALUE),
                paper_value=float(nb["alpha"]),
                paper_text=f"{nb['alpha']} (the notebook's printed α)",
                paper_source="LLMs/nonlinearfit-3.ipynb, stored output",
                note=left_txt,
            )
        )
    if len(sens):
        recs.append(
            _rec(
                "alpha_m_implied",
                "LLM loss ∝ 1/m^α_m",
                "α_m, converged least squares with the left-out point at its implied value (sensitivity)",
                V.no_paper_number(),
                value=float(sens["alpha"].iloc[0]),
                note="not a test: the value a log axis cannot draw, from the notebook's own fit",
            )
        )
    return fits, r["points"], recs


# ------------------------------------------------------------------------------------- toy exponents


def _exponent_error(r) -> V.Error:
    """Our error of one exponent as rule superposition_compare states it: the larger of its bootstraps over
    seeds and over widths (seeds pooled), or the OLS error within 1.25× of it (``verdicts.larger_bootstrap``)."""
    seeds = boot_error(r.get("ours_boot_sd"), r.get("ours_boot_resamples"), f"{int(r.get('ours_seeds') or 0)} seeds",
                       r.get("ours_boot_lo"), r.get("ours_boot_hi"))  # fmt: skip
    widths = boot_error(r.get("ours_wboot_sd"), r.get("ours_wboot_resamples"),
                        f"{int(r.get('ours_widths') or 0)} widths, seeds pooled",
                        r.get("ours_wboot_lo"), r.get("ours_wboot_hi"))  # fmt: skip
    if not (r.get("ours_seeds") or 0) >= 2:
        return V.NONE  # a bootstrap over one seed draws the same cells every time
    return V.larger_bootstrap(_f(r.get("ours_se")), seeds, widths)


def _with_boot(ours: pd.DataFrame) -> pd.DataFrame:
    """exponents.csv's bootstrap columns beside each cell (NaN where a run's table has none)."""
    for c in ("boot_sd", "boot_lo", "boot_hi", "boot_resamples", "n_seeds", "n_widths") + tuple(
        f"wboot_{k}" for k in ("sd", "lo", "hi", "resamples")
    ):
        if c not in ours:
            ours = ours.assign(**{c: np.nan})
    return ours


def exponent_records(cmp: pd.DataFrame, figure: str, paper_col: str, paper_err_col: str, source: str) -> list:
    """One record per cell of ours in ``cmp`` (a per-cell table of ``toy.compare_exponents`` or
    ``compare_points``): the difference test of our α_m (bootstrap over seeds) against the paper's drawn
    value with its error (the error bar drawn, plus for the heat map its decoding error)."""
    out = []
    for _, r in cmp.iterrows():
        err = _exponent_error(r)
        pv, pe = float(r[paper_col]), _f(r[paper_err_col])
        off = (
            ""
            if r["gamma_on_grid"]
            else f"; our γ = {r['gamma']:g} compared with the paper's nearest γ = {r['paper_gamma']:.3g}"
        )
        out.append(
            _rec(
                cell_key(float(r["gamma"]), float(r["alpha"])),
                "toy α_m per cell, as drawn",
                f"α_m at γ = {r['gamma']:g}, α = {r['alpha']:g} against {figure}",
                V.difference_test(float(r["ours"]), err, pv, pe) if err.value else V.not_tested("our exponent has no bootstrap error (fewer than 200 resamples)"),
                value=float(r["ours"]),
                err=err,
                paper_value=pv,
                paper_err=pe,
                paper_text=f"{pv:.3g} ± {pe:.2g} (drawn)" if pe else f"{pv:.3g} (drawn)",
                paper_source=str(r.get("paper_source", source)),
                note=f"the paper's σ: {r.get('paper_sigma_how', 'its error bar')}{off}",
            )
        )  # fmt: skip
    return out


def compare_fig4b(r: dict, summed: bool):
    from depthwidth.paperfigs.toy import compare_exponents

    ours = _with_boot(r["exponents"])
    cmp = compare_exponents(ours, r["fig4b"], r["fig6e"], r["toy"]["cross_check"]["max_abs_diff"])
    if cmp.empty:
        return cmp, pd.DataFrame(), []
    recs = exponent_records(cmp, "Figs. 4b/6e", "paper", "paper_sigma", "Fig. 4b")
    return _agree_from(cmp, recs), pd.DataFrame(), recs


def compare_fig5b(r: dict, summed: bool):
    from depthwidth.paperfigs.fig6 import GAMMA_GRID
    from depthwidth.paperfigs.toy import compare_points

    cmp = compare_points(_with_boot(r["exponents"]), r["fig5b"], GAMMA_GRID)
    if cmp.empty:
        return cmp, pd.DataFrame(), []
    recs = exponent_records(cmp, "Fig. 5b", "paper", "paper_sigma", "Fig. 5b")
    return _agree_from(cmp, recs), pd.DataFrame(), recs


def _agree_from(cmp: pd.DataFrame, recs: list) -> pd.DataFrame:
    """The per-cell table with the records' error, threshold and verdict (one answer in both)."""
    return cmp.assign(
        ours_err=[c.err for c in recs],
        ours_err_method=[c.err_method for c in recs],
        verdict=[c.verdict for c in recs],
        agree=[c.verdict == V.YES for c in recs],
    ).drop(columns=["tolerance"], errors="ignore")


# ------------------------------------------------------------------------------- the other toy figures


def table_records(cmp: pd.DataFrame, figure: str, key_cols, label, test: str, allowance_reason: str,
                  value="ours", paper="paper", tolerance="tolerance", decided=None) -> list:  # fmt: skip
    """One record per row of a figure's per-cell table that carries ``agree`` (the figure's own test, its
    tolerance as the allowance with its reason)."""
    out = []
    if cmp is None or cmp.empty:
        return out
    for _, r in cmp.iterrows():
        key = "_".join(
            f"{c}{r[c]:g}" if isinstance(r[c], (int, float, np.floating, np.integer)) else f"{c}{r[c]}"
            for c in key_cols
        )
        tol = _f(r.get(tolerance)) if tolerance else None
        dec = bool(r[decided]) if decided else True
        verdict = _agree_verdict(r.get("agree"), test, f"outside the allowance ({test})", dec)
        if verdict.word == V.NOT_TESTED:
            verdict = V.not_tested("the paper's circles at this γ are not at our α (no α window)")
        out.append(
            _rec(
                key, FIGURES[figure].claim, f"{FIGURES[figure].quantity}: {label(r)}", verdict,
                value=_f(r.get(value)), paper_value=_f(r.get(paper)),
                paper_text=f"{_f(r.get(paper)):.4g} (read off the figure)" if _f(r.get(paper)) is not None else "the figure's points",
                paper_source=f"{FIGURES[figure].caption.split(':')[0]}, read off the vector PDF",
                allowance=tol if tol else None, allowance_reason=allowance_reason if tol else "",
            )
        )  # fmt: skip
    return out


def compare_fig1(r: dict, summed: bool):
    from depthwidth.paperfigs.fig1 import RTOL, compare_losses, compare_slopes

    cells, f1 = r["cells"], r["fig1"]
    cmp = compare_losses(cells, f1, summed)
    sl = compare_slopes(cells, f1, summed)
    recs = table_records(
        cmp, "fig1", ("panel", "series", "m", "alpha", "gamma"),
        lambda x: f"Fig. 1{x['panel']}, {x['series']}, m = {int(x['m'])}",
        f"|ours − paper| ≤ {RTOL:.0%} of the paper's value + 2 SE of ours",
        f"the figure draws no error bars; {RTOL:.0%} of the value covers the paper's single run per point",
    )  # fmt: skip
    return cmp, sl, recs


def compare_fig3(r: dict, summed: bool):
    from depthwidth.paperfigs.fig3 import ABS_TOL, SEED_STD_K, compare_fig3 as cmp3

    m = r["regimes"]["fig3"]["match"]
    cmp = cmp3(r["cells"], r["fig3a"], r["fig3b"], m["alpha_a"], m["m_b"], summed)
    recs = table_records(
        cmp, "fig3", ("panel", "gamma", "alpha", "m"),
        lambda x: f"panel {x['panel']}, γ = {x['gamma']:g}, α = {x['alpha']:g}, m = {int(x['m'])}",
        f"|ours − paper| ≤ max({ABS_TOL:g}, {SEED_STD_K:g} × our seed std)",
        "one training run per cell in the paper; the allowance covers its seed-to-seed scatter",
    )  # fmt: skip
    return cmp, pd.DataFrame(), recs


def compare_fig4a(r: dict, summed: bool):
    from depthwidth.paperfigs.fig4a import R2_TOL, compare_fig4a as cmp4

    cmp = cmp4(r["cells"], r["fig4a"])
    recs = table_records(
        cmp, "fig4a", ("distribution", "gamma"),
        lambda x: f"{x['distribution']}, γ = {x['gamma']:g}",
        f"|ΔR²| ≤ {R2_TOL:g} + the paper's half-pixel reading error",
        "the bar heights are read to half a pixel; R² of a short curve moves by about 0.02 between seeds",
        value="r2", paper="paper_r2", tolerance=None,
    )  # fmt: skip
    return cmp, pd.DataFrame(), recs


def compare_fig5a(r: dict, summed: bool):
    from depthwidth.paperfigs.fig5a import compare_fig5a as cmp5

    cmp = cmp5(r["cells"], r["fig5a"], summed)
    recs = table_records(
        cmp, "fig5a", ("paper_gamma",),
        lambda x: f"γ = {x['paper_gamma']:.3g}",
        "our median excess inside the paper's 10–90 % range and at least half of our cells inside it",
        "", value="ours_excess_median", paper="paper_excess_median", tolerance=None, decided="decided",
    )  # fmt: skip
    return cmp, pd.DataFrame(), recs


def compare_fig6c(r: dict, summed: bool):
    from depthwidth.paperfigs.fig6cd import TOL_PHI, compare_fig6cd

    cmp = compare_fig6cd(r["cells"], r["fig6c"], "strong_represented_fraction", summed)
    recs = table_records(
        cmp, "fig6c", ("alpha", "m"), lambda x: f"α = {x['alpha']:g}, m = {int(x['m'])}",
        f"|ours − paper| ≤ {TOL_PHI:g}",
        "larger than nine in ten of the paper's own α-to-α steps at one m (one run per cell)",
    )  # fmt: skip
    return cmp, pd.DataFrame(), recs


def compare_fig6d(r: dict, summed: bool):
    from depthwidth.paperfigs.fig6cd import TOL_LOG_OVERLAP, compare_fig6cd

    cmp = compare_fig6cd(r["cells"], r["fig6d"], "strong_mean_sq_overlap", summed)
    recs = table_records(
        cmp, "fig6d", ("alpha", "m"), lambda x: f"α = {x['alpha']:g}, m = {int(x['m'])}",
        f"ln(ours) within the paper's band at its m widened by {TOL_LOG_OVERLAP:g} in ln",
        "the band's own width in ln (0.08–0.15): the largest gap the figure draws between circles at one m",
    )  # fmt: skip
    return cmp, pd.DataFrame(), recs


def compare_fig7(r: dict, summed: bool):
    from depthwidth.paperfigs.fig7 import LOG_TOL, compare_fig7 as cmp7

    cmp = cmp7(r["cells"], r["fig7a"], r["fig7b"], summed)
    loss = cmp[cmp["kind"] == "loss"] if len(cmp) else cmp
    recs = table_records(
        loss, "fig7", ("panel", "s", "gamma", "m"),
        lambda x: f"panel {x['panel']}, E = {x['E']:.3g}, γ = {x['gamma']:.3g}, m = {int(x['m'])}",
        f"|ln(ours / paper)| ≤ {LOG_TOL:g}", "one run per point in the paper, no error drawn",
    )  # fmt: skip
    slopes = cmp[cmp["kind"] == "slope"] if len(cmp) else cmp
    for _, x in slopes.iterrows():
        recs.append(
            _rec(
                f"slope_E{x['E']:.3g}_n{int(x['n'])}", FIGURES["fig7"].claim,
                f"α_m at E = {x['E']:.3g} (Fig. 7b) against the paper's points",
                _agree_verdict(x["agree"], "|Δ| ≤ 2·√(se² + se_paper²) (OLS errors of both fits)", "beyond 2 combined OLS errors"),
                value=_f(x["ours"]), paper_value=_f(x["paper"]), paper_err=_f(x.get("paper_se")),
                paper_source="Fig. 7b, the paper's six points fitted",
            )
        )  # fmt: skip
    return cmp, pd.DataFrame(), recs


def _check_names():
    if tuple(FIGURES) != COMPARED:
        raise RuntimeError(f"paperfigs.outputs.COMPARED {COMPARED} and FIGURES {tuple(FIGURES)} differ")


COMPARE = {
    "fig8a": compare_fig8a,
    "fig8b": compare_fig8b,
    "fig4b": compare_fig4b,
    "fig5b": compare_fig5b,
    "fig1": compare_fig1,
    "fig3": compare_fig3,
    "fig4a": compare_fig4a,
    "fig5a": compare_fig5a,
    "fig6c": compare_fig6c,
    "fig6d": compare_fig6d,
    "fig7": compare_fig7,
}
_check_names()


# ------------------------------------------------------------------------------------------------- the job

#: the rule that writes each reading file (named in the fix when one is damaged)
_WRITER = {
    "fig8a_points.csv": "paperfigs_fig8",
    "fig8a_fits.csv": "paperfigs_fig8",
    "fig8_summary.json": "paperfigs_fig8",
    "fig8b_points.csv": "paperfigs_fig8b",
    "fig8b_fits.csv": "paperfigs_fig8b",
    "fig8b_summary.json": "paperfigs_fig8b",
    "fig4b_cells.csv": "paperfigs_toy",
    "fig6e_points.csv": "paperfigs_toy",
    "fig5b_points.csv": "paperfigs_toy",
    "fig1_points.csv": "paperfigs_toy",
    "toy_readings.json": "paperfigs_toy",
}


def _ours_columns() -> dict:
    """The columns of our tables each input needs (an empty frame of them where the stage does not run):
    cells.csv's are those the regime figures read (``ours.CELL_COLUMNS``)."""
    from depthwidth.paperfigs.ours import CELL_COLUMNS

    return {"cells": CELL_COLUMNS, "exponents": ("distribution", "alpha", "gamma", "exponent", "stderr")}


def load_inputs(figure: str, files: dict) -> dict:
    """The readings of ``figure`` and our tables (an empty frame of cells.csv's or exponents.csv's
    columns where the superposition stage is not in the run), each checked against its seal."""
    from pathlib import Path

    from depthwidth.integrity import read_json, read_table

    out = {}
    rec = FIGURES[figure]
    for name in rec.readings:
        path = files[name]
        rule = _WRITER.get(Path(path).name, "paperfigs_regimes")
        out[name] = read_json(path, rule) if path.endswith(".json") else read_table(path, rule)
    columns = _ours_columns()
    for name in rec.ours:
        path = files.get(name)
        if path:
            out[name] = read_table(path, "superposition_tables", columns[name])
        else:
            out[name] = pd.DataFrame(
                {c: pd.Series(dtype=str if c == "distribution" else float) for c in columns[name]}
            )
    return out


def paperfigs_compare(
    figure: str, files: dict, *, summed: bool, compare_csv: str, table_csv: str, extra_csv: str
):
    """Rule paperfigs_compare, one figure: its verdict records, its per-cell table and its second table."""
    from depthwidth.integrity import write_table

    if figure not in COMPARE:
        raise KeyError(f"no figure {figure!r}: the compared figures are {', '.join(COMPARE)}")
    table, extra, recs = COMPARE[figure](load_inputs(figure, files), summed)
    write_table(table if len(table.columns) else pd.DataFrame({"none": []}), table_csv)
    write_table(extra if len(extra.columns) else pd.DataFrame({"none": []}), extra_csv)
    V.write_comparisons(compare_csv, recs)
    return recs
