"""Corpora without text: null texts are dropped (never scored as "nan"), empty
ones too, both counted in the log; a corpus with no usable token is an error naming it and the fix."""

from __future__ import annotations

import json
import logging
import math
from collections import Counter

import pandas as pd
import pytest
from _pipeline import BASE_CONFIGS, overlay, run

from depthwidth.download.fineweb import CorpusError, read_corpus
from depthwidth.lm_head.corpus import corpus_texts, join_texts
from depthwidth.lm_head.loss import LossError, require_tokens

SPEC = {"source": "local", "text_column": "text", "join_words": 0}


def _jsonl(path, texts):
    path.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts))
    return path


def test_null_texts_are_dropped_and_counted_not_scored_as_nan():
    dropped: Counter = Counter()
    got = join_texts(["a b", None, math.nan, pd.NA, "  ", "", "c"], 10, dropped=dropped)
    assert got == ["a b", "c"]
    assert dropped == {"null": 3, "empty": 2}


def test_null_texts_of_a_file_are_read_as_empty(tmp_path):
    f = _jsonl(tmp_path / "c.jsonl", ["one", None, "two"])
    assert [d["text"] for d in read_corpus(f)] == ["one", "", "two"]
    pq = tmp_path / "c.parquet"
    pd.DataFrame({"text": ["one", None, "two"]}).to_parquet(pq)
    assert [d["text"] for d in read_corpus(pq)] == ["one", "", "two"]


def test_corpus_texts_logs_what_it_dropped(tmp_path, caplog):
    f = _jsonl(tmp_path / "c.jsonl", ["one", None, " ", "two"])
    with caplog.at_level(logging.INFO, logger="depthwidth"):
        assert corpus_texts({**SPEC, "path": str(f)}, 5, input_paths=[str(f)], name="mixed") == ["one", "two"]
    # a file's null texts are read as empty (fineweb.read_corpus says how many), then dropped with the blanks
    assert "1 null texts, read as empty" in caplog.text
    assert "corpus mixed: dropped 0 null and 2 empty or whitespace-only texts" in caplog.text


@pytest.mark.parametrize("texts", [["  ", "\n\t", ""], [None, None], [" ", None]])
def test_corpus_without_text_is_an_error_naming_it(tmp_path, texts):
    f = _jsonl(tmp_path / "blank.jsonl", texts)
    with pytest.raises(CorpusError) as e:
        corpus_texts({**SPEC, "path": str(f)}, 5, input_paths=[str(f)], name="blank")
    msg = str(e.value)
    assert "corpus 'blank' has no usable text" in msg and "Fix:" in msg and str(f) in msg


def test_zero_tokens_scored_is_an_error_not_a_loss_of_zero():
    per_text = pd.DataFrame({"text_index": [0, 1], "tokens": [0, 0], "nll_nats": [0.0, 0.0]})
    with pytest.raises(LossError) as e:
        require_tokens(per_text, "blank", "tiny", "data/corpora/blank.parquet")
    assert "corpus 'blank'" in str(e.value) and "0 tokens" in str(e.value) and "Fix:" in str(e.value)
    per_text.loc[1, "tokens"] = 5
    assert require_tokens(per_text, "blank", "tiny", "x") == 5


@pytest.mark.workflow
def test_workflow_stops_on_a_blank_corpus_naming_it(tmp_path):
    """Rule lm_head_corpus on a corpus of whitespace: the job fails naming the corpus, writes no output."""
    f = _jsonl(tmp_path / "blank.jsonl", ["   ", "\n", None])
    cfg = overlay(
        tmp_path, "blank", {"lm_head": {"loss": {"corpora": {"blank": {"source": "local", "path": str(f)}}}}}
    )
    wd = tmp_path / "wd"
    p = run(
        wd,
        "--cores",
        "1",
        "data/corpora/blank.parquet",
        configs=[*BASE_CONFIGS, cfg],
        check=False,
        timeout=120,
    )
    text = p.stdout + p.stderr
    assert p.returncode != 0 and "corpus 'blank' has no usable text" in text, text[-3000:]
    assert not (wd / "data/corpora/blank.parquet").exists()


def test_token_counts_skip_and_count_null_and_blank_documents():
    from depthwidth.lm_head.token_frequencies import count_tokens

    dropped: Counter = Counter()
    counts, facts = count_tokens(
        lambda b: [t.split() for t in b], ["a b", None, math.nan, " ", "c"], 100, dropped=dropped
    )
    assert facts["n_tokens"] == 3 and "nan" not in counts and dropped == {"null": 2, "empty": 1}
