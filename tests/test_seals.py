"""Faults in the depth-toy, LM-head and report stages: a damaged checkpoint
is logged, moved aside and the job reruns from scratch to the same result as a clean run; a damaged
finished file stops its consumer with the file and the fix (``snakemake --forcerun <rule>``) named."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from _pipeline import merged_config

from depthwidth import integrity
from depthwidth.config import validate_config
from depthwidth.integrity import IntegrityError
from depthwidth.rules import job_params


def _damage(path: Path, how: str) -> None:
    """Damage ``path`` as the fault probe does, keeping its modification time (so Snakemake sees nothing)."""
    st = path.stat()
    data = path.read_bytes()
    if how == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    elif how == "garbage":
        path.write_bytes(b"\x00garbage" * max(1, len(data) // 8))
    elif how == "drop_rows":  # a table that lost its last rows but still parses
        lines = data.decode().splitlines(keepends=True)
        path.write_text("".join(lines[: max(2, len(lines) // 2)]))
    else:
        raise ValueError(how)
    os.utime(path, (st.st_atime, st.st_mtime))


# ------------------------------------------------------------------------------------------- depth toy


class _Killed(Exception):
    pass


def _depth_toy_job(tmp_path: Path) -> tuple[dict, dict, list[str], str]:
    """The tiny test config's mse job (independent teacher, replicate 0): params, speed, output paths."""
    from depthwidth.depth_toy import pipeline

    config = validate_config(merged_config())
    students = [str(tmp_path / p) for p in pipeline.student_files(config, "mse", "independent", 0)]
    angles = str(tmp_path / pipeline.angle_file("mse", "independent", 0))
    params = job_params(config, pipeline, "depth_toy_train", variant="mse")  # as the rule's job gets them
    return params["train"], params["speed"], students, angles


def _student_records(paths: list[str]) -> list[dict]:
    return [json.loads(Path(p).read_text()) for p in paths]


@pytest.fixture(scope="module")
def depth_toy_clean(tmp_path_factory):
    """The clean, uninterrupted run of the job: its per-student records and angle table."""
    from depthwidth.depth_toy.train import depth_toy_train

    tmp = tmp_path_factory.mktemp("clean")
    params, speed, students, angles = _depth_toy_job(tmp)
    depth_toy_train(params, speed, "independent", 0, students, angles)
    return _student_records(students), pd.read_csv(angles)


@pytest.mark.parametrize("how", ["truncate", "empty", "garbage"])
def test_damaged_depth_toy_checkpoint_is_moved_aside_and_rerun(
    tmp_path, monkeypatch, caplog, how, depth_toy_clean
):
    import depthwidth.depth_toy.train as tr

    params, speed, students, angles = _depth_toy_job(tmp_path)
    assert params["steps"] == 20 and speed["checkpoint_every"] == 10
    real_update = tr.Progress.update
    calls = {"n": 0}

    def dying_update(self, n=1, **extra):
        calls["n"] += 1
        if calls["n"] == 13:  # killed after step 13: the checkpoint (step 10) stays behind
            raise _Killed
        return real_update(self, n, **extra)

    monkeypatch.setattr(tr.Progress, "update", dying_update)
    with pytest.raises(_Killed):
        tr.depth_toy_train(params, speed, "independent", 0, students, angles)
    monkeypatch.setattr(tr.Progress, "update", real_update)
    ckpt = Path(angles).with_name("checkpoint.pt")
    assert torch.load(ckpt, weights_only=False)["step"] == 10
    _damage(ckpt, how)

    with caplog.at_level(logging.INFO, logger="depthwidth"):
        tr.depth_toy_train(params, speed, "independent", 0, students, angles)
    assert str(ckpt) in caplog.text and "moved aside" in caplog.text and "resumed" not in caplog.text
    assert len(list(ckpt.parent.glob("checkpoint.pt.bad-*"))) == 1 and not ckpt.exists()
    records, table = depth_toy_clean
    assert _student_records(students) == records  # from scratch: the same numbers as a clean run
    pd.testing.assert_frame_equal(pd.read_csv(angles), table)


