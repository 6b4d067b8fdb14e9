"""FineWeb documents as local parquet shards: the first N documents of a stream, kept in stream order.

Sources, tried in this order by :func:`materialise`:

1. a local mirror of the stream's first documents (``fineweb/fineweb_subset.json``: the first 300
   documents of the default ``HuggingFaceFW/fineweb`` stream), used when it covers the request;
2. the hub, streamed with ``datasets`` (row groups are read on demand, so taking 1,000 documents does
   not pull a whole 2 GB shard);
3. or, instead of FineWeb, any local parquet / JSON / JSONL corpus with a text column.

Whatever the source, the result is ``ceil(n_docs / docs_per_shard)`` parquet files with the columns
``doc_index`` (0-based position in the stream), ``text`` and whichever FineWeb metadata columns the
source has (``id, dump, url, date, file_path, language, language_score, token_count``).
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from depthwidth.integrity import check_sealed, write_table

log = logging.getLogger("depthwidth.download.fineweb")

FINEWEB_COLUMNS = ["id", "dump", "url", "date", "file_path", "language", "language_score", "token_count"]
DEFAULT_DATASET = "HuggingFaceFW/fineweb"
DEFAULT_CONFIG = "default"


class CorpusError(RuntimeError):
    """A corpus file is missing, truncated or lacks a text column; the message names the file and the fix."""


SHARDS_RULE = "fineweb_shards"


def shard_names(n_docs: int, docs_per_shard: int) -> list[str]:
    """File names of the shards that hold ``n_docs`` documents, ``docs_per_shard`` per file."""
    if n_docs < 1 or docs_per_shard < 1:
        raise ValueError(f"n_docs ({n_docs}) and docs_per_shard ({docs_per_shard}) must be >= 1")
    return [f"shard-{i:05d}.parquet" for i in range(math.ceil(n_docs / docs_per_shard))]


def mirror_covers(dataset: str, config: str, n_docs: int, mirror_docs: int) -> bool:
    """True when the mirrored first documents of the default stream are exactly what was asked for."""
    return dataset == DEFAULT_DATASET and config == DEFAULT_CONFIG and n_docs <= mirror_docs


def _records_from_frame(df: pd.DataFrame, path: Path, text_column: str, limit: int | None) -> list[dict]:
    if text_column not in df.columns:
        raise CorpusError(
            f"corpus file {path} has no column '{text_column}' (columns: {list(df.columns)}). "
            "Fix: set hidden_states.corpus.text_column to the column that holds the documents."
        )
    if limit is not None:
        df = df.iloc[:limit]
    keep = [c for c in FINEWEB_COLUMNS if c in df.columns and c != text_column]
    out = df[[text_column, *keep]].rename(columns={text_column: "text"})
    # a null text is no text: read as "" (skipped by the stages), never as the string "nan" or "None"
    nulls = out["text"].isna()
    if nulls.any():
        log.warning("corpus file %s: %d null texts, read as empty", path, int(nulls.sum()))
    out["text"] = out["text"].where(~nulls, "").astype(str)
    return out.to_dict("records")


def read_corpus(path: str | Path, text_column: str = "text", limit: int | None = None) -> list[dict]:
    """Documents of a local corpus file, in file order: a list of dicts with ``text`` and metadata.

    Parquet, a JSON array (or object of columns) and JSONL are understood. A truncated or corrupt file
    raises :class:`CorpusError` naming the file.
    """
    path = Path(path)
    if not path.is_file():
        raise CorpusError(f"corpus file {path} does not exist. Fix: check hidden_states.corpus.local_path.")
    suffix = "".join(path.suffixes[-2:]) if path.suffix == ".gz" else path.suffix
    try:
        if suffix == ".parquet":
            df = read_parquet_checked(path, limit=limit)
        elif suffix in (".jsonl", ".jsonl.gz"):
            df = pd.read_json(path, lines=True, nrows=limit)
        elif suffix in (".json", ".json.gz"):
            with open(path, "rb") as f:
                head = f.read(1)
            if path.suffix == ".gz" or head != b"{":
                df = pd.read_json(path)
            else:
                # A single object is either one document or a dict of columns; try columns first.
                obj = json.loads(path.read_text())
                df = (
                    pd.DataFrame(obj)
                    if all(isinstance(v, list) for v in obj.values())
                    else pd.DataFrame([obj])
                )
        else:
            raise CorpusError(
                f"corpus file {path}: unknown format '{suffix}'. Fix: give a .parquet, .json or .jsonl file."
            )
    except CorpusError:
        raise
    except (ValueError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CorpusError(
            f"corpus file {path} could not be read ({type(e).__name__}: {e}); it may be truncated. "
            "Fix: delete it and fetch it again."
        ) from e
    return _records_from_frame(df, path, text_column, limit)


def read_parquet_checked(
    path: str | Path, limit: int | None = None, columns: list[str] | None = None
) -> pd.DataFrame:
    """Read a parquet file, turning pyarrow's errors on truncated files into a :class:`CorpusError`."""
    path = Path(path)
    try:
        pf = pq.ParquetFile(path)
        if limit is None:
            table = pf.read(columns=columns)
        else:
            batches, n = [], 0
            for rg in range(pf.num_row_groups):
                if n >= limit:
                    break
                t = pf.read_row_group(rg, columns=columns)
                batches.append(t)
                n += t.num_rows
            table = pa.concat_tables(batches) if batches else pf.schema_arrow.empty_table()
            table = table.slice(0, limit)
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError) as e:
        raise CorpusError(
            f"parquet file {path} is unreadable ({type(e).__name__}: {e}); it is probably truncated "
            "(an interrupted download or copy). Fix: delete it and rerun the rule that makes it "
            "(for FineWeb shards: fineweb_shards, e.g. `snakemake --forcerun fineweb_shards`)."
        ) from e
    return table.to_pandas()


