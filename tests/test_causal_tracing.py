"""Causal tracing on tiny random decoders of every family: token positions, exact restorations, batching,
the encoder error, the peak-depth table, config checks, and the rules end to end on a tiny local model."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from depthwidth.causal_tracing import pipeline
from depthwidth.causal_tracing.tables import peak, peak_table
from depthwidth.causal_tracing.trace import CausalTracingError, Fact, Tracer, decoder_parts, locate, trace
from depthwidth.config import ConfigError, validate_config
from depthwidth.hidden_states.tiny import DECODER_FAMILIES, tiny_model, tiny_tokenizer
from depthwidth.rules import job_params

TEXTS = [
    "The Eiffel Tower is in the city of Paris.",
    "The space needle is in downtown Seattle.",
    "The Colosseum is located in the city of Rome.",
] * 20
FACT = Fact("eiffel", "The Eiffel Tower is in the city of", "eiffel tower", " Paris")
DECODERS = DECODER_FAMILIES  # gpt_neox, qwen2, opt, llama, gpt2


@pytest.fixture(scope="module")
def tok():
    return tiny_tokenizer(TEXTS, vocab_size=300)


def _model(family: str, vocab: int, layers: int = 3):
    return tiny_model(family, vocab_size=vocab, layers=layers, hidden=32, max_positions=64)


def _tracer(model, located, samples=2, seed=0):
    return Tracer(
        decoder_parts(model, "tiny"),
        located,
        noise_samples=samples,
        seed=seed,
        noise_sigmas=3.0,
        device=torch.device("cpu"),
        dtype=torch.float32,
    )


def test_locate_subject_prediction_and_target(tok):
    loc = locate(tok, FACT)
    text = "".join(loc.tokens)
    assert text == "The Eiffel Tower is in the city of Paris"
    s, e = loc.subject
    assert "".join(loc.tokens[s:e]).strip().lower() == "eiffel tower"  # case-insensitive search
    # the target token holds the first letter of " Paris"; a lone space token before it stays in the prompt
    assert (
        "".join(loc.tokens[: loc.predict + 1]).rstrip() == FACT.prompt and loc.target_token.strip()[0] == "P"
    )
    # no target: the prompt's last word is the target, as the paper's sentence
    paper = locate(tok, Fact("needle", "The space needle is in downtown Seattle", "space needle"))
    assert "".join(paper.tokens[: paper.predict + 1]).rstrip().endswith("downtown")
    assert paper.target_token.strip()[0] == "S"
    with pytest.raises(CausalTracingError, match="fact 'x'.*'Big Ben' does not occur"):
        locate(tok, Fact("x", "The Eiffel Tower is in", "Big Ben", " Paris"))


@pytest.mark.parametrize("family", DECODERS)
def test_restorations_recover_p_clean(tok, family):
    model = _model(family, len(tok))
    loc = locate(tok, FACT)
    tr = _tracer(model, loc)
    L, T, (s, _) = len(tr.parts.blocks), len(loc.ids), loc.subject
    with torch.no_grad():
        full = torch.softmax(model(torch.tensor([loc.ids])).logits[0, loc.predict].float(), -1)[loc.target_id]
    assert tr.p_clean == pytest.approx(float(full), rel=1e-6)
    rows = [
        (0, []),
        (1, []),
        (0, [(L - 1, loc.predict)]),
        (1, [(L - 1, loc.predict)]),  # last block, prediction position
        (0, [(0, j) for j in range(s, T)]),
    ]  # block 0 at every position the noise reaches
    p = tr.probs(rows, batch_rows=2)
    assert abs(p[0] / tr.p_clean - 1) > 1e-4  # the noise changes the prediction (by 10× the tolerance below)
    np.testing.assert_allclose(p[:2], tr.p_corrupt, rtol=1e-5)  # every block from storage = the corrupted run
    np.testing.assert_allclose(p[2:], tr.p_clean, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("family", ("gpt_neox", "opt"))
def test_trace_matrix_batching_and_skipped_positions(tok, family):
    model = _model(family, len(tok))
    summary, m = trace(
        model, tok, FACT, model_name="tiny", noise_samples=2, seed=1, noise_sigmas=3.0, batch_rows=7
    )
    _, m_big = trace(
        model, tok, FACT, model_name="tiny", noise_samples=2, seed=1, noise_sigmas=3.0, batch_rows=500
    )
    L, T = m.shape
    assert (L, T) == (summary["n_layers"], summary["n_tokens"]) and L == 3
    np.testing.assert_allclose(m, m_big, rtol=1e-5, atol=1e-8)  # batch size changes speed only
    np.testing.assert_allclose(m[-1, summary["predict_position"]], summary["p_clean"], rtol=1e-5)
    # the cells not run (before the subject, after the prediction) equal what a run gives
    loc = locate(tok, FACT)
    tr = _tracer(model, loc, seed=1)
    cells = [(0, 0), (L - 1, 0), (1, T - 1)]
    p = np.mean([tr.probs([(k, [c]) for c in cells], 8) for k in range(2)], axis=0)
    np.testing.assert_allclose(p, [m[c] for c in cells], rtol=1e-5)
    assert summary["p_corrupt"] == pytest.approx(np.mean(summary["p_corrupt_samples"]))


def test_encoder_refused_by_name(tok):
    with pytest.raises(CausalTracingError, match=r"'minilm'.*encoder-only"):
        decoder_parts(_model("bert", len(tok)), "minilm")
    cfg = _config({"models": ["minilm-l6"]})
    with pytest.raises(ConfigError, match=r"'minilm-l6' is encoder-only"):
        pipeline.check(cfg)


def test_peak_depths():
    profile = np.array([0.1, 0.2, 0.6, 0.4, 0.1])  # L = 5, p_corrupt 0.1: half gain at 0.35
    out = peak(profile, 0.1)
    assert out["peak_depth"] == pytest.approx(3 / 5) and out["peak_p"] == pytest.approx(0.6)
    assert (out["half_depth_low"], out["half_depth_high"]) == (pytest.approx(3 / 5), pytest.approx(4 / 5))
    assert np.isnan(peak(np.full(4, 0.1), 0.1)["half_depth_low"])
    s = {
        "model": "m",
        "fact": "f",
        "subject_range": [1, 3],
        "predict_position": 4,
        "tokens": list("abcde"),
        "n_layers": 2,
        "p_corrupt": 0.0,
    }
    tab = peak_table([(s, np.array([[0, 0, 0.5, 0, 0.1], [0, 0, 0.2, 0, 0.3]]))])
    assert tab["token"].tolist() == ["c", "e"] and tab["peak_depth"].tolist() == [0.5, 1.0]


def _config(changes: dict) -> dict:
    from _pipeline import merged_config

    return validate_config(merged_config([{"causal_tracing": changes}]))


def test_config_defaults_params_and_checks():
    cfg = _config({"batch_rows": 8})
    ct = cfg["causal_tracing"]
    assert ct["noise_sigmas"] == 3.0 and ct["facts"][0]["target"] == " Paris"  # schema default and test value
    job = job_params(cfg, pipeline, "causal_tracing_trace", {"model": "smollm2-135m"})
    params = job["trace"]
    assert "batch_rows" not in params and params["facts"][0]["subject"] == "Eiffel Tower"
    assert [f["name"] for f in params["facts"]] == pipeline.facts(cfg)  # every fact, in config order
    out = pipeline.job_files(cfg, "smollm2-135m")
    assert len(out["summaries"]) == len(out["matrices"]) == len(ct["facts"])
    assert job["speed"] == {"batch_rows": 8}
    assert list(params) == sorted(params)
    with pytest.raises(ConfigError, match="not in the models section"):
        pipeline.check(_config({"models": ["nope"]}))
    twice = [{"name": "a", "prompt": "x y", "subject": "x"}] * 2
    with pytest.raises(ConfigError, match=r"\['a'\] are used twice"):
        pipeline.check(_config({"facts": twice}))


@pytest.mark.workflow
def test_rules_end_to_end_on_a_tiny_local_model(tmp_path, tok):
    from _pipeline import overlay, run

    folder = tmp_path / "tiny-neox"
    _model("gpt_neox", len(tok)).save_pretrained(folder)
    tok.save_pretrained(folder)
    changes = {
        "stages": ["causal_tracing"],
        "models": {"tiny-neox": {"source": "local", "path": str(folder), "family": "pythia"}},
        "causal_tracing": {
            "models": ["tiny-neox"],
            "min_p_clean": 0.0,
            "facts": [
                {
                    "name": "needle",
                    "prompt": "The space needle is in downtown Seattle",
                    "subject": "space needle",
                }
            ],
        },
    }
    work = tmp_path / "work"
    from _pipeline import BASE_CONFIGS

    run(
        work,
        "--cores",
        "1",
        "results/causal_tracing/section.html",
        configs=[*BASE_CONFIGS, overlay(tmp_path, "tiny", changes)],
        timeout=300,
    )
    summary = json.loads((work / "results/causal_tracing/tiny-neox/needle.json").read_text())
    assert summary["n_layers"] == 3 and summary["target"] == " Seattle" and summary["model_id"] is None
    assert np.load(work / "results/causal_tracing/tiny-neox/needle.npy").shape == (3, summary["n_tokens"])
    assert (work / "results/causal_tracing/figures/trace_tiny-neox.png").is_file()
    html = (work / "results/causal_tracing/section.html").read_text()
    assert "figures/trace_tiny-neox.png" in html and "Peak depth" in html
    comparisons = (work / "results/causal_tracing/comparisons.csv").read_text()
    assert "not tested" in comparisons and "Pythia-12B" in comparisons


def test_comparisons_only_for_the_papers_pair():
    """The paper's pair traced: p_clean compared digit for digit (same model, sentence and procedure),
    p_corrupt (one noise draw in the paper) not tested with a single draw; another model gives no record.
    A run without the paper's pair says so in words."""
    from depthwidth import verdicts as v
    from depthwidth.causal_tracing.compare import comparisons

    s = {
        "model": "pythia-12b",
        "model_id": "EleutherAI/pythia-12b",
        "fact": "needle",
        "text": "The space needle is in downtown Seattle",
        "p_clean": 0.3607,
        "p_corrupt": 0.0116,
        "p_corrupt_samples": [0.0116],
        "noise_samples": 1,
    }
    rows = comparisons([(s, None), ({**s, "model_id": "EleutherAI/pythia-1b"}, None)])
    assert [r.quantity for r in rows] == [
        "causal tracing p_clean, pythia-12b",
        "causal tracing p_corrupt, pythia-12b",
    ]
    assert rows[0].paper_text == "0.36" and rows[0].verdict == v.EXACT
    assert rows[1].verdict == v.NOT_TESTED and "1 draw, too few" in rows[1].verdict_text
    assert comparisons([({**s, "p_clean": 0.3412}, None)])[0].verdict == v.NO
    many = comparisons([({**s, "p_corrupt_samples": list(np.linspace(0.005, 0.03, 40))}, None)])[1]
    assert many.verdict == v.YES and "range of single draws" in many.test
    other = comparisons([({**s, "model": "smollm2-135m", "model_id": None}, None)])
    assert [r.verdict for r in other] == [v.NOT_TESTED] * 2 and all(r.value_text == "not run" for r in other)
    assert "this run traces smollm2-135m on 1 fact " in other[0].verdict_text