def test_depth_toy_checkpoint_of_another_job_is_not_resumed(tmp_path, monkeypatch, caplog, depth_toy_clean):
    """A sealed, intact checkpoint written for other params (here another seed) is moved aside too."""
    import depthwidth.depth_toy.train as tr

    params, speed, students, angles = _depth_toy_job(tmp_path)
    other = {**params, "seed": params["seed"] + 1}
    monkeypatch.setattr(tr, "write_job_outputs", lambda *a, **k: (_ for _ in ()).throw(_Killed()))
    with pytest.raises(_Killed):  # finished training, killed before writing: its checkpoint is at step 10
        tr.depth_toy_train(other, speed, "independent", 0, students, angles)
    monkeypatch.undo()
    with caplog.at_level(logging.INFO, logger="depthwidth"):
        tr.depth_toy_train(params, speed, "independent", 0, students, angles)
    assert "fingerprint differs" in caplog.text and "resumed" not in caplog.text
    assert _student_records(students) == depth_toy_clean[0]


def test_depth_toy_consumers_check_what_they_read(tmp_path, depth_toy_clean):
    """A damaged per-student file stops rule depth_toy_tables, a truncated table stops the section; both
    name the file and the rule to force."""
    from depthwidth.depth_toy import pipeline
    from depthwidth.depth_toy.section import depth_toy_section
    from depthwidth.depth_toy.tables import depth_toy_tables
    from depthwidth.depth_toy.train import depth_toy_train

    params, speed, students, angles = _depth_toy_job(tmp_path)
    depth_toy_train(params, speed, "independent", 0, students, angles)
    tables = {k: str(tmp_path / v) for k, v in pipeline.TABLES.items()}

    def make_tables():
        depth_toy_tables(
            students,
            [angles],
            tables["runs"],
            tables["exponents"],
            tables["angles"],
            tables["trajectory"],
            tables["teacher_angles"],
            tables["curves"],
            tables["convergence"],
        )

    make_tables()
    assert len(integrity.read_table(tables["runs"], "depth_toy_tables")) == len(students)
    student = Path(students[-1])
    good = student.read_bytes()
    _damage(student, "truncate")
    with pytest.raises(IntegrityError, match=rf"{student.name}.*forcerun depth_toy_train_mse"):
        make_tables()
    student.write_bytes(good)
    _damage(Path(angles), "drop_rows")
    with pytest.raises(IntegrityError, match=r"angles\.csv.*forcerun depth_toy_train_mse"):
        make_tables()

    config = validate_config(merged_config())
    section_args = (
        str(tmp_path / "comparisons.csv"),
        str(tmp_path / "section.html"),
        str(tmp_path / "headline.json"),
        str(tmp_path / "figures"),
        *job_params(config, pipeline, "depth_toy_section").values(),
    )
    _damage(Path(tables["runs"]), "drop_rows")
    with pytest.raises(IntegrityError, match=r"runs\.csv: it has \d+ bytes.*forcerun depth_toy_tables"):
        depth_toy_section(tables, *section_args)
    assert not (tmp_path / "headline.json").exists()


# ------------------------------------------------------------------------------------------- LM head


class _Tok:
    """Digits as token ids (as in test_lm_head)."""

    def __call__(self, text, return_tensors=None, truncation=True, max_length=None):
        ids = torch.tensor([[int(c) for c in text][:max_length]])
        return type("Enc", (), {"input_ids": ids})()


TEXTS = ["0123", "456789", "11", "2222222", "98", "7777", "01234567"]


def _tiny_model():
    import transformers as tf

    torch.manual_seed(0)
    return tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=12, n_embd=16, n_layer=1, n_head=2)).eval()


def _killed_loss_run(model, ckpt: Path, fp: dict, after: int) -> None:
    """A loss job killed after ``after`` texts, leaving its (sealed) checkpoint behind."""
    from depthwidth.lm_head.loss import corpus_loss

    calls = []

    def hook(*a):
        calls.append(1)
        if len(calls) > after:
            raise _Killed

    handle = model.register_forward_hook(hook)
    with pytest.raises(_Killed):
        corpus_loss(model, _Tok(), TEXTS, max_tokens=8, checkpoint=str(ckpt), every=1, fp=fp)
    handle.remove()


def _loss_nats(df: pd.DataFrame) -> float:
    return float(df["nll_nats"].sum() / df["tokens"].sum())


