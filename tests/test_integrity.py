"""Seals: a damaged, truncated or foreign checkpoint is moved aside and never resumed; a damaged finished
table stops its consumer with the file and the fix named."""

from __future__ import annotations

import logging

import pandas as pd
import pytest
import torch

from depthwidth import integrity


def test_checkpoint_roundtrip_and_fingerprint(tmp_path):
    p = tmp_path / "checkpoint.pt"
    integrity.save_checkpoint({"step": 7, "w": torch.arange(5.0)}, p, {"lr": 1e-3})
    got = integrity.load_checkpoint(p, {"lr": 1e-3})
    assert got["step"] == 7 and torch.equal(got["w"], torch.arange(5.0))
    # other settings: not resumed, moved aside, nothing left at the path
    assert integrity.load_checkpoint(p, {"lr": 2e-3}) is None
    assert not p.exists() and len(list(tmp_path.glob("checkpoint.pt.bad-*"))) == 1


@pytest.mark.parametrize("damage", ["truncate", "empty", "garbage", "no_seal"])
def test_damaged_checkpoint_is_moved_aside(tmp_path, damage, caplog):
    p = tmp_path / "checkpoint.pt"
    integrity.save_checkpoint({"step": 3, "w": torch.ones(1000)}, p, {"a": 1})
    data = p.read_bytes()
    if damage == "truncate":
        p.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        p.write_bytes(b"")
    elif damage == "garbage":
        p.write_bytes(b"\x00garbage" * (len(data) // 8))
    else:
        integrity.seal_path(p).unlink()
    with caplog.at_level(logging.WARNING, logger="depthwidth"):
        assert integrity.load_checkpoint(p, {"a": 1}) is None
    assert str(p) in caplog.text and "moved aside" in caplog.text
    assert not p.exists()
    # a rerun needs nobody: the next save and load work at the same path
    integrity.save_checkpoint({"step": 0}, p, {"a": 1})
    assert integrity.load_checkpoint(p, {"a": 1})["step"] == 0


class _Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs (not even ``except Exception`` clean-ups)."""


@pytest.mark.parametrize("kill_at", ["first_seal", "rename", "final_seal"])
def test_checkpoint_killed_mid_save_resumes(tmp_path, monkeypatch, kill_at):
    """A kill at any moment of a checkpoint save leaves the old or the new checkpoint resumable, never
    neither (a kill between the rename and the seal once discarded the whole run's progress)."""
    import os

    from depthwidth import files

    p = tmp_path / "checkpoint.pt"
    integrity.save_checkpoint({"step": 1, "w": torch.ones(100)}, p, {"a": 1})
    calls = {"json": 0}
    real_json, real_replace = integrity.atomic_write_json, os.replace

    def json_then_die(dest, obj, **kw):
        calls["json"] += 1
        if (kill_at, calls["json"]) in {("first_seal", 1), ("final_seal", 2)}:
            raise _Killed
        return real_json(dest, obj, **kw)

    def replace_then_die(src, dst):
        if kill_at == "rename" and dst == p:
            raise _Killed
        return real_replace(src, dst)

    monkeypatch.setattr(integrity, "atomic_write_json", json_then_die)
    monkeypatch.setattr(files.os, "replace", replace_then_die)
    with pytest.raises(_Killed):
        integrity.save_checkpoint({"step": 2, "w": torch.full((100,), 2.0)}, p, {"a": 1})
    monkeypatch.undo()
    got = integrity.load_checkpoint(p, {"a": 1})
    expect = 2 if kill_at == "final_seal" else 1
    assert got is not None and got["step"] == expect and float(got["w"][0]) == expect
    # and a resumed save after the kill seals the next checkpoint alone
    integrity.save_checkpoint({"step": 3}, p, {"a": 1})
    assert integrity.load_checkpoint(p, {"a": 1})["step"] == 3
    assert "previous" not in integrity.read_seal(p)


def test_truncated_table_names_file_and_fix(tmp_path):
    p = tmp_path / "points.csv"
    df = pd.DataFrame({"x": range(200), "loss": [2.0 + i / 1000 for i in range(200)]})
    integrity.write_table(df, p)
    assert len(integrity.read_table(p, "chinchilla_points", ("x", "loss"))) == 200
    mtime = p.stat().st_mtime
    lines = p.read_text().splitlines(keepends=True)
    p.write_text("".join(lines[:83]))
    import os

    os.utime(p, (mtime, mtime))
    with pytest.raises(integrity.IntegrityError, match=r"points\.csv.*forcerun chinchilla_points"):
        integrity.read_table(p, "chinchilla_points", ("x", "loss"))
    with pytest.raises(integrity.IntegrityError, match="no seal"):
        integrity.read_table(tmp_path / "other.csv", "r") if (tmp_path / "other.csv").write_text(
            "x\n1\n"
        ) else None
