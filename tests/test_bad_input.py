"""Bad input, tried on purpose: each must fail with an error that names the key or file and the fix,
before any heavy job where that is possible, and never leave a half-written output that looks complete.

Config errors are caught when the Snakefile is parsed (rules/common.smk validates against
schemas/*.schema.yaml), so these runs must stop before any job: the working folder gets no results/,
no data/ and no logs/.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pandas as pd
import pytest
from _pipeline import BASE_CONFIGS, merge, merged_config, overlay, planned_jobs, run
from _helpers import SHARED_DATA

from depthwidth.config import ConfigError, validate_config


def _fails_before_any_job(wd: Path, cfg: Path, *must_say: str) -> str:
    """Run the default target with ``cfg`` overlaid; assert it fails, says all of ``must_say``, and
    created none of the pipeline's folders."""
    p = run(wd, "--cores", "1", configs=[*BASE_CONFIGS, cfg], check=False, timeout=180)
    text = p.stdout + p.stderr
    assert p.returncode != 0, f"a bad config ran to completion:\n{text[-3000:]}"
    for s in must_say:
        assert s in text, f"the error does not say {s!r}:\n{text[-3000:]}"
    made = [d for d in ("results", "data", "logs", "benchmarks") if (wd / d).exists()]
    assert not made, f"jobs started before the config was rejected: {made} exist"
    return text


BAD_CONFIGS = [
    # a string where a number is needed
    (
        "wrong_type",
        {"chinchilla": {"fit": {"n_starts": "eight"}}},
        ["config key 'chinchilla.fit.n_starts'", "'eight' is not of type 'integer'"],
    ),
    # a typo in a key: the error lists the keys that are allowed there
    (
        "unknown_key",
        {"chinchilla": {"fit": {"n_strats": 3}}},
        ["config key 'chinchilla.fit'", "'n_strats' was unexpected", "allowed keys:", "n_starts"],
    ),
    # an unknown stage name
    (
        "unknown_stage",
        {"stages": ["chinchilla", "depht_toy"]},
        ["config key 'stages.1'", "'depht_toy' is not one of"],
    ),
    # a negative scale of width (m = d_model x width_scale)
    (
        "negative_width",
        {"chinchilla": {"fit": {"width_scale": -1.0}}},
        ["config key 'chinchilla.fit.width_scale'", "-1.0 is less than or equal to the minimum of 0"],
    ),
    # an empty grid of model sizes
    (
        "empty_grid",
        {"chinchilla": {"shape": {"n_params": []}}},
        ["config key 'chinchilla.shape.n_params'", "[] should be non-empty"],
    ),
    # a parameter inside a frequency law's name: power-a1000 matches the name pattern, but α = 1000
    # (a typo of power-a1.000) would leave every feature but the first never active
    (
        "law_exponent_out_of_range",
        {"superposition": {"distributions": ["power-a1000"]}},
        ["config key 'superposition.distributions.0'", "α=1000 in 'power-a1000' is outside [0, 10]", "Fix:"],
    ),
]


def _test_config() -> dict:
    return merged_config()


@pytest.mark.parametrize("name, changes, must_say", BAD_CONFIGS, ids=[b[0] for b in BAD_CONFIGS])
def test_bad_config_error_names_key_and_fix(name, changes, must_say):
    """Each bad value alone: the validator's error names the key, what was wrong and where to fix it."""
    with pytest.raises(ConfigError) as e:
        validate_config(merge(_test_config(), changes))
    msg = str(e.value)
    for s in [*must_say, "Fix these keys in config.yaml or the --configfile you passed"]:
        assert s in msg, f"{name}: the error does not say {s!r}:\n{msg}"
    assert msg.count("config key '") == 1, f"{name}: one bad key, but:\n{msg}"


def test_the_test_config_itself_is_valid():
    """The baseline the bad cases are built from passes, so each failure above is the bad key's."""
    validate_config(_test_config())


@pytest.mark.workflow
def test_bad_config_stops_snakemake_before_any_job(tmp_path):
    """All the bad values at once through Snakemake: it stops while parsing, lists every bad key in one
    message (no fix-one-rerun-find-the-next), and no job ran (no results/, data/, logs/)."""
    changes: dict = {}
    for _, c, _ in BAD_CONFIGS:
        changes = merge(changes, c)
    text = _fails_before_any_job(
        tmp_path, overlay(tmp_path, "all_bad", changes), *[s for _, _, must in BAD_CONFIGS for s in must]
    )
    assert "Invalid configuration (nothing was run)" in text