@pytest.mark.parametrize("how", ["drop_rows", "truncate", "empty", "garbage"])
def test_damaged_loss_checkpoint_is_moved_aside_and_rescored(tmp_path, caplog, how):
    from depthwidth.lm_head.loss import corpus_loss, texts_sha256

    model = _tiny_model()
    fp = {"texts": texts_sha256(TEXTS), "model": "tiny", "dtype": "float32"}
    clean = corpus_loss(model, _Tok(), TEXTS, max_tokens=8)
    ckpt = tmp_path / "loss.csv.checkpoint"
    _killed_loss_run(model, ckpt, fp, after=5)
    assert len(pd.read_csv(ckpt)) == 5
    _damage(ckpt, how)
    with caplog.at_level(logging.INFO, logger="depthwidth"):
        got = corpus_loss(model, _Tok(), TEXTS, max_tokens=8, checkpoint=str(ckpt), every=1, fp=fp)
    assert str(ckpt) in caplog.text and "moved aside" in caplog.text and "resuming" not in caplog.text
    assert len(list(tmp_path.glob("loss.csv.checkpoint.bad-*"))) == 1
    assert got["text_index"].tolist() == list(range(len(TEXTS)))
    assert _loss_nats(got) == pytest.approx(_loss_nats(clean), rel=1e-6)
    np.testing.assert_allclose(got["nll_nats"], clean["nll_nats"], rtol=1e-6)


def test_loss_checkpoint_of_other_texts_is_not_resumed(tmp_path, caplog):
    """The fingerprint covers the texts' content: a checkpoint scored on a corpus that has since changed
    (same file name, same count) is moved aside; an intact one of the same texts is resumed."""
    from depthwidth.lm_head.loss import corpus_loss, texts_sha256

    model = _tiny_model()
    ckpt = tmp_path / "loss.csv.checkpoint"
    _killed_loss_run(model, ckpt, {"texts": texts_sha256(TEXTS)}, after=4)
    changed = [*TEXTS[:1], "3333", *TEXTS[2:]]
    with caplog.at_level(logging.INFO, logger="depthwidth"):
        got = corpus_loss(
            model,
            _Tok(),
            changed,
            max_tokens=8,
            checkpoint=str(ckpt),
            every=1,
            fp={"texts": texts_sha256(changed)},
        )
    assert "fingerprint differs" in caplog.text
    assert _loss_nats(got) == pytest.approx(
        _loss_nats(corpus_loss(model, _Tok(), changed, max_tokens=8)), rel=1e-6
    )
    # the same texts: resumed, only the rest scored
    _killed_loss_run(model, ckpt, {"texts": texts_sha256(TEXTS)}, after=4)
    calls = []
    handle = model.register_forward_hook(lambda *a: calls.append(1))
    corpus_loss(
        model, _Tok(), TEXTS, max_tokens=8, checkpoint=str(ckpt), every=1, fp={"texts": texts_sha256(TEXTS)}
    )
    handle.remove()
    assert len(calls) == len(TEXTS) - 4


def _lm_head_files(tmp_path: Path) -> dict:
    """Sealed per-job files of two models, as rules lm_head_geometry and lm_head_loss write them."""
    from depthwidth.lm_head.tables import LOSS_COLUMNS

    out = {"geometry": [], "loss": []}
    for k, m in enumerate([64, 128]):
        g, lo = tmp_path / f"geometry/toy-{m}.json", tmp_path / f"loss/c/toy-{m}.json"
        integrity.write_json(
            g, {"model": f"toy-{m}", "family": "toy", "width": m, "m_times_mean_sq_overlap": 1.0}
        )
        integrity.write_json(
            lo,
            {
                **{c: k for c in LOSS_COLUMNS},
                "model": f"toy-{m}",
                "family": "toy",
                "width": m,
                "corpus": "c",
                "loss_nats": 3.0 - k,
                "seconds": 1.0,
            },
        )
        out["geometry"].append(str(g))
        out["loss"].append(str(lo))
    return out


def test_lm_head_consumers_check_what_they_read(tmp_path):
    from depthwidth.lm_head.section import lm_head_section
    from depthwidth.lm_head.width_fit import lm_head_width_fit

    files = _lm_head_files(tmp_path)
    out = {
        k: str(tmp_path / f)
        for k, f in (
            ("geometry_csv", "geometry.csv"),
            ("loss_csv", "loss.csv"),
            ("fit_json", "width_fit.json"),
        )
    }
    lm_head_width_fit(files["geometry"], files["loss"], min_widths=3, **out)
    assert integrity.read_json(out["fit_json"], "lm_head_width_fit")["status"] == "skipped"
    # a per-job summary that lost its end
    _damage(Path(files["loss"][1]), "truncate")
    with pytest.raises(IntegrityError, match=r"toy-128\.json.*forcerun lm_head_loss"):
        lm_head_width_fit(files["geometry"], files["loss"], min_widths=3, **out)
    # a finished table that lost rows, and a damaged fit
    section = dict(
        norms_paths=[],
        token_fit_csv="unused.csv",
        token_counts_paths=[],
        dead_norm_fraction=0.1,
        html_path=str(tmp_path / "s.html"),
        headline_path=str(tmp_path / "h.json"),
        figures_dir=str(tmp_path / "figures"),
    )
    _damage(Path(out["loss_csv"]), "drop_rows")
    with pytest.raises(IntegrityError, match=r"loss\.csv.*forcerun lm_head_width_fit"):
        lm_head_section("unused.csv", out["geometry_csv"], out["loss_csv"], out["fit_json"], **section)
    assert not (tmp_path / "h.json").exists()


