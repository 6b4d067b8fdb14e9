"""Token frequencies of real text: p_i ∝ i^-α over the rank i of a token (the superposition paper's
appendix). In the weak-superposition regime the width exponent would be α_m = α − 1, so α near 1 would
give a loss nearly flat in width, far from the α_m ≈ 0.91 that LLMs show.

- ``count_tokens``: token-id counts over the first ≥ N tokens of a corpus, as the paper's script
  (LLMs/token-freq-0.py) counts them: documents in stream order, each tokenized on its own without
  special tokens; empty or whitespace-only documents skipped; the document that reaches N counted whole.
- ``rank_frequency``, ``zipf_fit``: the rank-frequency curve and the fit of its exponent α over a rank
  range (``depthwidth.laws.loglog.power_law_fit``: OLS on log p against log rank).
- ``lm_head_token_counts``, ``lm_head_token_fit``: the rules of the same names.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from itertools import islice
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth.integrity import read_json, read_table, write_json, write_table
from depthwidth.laws.loglog import power_law_fit

log = logging.getLogger("depthwidth.lm_head")

#: documents tokenized per call (fast tokenizers batch in Rust); the counts do not depend on it
BATCH_DOCS = 64
#: columns of token_frequency_fit.csv, in order
FIT_COLUMNS = [
    "tokenizer",
    "family",
    "corpus",
    "n_docs",
    "n_tokens",
    "n_distinct",
    "exhausted",
    "rank_min",
    "rank_max",
    "n_ranks",
    "alpha",
    "alpha_err",
    "weak_alpha_m",
    "alpha_lower",
    "alpha_upper",
    "log_c",
]


def _nonblank(texts: Iterable, dropped: Counter | None = None) -> Iterator[str]:
    """The texts that are strings with a non-blank character; the others are counted in ``dropped``
    ("null" for None/NaN and other non-strings, "empty" for empty and whitespace-only strings)."""
    dropped = Counter() if dropped is None else dropped
    for t in texts:
        if not isinstance(t, str):
            dropped["null"] += 1
        elif not t.strip():
            dropped["empty"] += 1
        else:
            yield t


def count_tokens(
    encode: Callable[[list[str]], list[list[int]]],
    texts: Iterable,
    min_tokens: int,
    batch_docs: int = BATCH_DOCS,
    dropped: Counter | None = None,
) -> tuple[Counter, dict]:
    """Counts of token ids over the first ≥ ``min_tokens`` tokens of ``texts`` (in order).

    ``encode(batch)`` maps a list of texts to their token ids (no special tokens). Empty, non-string and
    whitespace-only texts are skipped, and so are texts that give no token; the text during which the
    running total reaches ``min_tokens`` is counted whole, and nothing after it (skipped texts are counted
    in ``dropped`` when it is given, see ``_nonblank``). Returns (counts, facts):
    ``n_tokens`` (≥ ``min_tokens`` unless the corpus ran out: ``exhausted``), ``n_docs`` counted.
    """
    counts: Counter = Counter()
    total = n_docs = 0
    docs = _nonblank(texts, dropped)
    while total < min_tokens:
        batch = list(islice(docs, batch_docs))
        if not batch:
            break
        for ids in encode(batch):
            if not len(ids):
                continue
            counts.update(ids)
            total += len(ids)
            n_docs += 1
            if total >= min_tokens:
                break
    return counts, {
        "n_tokens": total,
        "n_docs": n_docs,
        "n_distinct": len(counts),
        "exhausted": total < min_tokens,
    }


def counts_frame(
    counts: Counter, id_to_token: Callable[[list[int]], list[str]] | None = None
) -> pd.DataFrame:
    """One row per token id seen, most frequent first (ties by id): ``rank`` (1, 2, …), ``token_id``,
    ``count`` and, with ``id_to_token``, the ``token`` string."""
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ids = [int(k) for k, _ in items]
    df = pd.DataFrame(
        {"rank": np.arange(1, len(items) + 1), "token_id": ids, "count": [int(c) for _, c in items]}
    )
    if id_to_token is not None:
        df["token"] = [str(t) for t in id_to_token(ids)]
    return df


def rank_frequency(counts) -> tuple[np.ndarray, np.ndarray]:
    """(ranks 1…K, frequencies p_i = count_i / total) of the counts (any order; sorted here)."""
    c = np.sort(np.asarray(counts, dtype=np.float64))[::-1]
    return np.arange(1, len(c) + 1, dtype=np.float64), c / c.sum()


def zipf_fit(counts, rank_min: int, rank_max: int) -> dict:
    """Fit p_i ∝ i^-α over ranks ``rank_min`` ≤ i ≤ ``rank_max`` (clipped to the distinct tokens seen).

    Returns ``alpha`` and ``alpha_err`` (the OLS standard error of the log-log slope: it treats the ranks
    as independent, so it measures the scatter about the line, not how α depends on the range),
    ``log_c``, the rank range used and ``n_ranks``; ``alpha_lower`` and ``alpha_upper`` are the same fit
    over the lower and upper half of the range (split at its geometric middle), to show how straight
    the curve is. ``alpha`` is NaN with fewer than two ranks in the range.
    """
    ranks, p = rank_frequency(counts)
    hi = min(int(rank_max), len(ranks))
    mid = np.sqrt(rank_min * hi)

    def fit(lo_rank, hi_rank):
        keep = (ranks >= lo_rank) & (ranks <= hi_rank)
        return power_law_fit(ranks[keep], p[keep])

    whole = fit(rank_min, hi)
    return {
        "alpha": whole["exponent"],
        "alpha_err": whole["stderr"],
        "log_c": whole["log_c"],
        "rank_min": int(rank_min),
        "rank_max": hi,
        "n_ranks": whole["n_points"],
        "alpha_lower": fit(rank_min, mid)["exponent"],
        "alpha_upper": fit(mid, hi)["exponent"],
    }


def lm_head_token_counts(
    model_dir: str | Path,
    spec: dict,
    input_paths: list[str],
    corpus: str,
    *,
    min_tokens: int,
    counts_path: str | Path,
    summary_path: str | Path,
    logger: logging.Logger | None = None,
    sources: dict | None = None,
) -> dict:
    """Rule lm_head_token_counts: token counts of the tokenizer of the model fetched into ``model_dir`` on
    corpus ``spec`` (``lm_head.token_frequencies.corpora.<corpus>``). Writes the counts (parquet, see
    ``counts_frame``) and a summary JSON; returns the summary."""
    from depthwidth.lm_head.corpus import iter_texts, load_tokenizer
    from depthwidth.models.load import read_spec

    logger = logger or log
    t0 = time.monotonic()
    model, _ = read_spec(model_dir)
    tok = load_tokenizer(model_dir)

    def encode(batch: list[str]) -> list[list[int]]:
        return tok(batch, add_special_tokens=False)["input_ids"]

    dropped: Counter = Counter()
    counts, facts = count_tokens(
        encode,
        iter_texts(spec, input_paths, corpus, rule="lm_head_token_counts", sources=sources),
        min_tokens,
        dropped=dropped,
    )
    if dropped:
        logger.info(
            "corpus %s: skipped %d null and %d empty or whitespace-only documents",
            corpus,
            dropped["null"],
            dropped["empty"],
        )
    if facts["n_tokens"] == 0:
        from depthwidth.download.fineweb import CorpusError

        raise CorpusError(
            f"corpus '{corpus}' gives the {model.name} tokenizer no token: every document is null, empty or "
            "whitespace-only, so there is no frequency to fit.\nFix: point lm_head.token_frequencies.corpora."
            f"{corpus} at text (check its source and text_column, '{spec['text_column']}'), or remove it."
        )
    if facts["exhausted"]:
        logger.warning(
            "corpus %s ran out after %d tokens (%d documents), fewer than min_tokens = %d: all of "
            "it is counted",
            corpus,
            facts["n_tokens"],
            facts["n_docs"],
            min_tokens,
        )
    write_table(counts_frame(counts, tok.convert_ids_to_tokens), counts_path)  # sealed, as the summary
    summary = {
        "tokenizer": model.name,
        "family": model.family,
        "corpus": corpus,
        "min_tokens": min_tokens,
        **facts,
        "vocab_size": len(tok),
        "seconds": time.monotonic() - t0,
    }
    logger.info(
        "%s on %s: %d tokens in %d documents, %d distinct ids (%.1fs)",
        model.name,
        corpus,
        facts["n_tokens"],
        facts["n_docs"],
        facts["n_distinct"],
        summary["seconds"],
    )
    write_json(summary_path, summary)
    return summary


def lm_head_token_fit(
    counts_paths: list[str],
    summary_paths: list[str],
    *,
    fit_ranks: list[int],
    fit_csv: str | Path,
    logger: logging.Logger | None = None,
) -> pd.DataFrame:
    """Rule lm_head_token_fit: α of p_i ∝ i^-α for each (tokenizer, corpus) over ranks ``fit_ranks``
    ([first, last]), with α − 1 (``weak_alpha_m``, the weak-regime width exponent). One CSV row each."""
    rows = []
    for cpath, spath in zip(counts_paths, summary_paths):
        s = read_json(spath, "lm_head_token_counts", ("tokenizer", "corpus"))
        fit = zipf_fit(read_table(cpath, "lm_head_token_counts", ("count",))["count"], *fit_ranks)
        rows.append(
            {
                **{k: s[k] for k in FIT_COLUMNS[: FIT_COLUMNS.index("exhausted") + 1]},
                **fit,
                "weak_alpha_m": fit["alpha"] - 1.0,
            }
        )
        (logger or log).info(
            "%s on %s: alpha = %.4f ± %.4f over ranks %d-%d",
            s["tokenizer"],
            s["corpus"],
            fit["alpha"],
            fit["alpha_err"],
            fit["rank_min"],
            fit["rank_max"],
        )
    table = pd.DataFrame(rows, columns=FIT_COLUMNS)
    write_table(table, fit_csv)
    return table
