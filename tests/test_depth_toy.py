"""Depth toy: teacher construction, batched training vs the paper's plain loop, resume, divergence, fits,
and the two mechanisms on a tiny grid."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from depthwidth.depth_toy import pipeline
from depthwidth.rules import job_params
from depthwidth.depth_toy.angles import angle_table, state_angles
from depthwidth.depth_toy.exponents import exponents, fit_depth_exponent
from depthwidth.depth_toy.model import ReferenceModel, StudentGroup, make_teacher, rmsnorm, teacher_forward
from depthwidth.depth_toy.train import (
    DivergenceError,
    Targets,
    TrainSettings,
    job_teachers,
    learning_rate,
    settings_for,
    student_losses,
    train_students,
)

torch.set_num_threads(1)
REPO = Path(__file__).resolve().parents[1]


def test_tied_teacher_shares_weights_and_independent_does_not():
    tied = make_teacher("tied", seed=3, depth=16)
    ind = make_teacher("independent", seed=3, depth=16)
    for name in ("fc_w", "fc_b", "proj_w"):
        t, i = getattr(tied, name), getattr(ind, name)
        # one storage: every block of the tied teacher is the same memory as block 0
        assert t.stride(0) == 0
        assert all(t[k].data_ptr() == t[0].data_ptr() for k in range(16))
        assert torch.equal(t[0], i[0])  # same seed: the tied teacher repeats the independent one's block 0
        assert (i[1:] - i[:1]).abs().max().item() > 1e-3
    # the paper's scaling: output projections ~ U(±1/√128)/√depth
    assert ind.proj_w.abs().max().item() <= 1 / math.sqrt(128) / math.sqrt(16) + 1e-7
    assert ind.proj_w.abs().max().item() > 0.8 / math.sqrt(128) / math.sqrt(16)


def test_zero_initialised_students_start_at_uniform_prediction_loss():
    teacher = make_teacher("independent", seed=0, depth=8)
    x = torch.randn(256, 32, generator=torch.Generator().manual_seed(1))
    temps = torch.tensor([0.05, 1.0]).view(2, 1, 1)
    settings = TrainSettings(variant="learned_head", depths=[3], temperatures=[0.05, 1.0], steps=1)
    group = StudentGroup(2, 3, learned_head=True)
    targets = Targets(teacher, x, settings, temps)
    loss = student_losses(group, x, targets, settings, temps)
    # KL(p ‖ uniform) = log V − H(p), computed here without the student
    log_p = targets.log_probs
    expected = math.log(128) + (log_p.exp() * log_p).sum(-1).mean(-1)
    torch.testing.assert_close(loss, expected, rtol=1e-5, atol=1e-6)
    assert loss[0] > loss[1] > 0  # a colder teacher is further from uniform

    # MSE variant: zero output projections make the student the identity, out = rmsnorm(x)
    ms = TrainSettings(variant="mse", depths=[3], temperatures=[], steps=1)
    g1 = StudentGroup(1, 3)
    t1 = Targets(teacher, x, ms, None)
    mse = student_losses(g1, x, t1, ms, None)
    ref = (rmsnorm(x) - teacher_forward(teacher, x)).square().mean()
    torch.testing.assert_close(mse[0], ref, rtol=1e-6, atol=1e-8)


def test_batched_training_matches_the_papers_plain_loop():
    """Two students trained together (shared teacher, stacked weights) follow exactly the trajectories of the
    same students trained one by one with nn.Linear modules, F.kl_div and their own Adam."""
    teacher = make_teacher("tied", seed=2, depth=12)
    settings = TrainSettings(
        variant="learned_head",
        depths=[3],
        temperatures=[0.1, 1.0],
        steps=6,
        batch_size=64,
        lr=3e-3,
        test_batches=1,
        seed=5,
    )
    group = StudentGroup(2, 3, learned_head=True, seed=settings.seed * 1000)
    with torch.no_grad():  # a non-zero head so that every parameter gets a gradient from step 1
        group.head.normal_(0, 0.1, generator=torch.Generator().manual_seed(0))
    refs = [ReferenceModel.from_student(group, s) for s in range(2)]
    t_ref = ReferenceModel.from_teacher(teacher)
    data = torch.Generator().manual_seed(settings.seed * 7919 + 17)
    xs = [torch.randn(64, 32, generator=data) for _ in range(settings.steps)]
    ref_losses = []
    for model, temp in zip(refs, settings.temperatures):
        opt = torch.optim.Adam(model.parameters(), lr=settings.lr)
        ls = []
        for x in xs:
            with torch.no_grad():
                t_logp = F.log_softmax(t_ref(x) / temp, dim=-1)
            loss = F.kl_div(F.log_softmax(model(x), -1), t_logp, reduction="batchmean", log_target=True)
            opt.zero_grad()
            loss.backward()
            opt.step()
            ls.append(loss.item())
        ref_losses.append(ls)

    import depthwidth.depth_toy.train as tr

    orig = tr.StudentGroup
    tr.StudentGroup = lambda *a, **k: group  # train exactly this (pre-initialised) group
    try:
        recs = train_students(teacher, settings)
    finally:
        tr.StudentGroup = orig
    for s in range(2):
        got = [v for _, v in recs[s]["train_curve"]]
        np.testing.assert_allclose(got, ref_losses[s], rtol=2e-5)
        st = group.student_state(s)
        np.testing.assert_allclose(st["head"].T.numpy(), refs[s].head.weight.detach().numpy(), atol=1e-6)
        np.testing.assert_allclose(
            st["fc_w"][2].T.numpy(), refs[s].layers[2].c_fc.weight.detach().numpy(), atol=1e-6
        )


class _Killed(Exception):
    pass


def test_training_resumes_from_checkpoint_bit_identically(tmp_path, monkeypatch):
    teacher = make_teacher("independent", seed=1, depth=8)
    kw = dict(
        variant="mse",
        depths=[2, 3],
        temperatures=[],
        steps=24,
        batch_size=32,
        test_batches=1,
        checkpoint_every=5,
        lr_depth_factor=2.0,
        schedule="flat_then_linear",
        seed=4,
    )
    straight = train_students(teacher, TrainSettings(**kw))
    ckpt = tmp_path / "ckpt.pt"

    import depthwidth.depth_toy.train as tr

    calls = {"n": 0}
    real_update = tr.Progress.update

    def dying_update(self, n=1, **extra):
        calls["n"] += 1
        if calls["n"] == 13:  # the job is killed after step 13: the last checkpoint is at step 10
            raise _Killed
        return real_update(self, n, **extra)

    monkeypatch.setattr(tr.Progress, "update", dying_update)
    with pytest.raises(_Killed):
        train_students(teacher, TrainSettings(**kw), checkpoint=ckpt)
    assert torch.load(ckpt, weights_only=False)["step"] == 10
    monkeypatch.setattr(tr.Progress, "update", real_update)
    resumed = train_students(teacher, TrainSettings(**kw), checkpoint=ckpt)
    for a, b in zip(straight, resumed):
        assert a["test_loss"] == b["test_loss"]
        assert a["train_curve"] == b["train_curve"]
    # other settings: the checkpoint is not resumed (training restarts from step 0)
    other = train_students(teacher, TrainSettings(**{**kw, "lr": 1e-3}), checkpoint=ckpt)
    assert other[0]["test_loss"] != straight[0]["test_loss"]


def test_divergence_names_the_run_and_step(tmp_path):
    teacher = make_teacher("tied", seed=0, depth=4)
    teacher.shared_head[0, 0] = float("nan")  # a broken target: the loss is NaN at the first step
    settings = TrainSettings(
        variant="shared_head",
        depths=[2],
        temperatures=[0.5],
        steps=5,
        batch_size=16,
        test_batches=1,
        checkpoint_every=1,
        labels={"kind": "tied", "rep": 0},
    )
    with pytest.raises(
        DivergenceError, match=r"kind=tied rep=0 variant=shared_head T=0\.5 depth=2\].*step 1"
    ):
        train_students(teacher, settings, checkpoint=tmp_path / "c.pt")
    assert not (tmp_path / "c.pt").exists()  # nothing was saved from a diverged state


def test_learning_rate_schedule_matches_the_paper():
    assert learning_rate(0, 100, 1.0, "flat_then_linear") == 1.0
    assert learning_rate(79, 100, 1.0, "flat_then_linear") == 1.0
    assert learning_rate(90, 100, 1.0, "flat_then_linear") == pytest.approx(0.55)
    assert learning_rate(100, 100, 1.0, "flat_then_linear") == pytest.approx(0.1)
    assert learning_rate(99, 100, 1.0, "constant") == 1.0


def test_power_law_fit_recovers_a_known_exponent():
    rng = np.random.default_rng(0)
    d = np.repeat([4, 8, 16, 32, 64], 3)
    loss = 2.0 * d**-1.3 * np.exp(rng.normal(0, 0.05, d.size))
    fit = fit_depth_exponent(d, loss)
    assert abs(fit["alpha"] - 1.3) < 3 * fit["alpha_se"]
    assert 0.005 < fit["alpha_se"] < 0.05
    with pytest.raises(ValueError, match="positive"):
        fit_depth_exponent([1, 2], [0.1, 0.0])


def test_angles_of_tied_and_independent_teachers():
    x = torch.randn(512, 32, generator=torch.Generator().manual_seed(0))
    res = {}
    for kind in ("independent", "tied"):
        _, states = teacher_forward(make_teacher(kind, seed=0, depth=128), x, hidden=True)
        theta, theta_dh = state_angles(states)
        res[kind] = (theta.mean(), theta_dh.mean())
    # random walk: successive updates nearly orthogonal; smooth dynamics: nearly parallel
    assert 80 < res["independent"][1] < 100
    assert res["tied"][1] < 30
    assert res["tied"][1] < res["independent"][1] - 50


@pytest.mark.workflow  # full size: seconds of CPU, outside the quick loop
def test_tiny_grid_separates_the_mechanisms():
    """On a tiny grid the independent-teacher exponent is positive and the tied teacher's consecutive
    updates are more aligned than the independent teacher's, in teachers and trained students alike."""
    frames, runs = [], []
    for kind in ("independent", "tied"):
        teacher = make_teacher(kind, seed=0, depth=16)
        settings = TrainSettings(
            variant="mse",
            depths=[1, 2, 4, 8],
            temperatures=[],
            steps=100,
            batch_size=64,
            test_batches=2,
            lr_depth_factor=8.0,
            schedule="flat_then_linear",
            seed=1,
        )
        recs = train_students(teacher, settings)
        runs += [
            {
                "kind": kind,
                "variant": "mse",
                "temperature": np.nan,
                "replicate": 0,
                **{k: r[k] for k in ("depth", "steps", "final_train_loss", "test_loss")},
            }
            for r in recs
        ]
        frames.append(angle_table(teacher, recs, {"kind": kind, "variant": "mse", "replicate": 0}, 128))
    import pandas as pd

    ex = exponents(pd.DataFrame(runs)).set_index("kind")
    a, se = ex.loc["independent", "alpha"], ex.loc["independent", "alpha_se"]
    assert a > 0.2 and a - 3 * se > 0, (a, se)  # measured: 0.37 ± 0.005
    angles = pd.concat(frames)
    upd = angles.groupby(["model", "kind"])["angle_update_deg"].mean()
    assert upd["teacher", "tied"] < upd["teacher", "independent"] - 30
    assert upd["student", "tied"] < upd["student", "independent"]


