"""Superposition toy model: sampler, exact gradients, trainer vs the paper's loop, decay rules,
checkpoints, divergence, determinism, metrics and fits (no Snakemake)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from depthwidth.superposition import train as tr
from depthwidth.superposition.analysis import (
    etf_closeness,
    final_loss,
    mean_sq_overlap,
    represented_fraction,
)
from depthwidth.superposition.data import (
    SparseSampler,
    dense_from_coo,
    feature_probabilities,
    parse_distribution,
)
from depthwidth.laws.loglog import power_law_fit as fit_power_law
from depthwidth.superposition.batch import Batch, Workspace
from depthwidth.superposition.grads import loss_and_grads, loss_and_grads_features
from depthwidth.superposition.pipeline import cells
from depthwidth.superposition.reference import reference_train
from depthwidth.superposition.train import (
    TrainingDiverged,
    TrainSettings,
    init_params,
    superposition_train,
    train_cells,
)

torch.set_num_threads(1)


def test_probabilities_match_paper_formulas():
    p = feature_probabilities("power-a1.5", 1000)
    assert p.sum().item() == pytest.approx(1.0, abs=1e-12)
    assert (p[0] / p[9]).item() == pytest.approx(10**1.5, rel=1e-12)  # p_i ∝ i^-α
    e = feature_probabilities("exponential-k400", 1000)
    assert (e[0] / e[400]).item() == pytest.approx(math.e, rel=1e-12)  # e^{-(i-1)/k}
    lin = feature_probabilities("linear", 10)
    assert (lin[0] / lin[9]).item() == pytest.approx(10.0)  # (n - i + 1)/n
    s = feature_probabilities("power-a1-s1", 100)  # activation density s = 1: p_1 becomes 1
    assert s[0].item() == pytest.approx(1.0) and s.sum().item() == pytest.approx(
        float(s[0] / p[0] * 0) + s.sum().item()
    )
    half = feature_probabilities("power-a1-s0.5", 100)
    base = feature_probabilities("power-a1", 100)
    assert (half / base).std().item() < 1e-12 and (half[0] / base[0]).item() == pytest.approx(
        1 + 0.5 * (1 / base[0].item() - 1)
    )
    with pytest.raises(ValueError, match="power-a<alpha>"):
        parse_distribution("zipf1.5")


def test_sparse_sampler_is_exact():
    """Per-feature activation rates match p (incl. the dense head and p = 1 features), no duplicate
    (row, feature) entries, values U(0, 2)."""
    n, B, draws = 200, 512, 300
    for name in ("power-a1.2", "power-a1-s0.3"):
        p = feature_probabilities(name, n)
        s = SparseSampler(p, B, torch.Generator().manual_seed(3))
        counts = torch.zeros(n, dtype=torch.float64)
        vals_all = []
        for _ in range(draws):
            rows, feats, vals = s.sample()
            key = rows * n + feats
            assert key.unique().numel() == key.numel()
            assert bool((rows[1:] >= rows[:-1]).all())
            counts.index_add_(0, feats, torch.ones_like(feats, dtype=torch.float64))
            vals_all.append(vals)
        N = draws * B
        z = (counts - N * p) / torch.sqrt(N * p * (1 - p) + 1e-12)
        assert z[p < 1].abs().max().item() < 5.0  # binomial z-scores of 200 features
        assert (counts[p >= 1] == N).all()
        v = torch.cat(vals_all)
        assert 0.0 <= v.min().item() and v.max().item() <= 2.0
        assert v.mean().item() == pytest.approx(1.0, abs=0.01)


@pytest.mark.parametrize("path", ["features", "hidden"])
def test_gradients_equal_autograd(path):
    n, B, m = 150, 400, 9
    p = feature_probabilities("power-a1.3", n)
    rows, feats, vals = SparseSampler(p, B, torch.Generator().manual_seed(1)).sample()
    x = dense_from_coo(rows, feats, vals, B, n).double()
    W, b = init_params(n, m, 0)
    b = b * 0.3  # mix of positive and negative biases
    Wd, bd = W.double().requires_grad_(), b.double().requires_grad_()
    L = torch.nn.functional.mse_loss(torch.relu(x @ Wd @ Wd.T + bd), x)
    L.backward()
    for chunk in (512, 37):  # one block and many blocks
        loss, gW, gb = loss_and_grads(W, b, Batch(rows, feats, vals, B, n, chunk_rows=chunk), path)
        assert loss == pytest.approx(L.item(), rel=1e-6)
        assert ((gW.double() - Wd.grad).norm() / Wd.grad.norm()).item() < 1e-5
        assert ((gb.double() - bd.grad).norm() / bd.grad.norm()).item() < 1e-5


def test_reference_writes_the_schedule_and_frequencies_on_its_own():
    """The reference's own writing of the paper's schedule and feature frequencies equals the trainer's,
    exactly, over laws, densities and schedules (with and without room for a warm-up)."""
    from depthwidth.superposition.reference import paper_lr, paper_probabilities
    from depthwidth.superposition.train import lr_factor

    for dist in ("power-a1.5", "power-a0", "exponential-k40", "linear", "power-a1.2-s0.5"):
        assert torch.equal(paper_probabilities(dist, 300), feature_probabilities(dist, 300)), dist
    for steps, warmup in ((400, 40), (50, 50), (30, 60), (1, 1)):
        ours = [lr_factor(s, steps, warmup, 0.05) for s in range(steps)]
        assert [paper_lr(s, steps, warmup, 0.05) for s in range(steps)] == pytest.approx(ours, rel=1e-15)


@pytest.mark.workflow  # full size: seconds of CPU, outside the quick loop
def test_trainer_matches_reference_loop():
    """Same settings, 400 steps: our final loss agrees with the paper's plain loop within noise
    (different random draws, so only statistically), for both decay signs."""
    S = TrainSettings(n=120, batch=256, steps=400, warmup_steps=40, seed=0)
    for gamma in (-1.0, 1.0):
        (ours,) = train_cells("power-a1.5", [gamma], [8], S)
        refs = [reference_train("power-a1.5", gamma, 8, S, seed_offset=k)[2] for k in range(2)]
        lo, lo_err = final_loss(ours.losses, 100)
        rl = [final_loss(r, 100) for r in refs]
        r_mean = float(np.mean([v for v, _ in rl]))
        spread = abs(rl[0][0] - rl[1][0])  # run-to-run scatter of the reference itself
        noise = 3 * math.sqrt(lo_err**2 + max(e for _, e in rl) ** 2) + 2 * spread
        assert abs(lo - r_mean) < max(noise, 0.05 * r_mean), (gamma, lo, rl)


def test_decay_rules():
    """γ < 0 pulls row norms to 1 and γ > 0 shrinks them, compared with γ = 0 on the same data."""
    S = TrainSettings(n=100, batch=256, steps=600, warmup_steps=60, seed=1)
    strong, weak, none = train_cells("power-a1.5", [-1.0, 1.0, 0.0], [6, 6, 6], S)
    ns = np.linalg.norm(strong.W, axis=1)
    nw = np.linalg.norm(weak.W, axis=1)
    n0 = np.linalg.norm(none.W, axis=1)
    # measured: median |‖W_i‖ - 1| = 0.19 (γ = -1) vs 0.48 (γ = 0); mean norm 0.16 (γ = 1) vs 0.57
    assert np.median(np.abs(ns - 1)) < 0.5 * np.median(np.abs(n0 - 1))
    assert nw.mean() < 0.5 * n0.mean() and nw.max() < 1.0 < n0.max()
    # the rule itself, without gradients: repeated decay steps drive norms 0.3 and 3 to 1
    W = torch.tensor([[0.3, 0.0], [0.0, 3.0]])
    for _ in range(2000):
        norms = torch.linalg.vector_norm(W, dim=1, keepdim=True) + 1e-8
        W = W + 0.01 * (-1.0) * W * (1 - 1 / norms)
    assert torch.linalg.vector_norm(W, dim=1).tolist() == pytest.approx([1.0, 1.0], abs=1e-3)


def test_same_seed_same_numbers_and_batching_independent():
    S = TrainSettings(n=80, batch=128, steps=50, warmup_steps=5, seed=4)
    a = train_cells("power-a1.5", [-1.0, 1.0], [5, 7], S)
    b = train_cells("power-a1.5", [1.0], [7], S)  # the same cell alone in its job
    assert np.array_equal(a[1].W, b[0].W) and np.array_equal(a[1].losses, b[0].losses)
    c = train_cells(
        "power-a1.5", [1.0], [7], TrainSettings(n=80, batch=128, steps=50, warmup_steps=5, seed=5)
    )
    assert not np.allclose(c[0].losses, b[0].losses)


def test_checkpoint_resume_gives_identical_result(tmp_path, monkeypatch):
    S = TrainSettings(n=80, batch=128, steps=60, warmup_steps=5, seed=2)
    (full,) = train_cells("power-a1.5", [-1.0], [6], S)
    ckpt = tmp_path / "ck.pt"
    real = tr._step_group
    calls = {"n": 0}

    def crash(*a, **k):
        calls["n"] += 1
        if calls["n"] > 35:
            raise KeyboardInterrupt("simulated kill")
        return real(*a, **k)

    monkeypatch.setattr(tr, "_step_group", crash)
    with pytest.raises(KeyboardInterrupt):
        train_cells("power-a1.5", [-1.0], [6], S, checkpoint=ckpt, checkpoint_every=10)
    monkeypatch.setattr(tr, "_step_group", real)
    assert torch.load(ckpt, weights_only=False)["step"] == 30
    (resumed,) = train_cells("power-a1.5", [-1.0], [6], S, checkpoint=ckpt, checkpoint_every=10)
    assert np.array_equal(resumed.W, full.W) and np.array_equal(resumed.losses, full.losses)


def test_divergence_names_the_cell_and_writes_nothing(tmp_path):
    params = {
        "batch_size": 64,
        "steps": 50,
        "warmup_steps": 1,
        "lr": 1e9,
        "min_lr_ratio": 0.05,
        "lr_width_exponent": 0.0,
        "lr_width_reference": 8,
        "lr_bias_over_m": None,
        "loss_scale": 1.0,
        "path": "auto",
    }
    model = tmp_path / "cell" / "model.safetensors"
    with pytest.raises(TrainingDiverged, match=r"gamma=-1.*power-a1\.5.*m=4.*at step \d+"):
        superposition_train(
            "power-a1.5", 40, -1.0, 4, 0, params, str(model), str(tmp_path / "cell" / "train.json")
        )
    assert not model.exists() and not (tmp_path / "cell" / "train.json").exists()


def test_grid_checks_name_the_key():
    cfg = {
        "n_features": 50,
        "widths": [10, 50],
        "weight_decays": [-1],
        "alphas": [1.5],
        "distributions": [],
        "seeds": [0],
    }
    with pytest.raises(ValueError, match=r"superposition.widths \[50\].*n_features=50"):
        cells(cfg)
    cfg["widths"] = [10]
    cfg["distributions"] = ["zipf"]
    with pytest.raises(ValueError, match="unknown feature distribution 'zipf'"):
        cells(cfg)


def test_metrics_on_known_geometries():
    rng = np.random.default_rng(0)
    m = 20
    W = rng.standard_normal((2000, m))
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    assert mean_sq_overlap(W) == pytest.approx(1 / m, rel=0.05)  # random directions: 1/m
    W[:500] *= 0.1
    assert represented_fraction(W, 0.5) == pytest.approx(0.75)
    # regular simplex: m + 1 unit vectors in R^m with all overlaps -1/m, an equiangular tight frame
    E = np.eye(m + 1) - 1.0 / (m + 1)
    U, _, _ = np.linalg.svd(E)
    S = E @ U[:, :m]
    S /= np.linalg.norm(S, axis=1, keepdims=True)
    etf = etf_closeness(S, etf_factor=(m + 1) / m)
    assert etf["etf_k"] == m + 1
    assert etf["coherence_ratio"] == pytest.approx(1.0, abs=1e-9)
    assert etf["frame_ratio"] == pytest.approx(1.0, abs=1e-9)
    assert etf_closeness(rng.standard_normal((200, m)), 2.0)["coherence_ratio"] > 1.5


def test_paper_measures_strong_fraction_and_loss_by_unlearned():
    from depthwidth.superposition.tables import paper_measures

    n, m = 1000, 10
    W = np.zeros((n, m))
    W[:, 0] = 1.2  # every feature strongly represented (‖W_i‖ > 1)
    W[100:400, 0] = 0.8  # represented, not strongly
    W[400:, 0] = 0.3  # unlearned: ‖W_i‖ ≤ 0.5
    got = paper_measures(W, "power-a1.5", 0.5)
    assert got["strong_represented_fraction"] == pytest.approx(0.1)
    i = np.arange(1, n + 1, dtype=float)
    p = i**-1.5 / (i**-1.5).sum()
    # the loss a model that outputs 0 pays on features 401..1000: E[x²] = 4/3 for x ~ U(0, 2), per element
    assert got["loss_unlearned"] == pytest.approx(4 / 3 * p[400:].sum() / n, rel=1e-12)
    assert paper_measures(np.ones((n, m)), "power-a1.5", 0.5)["loss_unlearned"] == 0.0
    # the overlap of the strongly represented rows only: features 1..100 along e0 or e1 alternately
    W[:100] = 0.0
    W[0:100:2, 0] = W[1:100:2, 1] = 1.2
    # 100 rows, 50 per direction: pairs (i ≠ j) in the same direction have overlap 1, the others 0
    assert got["strong_mean_sq_overlap"] == pytest.approx(1.0)  # all 100 along e0 before
    assert paper_measures(W, "power-a1.5", 0.5)["strong_mean_sq_overlap"] == pytest.approx(
        2 * 50 * 49 / (100 * 99)
    )


def test_power_law_fit_recovers_exponent():
    rng = np.random.default_rng(1)
    m = np.array([8, 16, 32, 64, 128] * 4, float)
    L = 3.0 * m**-0.7 * np.exp(0.05 * rng.standard_normal(m.size))
    fit = fit_power_law(m, L)
    assert fit["exponent"] == pytest.approx(0.7, abs=3 * fit["stderr"])
    assert 0.005 < fit["stderr"] < 0.05
    assert math.isnan(fit_power_law([8, 16], [1.0, 0.5])["stderr"])


@pytest.mark.workflow  # full size: seconds of CPU, outside the quick loop
def test_small_grid_shows_both_regimes():
    """n = 300, p_i ∝ i^-1.5, widths 6–48, 2000 steps: γ = -1 (strong) gives α_m ≈ 1 and γ = +0.3 (weak,
    about 0.7·m features kept) gives α_m ≈ α - 1 = 0.5. Measured: 0.965 and 0.454."""
    widths = [6, 12, 24, 48]
    S = TrainSettings(n=300, batch=512, steps=2000, warmup_steps=200, seed=0)
    res = train_cells("power-a1.5", [-1.0] * 4 + [0.3] * 4, widths * 2, S)
    loss = [final_loss(r.losses, 200)[0] for r in res]
    strong = fit_power_law(widths, loss[:4])
    weak = fit_power_law(widths, loss[4:])
    assert abs(strong["exponent"] - 1.0) < 0.15, strong
    assert abs(weak["exponent"] - 0.5) < 0.15, weak
    rep_strong = [represented_fraction(r.W) for r in res[:4]]
    rep_weak = [represented_fraction(r.W) * 300 / m for r, m in zip(res[4:], widths)]
    assert min(rep_strong) > 0.95  # strong: every feature has a row of norm ≈ 1
    assert all(0.4 < k < 1.2 for k in rep_weak), rep_weak  # weak: about m features kept


def _paper_config(*overlays: str) -> dict:
    import yaml

    from _helpers import REPO
    from depthwidth.config import deep_merge, validate_config

    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    for name in overlays:
        deep_merge(cfg, yaml.safe_load((REPO / "config" / name).read_text()))
    return validate_config(cfg)


def test_paper_large_is_the_papers_exp17_setup():
    """config/paper_large.yaml runs exp-17 as the paper's code does: loss ×100 before the backward pass,
    γ ∈ {-1, +0.1}, the last 100 steps averaged and summed over features, a minimum width per law in
    the fits (exponential m ≥ 8, power and linear m ≥ 32), a GPU per job; exp-10 keeps loss scale 1."""
    from depthwidth.rules import RuleTable, job_params
    from depthwidth.superposition import pipeline
    from depthwidth.superposition.tables import min_fit_width

    def train(cfg):
        return job_params(cfg, pipeline, "superposition_train")["train"]

    exp10 = _paper_config("paper.yaml")
    assert exp10["superposition"]["loss_scale"] == 1.0 and train(exp10)["loss_scale"] == 1.0
    cfg = _paper_config("paper.yaml", "paper_large.yaml")
    sp = cfg["superposition"]
    assert (sp["n_features"], sp["batch_size"], sp["steps"], max(sp["widths"])) == (10240, 8192, 40000, 1024)
    assert sp["weight_decays"] == [-1.0, 0.1]
    assert train(cfg)["loss_scale"] == 100.0
    large, cpu = (RuleTable(c, pipeline).resources("superposition_train") for c in (cfg, exp10))
    assert (large["gpu"], large["slurm_partition"], cpu["gpu"], "slurm_partition" in cpu) == (
        1,
        "gpu",
        0,
        False,
    )
    an = job_params(cfg, pipeline, "superposition_tables")["analysis"]
    assert an["final_window"] == 100 and an["loss_summed_over_features"] is True
    assert [min_fit_width(d, an) for d in sp["distributions"]] == [32, 8, 8, 32]  # power, exp, exp, linear


def test_loss_scale_scales_the_gradients_only():
    n, B, m = 120, 256, 6
    p = feature_probabilities("power-a1.2", n)
    x = Batch(*SparseSampler(p, B, torch.Generator().manual_seed(0)).sample(), B, n)
    W, b = init_params(n, m, 0)
    for path in ("features", "hidden"):
        l1, gW1, gb1 = loss_and_grads(W, b, x, path)
        l100, gW100, gb100 = loss_and_grads(W, b, x, path, loss_scale=100.0)
        assert l100 == pytest.approx(l1, rel=1e-12)
        assert torch.allclose(gW100, 100 * gW1, rtol=1e-5) and torch.allclose(gb100, 100 * gb1, rtol=1e-5)
    # the reference loop uses it the same way: same cell, same data, loss scale 100 vs 1 differ only
    # through Adam's ε
    S1 = TrainSettings(n=n, batch=B, steps=20, warmup_steps=2)
    S100 = TrainSettings(n=n, batch=B, steps=20, warmup_steps=2, loss_scale=100.0)
    _, _, ref1 = reference_train("power-a1.2", -1.0, m, S1)
    _, _, ref100 = reference_train("power-a1.2", -1.0, m, S100)
    assert ref1[0] == ref100[0] and np.allclose(ref1, ref100, rtol=0.05)


def test_exponents_table_per_law_min_width_and_summed_loss():
    import pandas as pd

    from depthwidth.superposition.tables import exponents_table

    ms = np.array([8, 16, 32, 64, 128])
    rows = [
        {
            "distribution": d,
            "gamma": -1.0,
            "n": 100,
            "m": m,
            "final_loss": float(m) ** -1.0 * (2.0 if m < 32 else 1.0),
            "represented_fraction": 1.0,
            "seed": 0,
        }
        for d in ("power-a1.2", "exponential-k400")
        for m in ms
    ]
    an = {
        "n_boot": 200,
        "fit_min_width": None,
        "fit_max_width": None,
        "fit_min_width_by_law": {"power": 32, "exponential": 8},
        "loss_summed_over_features": True,
    }
    ex = exponents_table(pd.DataFrame(rows), an).set_index("distribution")
    assert ex.loc["power-a1.2", "m_min"] == 32 and ex.loc["power-a1.2", "exponent"] == pytest.approx(1.0)
    assert ex.loc["exponential-k400", "m_min"] == 8 and ex.loc["exponential-k400", "exponent"] > 1.1
    # one seed: every resample over seeds is the same fit (sd 0); over widths the exponent varies
    assert (
        ex.loc["power-a1.2", "boot_sd"] == pytest.approx(0.0, abs=1e-12)
        and ex.loc["power-a1.2", "n_seeds"] == 1
    )
    assert ex.loc["exponential-k400", "wboot_sd"] > 0 and ex.loc["exponential-k400", "wboot_resamples"] == 200


def _with_torch_code(monkeypatch):
    """Make the trainer use its torch code instead of the compiled kernel (as without a compiler)."""
    from depthwidth.superposition import fused

    monkeypatch.setattr(fused, "_kernel", None)
    monkeypatch.setattr(fused, "_tried", True)


def test_fused_kernel_matches_torch_code(monkeypatch):
    """The compiled elementwise pass (features route) gives the torch code's loss and gradients up to
    float rounding, for n not a multiple of its 16 columns, and passes a NaN on to the loss."""
    from depthwidth.superposition import fused

    if fused.kernel() is None:
        pytest.skip("the kernel is not built here (no C compiler, or DEPTHWIDTH_FUSED=0)")
    n, B, m = 157, 500, 7
    p = feature_probabilities("power-a1.2", n)
    x = Batch(*SparseSampler(p, B, torch.Generator().manual_seed(5)).sample(), B, n)
    W, b = init_params(n, m, 1)
    b = b * 0.3
    ours = loss_and_grads(W, b, x, "features")
    with monkeypatch.context() as mp:
        _with_torch_code(mp)
        ref = loss_and_grads(W, b, x, "features")
    assert ours[0] == pytest.approx(ref[0], rel=1e-6)
    for g, r in zip(ours[1:], ref[1:]):
        assert ((g - r).norm() / r.norm()).item() < 1e-6
    W[3, 2] = float("nan")
    assert math.isnan(loss_and_grads(W, b, x, "features")[0])


def test_falls_back_to_torch_code_without_compiler(monkeypatch, caplog):
    """Without a C compiler the kernel is not built, one warning says so, and training gives the
    kernel's numbers up to float rounding."""
    from depthwidth.superposition import fused

    monkeypatch.delenv("DEPTHWIDTH_FUSED", raising=False)
    monkeypatch.setattr(fused, "_kernel", None)
    monkeypatch.setattr(fused, "_tried", False)
    if fused.kernel() is None:
        pytest.skip("the kernel cannot be built here (no C compiler)")
    S = TrainSettings(n=90, batch=256, steps=30, warmup_steps=3, seed=3)
    # both decay rules (gamma < 0 and >= 0) and two widths: the compiled update steps each
    with_kernel = train_cells("power-a1.5", [-1.0, 0.5, -1.0], [6, 6, 9], S)
    monkeypatch.setattr(fused, "_kernel", None)
    monkeypatch.setattr(fused, "_tried", False)
    monkeypatch.setenv("CC", "/nonexistent/cc")
    with caplog.at_level("WARNING", logger="depthwidth.superposition"):
        without = train_cells("power-a1.5", [-1.0, 0.5, -1.0], [6, 6, 9], S)
    assert fused.kernel() is None
    assert any("fused C kernel unavailable" in r.getMessage() for r in caplog.records)
    for a, k in zip(without, with_kernel):
        assert np.allclose(a.losses, k.losses, rtol=1e-4)
        assert np.allclose(a.W, k.W, rtol=1e-3, atol=1e-5)


