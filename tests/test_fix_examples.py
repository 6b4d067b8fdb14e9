"""Every config snippet that an error message prints as its fix (``e.g. key: value``, ``set a.b: value``)
is itself valid: each message is provoked, its snippet is cut out of the printed text, parsed as YAML, laid
over the failing config where the message says, and the result passes the validator and the check that
raised. A new message with such a snippet fails ``test_every_printed_snippet_is_covered`` until a case
for it is added here."""

from __future__ import annotations

import copy
import re

import pandas as pd
import pytest
import yaml
from _pipeline import merged_config

from _helpers import REPO
from depthwidth.causal_tracing.trace import CausalTracingError, Fact
from depthwidth.chinchilla.sweeps import SweepError, read_sweep
from depthwidth.config import ConfigError, validate_config
from depthwidth.download.pipeline import local_file_errors
from depthwidth.plan import check_job_count
from depthwidth.superposition.pipeline import cells

PACKAGE = REPO / "src" / "depthwidth"
# a printed snippet: "e.g. key: value", "e.g. {key: value, ...}" or "set a.b.c: value" inside a string
SNIPPET = re.compile(r"(?:e\.g\. \{{0,2}[a-z_]+: |\bset [a-z_]+(?:\.[a-z_]+)+: )")


def _snippet(msg: str, pattern: str) -> str:
    m = re.search(pattern, msg)
    assert m, f"no fix example matching {pattern!r} in:\n{msg}"
    return m.group(1)


def _at(cfg: dict, dotted: str) -> dict:
    node = cfg
    for k in dotted.split("."):
        node = node.setdefault(k, {})
    return node


def _valid(raw: dict) -> dict:
    return validate_config(copy.deepcopy(raw))


def case_max_jobs():
    raw = merged_config()
    raw["max_jobs"] = 10
    _at(raw, "superposition")["seeds"] = list(range(300))  # a grid of thousands: a number with 4+ digits
    with pytest.raises(ConfigError) as e:
        check_job_count(_valid(raw))
    raw.update(yaml.safe_load(_snippet(str(e.value), r"e\.g\. (max_jobs: [^)]*)\)")))
    assert sum(c.count for c in check_job_count(_valid(raw))) > 1000
    return "plan.py"


def case_superposition_alphas():
    raw = merged_config()
    _at(raw, "superposition").update(alphas=[], distributions=[])
    with pytest.raises(ValueError) as e:
        cells(_valid(raw)["superposition"])
    _at(raw, "superposition").update(yaml.safe_load(_snippet(str(e.value), r"e\.g\. (alphas: \[.*?\])")))
    assert len(cells(_valid(raw)["superposition"])) > 0
    return "superposition/pipeline.py"


def case_local_corpus(tmp_path):
    raw = merged_config()
    _at(raw, "hidden_states.corpus").update(source="local", local_path=str(tmp_path / "missing.jsonl"))
    (msg,) = local_file_errors(_valid(raw))
    dotted, value = _snippet(msg, r"\bset ([a-z_.]+: \w+)").split(": ")
    *parents, key = dotted.split(".")
    _at(raw, ".".join(parents))[key] = yaml.safe_load(value)
    assert local_file_errors(_valid(raw)) == []
    return "download/pipeline.py"


def case_fact_target():
    raw = merged_config()
    fact = {"name": "oneword", "prompt": "Paris", "subject": "Paris"}
    raw["causal_tracing"]["facts"] = [fact]
    with pytest.raises(CausalTracingError) as e:
        Fact(**_valid(raw)["causal_tracing"]["facts"][0]).split()
    fact.update(yaml.safe_load(_snippet(str(e.value), r"e\.g\. (target: '[^']*')")))
    prompt, target = Fact(**_valid(raw)["causal_tracing"]["facts"][0]).split()
    assert (prompt, target) == ("Paris", " Paris")
    return "causal_tracing/trace.py"


def case_sweep_columns(tmp_path):
    csv = tmp_path / "runs.csv"
    pd.DataFrame(
        {
            "d_model": [64, 128, 256, 64, 128, 256],
            "n_layers": [2, 4, 8, 4, 8, 2],
            "tokens": [1e6, 2e6, 4e6, 4e6, 1e6, 2e6],
            "loss": [3.1, 2.9, 2.7, 3.0, 2.95, 2.8],
        }
    ).to_csv(csv, index=False)
    with pytest.raises(SweepError) as e:
        read_sweep(csv, "mine")
    columns = yaml.safe_load(_snippet(str(e.value), r"e\.g\. (\{[^}]*\})"))
    raw = merged_config()
    raw["chinchilla"]["sweeps"] = [{"name": "mine", "path": str(csv), "columns": columns}]
    assert _valid(raw)["chinchilla"]["sweeps"][0]["columns"] == columns
    assert len(read_sweep(csv, "mine", columns)) == 6
    return "chinchilla/sweeps.py"


def test_every_printed_fix_example_is_valid(tmp_path):
    done = {
        case_max_jobs(),
        case_superposition_alphas(),
        case_local_corpus(tmp_path),
        case_fact_target(),
        case_sweep_columns(tmp_path),
    }
    assert done == COVERED


COVERED = {
    "plan.py",
    "superposition/pipeline.py",
    "download/pipeline.py",
    "causal_tracing/trace.py",
    "chinchilla/sweeps.py",
}


def test_every_printed_snippet_is_covered():
    """The package's modules whose strings print a config snippet as a fix are exactly those a case above
    provokes (a docstring's example is not a printed message and is left out)."""
    found = set()
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        docstrings = re.findall(r'"""(.*?)"""', text, re.DOTALL)
        for doc in docstrings:
            text = text.replace(doc, "")
        if SNIPPET.search(text):
            found.add(str(path.relative_to(PACKAGE)))
    assert found == COVERED
