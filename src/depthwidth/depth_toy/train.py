"""Training the students of one job: batched, resumable, and checked for divergence.

One call of :func:`train_students` trains every student of one (teacher kind, variant, replicate) job: all
temperatures x all depths. Each step draws one fresh batch x (B, D), runs the teacher once (once per
temperature with ``teacher_per_task``: one teacher per temperature row), and every student sees that same
batch, which changes no student's statistics (each still gets a fresh N(0, I) batch every step). Students
of the same depth are one :class:`StudentGroup` (batched matmuls); groups step one after another so that
only one group's activations are alive at a time.

Setups (``variants.VARIANTS``; the paper's experiments, github liuyz0/DepthScaling exp/):
- ``learned_head`` (exp-9 with independent, exp-9-1 with tied teachers): student learns a zero-initialised
  head; teacher logits / T; KL loss.
- ``shared_head`` (exp-9-3): teacher and student read out through one fixed random head, both / T; KL.
- ``mse`` (exp-9-2, 9-5, 9-6): no head; MSE between the final normalised states.
- ``rk2_mse`` (exp-9-4): as ``mse`` with a midpoint-rule (RK2) student.

:func:`depth_toy_train` is the rule's call: params -> teacher(s) and settings -> training -> files.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from depthwidth.depth_toy import fused, variants
from depthwidth.depth_toy.angles import angle_table
from depthwidth.depth_toy.model import StudentGroup, Teacher, make_teacher, teacher_forward
from depthwidth.depth_toy.variants import VARIANTS, temp_label
from depthwidth.integrity import load_checkpoint, save_checkpoint, unseal, write_json, write_table
from depthwidth.logs import Progress

log = logging.getLogger("depthwidth.depth_toy")


class DivergenceError(RuntimeError):
    """A student's loss became NaN or infinite; the message names the run and the step."""


@dataclass
class TrainSettings:
    """Everything that defines one training job besides the teacher.

    ``temperatures``: the T of each student row (KL variants); ``[None]`` for MSE variants.
    ``setup``: the key of ``variants.VARIANTS`` this variant trains (None: the variant's own name).
    ``lr_depth_factor``: None for a constant ``lr`` (exp-9-1); else lr · factor / √depth (exp-9-2..6).
    ``schedule``: "constant" or "flat_then_linear" (flat until ``decay_start`` · steps, then linear down
    to ``final_lr_fraction`` · lr at the last step, as the paper's get_lr).
    """

    variant: str
    depths: list[int]
    temperatures: list[float | None]
    steps: int
    lr: float = 6e-4
    lr_depth_factor: float | None = None
    schedule: str = "constant"
    decay_start: float = 0.8
    final_lr_fraction: float = 0.1
    batch_size: int = 1024
    test_batches: int = 10
    eval_every: int = 0
    checkpoint_every: int = 0
    seed: int = 0
    width: int = 32
    vocab: int = 128
    labels: dict = field(default_factory=dict)
    setup: str | None = None

    def __post_init__(self):
        if self.setup is None:
            self.setup = self.variant
        if self.setup not in VARIANTS:
            raise ValueError(
                f"depth_toy setup {self.setup!r} (variant {self.variant!r}) unknown; use one of "
                f"{sorted(VARIANTS)}"
            )
        if VARIANTS[self.setup]["loss"] == "mse":
            self.temperatures = [None]
        elif not self.temperatures or any(t is None or t <= 0 for t in self.temperatures):
            raise ValueError(f"variant {self.variant!r} needs positive temperatures, got {self.temperatures}")
        if self.schedule not in ("constant", "flat_then_linear"):
            raise ValueError(f"schedule {self.schedule!r} unknown; use 'constant' or 'flat_then_linear'")

    def fingerprint(self) -> str:
        """Hash of the settings that change training (a checkpoint of other settings is not resumed)."""
        keep = {k: v for k, v in asdict(self).items() if k not in ("checkpoint_every", "labels")}
        return hashlib.sha256(json.dumps(keep, sort_keys=True, default=str).encode()).hexdigest()[:16]