def test_compiled_update_matches_torch_update(monkeypatch):
    """One optimiser step (gradient scale, both decay rules, Adam with bias corrections) by the compiled
    update equals the torch code's step up to float rounding, for every cell of a group."""
    from depthwidth.superposition import fused

    if fused.kernel() is None:
        pytest.skip("the kernel is not built here (no C compiler, or DEPTHWIDTH_FUSED=0)")
    n, B, m, C = 157, 500, 7, 3
    S = TrainSettings(n=n, batch=B, steps=10, warmup_steps=2)
    x = Batch(
        *SparseSampler(feature_probabilities("power-a1.2", n), B, torch.Generator().manual_seed(4)).sample(),
        B,
        n,
    )
    g = torch.Generator().manual_seed(6)
    P = {
        "Wt": torch.randn(C, m, n, generator=g) * 0.3,
        "b": torch.randn(C, n, generator=g) * 0.1,
        "mW": torch.randn(C, m, n, generator=g) * 1e-3,
        "vW": torch.rand(C, m, n, generator=g) * 1e-6,
        "mb": torch.randn(C, n, generator=g) * 1e-3,
        "vb": torch.rand(C, n, generator=g) * 1e-6,
        "gamma": torch.tensor([-1.0, 0.0, 0.7]),
    }
    Q = {k: v.clone() for k, v in P.items()}
    W0 = P["Wt"].clone()
    assert fused.update_ok(P)
    lp = tr._step_group(P, x, "features", 1e-2, 2e-2, 4, S)
    with monkeypatch.context() as mp:
        mp.setattr(fused, "update_ok", lambda P: False)
        lq = tr._step_group(Q, x, "features", 1e-2, 2e-2, 4, S)
    assert torch.allclose(lp, lq, rtol=1e-6)
    # the step itself (not just the state it started from) agrees
    assert float((P["Wt"] - W0).norm() / (Q["Wt"] - W0).norm()) == pytest.approx(1.0, abs=1e-5)
    for k in ("Wt", "b", "mW", "vW", "mb", "vb"):
        rel = float((P[k] - Q[k]).norm() / Q[k].norm())
        assert rel < 1e-6, (k, rel)
    assert float((P["Wt"] - Q["Wt"]).norm() / (Q["Wt"] - W0).norm()) < 1e-4


