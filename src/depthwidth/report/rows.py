"""The report's headline rows as comparison records, and the first screen's verdict per paper.

Each stage's section passes its headline rows to ``sections.write_section``; the report reads them from
``results/<stage>/headline.json``. A row is a comparison record (the columns ``verdicts.COLUMNS``, from
``Comparison.row()``) or, until every stage writes records, a legacy row (``sections.HEADLINE_KEYS``),
which :func:`from_legacy` turns into a record. Rows whose ``claim`` starts with :data:`SWEEP_PREFIX`
are a user's sweeps: they are shown in their own table and written to ``results/your_sweeps.csv``, never
to the papers' ``results/headline.csv``.

:func:`paper_verdicts` is the first screen's line per paper, computed from the rows alone: which claims
reproduced, which did not, which the data cannot decide, and which this run cannot test and why.
"""

from __future__ import annotations

import math
import re

from depthwidth.sections import HEADLINE_KEYS, RECORD_KEYS
from depthwidth.verdicts import (
    CANNOT_TELL,
    COLUMNS,
    EXACT,
    NO,
    NO_PAPER_NUMBER,
    NOT_TESTED,
    PAPERS,
    SWEEP_PREFIX,
    VERDICTS,
    YES,
)

# The papers in the order the first screen shows them, with a short name.
PAPER_ORDER = ("depth", "superposition")
PAPER_NAMES = {"depth": "The depth paper", "superposition": "The superposition paper"}


class RowError(ValueError):
    """A headline row that is neither a comparison record nor a legacy row."""


# ---------------------------------------------------------------- legacy rows (remove with the last one)
# LEGACY: stages that still pass sections.headline_row dicts. Remove this block, HEADLINE_KEYS and the
# legacy branch of ``normalise`` once every stage writes comparison records (verdicts.compare).
LEGACY_PAPER = {
    "chinchilla": "depth",
    "depth_toy": "depth",
    "hidden_states": "depth",
    "causal_tracing": "depth",
    "superposition": "superposition",
    "lm_head": "superposition",
    "paperfigs": "superposition",
}
# The built-in sweeps of chinchilla.sweeps (its schema default): their rows stay with the papers'.
LEGACY_PUBLIC_SWEEPS = ("chinchilla", "openlm_grid", "openlm_main")
_SWEEP = re.compile(r"\(sweep ([A-Za-z0-9_.-]+)\)")


def _legacy_claim(stage: str, quantity: str) -> str:
    q = quantity.lower()
    sweep = _SWEEP.search(quantity)
    if sweep:
        name = sweep.group(1)
        return "α_ℓ on public sweeps of runs" if name in LEGACY_PUBLIC_SWEEPS else f"{SWEEP_PREFIX}{name}"
    if stage == "chinchilla":
        return "the decomposed law on the Chinchilla runs"
    if stage == "depth_toy":
        return "depth toy: α_ℓ of teacher–student models"
    if stage == "hidden_states":
        return "hidden states: small, uncorrelated layer updates"
    if stage == "causal_tracing":
        return "causal tracing: where a fact is recalled"
    if "strong superposition" in q:
        return "strong superposition: loss ∝ 1/m"
    if "weak superposition" in q or "token frequencies" in q:
        return "weak superposition: α_m = α − 1"
    if "overlap" in q:
        return "LM-head overlaps ∝ 1/m"
    if "loss vs width" in q:
        return "LLM loss vs width: α_m ≈ 0.91"
    return stage.replace("_", " ")


def _legacy_verdict(row: dict) -> tuple[str, str]:
    """(word, text) of a legacy row: yes/no where it was compared, "–" without a paper number, else
    "not tested" with its reason from the note (the clause after "Not tested:", else the note)."""
    if row.get("agree") is True:
        return YES, YES
    if row.get("agree") is False:
        return NO, NO
    if str(row.get("paper", "–")).strip() in ("", "–"):
        return NO_PAPER_NUMBER, NO_PAPER_NUMBER
    note = str(row.get("note") or "")
    m = re.search(r"not tested:\s*(.+)", note, re.IGNORECASE)
    reason = re.split(r";|\.(?:\s|$)", m.group(1))[0] if m else note.rstrip(".")
    reason = reason.strip() or "no comparison made"
    return NOT_TESTED, f"{NOT_TESTED}: {reason}"


def _number(x) -> float | None:
    if isinstance(x, bool) or x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def from_legacy(row: dict, stage: str) -> dict:
    """A legacy headline row (``HEADLINE_KEYS``) as a comparison record (``COLUMNS``)."""
    word, text = _legacy_verdict(row)
    value = _number(row.get("value"))
    key = re.sub(r"\W+", "_", str(row["quantity"]).lower()).strip("_")
    out = dict.fromkeys(COLUMNS)
    out.update(
        stage=stage,
        key=key,
        paper=LEGACY_PAPER.get(stage, "depth"),
        claim=_legacy_claim(stage, str(row["quantity"])),
        quantity=str(row["quantity"]),
        paper_text=str(row["paper"]),
        paper_source=str(row.get("source") or ""),
        value=value,
        value_text="" if value is not None else str(row.get("value") or ""),
        err=_number(row.get("err")),
        err_method="as stated by the section (legacy row)" if _number(row.get("err")) is not None else "none",
        verdict=word,
        verdict_text=text,
        note=str(row.get("note") or ""),
        headline=True,
        link=f"docs/stages/{stage}.md",
    )
    return out


