"""Config -> rules for the depth toy: output paths, job lists, rule params and cost estimates (the variants,
their setups and seeds: ``variants``). The only module ``rules/depth_toy.smk`` imports (no torch: parsing
the workflow stays fast); no job's code imports it.
The functions the rules call take the whole ``config``, as every stage's pipeline module does; the helpers
of one variant take the stage's subtree ``cfg``.

One training job per (teacher kind, variant, replicate) trains all (temperature, depth) students of
that job together, so that they share the teacher forward of each step. Each student still has its
own output file, with every grid coordinate in its path:
``results/depth_toy/runs/{kind}/{variant}/rep{rep}/T{T}/depth{depth}.json`` (T is ``none`` for the
MSE variants, which have no temperature). Adding a depth or temperature reruns the jobs of that variant
(their students share the teacher), and no other stage or variant.
"""

from __future__ import annotations

from depthwidth.config import result_params
from depthwidth.depth_toy.variants import (
    RUNS,
    VARIANTS,
    DepthToyConfigError,
    temp_label,
    variant_kinds,
    variant_setup,
    variant_teacher_depth,
    variant_temperatures,
)
from depthwidth.rules import Call, Device, Key, Rule, Speed

TABLES = {
    "runs": "results/depth_toy/runs.csv",
    "exponents": "results/depth_toy/exponents.csv",
    "angles": "results/depth_toy/angles.csv",
    "trajectory": "results/depth_toy/exponent_vs_step.csv",
    "teacher_angles": "results/depth_toy/teacher_angles.csv",
    "curves": "results/depth_toy/test_curves.csv",
    "convergence": "results/depth_toy/convergence.csv",
}


# Settings that change how fast a job runs, never what it computes: left out of the rerun-triggering params.
SPEED_KEYS = ("checkpoint_every",)


def train_variants(config: dict) -> list[str]:
    """The variants that get a training rule: none when the stage is not enabled."""
    return list(config["depth_toy"]["variants"]) if "depth_toy" in config["stages"] else []


def section(config: dict) -> dict:
    """The validated ``depth_toy`` subtree (the helpers of one variant take it as ``cfg``)."""
    return config["depth_toy"]


def check(config: dict) -> None:
    """Errors that the schema cannot express, raised before any job starts."""
    cfg = section(config)
    if cfg["headline_variant"] not in cfg["variants"]:
        raise DepthToyConfigError(
            f"config key 'depth_toy.headline_variant' is {cfg['headline_variant']!r}, which is not among the "
            f"configured variants {sorted(cfg['variants'])}; name one of them"
        )
    for variant in cfg["variants"]:
        variant_setup(cfg, variant)
        variant_temperatures(cfg, variant)


def jobs(config: dict) -> list[tuple[str, str, int]]:
    """Every (kind, variant, replicate) training job of the config."""
    cfg = section(config)
    return [
        (k, v, r) for v in cfg["variants"] for k in variant_kinds(cfg, v) for r in range(cfg["replicates"])
    ]


def student_files(config: dict, variant: str, kind: str = "{kind}", rep: str | int = "{rep}") -> list[str]:
    """The per-student JSON files of one job (wildcard patterns with the defaults)."""
    cfg = section(config)
    v = cfg["variants"][variant]
    return [
        f"{RUNS}/{kind}/{variant}/rep{rep}/T{temp_label(t)}/depth{d}.json"
        for t in variant_temperatures(cfg, variant)
        for d in v["depths"]
    ]


def angle_file(variant: str, kind: str = "{kind}", rep: str | int = "{rep}") -> str:
    return f"{RUNS}/{kind}/{variant}/rep{rep}/angles.csv"


def all_student_files(config: dict) -> list[str]:
    return [f for k, v, r in jobs(config) for f in student_files(config, v, k, r)]


def all_angle_files(config: dict) -> list[str]:
    return [angle_file(v, k, r) for k, v, r in jobs(config)]


