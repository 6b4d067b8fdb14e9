"""The report's headline rows as comparison records, and the first screen's verdict per paper.

Each stage's section passes its headline rows to ``sections.write_section``; the report reads them from
``results/<stage>/headline.json``. A row is a comparison record (the columns ``verdicts.COLUMNS``, from
``Comparison.row()``), made by the stage's comparison rule. Rows whose ``claim`` starts with :data:`SWEEP_PREFIX`
are a user's sweeps: they are shown in their own table and written to ``results/your_sweeps.csv``, never
to the papers' ``results/headline.csv``.

:func:`paper_verdicts` is the first screen's line per paper, computed from the rows alone: which claims
reproduced, which did not, which the data cannot decide, and which this run cannot test and why.
"""

from __future__ import annotations


from depthwidth.sections import RECORD_KEYS
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


# ---------------------------------------------------------------- records
def normalise(row: dict, stage: str) -> dict:
    """One headline row as a record with every column of ``COLUMNS``: a comparison record as it is (its
    verdict and paper checked). Anything else raises :class:`RowError` naming what it lacks. ``stage``
    names the section the row came from."""
    if not isinstance(row, dict):
        raise RowError(f"a headline row is a mapping, not {type(row).__name__}")
    if set(RECORD_KEYS) <= set(row):
        if row["verdict"] not in VERDICTS:
            raise RowError(f"verdict {row['verdict']!r}: use one of {list(VERDICTS)}")
        if row["paper"] not in PAPERS:
            raise RowError(f"paper {row['paper']!r}: use one of {list(PAPERS)}")
        return {c: row.get(c) for c in COLUMNS}
    raise RowError(
        f"a headline row needs the comparison record's keys {list(RECORD_KEYS)} (verdicts.compare(...).row()); "
        f"it has {sorted(row)}"
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