# ------------------------------------------------------------------------------------------- superposition


def _superposition_cells(root: Path) -> tuple[dict, dict, list[dict]]:
    """The tiny test grid's train params, analysis params and cells (with their paths under ``root``)."""
    from depthwidth.superposition import pipeline
    from depthwidth.superposition.grid import parse_cell_path

    config = validate_config(merged_config())
    cells = [
        {
            **parse_cell_path(p),
            "model": str(root / p),
            "info": str(root / p).replace("model.safetensors", "train.json"),
        }
        for p in pipeline.cell_paths(config)
    ]
    train, tables = (job_params(config, pipeline, r) for r in ("superposition_train", "superposition_tables"))
    return train["train"], tables["analysis"], cells


def _train_cell(cell: dict, params: dict, every: int = 20) -> dict:
    from depthwidth.superposition.train import superposition_train

    c = cell
    return superposition_train(
        c["dist"],
        c["n"],
        c["gamma"],
        c["m"],
        c["seed"],
        params,
        c["model"],
        c["info"],
        checkpoint_every=every,
    )


@pytest.fixture(scope="module")
def superposition_clean(tmp_path_factory):
    """The clean, uninterrupted run of one cell of the test grid: its model file's bytes."""
    params, _, cells = _superposition_cells(tmp_path_factory.mktemp("clean"))
    _train_cell(cells[-1], params)
    return Path(cells[-1]["model"]).read_bytes()


@pytest.mark.parametrize("how", ["truncate", "empty", "garbage"])
def test_damaged_superposition_checkpoint_is_moved_aside_and_retrained(
    tmp_path, monkeypatch, caplog, how, superposition_clean
):
    import depthwidth.superposition.train as tr

    params, _, cells = _superposition_cells(tmp_path)
    cell = cells[-1]
    real = tr._step_group
    calls = {"n": 0}

    def dying(*a, **k):
        calls["n"] += 1
        if calls["n"] > 50:  # killed in step 51: the checkpoint of step 40 stays behind
            raise _Killed
        return real(*a, **k)

    monkeypatch.setattr(tr, "_step_group", dying)
    with pytest.raises(_Killed):
        _train_cell(cell, params)
    monkeypatch.undo()
    ckpt = Path(cell["model"]).with_name("checkpoint.pt")
    assert torch.load(ckpt, weights_only=False)["step"] == 40
    _damage(ckpt, how)
    with caplog.at_level(logging.INFO, logger="depthwidth"):
        _train_cell(cell, params)
    assert str(ckpt) in caplog.text and "moved aside" in caplog.text and "resumed" not in caplog.text
    assert len(list(ckpt.parent.glob("checkpoint.pt.bad-*"))) == 1 and not ckpt.exists()
    assert Path(cell["model"]).read_bytes() == superposition_clean  # from scratch: the clean run's numbers


def test_superposition_checkpoint_of_other_params_is_not_resumed(
    tmp_path, monkeypatch, caplog, superposition_clean
):
    """A sealed, intact checkpoint of other params (another lr) is moved aside; one of the same is resumed."""
    import depthwidth.superposition.train as tr

    params, _, cells = _superposition_cells(tmp_path)
    cell = cells[-1]
    for p in ({**params, "lr": params["lr"] * 2}, params):
        monkeypatch.setattr(tr, "write_json", lambda *a, **k: (_ for _ in ()).throw(_Killed()))
        with pytest.raises(_Killed):  # trained, killed before train.json: the checkpoint of step 60 stays
            _train_cell(cell, p)
        monkeypatch.undo()
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="depthwidth"):
            _train_cell(cell, params)
        assert Path(cell["model"]).read_bytes() == superposition_clean
        if p is params:
            assert "resumed from checkpoint" in caplog.text and "moved aside" not in caplog.text
        else:
            assert "fingerprint differs" in caplog.text and "resumed" not in caplog.text