def take_from_hub(
    dataset: str, config: str, revision: str, split: str, n_docs: int, text_column: str = "text"
) -> list[dict]:
    """The first ``n_docs`` documents of a hub dataset, streamed (only the row groups needed are read)."""
    try:
        import datasets
    except ImportError as e:  # pragma: no cover - datasets is a dependency
        raise CorpusError("the 'datasets' package is needed to stream FineWeb from the hub") from e
    try:
        ds = datasets.load_dataset(
            dataset,
            name=None if config == DEFAULT_CONFIG else config,
            split=split,
            streaming=True,
            revision=revision,
        )
        out = []
        for row in ds:
            out.append(row)
            if len(out) >= n_docs:
                break
    except Exception as e:
        raise CorpusError(
            f"could not stream {dataset} (config {config}, revision {revision}) from the hub: "
            f"{type(e).__name__}: {e}. Offline, only the mirrored first documents of the default stream "
            f"({DEFAULT_DATASET}, config {DEFAULT_CONFIG}) can be used: set hidden_states.corpus.n_docs "
            "to at most hidden_states.corpus.mirror_docs, or name a local corpus "
            "(hidden_states.corpus.source: local, local_path: <file>)."
        ) from e
    if len(out) < n_docs:
        log.warning("%s has only %d documents (asked for %d)", dataset, len(out), n_docs)
    df = pd.DataFrame(out)
    return _records_from_frame(df, Path(f"hub:{dataset}/{config}"), text_column, n_docs)