def test_bf16_trace_loads_the_model_as_the_paper(tmp_path, tok):
    """The rule's function loads the model in the trace dtype as the paper's script does
    (from_pretrained(torch_dtype=...)): in bfloat16 the restored-probability matrix equals, bit for bit, the
    trace of a model loaded that way, whose rotary inv_freq is float32."""
    from transformers import AutoModelForCausalLM

    from depthwidth.causal_tracing.trace import causal_tracing_trace
    from depthwidth.models.fetch import fetch_model
    from depthwidth.models.load import model_spec

    _model("llama", len(tok)).save_pretrained(tmp_path / "w")
    tok.save_pretrained(tmp_path / "w")
    fetch_model(
        model_spec("t", {"source": "local", "path": str(tmp_path / "w"), "family": "llama"}), tmp_path / "m"
    )
    params = {"facts": [{"name": FACT.name, "prompt": FACT.prompt, "subject": FACT.subject, "target": FACT.target}],
              "noise_samples": 2, "seed": 0, "noise_sigmas": 3.0, "device": "cpu", "dtype": "bfloat16"}  # fmt: skip
    (summary,) = causal_tracing_trace(
        tmp_path / "m", [(tmp_path / "t.json", tmp_path / "t.npy")], params, model_name="t", batch_rows=64
    )
    assert summary["dtype"] == "bfloat16"
    paper = AutoModelForCausalLM.from_pretrained(tmp_path / "w", torch_dtype=torch.bfloat16).eval()
    assert paper.model.rotary_emb.inv_freq.dtype == torch.float32
    _, want = trace(
        paper, tok, FACT, model_name="t", noise_samples=2, seed=0, noise_sigmas=3.0, batch_rows=64
    )
    assert np.array_equal(np.load(tmp_path / "t.npy"), want)