def test_superposition_consumers_check_what_they_read(tmp_path):
    """A damaged cell file stops rule superposition_tables, a truncated table stops the section; both name
    the file and the rule to force, and the section writes nothing."""
    from depthwidth.integrity import seal_path
    from depthwidth.superposition.compare import superposition_compare
    from depthwidth.superposition.section import superposition_section
    from depthwidth.superposition.tables import superposition_tables

    params, analysis, cells = _superposition_cells(tmp_path)
    params = {**params, "steps": 20}
    for c in cells:
        _train_cell(c, params, every=0)
    models, infos = [c["model"] for c in cells], [c["info"] for c in cells]
    out = {k: str(tmp_path / f"{k}.csv") for k in ("cells", "exponents")}
    superposition_tables(models, analysis, out["cells"], out["exponents"])
    assert len(integrity.read_table(out["cells"], "superposition_tables")) == len(cells)

    model = Path(models[1])
    good = model.read_bytes()
    _damage(model, "truncate")
    with pytest.raises(
        IntegrityError, match=rf"{model.parent}.*model.safetensors.*forcerun superposition_train"
    ):
        superposition_tables(models, analysis, out["cells"], out["exponents"])
    model.write_bytes(good)
    seal_path(model).unlink()  # a file without a seal (never completely written) is not trusted either
    with pytest.raises(
        IntegrityError, match=r"model\.safetensors: it has no seal.*forcerun superposition_train"
    ):
        superposition_tables(models, analysis, out["cells"], out["exponents"])

    cmp = str(tmp_path / "comparisons.csv")
    superposition_compare(out["exponents"], analysis["tolerance"], cmp)
    section = (str(tmp_path / "s.html"), str(tmp_path / "h.json"), str(tmp_path / "figures"))
    _damage(Path(infos[0]), "truncate")
    with pytest.raises(IntegrityError, match=r"train\.json.*forcerun superposition_train"):
        superposition_section(cmp, out["cells"], out["exponents"], models, infos, analysis, *section)
    _damage(Path(out["cells"]), "drop_rows")
    with pytest.raises(IntegrityError, match=r"cells\.csv: it has \d+ bytes.*forcerun superposition_tables"):
        superposition_section(cmp, out["cells"], out["exponents"], models, infos, analysis, *section)
    assert not (tmp_path / "h.json").exists() and not (tmp_path / "s.html").exists()


# ------------------------------------------------------------------------------------------- hidden states

HS_WORDS = "the of a layer model depth width token loss scaling , . ; and to is in".split()


@pytest.fixture(scope="module")
def hs_setup():
    """Tiny texts, tokenizer and llama model, and the clean run's per-token tensors."""
    import tempfile

    from depthwidth.hidden_states.extract import extract, load_token_metrics
    from depthwidth.hidden_states.tiny import tiny_model, tiny_tokenizer

    rng = np.random.default_rng(0)
    texts = [" ".join(rng.choice(HS_WORDS, size=int(rng.integers(20, 60)))) for _ in range(6)]
    tok = tiny_tokenizer(texts, vocab_size=200)
    model = tiny_model("llama", vocab_size=len(tok), layers=2)
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "clean.safetensors"
        extract(model, tok, texts, list(range(6)), out, **HS_KW)
        clean = load_token_metrics(out)[0]
    return texts, tok, model, clean


HS_KW = dict(model_name="m", max_tokens=24, batch_tokens=30, checkpoint_every_s=0.0, keep_raw_tokens=2)


def _hs_run(monkeypatch, texts, tok, model, out: Path, die_after: int | None = None) -> int:
    """Extract ``texts`` to ``out`` (killed after ``die_after`` batches); return the batches computed."""
    from depthwidth.hidden_states import extract as ex

    calls = {"n": 0}
    real = ex.batch_metrics

    def counted(*a, **k):
        calls["n"] += 1
        if die_after is not None and calls["n"] > die_after:
            raise _Killed
        return real(*a, **k)

    monkeypatch.setattr(ex, "batch_metrics", counted)
    try:
        ex.extract(model, tok, texts, list(range(len(texts))), out, **HS_KW)
    finally:
        monkeypatch.setattr(ex, "batch_metrics", real)
    return calls["n"]


