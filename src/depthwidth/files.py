"""Atomic writes, the one way every stage writes a file: a temporary name beside the target, flushed and
fsynced, then renamed. A reader (or a killed run's restart) never sees half a file."""

from __future__ import annotations

import errno
import hashlib
import json
import logging
import os
import re
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

log = logging.getLogger("depthwidth.files")


class DiskFullError(OSError):
    """A write stopped because its disk (or quota) is full; the message names the path, the bytes written
    before it stopped, the free space left and the fix."""


#: torch's zip writer reports a full disk as a short write, not as ENOSPC
_SHORT_WRITE = re.compile(r"unexpected pos|PytorchStreamWriter failed|file write failed", re.I)


def _is_disk_full(e: BaseException) -> bool:
    """Whether ``e`` (or an exception it was raised from) is a full disk or quota."""
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if "No space left on device" in str(e) or "Disk quota exceeded" in str(e):
            return True
        e = e.__cause__ or e.__context__
    return False


def _size(path: Path) -> int:
    """Bytes of a file, or of every file under a folder (0 where nothing is there)."""
    try:
        if path.is_dir():
            return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
        return path.stat().st_size if path.exists() else 0
    except OSError:
        return 0


def disk_full_error(dest: str | Path, written: int = 0, needed: int | None = None) -> DiskFullError:
    """The error that reports a full disk while writing ``dest``: the path, what was written before the
    write stopped (``written`` bytes), what the write needs where that is known, the free space now, and the
    fix. Never blamed on the network or on the data."""
    dest = Path(dest)
    folder = next((p for p in [dest.parent, *dest.parents] if p.exists()), Path("."))
    free = shutil.disk_usage(folder).free
    need = (
        f"it needs {needed:,} bytes"
        if needed is not None
        else f"it needs more than the {written:,} bytes written when the disk filled"
    )
    return DiskFullError(
        errno.ENOSPC,
        f"{dest}: the disk is full (no space left on device while writing it; {need}, and {free:,} bytes "
        f"are free on the disk of {folder}). Nothing was left half-written. Fix: free space on that disk "
        "(or move the working folder to a larger one) and rerun the same snakemake command.",
    )


#: ``.<name>.partial-<pid>``: a write in progress (or of a killed process) of ``<name>``
_PARTIAL = re.compile(r"^\.(?P<name>.+)\.partial-(?P<pid>[0-9]+)$")


def partial_name(dest: str | Path) -> Path:
    """The temporary name beside ``dest`` that a write in progress uses: ``.<name>.partial-<pid>``."""
    dest = Path(dest)
    return dest.with_name(f".{dest.name}.partial-{os.getpid()}")


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this machine (one of another user counts as alive)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_partials(folder: str | Path, name: str | None = None) -> list[Path]:
    """Remove the partial files and folders (``.<name>.partial-<pid>``) in ``folder`` whose process is not
    alive: what a write killed by SIGKILL, a full disk or a crash leaves behind. With ``name``, only the
    partials of that one output. Returns what was removed (and logs each).

    Call it only on a folder (or a name) that no job on another machine writes to at the same time: a pid
    is checked on this machine only. A job's own output folder, or the partials of the output a job is
    about to write, are safe; a folder shared by the jobs of a cluster run is not.
    """
    folder = Path(folder)
    if not folder.is_dir():
        return []
    pattern = f".{_glob_escape(name)}.partial-*" if name is not None else ".*.partial-*"
    removed = []
    for p in sorted(folder.glob(pattern)):
        m = _PARTIAL.match(p.name)
        if not m or (name is not None and m["name"] != name) or pid_alive(int(m["pid"])):
            continue
        try:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
        except FileNotFoundError:  # another cleaner got there first
            continue
        log.info("removed %s, left by process %s, which is gone", p, m["pid"])
        removed.append(p)
    return removed


def _glob_escape(name: str) -> str:
    """``name`` with the glob characters ``*?[`` made literal."""
    return re.sub(r"([*?[])", r"[\1]", name)


@contextmanager
def atomic_path(dest: str | Path):
    """Yield a temporary path beside ``dest``; on success it is renamed to ``dest``, on error removed.
    Partials of ``dest`` left by dead processes are removed first (only one job writes ``dest``)."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_partials(dest.parent, dest.name)
    tmp = partial_name(dest)
    try:
        try:
            yield tmp
            if tmp.is_file():
                with open(tmp, "rb+") as f:
                    os.fsync(f.fileno())
        except Exception as e:
            if isinstance(e, DiskFullError):
                raise
            written = _size(tmp)
            # torch's checkpoint writer reports a full disk as a short write ("unexpected pos ...")
            short = bool(_SHORT_WRITE.search(str(e))) and shutil.disk_usage(dest.parent).free < max(
                2 * written, 1 << 26
            )
            if _is_disk_full(e) or short:
                raise disk_full_error(dest, written) from e
            raise
        os.replace(tmp, dest)
    finally:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp.exists():
            tmp.unlink()


def atomic_write(dest: str | Path, write: Callable[[Path], Any]) -> None:
    """Call ``write(tmp_path)`` and rename the result to ``dest``."""
    with atomic_path(dest) as tmp:
        write(tmp)


def atomic_write_bytes(dest: str | Path, data: bytes) -> None:
    atomic_write(dest, lambda p: p.write_bytes(data))


def atomic_write_text(dest: str | Path, text: str) -> None:
    atomic_write(dest, lambda p: p.write_text(text))


def atomic_write_json(dest: str | Path, obj: Any, **kwargs) -> None:
    kwargs.setdefault("indent", 2)
    atomic_write_text(dest, json.dumps(obj, **kwargs) + "\n")


def atomic_write_parquet(dest: str | Path, df, **kwargs) -> None:
    """A pandas DataFrame as parquet (``index=False`` unless given)."""
    kwargs.setdefault("index", False)
    atomic_write(dest, lambda p: df.to_parquet(p, **kwargs))


def atomic_write_csv(dest: str | Path, df, **kwargs) -> None:
    kwargs.setdefault("index", False)
    atomic_write(dest, lambda p: df.to_csv(p, **kwargs))


def atomic_write_npy(dest: str | Path, array) -> None:
    """A NumPy array as .npy, written through a handle (``np.save`` given a name appends ``.npy`` to the
    temporary name)."""
    import numpy as np  # here: the other writers need no numpy

    def write(p: Path) -> None:
        with open(p, "wb") as f:
            np.save(f, array)

    atomic_write(dest, write)


def atomic_copy(src: str | Path, dest: str | Path) -> None:
    try:
        atomic_write(dest, lambda p: shutil.copyfile(src, p))
    except DiskFullError as e:  # the size of the copy is known: say it
        raise disk_full_error(dest, needed=Path(src).stat().st_size) from e.__cause__


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """SHA-256 of a file's bytes, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()