def test_config_errors_name_the_key():
    cfg = {
        "variants": {"learned_head": {"depths": [2, 4], "steps": 3}},
        "headline_variant": "learned_head",
        "kinds": ["tied"],
    }
    with pytest.raises(
        pipeline.DepthToyConfigError, match=r"depth_toy\.variants\.learned_head\.temperatures"
    ):
        pipeline.check({"depth_toy": cfg})
    cfg["variants"]["learned_head"]["temperatures"] = [0.1]
    cfg["headline_variant"] = "mse"
    with pytest.raises(pipeline.DepthToyConfigError, match=r"depth_toy\.headline_variant"):
        pipeline.check({"depth_toy": cfg})


def test_student_mlp_backward_is_the_exact_gradient():
    """The hand-written backward of the batched student MLP equals finite differences (float64) and its
    forward equals the plain block update."""
    from depthwidth.depth_toy.model import _StudentMLP, mlp

    g = torch.Generator().manual_seed(0)
    S, B, D, H = 3, 17, 8, 32
    args = [
        torch.randn(*shape, generator=g, dtype=torch.float64).requires_grad_()
        for shape in ((S, B, D), (S, D, H), (S, 1, H), (S, H, D))
    ]
    assert torch.autograd.gradcheck(_StudentMLP.apply, args)
    assert torch.allclose(_StudentMLP.apply(*args), mlp(*args), rtol=1e-12, atol=1e-12)


