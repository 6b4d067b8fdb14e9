"""Integrity of what a step reads back: checkpoints and finished files carry a seal, written last.

A seal is a small JSON file beside the data, ``.<name>.seal.json``, holding the data file's SHA-256 and
size, a fingerprint of everything that determines its contents (settings, inputs' checksums), for
tables the row count, and, in a Snakemake job, the fingerprint of the package code that wrote it
(``depthwidth.codeprint``). Because it is written after the data (both atomically), a file without a valid
seal is incomplete, damaged, or from other settings:

- a checkpoint that fails the check is logged with its path, moved aside (``<name>.bad-<time>``) and the
  job starts from scratch: ``load_checkpoint`` returns None, and no person has to delete anything;
- a finished file that fails it stops the consumer with an error naming the file and the fix
  (``check_sealed``), instead of a silently wrong number.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from depthwidth.codeprint import running_code
from depthwidth.files import atomic_path, atomic_write_json, remove_stale_partials, sha256_file

log = logging.getLogger("depthwidth")


class IntegrityError(RuntimeError):
    """A file that a step reads is damaged, incomplete or from other settings; the message names it."""


def fingerprint(obj: Any) -> str:
    """SHA-256 of ``obj`` as canonical JSON (sorted keys): the same settings give the same fingerprint."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


