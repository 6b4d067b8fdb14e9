"""The report's headline rows: comparison records checked, users' sweeps kept apart,
and the first screen's verdict per paper computed from the rows."""

from __future__ import annotations

import pytest

from depthwidth import verdicts as v
from depthwidth.report.rows import (
    RowError,
    claim_verdict,
    normalise,
    paper_verdicts,
    split_rows,
)


def _rec(stage, key, paper, claim, verdict, **kw):
    return v.compare(stage, key, paper, claim, key, verdict, paper_text="1 ± 0.1", **kw).row()


def test_records_pass_through_and_anything_else_is_refused():
    rec = _rec(
        "chinchilla", "alpha_l", "depth", "α_ℓ from the Chinchilla runs", v.procedure_test(1.2014, 1.2014)
    )
    assert normalise(rec, "chinchilla") == {c: rec[c] for c in v.COLUMNS}
    # a row in the shape the sections wrote before every stage made comparison records
    old = {"quantity": "q", "paper": "1", "value": 1.0, "err": 0.1, "agree": True, "source": "s", "note": ""}
    with pytest.raises(RowError, match="comparison record's keys"):
        normalise(old, "lm_head")
    with pytest.raises(RowError, match="comparison record's keys"):
        normalise({"quantity": "q"}, "chinchilla")
    with pytest.raises(RowError, match="verdict 'supports'"):
        normalise({**rec, "verdict": "supports"}, "chinchilla")


def test_users_sweeps_are_split_from_the_papers_rows():
    rows = [
        _rec("chinchilla", "a", "depth", "α_ℓ from the Chinchilla runs", v.not_tested("x")),
        _rec("chinchilla", "b", "depth", v.sweep_claim("mine"), v.not_tested("open interval")),
    ]
    papers, sweeps = split_rows(rows)
    assert [r["key"] for r in papers] == ["a"] and [r["key"] for r in sweeps] == ["b"]
    # a user's sweep never enters the verdict line
    assert "mine" not in paper_verdicts(rows)[0]["text"]


def test_claim_outcome_counts_tested_rows_only():
    yes, no = v.Verdict(v.YES), v.Verdict(v.NO, "Δ = 1")

    def r(verdict):
        return _rec("s", "k", "depth", "c", verdict)

    assert claim_verdict([r(yes), r(v.no_paper_number())]) == ("reproduced", "")
    assert claim_verdict([r(yes), r(no), r(yes)]) == ("mixed", "2 yes, 1 no")
    assert claim_verdict([r(no)]) == ("not reproduced", "")
    assert claim_verdict([r(v.not_tested("trained 1000 steps")), r(yes)]) == ("reproduced", "")
    assert claim_verdict([r(v.not_tested("trained 1000 steps"))]) == ("not tested", "trained 1000 steps")
    assert claim_verdict([r(v.cannot_tell("leans 1.2"))]) == ("cannot tell", "leans 1.2")
    assert claim_verdict([r(v.procedure_test(1.2014, 1.2014))])[0] == "reproduced"


def test_a_verdict_line_per_paper_says_what_reproduced_what_did_not_and_what_cannot_be_tested():
    rows = [
        _rec("chinchilla", "a", "depth", "α_ℓ from the Chinchilla runs", v.Verdict(v.YES)),
        _rec("depth_toy", "b", "depth", "depth toy", v.not_tested("students trained 1000 steps")),
        _rec("superposition", "c", "superposition", "weak superposition", v.Verdict(v.NO, "Δ = 0.2")),
        _rec("superposition", "d", "superposition", "strong superposition", v.cannot_tell("leans 0.9")),
        _rec("chinchilla", "e", "depth", "hidden states", v.not_tested("another architecture")),
    ]
    out = paper_verdicts(rows)
    assert [p["paper"] for p in out] == ["depth", "superposition"]  # depth first, whatever the row order
    depth, sup = out
    assert depth["text"] == (
        "The depth paper: reproduced: α_ℓ from the Chinchilla runs. cannot be tested in this run: depth toy "
        "(students trained 1000 steps); hidden states (another architecture)."
    )
    assert sup["text"] == (
        "The superposition paper: did not reproduce: weak superposition. cannot tell: strong superposition "
        "(leans 0.9)."
    )
    assert [w for w, _ in depth["outcomes"]] == ["reproduced", "cannot be tested in this run"]
    assert paper_verdicts([]) == []