def _depth_toy_config(*overlays: str) -> dict:
    """The validated depth_toy section of config.yaml with ``overlays`` (paths in the repo) laid over it."""
    import yaml

    from depthwidth.config import deep_merge, validate_config

    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    for o in overlays:
        deep_merge(cfg, yaml.safe_load((REPO / o).read_text()))
    return validate_config(cfg)["depth_toy"]


def test_paper_mse_variants_and_their_teacher_depth_reach_the_job():
    """exp-9-2, 9-5 and 9-6 are variants of the paper config, and each job's teacher is built from the rule
    params with the variant's depth: 24 blocks with c_proj ~ U(±1/√128)/√24 for exp-9-5."""
    cfg = _depth_toy_config("config/paper.yaml")
    assert cfg["teacher_per_task"] is True
    expect = {"mse_40k": (40000, 128), "mse_teacher24": (40000, 24), "mse": (80000, 128)}  # exp-9-2, 9-5, 9-6
    for variant, (steps, teacher_depth) in expect.items():
        params = pipeline.train_params({"depth_toy": cfg}, {}, variant)
        assert (params["setup"], params["steps"], params["teacher_depth"]) == ("mse", steps, teacher_depth)
        assert (params["lr"], params["lr_depth_factor"], params["schedule"]) == (6e-4, 2, "flat_then_linear")
        assert pipeline.variant_kinds(cfg, variant) == ["independent", "tied"] and cfg["replicates"] == 3
        speed = job_params({"depth_toy": cfg}, pipeline, "depth_toy_train", variant=variant)["speed"]
        settings = settings_for({**params, **speed}, "tied", 0)
        assert settings.setup == "mse" and settings.temperatures == [None]
        for kind in ("independent", "tied"):
            (teacher,) = job_teachers(params, kind, 0)
            assert teacher.depth == teacher_depth and teacher.proj_w.shape[0] == teacher_depth
            bound = 1 / math.sqrt(4 * 32) / math.sqrt(teacher_depth)  # nn.Linear init, then c_proj / √depth
            assert 0.9 * bound < teacher.proj_w.abs().max().item() <= bound + 1e-7
    # the estimate of a 24-block teacher's job is below the 128-block one's at the same steps
    config = {"depth_toy": cfg}
    assert pipeline.estimate_minutes(config, {}, "mse_teacher24") < pipeline.estimate_minutes(
        config, {}, "mse_40k"
    )