def learning_rate(
    step: int, total: int, base: float, schedule: str, decay_start: float = 0.8, final_fraction: float = 0.1
) -> float:
    """The paper's schedule: ``base`` until decay_start·total, then linear to final_fraction·base."""
    if schedule == "constant" or step < total * decay_start:
        return base
    tail = total * (1 - decay_start)
    return base * (total - step) / tail * (1 - final_fraction) + base * final_fraction


def adam_kernel() -> dict:
    """torch.optim.Adam's fused kernel where this torch has it on the CPU (2.4 and later): one pass per
    parameter instead of the multi-tensor path's dozen (7.5 % of a default step); the same update up to
    float rounding. Older torch: the multi-tensor (foreach) path."""
    return {"fused": True} if torch.__version__ >= (2, 4) else {"foreach": True}


def base_lr(settings: TrainSettings, depth: int) -> float:
    if settings.lr_depth_factor is None:
        return settings.lr
    return settings.lr * settings.lr_depth_factor / math.sqrt(depth)


def _row_teachers(teacher: Teacher | list[Teacher], n_rows: int) -> list[Teacher]:
    """One teacher per student row: ``teacher`` repeated, or a list of one per row (``teacher_per_task``)."""
    teachers = [teacher] * n_rows if isinstance(teacher, Teacher) else list(teacher)
    if len(teachers) != n_rows:
        raise ValueError(
            f"{len(teachers)} teachers for {n_rows} student rows (temperatures); give one or one per row"
        )
    return teachers


class Targets:
    """What the students of one step are compared with, computed once per batch for all students.

    ``teacher``: one teacher for every student row, or a list of one per row (S). ``log_probs`` (S, B, V):
    each row's teacher log-probabilities at its temperature (KL); ``states``: the teacher's final
    normalised state (MSE), (B, D) for one teacher, (S, B, D) for one per row; ``readout``: the fixed head
    of the shared-head setup, (D, V) or (S, D, V)."""

    def __init__(
        self,
        teacher: Teacher | list[Teacher],
        x: torch.Tensor,
        settings: TrainSettings,
        temps: torch.Tensor | None,
    ):
        teachers = _row_teachers(teacher, len(settings.temperatures))
        one = all(t is teachers[0] for t in teachers)
        if one:
            self.states = teacher_forward(teachers[0], x)
        else:
            self.states = torch.stack([teacher_forward(t, x) for t in teachers])
        self.log_probs = self.readout = None
        head = VARIANTS[settings.setup]["head"]
        if head is not None:
            name = "head" if head == "learned" else "shared_head"
            w = getattr(teachers[0], name) if one else torch.stack([getattr(t, name) for t in teachers])
            logits = self.states @ w  # (B, V), or (S, B, V) with one teacher per row
            self.log_probs = F.log_softmax(
                (logits.unsqueeze(0) if one else logits) / temps, dim=-1
            )  # (S, B, V)
            self.readout = w if head == "shared" else None


def student_losses(
    group: StudentGroup,
    x: torch.Tensor,
    targets: Targets,
    settings: TrainSettings,
    temps: torch.Tensor | None,
) -> torch.Tensor:
    """Per-student loss (S,) on batch x (B, D): KL(teacher ‖ student) in nats per sample, or the MSE of
    the final normalised states (mean over batch and width)."""
    out = group(x)  # (S, B, D)
    head = VARIANTS[settings.setup]["head"]
    if head is None:
        return (out - targets.states).square().mean(dim=(-2, -1))
    if head == "learned":
        logits = torch.bmm(out, group.head)  # the paper divides only the teacher by T here
    else:
        logits = (out @ targets.readout) / temps
    log_q = F.log_softmax(logits, dim=-1)
    log_p = targets.log_probs
    # KL(p ‖ q) summed over the vocabulary, mean over the batch (F.kl_div's 'batchmean').
    return (log_p.exp() * (log_p - log_q)).sum(-1).mean(-1)


def _step_lr(settings: TrainSettings, step: int, depth: int) -> float:
    return learning_rate(
        step,
        settings.steps,
        base_lr(settings, depth),
        settings.schedule,
        settings.decay_start,
        settings.final_lr_fraction,
    )