def test_group_call_gives_the_per_cell_products_exactly():
    """The per-group compiled call (products through torch's own BLAS) gives bit for bit the gradients
    and squared errors of the per-cell route with torch.mm, at the benchmark's shape."""
    from depthwidth.superposition import fused

    if not fused.group_ok():
        pytest.skip("the per-group call is not available here (no compiler, or torch exports no sgemm_)")
    n, B, C = 1000, 2048, 3
    x = Batch(
        *SparseSampler(feature_probabilities("power-a1.5", n), B, torch.Generator().manual_seed(0)).sample(),
        B,
        n,
    )
    g = torch.Generator().manual_seed(2)
    for m in (10, 39):
        Wt, b = torch.randn(C, m, n, generator=g) * 0.1, torch.randn(C, n, generator=g) * 0.1
        G, Gb = torch.empty(C, m, n), torch.empty(C, n)
        sq = fused.group_grads(Wt, b, x, G, Gb, Workspace())
        for c in range(C):
            loss, gW, gb = loss_and_grads_features(
                Wt[c], b[c], x, 1.0, Workspace(), (torch.empty(m, n), torch.empty(n)), scaled=False
            )
            assert torch.equal(G[c], gW) and torch.equal(Gb[c], gb)
            assert float(sq[c]) / (B * n) == loss