def texts_sha256(texts) -> str:
    """SHA-256 of the texts themselves (each length-prefixed, in order): what a checkpoint of per-text numbers
    was computed on (a corpus whose file name and count stay the same but whose content changed differs)."""
    h = hashlib.sha256()
    for t in texts:
        b = str(t).encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def seal_path(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(f".{path.name}.seal.json")


def seal(path: str | Path, fp: Any = None, **meta) -> None:
    """Write the seal of the (already complete) file ``path``: checksum, size, fingerprint, ``meta``, and in
    a Snakemake job the code that made it (``codeprint.running_code``: script, modules, code fingerprint)."""
    path = Path(path)
    record = {
        "sha256": sha256_file(path),
        "bytes": path.stat().st_size,
        "fingerprint": fingerprint(fp) if fp is not None else None,
        **meta,
    }
    code = running_code()
    if code is not None:
        record["code"] = code
    atomic_write_json(seal_path(path), record)


def seal_problem(path: str | Path, fp: Any = None) -> str | None:
    """Why ``path`` does not match its seal (or None where it does). ``fp`` is checked when given."""
    path, sp = Path(path), seal_path(path)
    if not path.exists():
        return "it does not exist"
    if not sp.exists():
        return f"it has no seal ({sp.name}): it was not completely written, or by an older version"
    try:
        record = json.loads(sp.read_text())
    except (OSError, json.JSONDecodeError) as e:
        return f"its seal {sp.name} is unreadable ({e})"
    size = path.stat().st_size
    # a checkpoint's seal may also accept the checkpoint it is replacing (``save_checkpoint``)
    accepted = [record] + ([record["previous"]] if isinstance(record.get("previous"), dict) else [])
    if all(r.get("bytes") != size for r in accepted):
        return f"it has {size} bytes where its seal recorded {record.get('bytes')} (truncated or changed)"
    if sha256_file(path) not in {r.get("sha256") for r in accepted if r.get("bytes") == size}:
        return "its checksum differs from the one recorded when it was written (damaged or changed)"
    if fp is not None and record.get("fingerprint") != fingerprint(fp):
        return "it was written for other settings or inputs (its fingerprint differs)"
    return None


def read_seal(path: str | Path) -> dict:
    return json.loads(seal_path(path).read_text())


def fix_hint(rule: str) -> str:
    """The fix a consumer names for a bad file that ``rule`` writes. The target goes before ``--forcerun``,
    which takes several rule names (a target after it would be read as one)."""
    return (
        f"Fix: snakemake --cores all <your target> --forcerun {rule} "
        "(it rewrites the file and what depends on it)."
    )


def check_sealed(path: str | Path, rule: str, fp: Any = None) -> dict:
    """Raise ``IntegrityError`` naming ``path`` and the fix unless it matches its seal; return the seal."""
    problem = seal_problem(path, fp)
    if problem:
        raise IntegrityError(f"{path}: {problem}. Nothing was computed from it. {fix_hint(rule)}")
    return read_seal(path)


def remove_stale_partials_of(path: str | Path) -> None:
    """Remove what killed writers of ``path`` or of its seal left (``.<name>.partial-<pid>`` and
    ``..<name>.seal.json.partial-<pid>`` of dead processes)."""
    path = Path(path)
    remove_stale_partials(path.parent, path.name)
    remove_stale_partials(path.parent, seal_path(path).name)


def unseal(path: str | Path) -> None:
    """Remove ``path`` and its seal (a finished job's checkpoint), and the partials of either that a killed
    earlier attempt left (a job that resumes and finishes before its next checkpoint writes neither again)."""
    Path(path).unlink(missing_ok=True)
    seal_path(path).unlink(missing_ok=True)
    remove_stale_partials_of(path)


def quarantine(path: str | Path, why: str) -> Path:
    """Move a bad file (and its seal) aside as ``<name>.bad-<unix time>``; log it; return the new path."""
    path = Path(path)
    dest = path.with_name(f"{path.name}.bad-{int(time.time())}")
    os.replace(path, dest)
    sp = seal_path(path)
    if sp.exists():
        os.replace(sp, seal_path(dest))
    log.warning("%s: %s; moved aside to %s and starting from scratch", path, why, dest.name)
    return dest


def usable(path: str | Path, fp: Any) -> bool:
    """True where ``path`` exists and matches its seal and fingerprint; a mismatching file is moved aside."""
    path = Path(path)
    remove_stale_partials_of(path)
    if not path.exists():
        return False
    problem = seal_problem(path, fp)
    if problem:
        quarantine(path, problem)
        return False
    return True


def save_checkpoint(obj: Any, path: str | Path, fp: Any) -> None:
    """``torch.save`` atomically and seal it, so that a kill at any moment leaves a resumable pair.

    The new checkpoint is written beside ``path`` first; then a seal that accepts both it and the checkpoint
    now at ``path``; then the rename; then the final seal for the new one alone. Killed between the rename
    and the final seal, the run resumes from the new checkpoint instead of discarding it (with a seal
    written only after the rename, that window cost the whole checkpoint)."""
    import torch

    path = Path(path)
    sp = seal_path(path)
    record = {"fingerprint": fingerprint(fp)}
    try:
        current = json.loads(sp.read_text()) if path.exists() else None
    except (OSError, json.JSONDecodeError):
        current = None
    previous = None
    if isinstance(current, dict) and current.get("fingerprint") == record["fingerprint"]:
        previous = {"sha256": current.get("sha256"), "bytes": current.get("bytes")}
    with atomic_path(path) as tmp:  # renamed to ``path`` when the block ends
        torch.save(obj, tmp)
        record = {"sha256": sha256_file(tmp), "bytes": tmp.stat().st_size, **record}
        atomic_write_json(sp, {**record, "previous": previous})
    atomic_write_json(sp, record)


def load_checkpoint(path: str | Path, fp: Any, **torch_load_kwargs) -> Any | None:
    """The checkpoint at ``path`` if it is complete, undamaged and for these settings; else None (a bad
    one is moved aside with a log line naming it)."""
    import torch

    path = Path(path)
    if not usable(path, fp):
        return None
    try:
        return torch.load(path, **torch_load_kwargs)
    except Exception as e:  # a sealed file that still fails to load: treat as damaged, never trust it
        quarantine(path, f"it could not be read ({type(e).__name__}: {e})")
        return None


def write_table(df, path: str | Path, fp: Any = None) -> None:
    """A finished table (CSV or parquet by suffix), written atomically and sealed with its row count."""
    from depthwidth.files import atomic_write_csv, atomic_write_parquet

    path = Path(path)
    (atomic_write_parquet if path.suffix == ".parquet" else atomic_write_csv)(path, df)
    seal(path, fp, rows=int(len(df)), columns=[str(c) for c in df.columns])


def read_table(
    path: str | Path, rule: str, columns: tuple[str, ...] = (), require_seal: bool = True, **read_kwargs
):
    """Read a table that ``rule`` wrote with ``write_table``; check its seal, rows and ``columns``.
    ``require_seal`` False: a table without a seal (a user's file) is read as it is, one with a seal is
    checked. ``read_kwargs`` go to ``pd.read_csv``/``pd.read_parquet``."""
    import pandas as pd

    path = Path(path)
    record = check_sealed(path, rule) if require_seal or seal_path(path).exists() else {}
    try:
        df = (
            pd.read_parquet(path, **read_kwargs)
            if path.suffix == ".parquet"
            else pd.read_csv(path, **read_kwargs)
        )
    except (OSError, UnicodeDecodeError, ValueError) as e:  # a user's unsealed file that does not parse
        raise IntegrityError(
            f"{path}: it could not be read ({type(e).__name__}: {e}). {fix_hint(rule)}"
        ) from e
    missing = [c for c in columns if c not in df.columns]
    problem = None
    if len(df) != record.get("rows", len(df)):
        problem = f"it has {len(df)} rows where {rule} wrote {record.get('rows')}"
    elif missing:
        problem = f"it lacks the columns {missing}"
    if problem:
        raise IntegrityError(f"{path}: {problem}. {fix_hint(rule)}")
    return df


def write_json(path: str | Path, obj: Any, fp: Any = None, **dump_kwargs) -> None:
    """A finished JSON file, written atomically (``atomic_write_json``: indent 2 unless given) and sealed."""
    atomic_write_json(path, obj, **dump_kwargs)
    seal(path, fp)


def read_json(path: str | Path, rule: str, keys: tuple[str, ...] = (), require_seal: bool = True) -> Any:
    """Read a JSON file that ``rule`` wrote with ``write_json``: check its seal (unless ``require_seal`` is
    False, for producers that do not seal yet: then it must still parse) and that a dict holds ``keys``."""
    path = Path(path)
    if require_seal or seal_path(path).exists():
        check_sealed(path, rule)
    try:
        obj = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise IntegrityError(
            f"{path}: it could not be read ({type(e).__name__}: {e}). {fix_hint(rule)}"
        ) from e
    missing = [k for k in keys if not isinstance(obj, dict) or k not in obj]
    if missing:
        raise IntegrityError(f"{path}: it lacks the keys {missing}. {fix_hint(rule)}")
    return obj
