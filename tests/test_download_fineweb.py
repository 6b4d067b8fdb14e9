"""FineWeb shards: the mirrored first documents in stream order, local corpora, and clear errors."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from depthwidth.download.fineweb import (
    CorpusError,
    materialise,
    mirror_covers,
    read_corpus,
    read_shards,
    shard_names,
)

from _helpers import SHARED_DATA
from depthwidth.integrity import IntegrityError, write_table

MIRROR = SHARED_DATA / "fineweb" / "fineweb_subset.json"
needs_mirror = pytest.mark.skipif(not MIRROR.is_file(), reason=f"no FineWeb mirror at {MIRROR}")


@needs_mirror
def test_mirror_gives_first_documents_in_stream_order(tmp_path):
    names = shard_names(40, 16)
    assert names == ["shard-00000.parquet", "shard-00001.parquet", "shard-00002.parquet"]
    paths = [tmp_path / n for n in names]
    where = materialise(
        paths, n_docs=40, docs_per_shard=16, source="fineweb", mirror_file=MIRROR, mirror_docs=300
    )
    assert "mirror" in where
    sizes = [len(pd.read_parquet(p)) for p in paths]
    assert sizes == [16, 16, 8]
    docs = read_shards(paths)
    assert docs["doc_index"].tolist() == list(range(40))
    # Row 0 of the default stream is the AP tornado article (FineWeb dataset card, CC-MAIN-2013-20).
    assert docs["text"][0].startswith("How AP reported in all formats from tornado-stricken regions")
    assert docs["token_count"][0] == 717
    raw = json.loads(MIRROR.read_text())
    assert docs["text"].tolist() == [r["text"] for r in raw[:40]]
    assert len(read_shards(paths, limit=20)) == 20


def test_mirror_covers_only_the_default_stream():
    assert mirror_covers("HuggingFaceFW/fineweb", "default", 300, 300)
    assert not mirror_covers("HuggingFaceFW/fineweb", "default", 301, 300)
    assert not mirror_covers("HuggingFaceFW/fineweb", "sample-10BT", 10, 300)


def test_local_jsonl_and_parquet_corpora(tmp_path):
    rows = [{"body": f"document number {i} " * (i + 1), "url": f"u{i}"} for i in range(7)]
    jl = tmp_path / "c.jsonl"
    jl.write_text("\n".join(json.dumps(r) for r in rows))
    paths = [tmp_path / n for n in shard_names(5, 2)]
    materialise(paths, n_docs=5, docs_per_shard=2, source="local", local_path=jl, text_column="body")
    docs = read_shards(paths)
    assert docs["text"].tolist() == [r["body"] for r in rows[:5]] and docs["url"].tolist()[4] == "u4"
    pq = tmp_path / "c.parquet"
    pd.DataFrame(rows).rename(columns={"body": "text"}).to_parquet(pq)
    assert [d["text"] for d in read_corpus(pq, limit=3)] == [r["body"] for r in rows[:3]]
    with pytest.raises(CorpusError, match="no column 'text'.*text_column"):
        read_corpus(jl)
    with pytest.raises(CorpusError, match="holds 7 documents but hidden_states.corpus.n_docs is 9"):
        materialise(
            [tmp_path / n for n in shard_names(9, 9)],
            n_docs=9,
            docs_per_shard=9,
            source="local",
            local_path=jl,
            text_column="body",
        )


def test_truncated_parquet_names_the_file_and_the_fix(tmp_path):
    good = tmp_path / "shard-00000.parquet"
    write_table(pd.DataFrame({"doc_index": range(50), "text": ["word " * 200] * 50}), good)
    data = good.read_bytes()
    bad = tmp_path / "shard-00001.parquet"
    write_table(pd.DataFrame({"doc_index": range(50, 100), "text": ["word " * 200] * 50}), bad)
    bad.write_bytes(data[: len(data) // 2])
    assert len(read_shards([good])) == 50
    with pytest.raises(IntegrityError, match=r"shard-00001\.parquet.*truncated.*--forcerun fineweb_shards"):
        read_shards([good, bad])
    with pytest.raises(CorpusError, match=r"shard-00001\.parquet.*truncated"):
        read_corpus(bad)


def test_offline_hub_request_beyond_the_mirror_says_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    with pytest.raises(CorpusError, match="mirror_docs|local corpus"):
        materialise(
            [tmp_path / "s.parquet"],
            n_docs=400,
            docs_per_shard=400,
            source="fineweb",
            mirror_file=MIRROR,
            mirror_docs=300,
        )
