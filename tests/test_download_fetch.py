"""The fetch layer: mirrors in order, checksums, atomic writes, clear errors offline."""

import csv
import hashlib
import io
import json

import pytest

from _helpers import SHARED_DATA, needs_shared_data
from depthwidth.download.fetch import FetchError, fetch, load_manifest, nanogpt_table_a9, sha256_file

MANIFEST = {
    "x/file.txt": {
        "sha256": hashlib.sha256(b"hello\n").hexdigest(),
        "description": "a test file",
        "urls": ["http://127.0.0.1:9/nothing-listens-here"],
    }
}


def _mirror(tmp_path, name, content):
    p = tmp_path / name / "x" / "file.txt"
    p.parent.mkdir(parents=True)
    p.write_bytes(content)
    return tmp_path / name


def test_first_good_mirror_wins_and_bad_checksum_is_skipped(tmp_path):
    bad = _mirror(tmp_path, "bad", b"tampered\n")
    good = _mirror(tmp_path, "good", b"hello\n")
    dest = tmp_path / "out" / "file.txt"
    src = fetch("x/file.txt", dest, [tmp_path / "missing", bad, good], manifest=MANIFEST)
    assert src == str(good / "x" / "file.txt")
    assert dest.read_bytes() == b"hello\n"
    assert not list(dest.parent.glob(".*partial*"))


def test_offline_without_mirror_names_file_places_and_fix(tmp_path):
    bad = _mirror(tmp_path, "bad", b"tampered\n")
    dest = tmp_path / "out" / "file.txt"
    with pytest.raises(FetchError) as e:
        fetch("x/file.txt", dest, [tmp_path / "missing", bad], manifest=MANIFEST, timeout=2)
    msg = str(e.value)
    assert "x/file.txt" in msg and "checksum mismatch" in msg and str(tmp_path / "missing") in msg
    assert "127.0.0.1:9" in msg and "data.mirrors" in msg
    out_dir = tmp_path / "out"
    assert not dest.exists()
    assert not out_dir.exists() or not any(out_dir.iterdir())  # no half-written file either


@needs_shared_data
def test_shared_mirror_matches_every_pin():
    for rel, entry in load_manifest().items():
        assert sha256_file(SHARED_DATA / rel) == entry["sha256"], rel


@needs_shared_data
def test_nanogpt_notebook_converts_to_the_pinned_table():
    # Rebuild a notebook holding the table the way nanoGPT's scaling_laws.ipynb does, then convert it back.
    with open(SHARED_DATA / "chinchilla" / "chinchilla_table_a9.csv", newline="") as f:
        rows = list(csv.reader(f))[1:]
    tuples = [[float(r[0]) * 1e6, *map(int, r[1:])] for r in rows]
    src = [
        "chinchilla_models_txt = '''" + json.dumps(tuples) + "'''\n",
        "models = eval(chinchilla_models_txt)\n",
    ]
    nb = json.dumps({"cells": [{"cell_type": "code", "source": src}]}).encode()
    out = nanogpt_table_a9(nb)
    want = load_manifest()["chinchilla/chinchilla_table_a9.csv"]["sha256"]
    assert hashlib.sha256(out).hexdigest() == want
    assert io.BytesIO(out).read().count(b"\r\n") == 51


def test_one_fetch_job_per_group_covers_every_pin_once_and_fetches_each_where_it_goes(tmp_path):
    """The download rules: every pinned file belongs to exactly one group (one job each, rule
    fetch_pinned_<group>), whose outputs and checksum params list it in the same order; the group's job
    puts each file where it goes and refuses a destination that is another file's."""
    from depthwidth.download import pipeline
    from depthwidth.download.fetch import fetch_all

    manifest = load_manifest()
    groups = pipeline.groups(manifest)
    assert sorted(k for keys in groups.values() for k in keys) == sorted(manifest)
    assert set(groups) == {"chinchilla", "fineweb", "openlm_scaling", "superposition_paper"}
    for g in groups:
        pins = pipeline.group_pins({}, {}, g)
        assert [f"data/raw/{k}" for k in pins] == pipeline.group_outputs(g)
        assert all(pins[k] == manifest[k]["sha256"] for k in pins)
    two = {**MANIFEST, "x/other.txt": {"sha256": hashlib.sha256(b"bye\n").hexdigest(), "urls": []}}
    good = _mirror(tmp_path, "good", b"hello\n")
    (good / "x" / "other.txt").write_bytes(b"bye\n")
    dests = [tmp_path / "w" / "data" / "raw" / "x" / f for f in ("file.txt", "other.txt")]
    fetch_all(["x/file.txt", "x/other.txt"], dests, [good], manifest=two)
    assert [d.read_bytes() for d in dests] == [b"hello\n", b"bye\n"]
    with pytest.raises(ValueError, match="is not where x/file.txt goes"):
        fetch_all(["x/file.txt", "x/other.txt"], dests[::-1], [good], manifest=two)


def test_a_mirror_reached_through_a_link_keeps_the_links_path(tmp_path, monkeypatch):
    """`../shared/data` where `shared` is a symbolic link to a folder: the mirror is named by the link's
    path, as it is where `shared` is a real folder, so the download rules' params (and the recorded plan)
    do not depend on which it is; the folder behind the link is the one read."""
    from depthwidth.download.fetch import resolve_mirrors

    real = tmp_path / "elsewhere" / "shared"
    (real / "data").mkdir(parents=True)
    (tmp_path / "shared").symlink_to(real, target_is_directory=True)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    monkeypatch.chdir(checkout)
    got = resolve_mirrors(["../shared/data", "data/mirror"], checkout)
    assert got[0] == tmp_path / "shared" / "data" and got[0].resolve() == real / "data"
    assert got[1:] == [checkout / "data" / "mirror"]  # one entry: cwd and project folder are the same
    # `..` inside the entry is taken away by name, and the folder named is the one behind the link
    (real / "data" / "inner").mkdir()
    got = resolve_mirrors(["../shared/data/inner/../../data"], checkout)
    assert got[0].exists() and got[0].resolve() == real / "data"
