"""Atomic writes, the one way every stage writes a file: a temporary name beside the target, flushed and
fsynced, then renamed. A reader (or a killed run's restart) never sees half a file."""

from __future__ import annotations

import json
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable


def partial_name(dest: str | Path) -> Path:
    """The temporary name beside ``dest`` that a write in progress uses: ``.<name>.partial-<pid>``."""
    dest = Path(dest)
    return dest.with_name(f".{dest.name}.partial-{os.getpid()}")


@contextmanager
def atomic_path(dest: str | Path):
    """Yield a temporary path beside ``dest``; on success it is renamed to ``dest``, on error removed."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = partial_name(dest)
    try:
        yield tmp
        if tmp.is_file():
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
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


def atomic_torch_save(obj: Any, dest: str | Path) -> None:
    import torch

    atomic_write(dest, lambda p: torch.save(obj, p))


def atomic_copy(src: str | Path, dest: str | Path) -> None:
    atomic_write(dest, lambda p: shutil.copyfile(src, p))
