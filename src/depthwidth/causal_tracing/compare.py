"""The causal-tracing tables and comparisons with the depth paper, as data (rule causal_tracing_compare):
``pairs.csv``, ``peak_depths.csv`` and ``comparisons.csv`` (``depthwidth.verdicts``).

The paper gives numbers for one pair only: Pythia-12B on "The space needle is in downtown Seattle",
p_clean 0.36 and p_corrupt 0.012 (one noise draw). p_clean is a deterministic number of the same model,
sentence and procedure, so it is compared digit for digit (``procedure_test``); the paper's p_corrupt is one
draw of the noise, so it is compared with the spread of our single draws where there are enough of them.
A run that does not trace that pair says so in its records. The section (rule causal_tracing_section)
only renders.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from depthwidth import papers
from depthwidth import verdicts as v
from depthwidth.causal_tracing.tables import pairs_table, peak_table, read_jobs
from depthwidth.files import atomic_write_csv

log = logging.getLogger("depthwidth.causal_tracing")

STAGE, PAPER, LINK = "causal_tracing", "depth", "docs/stages/causal_tracing.md"
CLAIM = "causal tracing: where in depth a fact is recalled (Fig. 6)"
# Fewer single noise draws than this cannot say how far one draw of p_corrupt spreads.
MIN_DRAWS = 20


def _is_paper_pair(s: dict) -> bool:
    return (
        s.get("model_id") == papers.CAUSAL_TRACE_MODEL_ID
        and str(s.get("text", "")).lower() == papers.CAUSAL_TRACE_SENTENCE.lower()
    )


def _paper(value: papers.PaperValue) -> dict:
    return dict(paper_value=value.value, paper_text=value.text, paper_source=value.source, link=LINK)


def pair_comparisons(s: dict) -> list[v.Comparison]:
    """p_clean and p_corrupt of the paper's pair, traced by this run."""
    draws = np.asarray(s.get("p_corrupt_samples") or [s["p_corrupt"]], dtype=float)
    if len(draws) >= MIN_DRAWS:
        lo, hi = (float(q) for q in np.quantile(draws, [0.025, 0.975]))
        corrupt = v.interval_test(lo, hi, papers.CAUSAL_TRACE_P_CORRUPT.value, what="range of single draws")
        corrupt_note = f"mean of {len(draws)} noise draws; single draws 95 % within [{lo:.3g}, {hi:.3g}]"
    else:
        corrupt = v.not_tested(
            f"the paper's value is one noise draw; this run has {len(draws)} draw"
            f"{'' if len(draws) == 1 else 's'}, too few (fewer than {MIN_DRAWS}) to say how far one draw spreads"
        )
        corrupt_note = f"mean of {len(draws)} noise draw{'' if len(draws) == 1 else 's'}"
    return [
        v.compare(
            STAGE,
            f"p_clean_{s['model']}",
            PAPER,
            CLAIM,
            f"causal tracing p_clean, {s['model']}",
            v.procedure_test(s["p_clean"], papers.CAUSAL_TRACE_P_CLEAN.value, digits=2),
            value=s["p_clean"],
            err=v.Error(None, v.EXACT_VALUE),
            note=f"same model, sentence and procedure; {s.get('dtype', '')} on {s.get('device', '')}",
            **_paper(papers.CAUSAL_TRACE_P_CLEAN),
        ),
        v.compare(
            STAGE,
            f"p_corrupt_{s['model']}",
            PAPER,
            CLAIM,
            f"causal tracing p_corrupt, {s['model']}",
            corrupt,
            value=s["p_corrupt"],
            note=corrupt_note,
            **_paper(papers.CAUSAL_TRACE_P_CORRUPT),
        ),
    ]


def not_run_comparisons(jobs: list[tuple[dict, np.ndarray]]) -> list[v.Comparison]:
    """The paper's pair was not traced: one record per paper number, saying what was traced instead."""
    models = list(dict.fromkeys(s["model"] for s, _ in jobs))
    traced = f"this run traces {', '.join(models) or 'no model'}" + (
        f" on {len({s['fact'] for s, _ in jobs})} fact{'s' if len({s['fact'] for s, _ in jobs}) != 1 else ''}"
        if jobs
        else ""
    )
    why = (
        f"the paper's numbers are Pythia-12B's on “{papers.CAUSAL_TRACE_SENTENCE}”; {traced} "
        "(config/paper.yaml traces the paper's pair)"
    )
    return [
        v.compare(
            STAGE,
            f"{key}_paper_pair",
            PAPER,
            CLAIM,
            f"causal tracing {key}, Pythia-12B",
            v.not_tested(why),
            value_text="not run",
            **_paper(value),
        )
        for key, value in (
            ("p_clean", papers.CAUSAL_TRACE_P_CLEAN),
            ("p_corrupt", papers.CAUSAL_TRACE_P_CORRUPT),
        )
    ]


def comparisons(jobs: list[tuple[dict, np.ndarray]]) -> list[v.Comparison]:
    paper_jobs = [s for s, _ in jobs if _is_paper_pair(s)]
    if not paper_jobs:
        return not_run_comparisons(jobs)
    return [c for s in paper_jobs for c in pair_comparisons(s)]


def causal_tracing_compare(
    summaries: list[str | Path],
    matrices: list[str | Path],
    *,
    min_p_clean: float,
    pairs_csv: str | Path,
    peaks_csv: str | Path,
    comparisons_csv: str | Path,
) -> list[v.Comparison]:
    """Rule causal_tracing_compare: the pairs and peak-depth tables and the comparisons, from every job's
    summaries and matrices."""
    jobs = read_jobs(summaries, matrices)
    atomic_write_csv(pairs_csv, pairs_table(jobs, min_p_clean))
    atomic_write_csv(peaks_csv, peak_table(jobs))
    rows = comparisons(jobs)
    v.write_comparisons(comparisons_csv, rows)
    for c in rows:
        log.info("%s: %s", c.quantity, c.verdict_text)
    return rows