def _failing_run(tmp_path: Path, target: str, cfg: Path, timeout: int = 180, **kw) -> tuple[Path, str]:
    """Run Snakemake for ``target`` in a fresh folder with the test config and overlay ``cfg``; it must
    fail. Returns the folder and everything it said (stdout, stderr and every job log)."""
    wd = tmp_path / "wd"
    wd.mkdir()
    p = run(wd, "--cores", "1", target, configs=[*BASE_CONFIGS, cfg], check=False, timeout=timeout, **kw)
    text = p.stdout + p.stderr + "".join(f.read_text() for f in (wd / "logs").rglob("*.log"))
    assert p.returncode != 0, text[-3000:]
    return wd, text


@pytest.mark.workflow
def test_mirror_file_with_wrong_checksum_is_refused(tmp_path):
    """A mirror holding a corrupted copy of a pinned file (one byte changed): the fetch fails naming
    that file, both checksums and the fix, and no file appears at data/raw/ (not even a partial one)."""
    rel = "chinchilla/svg_extracted_data.csv"
    good = (SHARED_DATA / rel).read_bytes()
    bad = bytearray(good)
    bad[len(bad) // 2] ^= 0x01  # one flipped bit: same size, same look, wrong bytes
    mirror = tmp_path / "mirror"
    (mirror / "chinchilla").mkdir(parents=True)
    (mirror / rel).write_bytes(bytes(bad))
    cfg = overlay(tmp_path, "bad_mirror", {"data": {"mirrors": [str(mirror)], "allow_network": False}})
    wd, text = _failing_run(tmp_path, f"data/raw/{rel}", cfg)
    assert str(mirror / rel) in text and "checksum mismatch" in text, text[-3000:]
    assert hashlib.sha256(bytes(bad)).hexdigest() in text  # what it found
    assert hashlib.sha256(good).hexdigest() in text  # what it wanted
    assert "Fix:" in text and "data.mirrors" in text
    raw = wd / "data" / "raw" / "chinchilla"
    assert not raw.exists() or not any(raw.iterdir()), f"left behind: {list(raw.iterdir())}"


def _truncated_parquet(path: Path, n_docs: int = 40) -> tuple[bytes, bytes]:
    """Write a valid parquet corpus of ``n_docs`` documents at ``path``, then cut it to 60 % of its
    bytes, as an interrupted copy would. Returns (full bytes, truncated bytes)."""
    df = pd.DataFrame({"text": [f"document {i} " + "word " * 50 for i in range(n_docs)]})
    df.to_parquet(path, index=False)
    full = path.read_bytes()
    cut = full[: int(len(full) * 0.6)]
    path.write_bytes(cut)
    return full, cut


def test_truncated_parquet_shard_is_named_with_the_fix(tmp_path):
    """A FineWeb shard cut short (an interrupted copy): reading it raises CorpusError naming the file
    and the rule to rerun, not pyarrow's bare 'Parquet magic bytes not found'."""
    from depthwidth.download.fineweb import read_shards, write_shards
    from depthwidth.integrity import IntegrityError

    docs = [{"text": f"doc {i}"} for i in range(6)]
    paths = [tmp_path / f"shard-{i:05d}.parquet" for i in range(3)]
    write_shards(docs, paths, docs_per_shard=2)
    assert len(read_shards(paths)) == 6  # intact: all 6 documents, in order
    paths[1].write_bytes(paths[1].read_bytes()[:-40])  # drop the footer of the middle shard
    with pytest.raises(IntegrityError) as e:
        read_shards(paths)
    msg = str(e.value)
    assert str(paths[1]) in msg and "truncated" in msg and "--forcerun fineweb_shards" in msg, msg


@pytest.mark.workflow
def test_truncated_local_corpus_stops_the_download_rule(tmp_path):
    """hidden_states.corpus.source: local pointing at a truncated parquet file: rule fineweb_shards
    fails naming the file and the fix, and writes no shard (nothing that looks complete)."""
    corpus = tmp_path / "corpus.parquet"
    _truncated_parquet(corpus)
    cfg = overlay(
        tmp_path,
        "truncated",
        {
            "hidden_states": {
                "corpus": {
                    "name": "truncated-local",
                    "source": "local",
                    "local_path": str(corpus),
                    "n_docs": 4,
                    "docs_per_shard": 2,
                }
            }
        },
    )
    wd, text = _failing_run(tmp_path, "data/fineweb/truncated-local/shard-00000.parquet", cfg)
    assert f"parquet file {corpus} is unreadable" in text and "truncated" in text and "Fix:" in text, text[
        -3000:
    ]
    shards = list((wd / "data").rglob("*.parquet")) if (wd / "data").exists() else []
    assert not shards, f"a failed download left shards behind: {shards}"


@pytest.mark.workflow
def test_hub_model_offline_names_model_and_fix(tmp_path):
    """A hub model with the network off and an empty HF cache: rule model_fetch fails naming the model,
    its hub id, what was tried and the two fixes; data/models/<name>/manifest.json (the rule's output,
    written last) does not exist."""
    cfg = overlay(tmp_path, "offline", {"data": {"allow_network": False}})
    env_extra = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "empty-hf-cache")}
    wd, text = _failing_run(tmp_path, "data/models/smollm2-360m/manifest.json", cfg, extra_env=env_extra)
    for s in (
        "model 'smollm2-360m'",
        "HuggingFaceTB/SmolLM2-360M",
        "could not be resolved",
        "Fix:",
        "models.smollm2-360m.source: local",
    ):
        assert s in text, f"the error does not say {s!r}:\n{text[-3000:]}"
    assert not (wd / "data" / "models" / "smollm2-360m" / "manifest.json").exists()