def _job_settings(cfg: dict, variant: str) -> dict:
    """Every setting one variant's training job reads."""
    v = cfg["variants"][variant]
    return {
        "variant": variant,
        "setup": variant_setup(cfg, variant),
        "depths": list(v["depths"]),
        "temperatures": variant_temperatures(cfg, variant),
        "steps": v["steps"],
        "lr": v["lr"],
        "lr_depth_factor": v["lr_depth_factor"],
        "schedule": v["schedule"],
        "batch_size": cfg["batch_size"],
        "test_batches": cfg["test_batches"],
        "eval_every": cfg["eval_every"],
        "checkpoint_every": cfg["checkpoint_every"],
        "seed": cfg["seed"],
        "width": cfg["width"],
        "vocab": cfg["vocab"],
        "teacher_depth": variant_teacher_depth(cfg, variant),
        "teacher_per_task": cfg["teacher_per_task"],
        "angle_samples": cfg["angle_samples"],
        "device": cfg["device"],
    }


def train_params(config: dict, wildcards: dict, variant: str) -> dict:
    """The settings that change one variant's results (plain values, keys sorted): editing one reruns
    that variant's jobs; the speed knobs (``SPEED_KEYS``) are its ``speed`` params instead."""
    return result_params(_job_settings(section(config), variant), SPEED_KEYS)


def variant_table(config: dict, wildcards: dict) -> list[dict]:
    """One row per variant with the settings that define it, for the report (plain values)."""
    cfg, rows = section(config), []
    for variant, v in cfg["variants"].items():
        temps = variant_temperatures(cfg, variant)
        factor = v["lr_depth_factor"]
        rows.append(
            {
                "variant": variant,
                "setup": variant_setup(cfg, variant),
                "kinds": ", ".join(variant_kinds(cfg, variant)),
                "teacher_depth": variant_teacher_depth(cfg, variant),
                "depths": ", ".join(map(str, v["depths"])),
                "steps": v["steps"],
                "temperatures": 0 if temps == [None] else len(temps),
                "lr": f"{v['lr']:g}" if factor is None else f"{v['lr']:g}·{factor:g}/√ℓ",
                "schedule": v["schedule"],
                "teachers": "one per task" if cfg["teacher_per_task"] else "one per replicate",
            }
        )
    return rows


def estimate_minutes(config: dict, wildcards: dict, variant: str) -> int:
    """Runtime request (minutes) of one job with a 3x margin: on one CPU core ~1.5 ms per block-step at
    batch 1024 (a teacher block forward counts 1, a student block forward + backward 3); on a GPU a rough
    30x less, since the batched students fill it far better than one small student does."""
    cfg = section(config)
    v = cfg["variants"][variant]
    n_t = len(variant_temperatures(cfg, variant))
    per_mlp = 2 if VARIANTS[variant_setup(cfg, variant)]["block"] == "rk2" else 1
    teachers = n_t if cfg["teacher_per_task"] else 1
    block_steps = teachers * variant_teacher_depth(cfg, variant) + 3 * n_t * per_mlp * sum(v["depths"])
    per_block_s = 1.5e-3 if cfg["device"] == "cpu" else 5e-5
    seconds = v["steps"] * block_steps * per_block_s * cfg["batch_size"] / 1024
    return max(5, int(3 * seconds / 60) + 1)


def mem_mb(config: dict, wildcards: dict, variant: str) -> int:
    """Activations of the largest depth group (~7 floats of width 4D per block, sample and student) plus the
    Adam state of every student, plus ~500 MB for Python and torch."""
    cfg = section(config)
    v = cfg["variants"][variant]
    n_t = len(variant_temperatures(cfg, variant))
    D = cfg["width"]
    act = 7 * 4 * D * cfg["batch_size"] * max(v["depths"]) * n_t * 4
    params = 4 * 9 * D * D * sum(v["depths"]) * n_t * 4
    return int(500 + (act + params) / 1e6)


# What each rule takes from the config (depthwidth.rules); the training rule of each variant passes variant=.
RULES = {
    "depth_toy_train": Rule(
        params={"train": Call(train_params)},
        speed=Speed("depth_toy", SPEED_KEYS),
        threads="depth_toy.threads",
        mem_mb=mem_mb,
        runtime=estimate_minutes,
        gpus=Device("depth_toy.device"),
    ),
    "depth_toy_tables": Rule(mem_mb=1000, runtime=5),
    "depth_toy_compare": Rule(
        params={"headline_variant": Key("depth_toy.headline_variant")}, mem_mb=1000, runtime=5
    ),
    "depth_toy_section": Rule(
        params={k: Key(f"depth_toy.{k}") for k in ("note", "angle_samples")}
        | {"variants": Call(variant_table)},
        mem_mb=1000,
        runtime=5,
    ),
}
