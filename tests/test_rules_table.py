"""Every rule reads its params (and, where it has them, threads and resources) from its own entry of its
stage's RULES table (``depthwidth.rules``), so a param every rule carries is added in one place; every
entry is used; the rules files hold no lambdas and put nothing on ``sys.path`` (the Snakefile does)."""

from __future__ import annotations

import re

from _helpers import REPO

from depthwidth.causal_tracing import pipeline as causal_tracing
from depthwidth.depth_toy import pipeline as depth_toy
from depthwidth.download import pipeline as download
from depthwidth.hidden_states import pipeline as hidden_states
from depthwidth.lm_head import pipeline as lm_head
from depthwidth.models import pipeline as models
from depthwidth.paperfigs import pipeline as paperfigs
from depthwidth.report import pipeline as report
from depthwidth.superposition import pipeline as superposition

PIPELINES = (
    causal_tracing,
    depth_toy,
    download,
    hidden_states,
    lm_head,
    models,
    paperfigs,
    report,
    superposition,
)
# not yet on the idiom: its rules keep their own params
NOT_PORTED = {"chinchilla.smk"}


def _rules() -> list[tuple[str, str]]:
    """(rule name, its text) of every rule in rules/*.smk (``depth_toy_train`` for the rule each variant
    gets; both forms of ``superposition_train``)."""
    out = []
    for smk in sorted((REPO / "rules").glob("*.smk")):
        if smk.name in NOT_PORTED:
            continue
        for block in re.split(r"\n(?=[ \t]*rule\b)", smk.read_text())[1:]:
            name = re.match(r"\s*rule\s*(\w*):\s*(?:name:\s*f\"(\w+?)_\{)?", block)
            out.append((name.group(1) or name.group(2), block))
    return out


def test_every_rule_reads_its_own_entry_and_every_entry_is_used():
    rules, entries = _rules(), {name for p in PIPELINES for name in p.RULES}
    assert len(rules) == 36 and {name for name, _ in rules} == entries, entries ^ {name for name, _ in rules}
    for name, text in rules:
        assert f'RULES.params("{name}"' in text, name
        for directive in ("threads", "resources"):
            uses = f'RULES.{directive}("{name}"' in text
            declared = re.search(rf"^\s*{directive}:", text, re.MULTILINE) is not None
            assert uses == declared, (name, directive)


def test_rules_files_hold_no_lambda_and_no_sys_path():
    for smk in (REPO / "rules").glob("*.smk"):
        text = smk.read_text()
        assert "sys.path.insert" not in text, smk.name
        if smk.name not in NOT_PORTED:
            assert not re.search(r"\blambda\b", text), smk.name
    assert (REPO / "Snakefile").read_text().count("sys.path.insert") == 1