def test_teacher_per_task_gives_each_temperature_its_own_teacher():
    """With teacher_per_task two temperatures of one job learn from different teachers (and tied and
    independent teachers are unrelated draws); without it they share one, the tied teacher repeating the
    independent one's block 0. Training and angles work with one teacher per row."""
    cfg = _depth_toy_config("config/test.yaml")
    shared = pipeline.train_params({"depth_toy": cfg}, {}, "learned_head")
    per_task = pipeline.train_params({"depth_toy": {**cfg, "teacher_per_task": True}}, {}, "learned_head")
    assert shared["temperatures"] == per_task["temperatures"] == [0.1, 1.0]
    a, b = job_teachers(shared, "tied", 0)
    assert a is b
    c, d = job_teachers(per_task, "tied", 0)
    assert not torch.equal(c.fc_w[0], d.fc_w[0]) and not torch.equal(c.head, d.head)
    assert torch.equal(job_teachers(per_task, "tied", 0)[1].fc_w, d.fc_w)  # seeded: the same on every call
    mse_shared = pipeline.train_params({"depth_toy": cfg}, {}, "mse")
    mse_task = pipeline.train_params({"depth_toy": {**cfg, "teacher_per_task": True}}, {}, "mse")
    assert torch.equal(
        job_teachers(mse_shared, "tied", 0)[0].fc_w[0], job_teachers(mse_shared, "independent", 0)[0].fc_w[0]
    )
    assert not torch.equal(
        job_teachers(mse_task, "tied", 0)[0].fc_w[0], job_teachers(mse_task, "independent", 0)[0].fc_w[0]
    )

    # one teacher per row: each row's targets come from its own teacher
    for variant in ("learned_head", "shared_head"):
        settings = TrainSettings(
            variant=variant,
            depths=[2],
            temperatures=[0.1, 1.0],
            steps=3,
            batch_size=32,
            test_batches=1,
            lr_depth_factor=None,
        )
        x = torch.randn(32, 32, generator=torch.Generator().manual_seed(0))
        temps = torch.tensor([0.1, 1.0]).view(2, 1, 1)
        two = Targets([c, d], x, settings, temps)
        assert two.states.shape == (2, 32, 32) and two.log_probs.shape == (2, 32, 128)
        torch.testing.assert_close(two.log_probs[1], Targets(d, x, settings, temps).log_probs[1])
        recs = train_students([c, d], settings)
        assert len(recs) == 2 and all(np.isfinite(r["test_loss"]) for r in recs)
    angles = angle_table([c, d], recs, {"kind": "tied", "variant": "shared_head", "replicate": 0}, 16)
    assert sorted(angles.loc[angles.model == "teacher", "temperature"].unique()) == [0.1, 1.0]


def test_a_variant_not_named_after_a_setup_must_name_one():
    cfg = _depth_toy_config("config/test.yaml")
    cfg["variants"]["mse_short"] = {"depths": [2, 4], "steps": 5}
    with pytest.raises(pipeline.DepthToyConfigError, match=r"depth_toy\.variants\.mse_short\.setup"):
        pipeline.check({"depth_toy": cfg})
    cfg["variants"]["mse_short"]["setup"] = "mse"
    pipeline.check({"depth_toy": cfg})
    assert (
        pipeline.student_files({"depth_toy": cfg}, "mse_short", "tied", 0)[0]
        == "results/depth_toy/runs/tied/mse_short/rep0/Tnone/depth2.json"
    )