def write_shards(
    docs: list[dict], out_paths: list[str | Path], docs_per_shard: int, source: str = ""
) -> None:
    """Write ``docs`` (stream order) as parquet shards, ``docs_per_shard`` each, atomically.

    ``out_paths`` must be exactly as many files as the documents need. Empty shards are refused:
    fewer documents than asked for is an error naming how many there were.
    """
    need = math.ceil(len(docs) / docs_per_shard) if docs else 0
    if need != len(out_paths):
        raise CorpusError(
            f"the corpus {source} gave {len(docs)} documents, which fill {need} shards of {docs_per_shard}, "
            f"but {len(out_paths)} were asked for. Fix: lower hidden_states.corpus.n_docs to at most "
            f"{len(docs)} or use a larger corpus."
        )
    df = pd.DataFrame(docs)
    df.insert(0, "doc_index", range(len(df)))
    for i, path in enumerate(out_paths):
        part = df.iloc[i * docs_per_shard : (i + 1) * docs_per_shard].reset_index(drop=True)
        write_table(part, path)  # sealed: every reader checks it (read_shards)
        log.info("wrote %s (%d documents)", path, len(part))


def read_shards(paths: list[str | Path], limit: int | None = None) -> pd.DataFrame:
    """Concatenate shards into one frame (``doc_index``, ``text``, ...), in stream order. Each shard must
    match the seal rule fineweb_shards wrote (``IntegrityError`` naming the shard and the fix otherwise)."""
    frames = []
    n = 0
    for p in paths:
        check_sealed(p, SHARDS_RULE)
        df = read_parquet_checked(p)
        if "text" not in df.columns or "doc_index" not in df.columns:
            raise CorpusError(
                f"shard {p} lacks the columns doc_index/text (has {list(df.columns)}). "
                "Fix: delete it and rerun the fineweb_shards rule."
            )
        frames.append(df)
        n += len(df)
        if limit is not None and n >= limit:
            break
    if not frames:
        raise CorpusError("no FineWeb shards were given")
    out = pd.concat(frames, ignore_index=True).sort_values("doc_index", kind="stable").reset_index(drop=True)
    return out.iloc[:limit] if limit is not None else out


def materialise(
    out_paths: list[str | Path],
    *,
    n_docs: int,
    docs_per_shard: int,
    source: str,
    dataset: str = DEFAULT_DATASET,
    config: str = DEFAULT_CONFIG,
    revision: str = "main",
    split: str = "train",
    mirror_file: str | Path | None = None,
    mirror_docs: int = 0,
    local_path: str | Path | None = None,
    text_column: str = "text",
    sources: dict | None = None,
) -> str:
    """Fill ``out_paths`` with the first ``n_docs`` documents of the configured source.

    ``source`` is ``"fineweb"`` (mirror when it covers the request, else the hub) or ``"local"``.
    Returns a short description of where the documents came from.
    """
    if source == "local":
        if not local_path:
            raise CorpusError(
                "hidden_states.corpus.source is 'local' but hidden_states.corpus.local_path is empty. "
                "Fix: set local_path to a parquet/JSON/JSONL file with a text column."
            )
        docs = read_corpus(local_path, text_column=text_column, limit=n_docs)
        where = f"local file {local_path}"
    elif source == "fineweb":
        if mirror_file and mirror_covers(dataset, config, n_docs, mirror_docs):
            from depthwidth.download.fetch import check_pinned

            # the pinned sample is checked where it is read (fetched again from ``sources`` if damaged)
            check_pinned(mirror_file, rule=SHARDS_RULE, sources=sources)
            docs = read_corpus(mirror_file, text_column=text_column, limit=n_docs)
            where = f"mirror {mirror_file} (first {mirror_docs} documents of {dataset}/{config})"
        else:
            log.info(
                "streaming the first %d documents of %s (config %s, revision %s)",
                n_docs,
                dataset,
                config,
                revision,
            )
            docs = take_from_hub(dataset, config, revision, split, n_docs, text_column=text_column)
            where = f"hub {dataset}/{config}@{revision}"
    else:
        raise CorpusError(f"hidden_states.corpus.source must be 'fineweb' or 'local', got {source!r}")
    if len(docs) < n_docs:
        raise CorpusError(
            f"{where} holds {len(docs)} documents but hidden_states.corpus.n_docs is {n_docs}. "
            f"Fix: lower n_docs to at most {len(docs)}, or use a larger source."
        )
    write_shards(docs[:n_docs], out_paths, docs_per_shard, source=where)
    return where