@pytest.mark.parametrize("stage", ["hidden_states", "lm_head"])
@pytest.mark.workflow
def test_unknown_model_name_in_a_stage_is_a_config_error(tmp_path, stage):
    """A stage naming a model that the `models:` registry does not define (a typo): Snakemake stops
    while parsing with an error naming the key and the defined models, instead of a MissingInputException
    about files of a model that can never exist."""
    cfg = overlay(tmp_path, "typo_model", {stage: {"models": ["smollm2-135m", "smolm2-135m"]}})
    text = _fails_before_any_job(tmp_path, cfg, f"{stage}.models", "smolm2-135m")
    assert "smollm2-135m" in text.split("smolm2-135m", 1)[1], "the error should list the defined models"
    assert "MissingInputException" not in text


@pytest.mark.workflow
def test_training_that_diverges_to_nan_fails_without_output(tmp_path):
    """A learning rate far too high (1e8): the superposition training job stops at the first
    non-finite loss with an error naming the cell and the keys to change, and leaves neither the model
    nor train.json (its outputs), so a rerun does not take the cell for done."""
    cfg = overlay(
        tmp_path,
        "nan",
        {
            "superposition": {
                "lr": 1.0e8,
                "widths": [8],
                "weight_decays": [1.0],
                "alphas": [1.5],
                "seeds": [0],
            }
        },
    )
    cell = "results/superposition/cells/power-a1.5/n64/gamma1/m8/seed0"
    wd, text = _failing_run(tmp_path, f"{cell}/model.safetensors", cfg, timeout=300)
    # the first non-finite loss: inf where the float32 squared error overflows first, else nan
    assert re.search(r"training diverged \(loss=(nan|inf)\)", text), text[-3000:]
    for s in ("m=8", "lower superposition.lr", "No output was written"):
        assert s in text, f"the error does not say {s!r}:\n{text[-3000:]}"
    assert not (wd / cell / "model.safetensors").exists() and not (wd / cell / "train.json").exists()


@pytest.mark.workflow
def test_a_mistyped_fit_grid_target_and_a_report_before_any_run_name_the_fix(tmp_path):
    """A target under results/chinchilla/fits/ with a misspelt law lists the laws, losses and files there
    are and the target meant; `--report` in an empty folder says to run the workflow first. Both stop while
    parsing: no job ran."""
    p = run(tmp_path, "-n", "--cores", "1", "results/chinchilla/fits/decomposd/squared/fit.json", check=False)
    text = p.stdout + p.stderr
    assert p.returncode != 0 and "No rule to produce" not in text, text[-3000:]
    assert "law one of decomposed, chinchilla, loss one of squared, huber, file one of fit.json" in text
    fix = "Fix: snakemake --cores all results/chinchilla/fits/decomposed/squared/fit.json"
    assert fix in text, text[-3000:]
    assert planned_jobs(run(tmp_path, "-n", "--cores", "1", fix.split()[-1])).get("chinchilla_fit") == 1
    p = run(tmp_path, "--report", str(tmp_path / "snakemake_report.html"), check=False)
    text = p.stdout + p.stderr
    assert p.returncode != 0 and "marked for report but does not exist" not in text, text[-3000:]
    assert "--report gathers the results of a finished run" in text and "results/report.html" in text
    assert "Fix: run the workflow first (snakemake --cores all results/report.html" in text
    assert not (tmp_path / "results").exists() and not (tmp_path / "snakemake_report.html").exists()