def _fused_students(groups, opts, teachers, settings: TrainSettings, device, threads: int):
    """The kernel trainer of these students (``fused.FusedStudents``), or None (logged: why the torch code
    trains them)."""
    why = fused.unserved(VARIANTS[settings.setup], device, opts)
    if not why and fused.kernel() is None:
        why = "it did not build here (see the line above)"
    if why:
        log.info("depth_toy %s: trained by the torch code, not the fused kernel: %s", settings.variant, why)
        return None
    torch.set_num_threads(1)  # the BLAS inside the kernel: one thread per student (see FusedStudents)
    log.info("depth_toy %s: trained by the fused C kernel on %d thread(s)", settings.variant, threads)
    return fused.FusedStudents(groups, opts, teachers[0], settings.batch_size, settings.width, threads)


def _describe(settings: TrainSettings, depth: int, temp) -> str:
    lab = " ".join(f"{k}={v}" for k, v in settings.labels.items())
    t = "" if temp is None else f" T={temp:.4g}"
    return f"depth_toy run [{lab} variant={settings.variant}{t} depth={depth}]".replace("[ ", "[")


def _teachers_fingerprint(teachers: list[Teacher]) -> str:
    """A short hash of which teacher each row learns from (a checkpoint made with other teachers is not
    resumed)."""
    ids: dict[int, int] = {}
    desc = [
        [ids.setdefault(id(t), len(ids)), t.kind, t.depth, float(t.fc_w[0].sum()), float(t.proj_w[-1].sum())]
        for t in teachers
    ]
    return hashlib.sha256(json.dumps(desc).encode()).hexdigest()[:8]


def _to_device(teachers: list[Teacher], dev) -> list[Teacher]:
    """Move each distinct teacher once, keeping a repeated teacher one object (Targets runs it once)."""
    moved: dict[int, Teacher] = {}
    for t in teachers:
        if id(t) not in moved:
            moved[id(t)] = t.to(dev)
    return [moved[id(t)] for t in teachers]


