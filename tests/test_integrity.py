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