# ---------------------------------------------------------------- records
def normalise(row: dict, stage: str) -> dict:
    """One headline row as a record with every column of ``COLUMNS``: a comparison record as it is (its
    verdict and paper checked), a legacy row through :func:`from_legacy`. Anything else raises
    :class:`RowError` naming what it lacks."""
    if not isinstance(row, dict):
        raise RowError(f"a headline row is a mapping, not {type(row).__name__}")
    if set(RECORD_KEYS) <= set(row):
        if row["verdict"] not in VERDICTS:
            raise RowError(f"verdict {row['verdict']!r}: use one of {list(VERDICTS)}")
        if row["paper"] not in PAPERS:
            raise RowError(f"paper {row['paper']!r}: use one of {list(PAPERS)}")
        return {c: row.get(c) for c in COLUMNS}
    if set(HEADLINE_KEYS) <= set(row):  # LEGACY
        return from_legacy(row, stage)
    raise RowError(
        f"a headline row needs the comparison record's keys {list(RECORD_KEYS)} (verdicts.compare(...).row()) "
        f"or, for a stage not yet converted, {list(HEADLINE_KEYS)}; it has {sorted(row)}"
    )


def is_sweep(record: dict) -> bool:
    """A user's sweep (its claim starts with :data:`SWEEP_PREFIX`)."""
    return str(record.get("claim") or "").startswith(SWEEP_PREFIX)


def split_rows(records: list[dict]) -> tuple[list[dict], list[dict]]:
    """(the papers' rows, the users' sweep rows)."""
    return [r for r in records if not is_sweep(r)], [r for r in records if is_sweep(r)]


def by_paper_and_claim(records: list[dict]) -> list[tuple[str, list[tuple[str, list[dict]]]]]:
    """[(paper, [(claim, rows), …]), …]: papers in :data:`PAPER_ORDER`, claims in first-seen order."""
    out = []
    papers = [p for p in PAPER_ORDER if any(r["paper"] == p for r in records)]
    papers += [p for p in dict.fromkeys(r["paper"] for r in records) if p not in papers]
    for paper in papers:
        rows = [r for r in records if r["paper"] == paper]
        claims = list(dict.fromkeys(r["claim"] for r in rows))
        out.append((paper, [(c, [r for r in rows if r["claim"] == c]) for c in claims]))
    return out


def _why(record: dict) -> str:
    text = str(record.get("verdict_text") or "")
    for word in (NOT_TESTED, CANNOT_TELL):
        if text.startswith(word):
            return text[len(word) :].lstrip(":( ").rstrip(")").strip()
    return ""


def claim_verdict(rows: list[dict]) -> tuple[str, str]:
    """One claim's outcome from its rows: ("reproduced" | "not reproduced" | "mixed" | "cannot tell" |
    "not tested" | "no paper number", the why where one is given). Rows without a paper number do not
    count. A claim is reproduced where every tested row says yes (or reproduced exactly), not reproduced
    where every tested row says no, mixed where both occur; rows that were not tested count only where
    no row was."""
    words = [r["verdict"] for r in rows if r["verdict"] != NO_PAPER_NUMBER]
    good = sum(w in (YES, EXACT) for w in words)
    bad = sum(w == NO for w in words)
    if good and bad:
        return "mixed", f"{good} yes, {bad} no"
    if good:
        return "reproduced", ""
    if bad:
        return "not reproduced", ""
    for word, outcome in ((CANNOT_TELL, "cannot tell"), (NOT_TESTED, "not tested")):
        hits = [r for r in rows if r["verdict"] == word]
        if hits:
            return outcome, _why(hits[0])
    return "no paper number", ""


# The order and the words of the first screen's line per paper.
OUTCOMES = (
    ("reproduced", "reproduced"),
    ("mixed", "partly reproduced"),
    ("not reproduced", "did not reproduce"),
    ("cannot tell", "cannot tell"),
    ("not tested", "cannot be tested in this run"),
)


def paper_verdicts(records: list[dict]) -> list[dict]:
    """The first screen: per paper (in :data:`PAPER_ORDER`) ``{"paper", "name", "title", "outcomes":
    [(words, [(claim, why), …]), …], "text"}``, ``text`` one plain line such as "The depth paper:
    reproduced: α_ℓ from the Chinchilla runs; cannot be tested in this run: depth toy (students trained
    1000 steps, the paper's 80000)." Users' sweeps are left out. A pure function of the rows."""
    papers, _ = split_rows(records)
    out = []
    for paper, claims in by_paper_and_claim(papers):
        outcome = {claim: claim_verdict(rows) for claim, rows in claims}
        groups = []
        for key, words in OUTCOMES:
            hits = [(c, why) for c, (o, why) in outcome.items() if o == key]
            if hits:
                groups.append((words, hits))
        parts = [
            f"{words}: " + "; ".join(f"{c} ({why})" if why else c for c, why in hits)
            for words, hits in groups
        ]
        name = PAPER_NAMES.get(paper, paper)
        out.append(
            {
                "paper": paper,
                "name": name,
                "title": PAPERS.get(paper, paper),
                "outcomes": groups,
                "text": f"{name}: " + (". ".join(parts) if parts else "no claim with a paper number") + ".",
            }
        )
    return out