def test_damaged_hidden_states_parts_are_moved_aside_and_recomputed(tmp_path, monkeypatch, caplog, hs_setup):
    """Parts truncated, emptied, filled with garbage, and a damaged fingerprint.json: the bad parts are
    logged and recomputed (no bare SafetensorError), the intact ones reused, the result equals a clean run."""
    from depthwidth.hidden_states.extract import load_token_metrics

    texts, tok, model, clean = hs_setup
    out = tmp_path / "run.safetensors"
    with pytest.raises(_Killed):
        _hs_run(monkeypatch, texts, tok, model, out, die_after=4)
    parts = sorted((tmp_path / "run.safetensors.parts").glob("part-*.safetensors"))
    assert len(parts) == 4
    for part, how in zip(parts[1:], ("truncate", "empty", "garbage")):
        _damage(part, how)
    _damage(parts[0].with_name("fingerprint.json"), "garbage")
    with caplog.at_level(logging.INFO, logger="depthwidth"):
        n = _hs_run(monkeypatch, texts, tok, model, out)
    for part in parts[1:]:
        assert f"{part}: " in caplog.text
    assert caplog.text.count("moved aside") == 3 and f"{parts[0]}:" not in caplog.text
    assert n == len(texts) - 1  # the 3 bad parts' batches and the 2 never done
    got = load_token_metrics(out)[0]
    assert got.keys() == clean.keys() and all(torch.equal(got[k], clean[k]) for k in clean)


def test_hidden_states_parts_of_another_corpus_are_not_reused(tmp_path, monkeypatch, caplog, hs_setup):
    """The parts' fingerprint covers the texts' content: a corpus edited in place (same count, same document
    indices, same settings) discards them and every batch is computed again."""
    texts, tok, model, _ = hs_setup
    out = tmp_path / "run.safetensors"
    with pytest.raises(_Killed):
        _hs_run(monkeypatch, texts, tok, model, out, die_after=3)
    changed = [texts[0], "the model of the layer is in depth and width", *texts[2:]]
    with caplog.at_level(logging.INFO, logger="depthwidth"):
        n = _hs_run(monkeypatch, changed, tok, model, out)
    assert "discarding checkpoint parts" in caplog.text
    from depthwidth.hidden_states.extract import make_batches, tokenize

    assert n == len(make_batches([len(s) for s in tokenize(tok, changed, 24)], 30))


def test_hidden_states_consumers_check_what_they_read(tmp_path, monkeypatch, hs_setup):
    """A truncated per-token file stops rule hidden_states_stats; a statistics file that lost rows stops
    the section; both name the file and the rule to force."""
    from depthwidth.hidden_states import pipeline
    from depthwidth.hidden_states.section import hidden_states_section
    from depthwidth.hidden_states.stats import hidden_states_stats

    texts, tok, model, _ = hs_setup
    out = tmp_path / "m/token_metrics.safetensors"
    _hs_run(monkeypatch, texts, tok, model, out)
    params = job_params(validate_config(merged_config()), pipeline, "hidden_states_stats")["stats"]
    files = {k: str(tmp_path / "m" / name) for k, name in pipeline.SECTION_FILES}
    hidden_states_stats(out, "m", params, **files)
    inputs = {f"{k}_m": v for k, v in files.items()}
    section = {
        k: str(tmp_path / f)
        for k, f in (
            ("html", "s.html"),
            ("headline", "h.json"),
            ("layers", "l.csv"),
            ("models_csv", "mo.csv"),
            ("figures", "fig"),
        )
    }
    _damage(Path(files["layers"]), "drop_rows")
    with pytest.raises(
        IntegrityError, match=r"layer_stats\.csv: it has \d+ bytes.*forcerun hidden_states_stats"
    ):
        hidden_states_section(inputs, ["m"], **section)
    assert not Path(section["headline"]).exists()
    _damage(out, "truncate")
    with pytest.raises(
        IntegrityError, match=r"token_metrics\.safetensors: it has \d+ bytes.*forcerun hidden_states_extract"
    ):
        hidden_states_stats(out, "m", params, **files)


# ------------------------------------------------------------------------------------------- chinchilla


def _chinchilla_raw(root: Path) -> tuple[Path, Path]:
    """The pinned Chinchilla inputs copied into ``root``/data/raw/chinchilla, as rule fetch_pinned_chinchilla leaves them."""
    import shutil

    from _helpers import SHARED_DATA, have_shared_data

    if not have_shared_data():
        pytest.skip(f"no data mirror at {SHARED_DATA}")
    raw = root / "data/raw/chinchilla"
    raw.mkdir(parents=True)
    names = ("svg_extracted_data.csv", "chinchilla_table_a9.csv")
    for name in names:
        shutil.copyfile(SHARED_DATA / "chinchilla" / name, raw / name)
    return raw / names[0], raw / names[1]


