"""The depth toy's variants: the setups a variant can train (the paper's experiments), how a configured
variant resolves (its setup, teacher kinds and depth, temperatures), where a job's files go, and the
seeds of teachers and students. Torch-free: the rules (``pipeline``), the trainer and the tables share it,
so that editing a rule's params or cost estimate (``pipeline``) changes none of the trainer's code.
"""

from __future__ import annotations

import difflib
import zlib

RUNS = "results/depth_toy/runs"


# The setups a variant can train (the paper's experiments, github liuyz0/DepthScaling exp/): a variant
# named after one of them runs it; any other name says which in its ``setup`` key.
# head: None (MSE on the final normalised states), "learned" (student head, teacher's own head),
# "shared" (one fixed head for both, T on both); loss: "kl" or "mse"; block: the student's block rule.
VARIANTS = {
    "learned_head": {"head": "learned", "loss": "kl", "block": "euler"},
    "shared_head": {"head": "shared", "loss": "kl", "block": "euler"},
    "mse": {"head": None, "loss": "mse", "block": "euler"},
    "rk2_mse": {"head": None, "loss": "mse", "block": "rk2"},
}


class DepthToyConfigError(ValueError):
    """A depth_toy setting cannot work; the message names the key and the fix."""


def temp_label(t: float | None) -> str:
    """Path label of a temperature: ``none`` for MSE variants, else 4 significant digits (0.01, 0.01359)."""
    return "none" if t is None else f"{t:.4g}"


def variant_setup(cfg: dict, variant: str) -> str:
    """The setup (a key of ``VARIANTS``) a variant trains: its ``setup`` key, else its own name."""
    v = cfg["variants"][variant]
    setup = v["setup"] if "setup" in v else variant
    if setup not in VARIANTS:
        close = difflib.get_close_matches(variant, VARIANTS, n=1)
        raise DepthToyConfigError(
            f"config key 'depth_toy.variants.{variant}.setup' is missing: a variant not named after a setup must "
            f"say which it trains, one of {sorted(VARIANTS)}"
            + (f" (or did you mean the variant name {close[0]!r}?)" if close else "")
        )
    return setup


def _variant_or_section(cfg: dict, variant: str, key: str):
    """A setting a variant may override (kinds, teacher_depth): the variant's own value, else the section's."""
    v = cfg["variants"][variant]
    return v[key] if key in v else cfg[key]


def variant_kinds(cfg: dict, variant: str) -> list[str]:
    return list(_variant_or_section(cfg, variant, "kinds"))


def variant_teacher_depth(cfg: dict, variant: str) -> int:
    return int(_variant_or_section(cfg, variant, "teacher_depth"))


def variant_temperatures(cfg: dict, variant: str) -> list[float | None]:
    v = cfg["variants"][variant]
    if VARIANTS[variant_setup(cfg, variant)]["loss"] == "mse":
        return [None]
    temps = v.get("temperatures")  # checked here, not defaulted: a KL variant must name its temperatures
    if not temps:
        raise DepthToyConfigError(
            f"config key 'depth_toy.variants.{variant}.temperatures' is missing or empty: variant {variant} "
            "compares softmax outputs and needs at least one temperature, e.g. [0.1, 1.0]"
        )
    labels = [temp_label(t) for t in temps]
    if len(set(labels)) != len(labels):
        raise DepthToyConfigError(
            f"config key 'depth_toy.variants.{variant}.temperatures': {temps} has values equal to 4 significant "
            "digits, which would share an output path; remove the duplicates"
        )
    return [float(t) for t in temps]


def teacher_seed(seed: int, rep: int) -> int:
    """Replicate ``rep``'s teacher; the same for both kinds (tied = the independent teacher's block 0)."""
    return seed * 100_003 + rep


def task_teacher_seed(seed: int, variant: str, kind: str, rep: int, temperature: float | None) -> int:
    """With ``teacher_per_task``: the teacher of one (variant, kind, replicate, temperature) task, as the
    paper draws a fresh teacher for every task (tied and independent ones are then unrelated draws)."""
    return zlib.crc32(f"teacher/{seed}/{variant}/{kind}/rep{rep}/T{temp_label(temperature)}".encode()) % (
        2**31
    )


def job_seed(seed: int, kind: str, variant: str, rep: int) -> int:
    """Seed of the students' init and data of one job (stable across Python runs, unlike hash())."""
    return (seed * 100_003 + rep * 101 + zlib.crc32(f"{kind}/{variant}".encode())) % (2**31)
