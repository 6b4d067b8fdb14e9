"""Corpora and tokenizers of the LM-head stage: where texts come from and how they become token ids.

A corpus is configured as ``lm_head.loss.corpora.<name>`` or ``lm_head.token_frequencies.corpora.<name>``
(schema: ``schemas/lm_head.schema.yaml``), with ``source`` one of fineweb (the FineWeb shards of rule
fineweb_shards), raw (a file pinned in ``src/depthwidth/download/manifest.yaml``, rule fetch_pinned_<group>), local (a
file) or hub (a hub dataset, streamed: only what is needed is read).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

import pandas as pd

from depthwidth.integrity import write_table

log = logging.getLogger("depthwidth.lm_head")

CORPUS_RULE = "lm_head_corpus"  # writes data/corpora/<corpus>.parquet


def _is_null(t) -> bool:
    """None, NaN or pandas' NA: a missing text (never to be scored as the string "nan")."""
    if t is None:
        return True
    try:
        return bool(pd.isna(t))
    except (TypeError, ValueError):  # a list or array is not a scalar null
        return False


def join_texts(
    texts: Iterable, n_texts: int, join_words: int = 0, dropped: Counter | None = None
) -> list[str]:
    """The first ``n_texts`` non-empty texts; with ``join_words`` > 0, consecutive non-empty texts are
    joined (with a space) until a chunk has at least that many whitespace-separated words. The paper
    built its wikitext-103 and bookcorpus samples this way (one line per row, joined to max_tokens/2 words).

    Null texts (None, NaN) and empty or whitespace-only ones are dropped, counted in ``dropped`` under
    "null" and "empty" when it is given."""
    out: list[str] = []
    cur: list[str] = []
    words = 0
    dropped = Counter() if dropped is None else dropped
    for t in texts:
        if _is_null(t):
            dropped["null"] += 1
            continue
        t = str(t)
        if not t.strip():
            dropped["empty"] += 1
            continue  # blank lines (wikitext) have no tokens to score
        if join_words <= 0:
            out.append(t)
        else:
            cur.append(t)
            words += len(t.split())
            if words < join_words:
                continue
            out.append(" ".join(cur))
            cur, words = [], 0
        if len(out) >= n_texts:
            break
    return out


def iter_texts(
    spec: dict,
    input_paths: list[str] | None = None,
    name: str = "?",
    rule: str = CORPUS_RULE,
    sources: dict | None = None,
) -> Iterator[str]:
    """Every row's text of a corpus, in stream order, blank ones included (callers skip them).

    ``source`` fineweb: ``input_paths`` are the FineWeb parquet shards (their seals checked); raw: ``input_paths[0]``
    is the pinned file (checked against its pinned SHA-256 and fetched again from ``sources`` where damaged;
    ``rule``, the rule reading it, is named in the fix where that fails); local: ``input_paths[0]`` is the user's file (parquet, JSON or JSONL); hub:
    streamed with ``datasets``.
    """
    from depthwidth.download.fetch import check_pinned
    from depthwidth.download.fineweb import CorpusError, read_corpus, read_shards

    src = spec["source"]
    if src == "fineweb":
        yield from read_shards(input_paths)["text"]
    elif src in ("raw", "local"):
        if src == "raw":
            check_pinned(input_paths[0], rule=rule, sources=sources)
        yield from (d["text"] for d in read_corpus(input_paths[0], text_column=spec["text_column"]))
    elif src == "hub":
        yield from _hub_texts(spec, name)
    else:
        raise CorpusError(f"corpus '{name}': source is {src!r}; use fineweb, raw, hub or local")


def _hub_texts(spec: dict, name: str) -> Iterator[str]:
    from depthwidth.download.fineweb import CorpusError

    col = spec["text_column"]
    try:
        import datasets

        ds = datasets.load_dataset(
            spec["dataset"],
            name=spec.get("config"),
            split=spec["split"],
            revision=spec.get("revision"),
            streaming=True,
        )
        for row in ds:
            yield row[col]
    except Exception as e:
        raise CorpusError(
            f"corpus '{name}': could not stream {spec.get('dataset')} (config {spec.get('config')}, split "
            f"{spec['split']}) from the hub: {type(e).__name__}: {e}.\nFix: run where the hub is reachable, "
            f"or save the texts as JSONL and use {{source: local, path: <file>}} for corpus '{name}'."
        ) from e


def corpus_texts(
    spec: dict,
    n_texts: int,
    *,
    input_paths: list[str] | None = None,
    name: str = "?",
    sources: dict | None = None,
) -> list[str]:
    """The first ``n_texts`` non-empty texts of a corpus (config ``lm_head.loss.corpora.<name>``).

    Empty and whitespace-only texts are skipped; ``join_words`` joins short rows (see ``join_texts``).
    """
    dropped: Counter = Counter()
    texts = join_texts(
        iter_texts(spec, input_paths, name, sources=sources), n_texts, spec["join_words"], dropped
    )
    if dropped:
        log.info(
            "corpus %s: dropped %d null and %d empty or whitespace-only texts",
            name,
            dropped["null"],
            dropped["empty"],
        )
    if not texts:
        from depthwidth.download.fineweb import CorpusError

        raise CorpusError(
            f"corpus '{name}' has no usable text: {dropped['null']} null and {dropped['empty']} empty or "
            f"whitespace-only texts, nothing else ({_where(spec)}). A loss over 0 tokens is not a result.\n"
            f"Fix: point lm_head corpus '{name}' at a file or dataset with text (check its text_column, "
            f"'{spec['text_column']}'), or remove the corpus from the config."
        )
    if len(texts) < n_texts:
        log.warning(
            "corpus %s gives %d texts, fewer than lm_head.loss.n_texts = %d; using all of them",
            name,
            len(texts),
            n_texts,
        )
    return texts


def _where(spec: dict) -> str:
    """Where a corpus's texts come from, for messages."""
    src = spec["source"]
    if src in ("raw", "local"):
        return f"source {src}, path {spec.get('path')}"
    if src == "hub":
        return f"source hub, dataset {spec.get('dataset')}, split {spec.get('split')}"
    return "source fineweb, the hidden_states corpus shards"


def lm_head_corpus(
    spec: dict,
    n_texts: int,
    input_paths: list[str],
    name: str,
    output: str | Path,
    logger: logging.Logger | None = None,
    sources: dict | None = None,
) -> None:
    """Rule lm_head_corpus: the first ``n_texts`` non-empty texts of one corpus as parquet
    (``text_index``, ``text``)."""
    texts = corpus_texts(spec, n_texts, input_paths=input_paths, name=name, sources=sources)
    # sealed: rule lm_head_loss reads it with read_table, which checks the seal
    write_table(pd.DataFrame({"text_index": range(len(texts)), "text": texts}), output)
    (logger or log).info("corpus %s: %d texts, %d characters", name, len(texts), sum(map(len, texts)))


def load_tokenizer(model_dir: str | Path):
    """The tokenizer of the model fetched into ``model_dir`` (no weights are read)."""
    from transformers import AutoTokenizer

    from depthwidth.models.load import read_spec

    _, man = read_spec(model_dir)
    if man.get("hf_dir"):
        return AutoTokenizer.from_pretrained(man["hf_dir"])
    gguf = Path(man["gguf"])  # an unconverted GGUF carries its tokenizer
    return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