def test_tampered_raw_chinchilla_csv_stops_the_points(tmp_path):
    """The pinned raw CSV is checked against its SHA-256 where it is used, not only at download."""
    from depthwidth.chinchilla.points import chinchilla_points

    svg, table = _chinchilla_raw(tmp_path)
    out = tmp_path / "points.csv", tmp_path / "reconstruction.json"
    chinchilla_points(svg, table, *out)
    assert integrity.read_json(out[1], "chinchilla_points")["n_points"] == 245
    for f in (svg, table):
        good = f.read_bytes()
        _damage(f, "drop_rows")
        with pytest.raises(IntegrityError, match=rf"{f}: its SHA-256 is .* pinned .*rm {f} && snakemake"):
            chinchilla_points(svg, table, *out)
        f.write_bytes(good)
    f.unlink()
    with pytest.raises(IntegrityError, match=r"no such file.*fetch_pinned_chinchilla"):
        chinchilla_points(svg, table, *out)


def test_chinchilla_consumers_check_what_they_read(tmp_path):
    """points.csv that lost rows (mtime kept) stops the fit, the drop scan and the chinchilla sweep, instead
    of a fit on part of the points; a truncated runs.csv stops the sweep's identify; a truncated scan stops
    the section. Each names the file and the rule to force."""
    from depthwidth.chinchilla.fit import chinchilla_fit
    from depthwidth.chinchilla.identify import chinchilla_sweep_identify
    from depthwidth.chinchilla.points import chinchilla_points
    from depthwidth.chinchilla.scan import chinchilla_drop_scan
    from depthwidth.chinchilla.section import chinchilla_section
    from depthwidth.chinchilla.sweeps import chinchilla_sweep_points
    from depthwidth.verdicts import write_comparisons

    res = tmp_path / "results/chinchilla"
    points, recon = res / "points.csv", res / "reconstruction.json"
    chinchilla_points(*_chinchilla_raw(tmp_path), points, recon)
    runs = res / "sweeps/chinchilla/runs.csv"
    spec = {
        "name": "chinchilla",
        "loader": "chinchilla",
        "path": str(points),
        "n_exponents": 3,
        "drop_highest": 0,
    }
    assert len(chinchilla_sweep_points(spec, runs)) == 245
    good = points.read_bytes()
    _damage(points, "drop_rows")
    bad = r"points\.csv: it has \d+ bytes where its seal recorded \d+.*forcerun chinchilla_points"
    with pytest.raises(IntegrityError, match=bad):
        chinchilla_fit(points, {}, res / "fit.json", res / "bootstrap.csv")
    with pytest.raises(IntegrityError, match=bad):
        chinchilla_drop_scan(points, {}, res / "drop_scan.csv")
    with pytest.raises(IntegrityError, match=bad):
        chinchilla_sweep_points(spec, runs)
    assert not (res / "fit.json").exists() and not (res / "drop_scan.csv").exists()
    points.write_bytes(good)

    _damage(runs, "drop_rows")
    with pytest.raises(IntegrityError, match=r"runs\.csv.*forcerun chinchilla_sweep_points"):
        chinchilla_sweep_identify(runs, {}, res / "identify.json", res / "profile.csv")

    # the section: every input checked before anything is drawn (fit and bootstrap stand-ins, sealed)
    integrity.write_json(res / "fit.json", {"params": {}, "law": "decomposed", "loss": "squared"})
    integrity.write_table(pd.DataFrame({"alpha_l": [1.0, 1.1]}), res / "bootstrap.csv")
    integrity.write_table(
        pd.DataFrame({"k": [0, 1, 2, 3], "alpha_l": [1.3, 1.2, 1.1, 1.0]}), res / "drop_scan.csv"
    )
    _damage(res / "drop_scan.csv", "drop_rows")
    write_comparisons(res / "comparisons.csv", [])
    inputs = {
        k: str(res / f)
        for k, f in (
            ("comparisons", "comparisons.csv"),
            ("points", "points.csv"),
            ("summary", "reconstruction.json"),
            ("fit", "fit.json"),
            ("bootstrap", "bootstrap.csv"),
            ("scan", "drop_scan.csv"),
        )
    }
    out = {
        k: str(tmp_path / f) for k, f in (("html", "s.html"), ("headline", "h.json"), ("figures", "figures"))
    }
    with pytest.raises(IntegrityError, match=r"drop_scan\.csv.*forcerun chinchilla_drop_scan"):
        chinchilla_section(inputs, out)
    assert not (tmp_path / "h.json").exists()
    # a damaged comparisons.csv stops the section before anything is drawn, naming the rule that makes it
    _damage(res / "comparisons.csv", "truncate")
    with pytest.raises(IntegrityError, match=r"comparisons\.csv.*forcerun chinchilla_compare"):
        chinchilla_section(inputs, out)