def train_students(
    teacher: Teacher | list[Teacher],
    settings: TrainSettings,
    checkpoint: str | Path | None = None,
    device: str = "cpu",
    progress_every_s: float = 30.0,
    fingerprint: dict | None = None,
    threads: int | None = None,
) -> list[dict]:
    """Train every (temperature, depth) student of one job and return one record per student. ``teacher``: one
    teacher for every temperature, or a list of one per temperature (``teacher_per_task``). Records hold
    ``temperature`` (None for MSE), ``depth``, ``steps``, ``final_train_loss`` (mean of the last 2 % of
    steps), ``test_loss`` (mean over ``test_batches`` fresh batches), ``test_curve`` [(step, loss)],
    ``train_curve`` [(step, mean loss over the window)], ``group``/``row`` (where the student lives in the
    returned ``groups``). The trained :class:`StudentGroup` s are returned in ``records[i]["_group"]``.

    With ``checkpoint`` and ``settings.checkpoint_every`` > 0, state is saved atomically and sealed
    (``depthwidth.integrity``) every that many steps, and a restarted call with the same settings, teachers
    and ``fingerprint`` (what else determines the job: its rule params) resumes from it (bit-identical
    continuation). A damaged, incomplete or foreign checkpoint is logged, moved aside, and training starts
    from step 0.
    Raises :class:`DivergenceError` naming the student and step when a loss is not finite.

    Trainer: the ``mse`` setup on the CPU runs on the compiled kernel (``fused.FusedStudents``; its
    students on up to ``threads`` threads, default torch's thread count) where it builds; other setups,
    and any setup where it does not build, on the torch code (one log line says which and why).
    ``DEPTHWIDTH_FUSED=0`` selects the torch code."""
    threads_before = torch.get_num_threads()
    threads = threads_before if threads is None else int(threads)
    # Softmax of low-temperature logits and Adam's second moments produce subnormal floats, which
    # x86 CPUs handle ~10-100x slower; flushing them to zero changes losses by < 1e-37.
    torch.set_flush_denormal(True)
    variant = VARIANTS[settings.setup]
    S, steps = len(settings.temperatures), settings.steps
    dev = torch.device(device)
    teachers = _to_device(_row_teachers(teacher, S), dev)
    temps = None
    if variant["loss"] == "kl":
        temps = torch.tensor(settings.temperatures, dtype=torch.float32, device=dev).view(S, 1, 1)
    groups, opts = [], []
    for gi, depth in enumerate(settings.depths):
        g = StudentGroup(
            S,
            depth,
            settings.width,
            settings.vocab,
            block=variant["block"],
            learned_head=variant["head"] == "learned",
            seed=settings.seed * 1000 + gi,
        ).to(dev)
        groups.append(g)
        opts.append(torch.optim.Adam(g.parameters(), lr=base_lr(settings, depth), **adam_kernel()))
    data_gen = torch.Generator(device="cpu").manual_seed(settings.seed * 7919 + 17)
    train_loss = np.zeros((len(groups), S, steps), dtype=np.float32)
    test_curve: list[list[tuple[int, float]]] = [[[] for _ in range(S)] for _ in groups]
    start = 0

    ckpt = Path(checkpoint) if checkpoint else None
    # The seal of the checkpoint holds this fingerprint: a checkpoint of other settings, seeds, teachers or
    # job (``fingerprint``: the rule's params, kind, replicate), or a damaged one, is moved aside, never resumed.
    fp = {
        "settings": settings.fingerprint(),
        "labels": settings.labels,
        "teachers": _teachers_fingerprint(teachers),
        "job": fingerprint,
    }
    state = load_checkpoint(ckpt, fp, map_location=dev, weights_only=False) if ckpt is not None else None
    if state is not None:
        for g, o, gs, os_ in zip(groups, opts, state["groups"], state["opts"]):
            g.load_state_dict(gs)
            o.load_state_dict(os_)
        data_gen.set_state(state["data_gen"])
        start = state["step"]
        train_loss[:, :, :start] = state["train_loss"][:, :, :start]
        test_curve = state["test_curve"]
        log.info("resumed from %s at step %d/%d", ckpt, start, steps)

    # Test inputs are fixed per job (every student is scored on the same batches); teacher targets cached.
    test_gen = torch.Generator(device="cpu").manual_seed(settings.seed * 7919 + 23)
    test_x = [
        torch.randn(settings.batch_size, settings.width, generator=test_gen).to(dev)
        for _ in range(settings.test_batches)
    ]
    with torch.no_grad():
        test_targets = [Targets(teachers, x, settings, temps) for x in test_x]

    def evaluate(g: StudentGroup) -> np.ndarray:
        with torch.no_grad():
            tot = sum(student_losses(g, x, t, settings, temps) for x, t in zip(test_x, test_targets))
        return (tot / len(test_x)).cpu().numpy()

    what = " ".join(
        ["depth_toy", *(f"{k}={v}" for k, v in settings.labels.items()), settings.variant, "steps"]
    )
    fast = _fused_students(groups, opts, teachers, settings, device, threads)
    progress = Progress(steps - start, what, every_s=progress_every_s, logger=log)
    t0 = time.monotonic()
    for step in range(start, steps):
        x = torch.randn(settings.batch_size, settings.width, generator=data_gen).to(dev)
        if fast is not None:
            lrs = [_step_lr(settings, step, g.depth) for g in groups]
            for gi, v in enumerate(fast.step(x, lrs)):
                train_loss[gi, 0, step] = v
                if not math.isfinite(v):
                    raise DivergenceError(
                        f"{_describe(settings, groups[gi].depth, None)} diverged at step {step + 1}: "
                        f"training loss {v}. No outputs were written; lower depth_toy lr for this variant and "
                        "rerun."
                    )
            targets = None
        else:
            targets = Targets(teachers, x, settings, temps)
        for gi, (g, o) in enumerate(zip(groups, opts) if fast is None else ()):
            lr = learning_rate(
                step,
                steps,
                base_lr(settings, g.depth),
                settings.schedule,
                settings.decay_start,
                settings.final_lr_fraction,
            )
            for pg in o.param_groups:
                pg["lr"] = lr
            losses = student_losses(g, x, targets, settings, temps)
            o.zero_grad(set_to_none=True)
            losses.sum().backward()  # students are independent: the sum's gradient is each one's own
            o.step()
            vals = losses.detach().cpu().numpy()
            if not np.isfinite(vals).all():
                bad = int(np.flatnonzero(~np.isfinite(vals))[0])
                raise DivergenceError(
                    f"{_describe(settings, g.depth, settings.temperatures[bad])} diverged at step {step + 1}: "
                    f"training loss {vals[bad]}. No outputs were written; lower depth_toy lr for this "
                    "variant (or raise the temperature) and rerun."
                )
            train_loss[gi, :, step] = vals
        done = step + 1
        if settings.eval_every and done % settings.eval_every == 0 and done < steps:
            for gi, g in enumerate(groups):
                for s, v in enumerate(evaluate(g)):
                    test_curve[gi][s].append((done, float(v)))
        if (
            ckpt is not None
            and settings.checkpoint_every
            and done % settings.checkpoint_every == 0
            and done < steps
        ):
            if fast is not None:
                fast.sync()
            # atomic, then sealed: a kill while writing leaves the previous checkpoint and its seal, or (killed
            # between the two) a checkpoint that fails its seal, which a rerun moves aside (starting at step 0)
            save_checkpoint(
                {
                    "step": done,
                    "groups": [g.state_dict() for g in groups],
                    "opts": [o.state_dict() for o in opts],
                    "data_gen": data_gen.get_state(),
                    "train_loss": train_loss[:, :, :done],
                    "test_curve": test_curve,
                },
                ckpt,
                fp,
            )
        progress.update(1, loss=float(train_loss[:, :, step].mean()))

    if fast is not None:
        fast.close()
        torch.set_num_threads(threads_before)
    window = max(1, steps // 50)
    records = []
    for gi, g in enumerate(groups):
        final = evaluate(g)
        for s, temp in enumerate(settings.temperatures):
            test_curve[gi][s].append((steps, float(final[s])))
            tl = train_loss[gi, s]
            edges = np.linspace(0, steps, min(steps, 200) + 1).astype(int)
            curve = [(int(b), float(tl[a:b].mean())) for a, b in zip(edges[:-1], edges[1:]) if b > a]
            records.append(
                {
                    "temperature": None if temp is None else float(temp),
                    "depth": g.depth,
                    "steps": steps,
                    "final_train_loss": float(tl[steps - window :].mean()),
                    "test_loss": float(final[s]),
                    "test_curve": test_curve[gi][s],
                    "train_curve": curve,
                    "group": gi,
                    "row": s,
                    "_group": g,
                }
            )
    log.info("trained %d students in %.1fs (%d steps)", len(records), time.monotonic() - t0, steps - start)
    return records


def settings_for(params: dict, kind: str, rep: int) -> TrainSettings:
    """The :class:`TrainSettings` of one job from its rule params (``pipeline.train_params``, plus the
    speed knobs of its ``speed`` params, ``pipeline.SPEED_KEYS``)."""
    keys = (
        "variant",
        "setup",
        "depths",
        "temperatures",
        "steps",
        "lr",
        "lr_depth_factor",
        "schedule",
        "batch_size",
        "test_batches",
        "eval_every",
        "checkpoint_every",
        "width",
        "vocab",
    )
    return TrainSettings(
        **{k: params[k] for k in keys},
        seed=variants.job_seed(params["seed"], kind, params["variant"], rep),
        labels={"kind": kind, "rep": rep},
    )


def job_teachers(params: dict, kind: str, rep: int) -> list[Teacher]:
    """The teachers of one job, one per temperature row (``params["temperatures"]``; ``[None]`` for MSE), of
    the variant's depth, width and vocabulary. By default one teacher (replicate ``rep``'s seed) serves every
    row; with ``teacher_per_task`` each (variant, kind, replicate, temperature) task draws its own, as the
    paper does."""

    def build(seed: int) -> Teacher:
        return make_teacher(kind, seed, params["teacher_depth"], params["width"], params["vocab"])

    if not params["teacher_per_task"]:
        return [build(variants.teacher_seed(params["seed"], rep))] * len(params["temperatures"])
    return [
        build(variants.task_teacher_seed(params["seed"], params["variant"], kind, rep, t))
        for t in params["temperatures"]
    ]


def write_job_outputs(
    records: list[dict],
    teacher: Teacher | list[Teacher],
    kind: str,
    variant: str,
    rep: int,
    student_paths: list[str],
    angles_path: str,
    angle_samples: int,
) -> None:
    """One JSON per student at its path (matched by T and depth in the path), and the job's angle table.
    Every path the rule declares must be produced by a trained student, or this raises."""
    by_path = {f"T{temp_label(r['temperature'])}/depth{r['depth']}.json": r for r in records}
    angles = angle_table(
        teacher, records, {"kind": kind, "variant": variant, "replicate": rep}, angle_samples
    )
    for p in map(Path, student_paths):
        key = f"{p.parent.name}/{p.name}"
        if key not in by_path:
            raise RuntimeError(f"no trained student for output {p}; trained: {sorted(by_path)}")
        r = by_path[key]
        out = {
            "kind": kind,
            "variant": variant,
            "replicate": rep,
            **{k: v for k, v in r.items() if not k.startswith("_") and k not in ("group", "row")},
        }
        write_json(p, out, indent=1)  # sealed: rule depth_toy_tables checks each file before using it
    write_table(angles, angles_path)
    log.info("wrote %d student files and %s", len(student_paths), angles_path)


def depth_toy_train(
    params: dict,
    speed: dict,
    kind: str,
    rep: int,
    student_paths: list[str],
    angles_path: str,
    threads: int = 1,
) -> None:
    """Rule depth_toy_train_<variant>: train every student of one (kind, variant, replicate) job and write
    its per-student files and angle table. ``params``: ``pipeline.train_params``; ``speed``:
    ``pipeline.SPEED_KEYS``. A ``checkpoint.pt`` beside the angle table lets a killed job resume."""
    torch.set_num_threads(threads)  # more threads than cores makes OpenMP spin: use what Snakemake gave
    p = {**params, **speed}
    device = p["device"] if p["device"] != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    settings = settings_for(p, kind, rep)
    teachers = _to_device(job_teachers(p, kind, rep), device)
    log.info(
        "depth_toy %s/%s (%s) rep %d on %s: depths %s, %d temperature(s), %d steps, teacher depth %d (%d "
        "teacher(s))",
        kind,
        p["variant"],
        p["setup"],
        rep,
        device,
        p["depths"],
        len(settings.temperatures),
        p["steps"],
        p["teacher_depth"],
        len({id(t) for t in teachers}),
    )
    checkpoint = Path(angles_path).with_name("checkpoint.pt")
    job = {
        "params": params,
        "kind": kind,
        "rep": rep,
    }  # the rule's result params: speed knobs are not in them
    records = train_students(
        teachers, settings, checkpoint=checkpoint, device=device, fingerprint=job, threads=threads
    )
    write_job_outputs(
        records, teachers, kind, p["variant"], rep, student_paths, angles_path, p["angle_samples"]
    )
    unseal(checkpoint)  # finished: the outputs now hold everything worth keeping


def plain_loop_step(
    teacher_model: torch.nn.Module, student_model: torch.nn.Module, opt, x: torch.Tensor, temperature: float
) -> float:
    """One step of the paper's plain loop (exp-9-1), for the benchmark: teacher recomputed for this one
    student, KL via F.kl_div. Models are :func:`reference_model` s."""
    with torch.no_grad():
        t_log_probs = F.log_softmax(teacher_model(x) / temperature, dim=-1)
    s_log_probs = F.log_softmax(student_model(x), dim=-1)
    loss = F.kl_div(s_log_probs, t_log_probs, reduction="batchmean", log_target=True)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()
