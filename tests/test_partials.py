"""Leftovers of killed writers: `.<name>.partial-<pid>` files and folders of dead
processes are removed by the next write of the same output and by the next fetch of a model; the
report's provenance never hashes them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from depthwidth.files import atomic_write_text, partial_name, pid_alive, remove_stale_partials
from depthwidth.models.fetch import fetch_model
from depthwidth.models.load import model_spec
from depthwidth.provenance import _expand


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    assert not pid_alive(p.pid)
    return p.pid


def test_remove_stale_partials_removes_only_dead_writers(tmp_path):
    dead = _dead_pid()
    (tmp_path / f".cells.csv.partial-{dead}").write_text("half")
    hf = tmp_path / f".hf.partial-{dead}"
    (hf / "sub").mkdir(parents=True)
    (hf / "sub" / "model.safetensors").write_bytes(b"x" * 100)
    alive = [tmp_path / f".a.csv.partial-{os.getpid()}", tmp_path / f".b.csv.partial-{os.getppid()}"]
    keep = [*alive, tmp_path / "cells.csv", tmp_path / ".hidden", tmp_path / f".x.partial-{dead}.bak"]
    for f in keep:
        f.write_text("keep")
    removed = remove_stale_partials(tmp_path)
    assert sorted(p.name for p in removed) == sorted([f".cells.csv.partial-{dead}", f".hf.partial-{dead}"])
    assert all(f.exists() for f in keep) and not hf.exists()


def test_remove_stale_partials_of_one_name(tmp_path):
    dead = _dead_pid()
    mine, other = tmp_path / f".out.json.partial-{dead}", tmp_path / f".other.json.partial-{dead}"
    for f in (mine, other):
        f.write_text("half")
    assert remove_stale_partials(tmp_path, "out.json") == [mine]
    assert other.exists()
    assert remove_stale_partials(tmp_path / "missing") == []


def test_atomic_write_removes_a_dead_writers_partial_of_the_same_file(tmp_path):
    dead = _dead_pid()
    dest = tmp_path / "out.txt"
    stale = dest.with_name(f".out.txt.partial-{dead}")
    stale.write_text("half")
    neighbour = tmp_path / f".other.txt.partial-{dead}"  # another job's output: not this write's business
    neighbour.write_text("half")
    atomic_write_text(dest, "done")
    assert dest.read_text() == "done" and not stale.exists() and neighbour.exists()
    assert not partial_name(dest).exists()


def test_model_fetch_removes_a_killed_conversion_and_unpacking(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "config.json").write_text(json.dumps({"model_type": "llama"}))
    dest = tmp_path / "data" / "models" / "tiny"
    dead = _dead_pid()
    hf = dest / f".hf.partial-{dead}"  # a kill during GGUF conversion (the issue saw 514 MB)
    hf.mkdir(parents=True)
    (hf / "model.safetensors").write_bytes(b"\0" * 1000)
    gguf = dest / f".m.gguf.partial-{dead}"  # a full disk while unpacking a wheel
    gguf.write_bytes(b"\0" * 10)
    fetch_model(model_spec("tiny", {"source": "local", "family": "llama", "path": str(src)}), dest)
    assert not hf.exists() and not gguf.exists() and (dest / "manifest.json").exists()


def test_provenance_skips_files_under_hidden_folders(tmp_path):
    (tmp_path / "hf").mkdir()
    (tmp_path / "hf" / "model.safetensors").write_text("w")
    (tmp_path / ".hf.partial-123").mkdir()
    (tmp_path / ".hf.partial-123" / "model.safetensors").write_text("half")
    (tmp_path / ".manifest.json.partial-9").write_text("half")
    assert [f.relative_to(tmp_path).as_posix() for f in _expand([tmp_path])] == ["hf/model.safetensors"]