# ------------------------------------------------------------------------------------------- report


def test_report_checks_headline_and_figures(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    from depthwidth import verdicts
    from depthwidth.sections import Figures, write_section
    from depthwidth.report.page import report

    monkeypatch.chdir(tmp_path)
    stages = ["lm_head"]
    figs = Figures("results/lm_head/figures")
    fig, ax = plt.subplots(figsize=(2, 2))
    body = figs.html(fig, "line", "Line. A caption.")
    write_section(
        "results/lm_head/section.html",
        "results/lm_head/headline.json",
        "lm_head",
        "t",
        body,
        [
            verdicts.compare(
                "lm_head", "q", "superposition", "c", "q", verdicts.no_paper_number(), value=1.0
            ).row()
        ],
    )
    integrity.write_json("results/lm_head/width_fit.json", {"status": "skipped"})
    inputs = {
        "lm_head_html": "results/lm_head/section.html",
        "lm_head_headline": "results/lm_head/headline.json",
        "lm_head_figures": "results/lm_head/figures",
        "synthesis_width": "results/lm_head/width_fit.json",
    }
    cfg = {"stages": stages}

    def run():
        report("t", stages, {}, cfg, inputs, "results/report.html", "results/headline.csv")

    run()
    assert Path("results/report.html").exists()
    for path, how in (
        ("results/lm_head/headline.json", "truncate"),
        ("results/lm_head/figures/line.png", "truncate"),
        ("results/lm_head/section.html", "empty"),
    ):
        good = Path(path).read_bytes()
        _damage(Path(path), how)
        with pytest.raises(IntegrityError, match=rf"{Path(path).name}.*forcerun lm_head_section"):
            run()
        Path(path).write_bytes(good)
    run()


# ------------------------------------------------------------------------------------------- rule logs


def test_uncaught_error_goes_to_the_rule_log_with_its_traceback(tmp_path):
    """A script that sets up logging and then fails leaves the traceback and the message in its log file."""
    import subprocess
    import sys

    log = tmp_path / "logs/rule.log"
    code = (
        "from depthwidth.logs import setup_logging\n"
        "from depthwidth.integrity import read_table\n"
        f"setup_logging({str(log)!r})\n"
        f"read_table({str(tmp_path / 'runs.csv')!r}, 'depth_toy_tables')\n"
    )
    (tmp_path / "runs.csv").write_text("x\n1\n")
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(integrity.__file__).parents[1])},
    )
    assert proc.returncode == 1
    text = log.read_text()
    assert "Traceback (most recent call last)" in text and "IntegrityError" in text
    assert f"{tmp_path / 'runs.csv'}: it has no seal" in text and "--forcerun depth_toy_tables" in text
    assert proc.stderr.count("Traceback") == 1  # on stderr once, not twice


def test_tampered_openlm_file_stops_its_sweep(tmp_path):
    """The OpenLM sweep files are pinned too: one edited after download stops the loader by name."""
    import shutil

    from _helpers import SHARED_DATA, have_shared_data

    from depthwidth.chinchilla.sweeps import load_openlm_grid

    if not have_shared_data():
        pytest.skip(f"no data mirror at {SHARED_DATA}")
    root = tmp_path / "data/raw/openlm_scaling"
    (root / "exp_data").mkdir(parents=True)
    grid = root / "exp_data" / "grid.json"
    shutil.copyfile(SHARED_DATA / "openlm_scaling" / "exp_data" / "grid.json", grid)
    assert len(load_openlm_grid(root)) == 50
    grid.write_text(grid.read_text().replace("}", ', "open_lm_1b_x": 9.0}', 1))
    with pytest.raises(IntegrityError, match=rf"{grid}: its SHA-256 is .* pinned .*rm {grid}"):
        load_openlm_grid(root)
