"""Config → rule params (``RULES``) and job lists of the superposition stage (the only module
rules/superposition.smk imports; torch-free, Snakemake imports it when it parses the workflow).

Cell files: ``results/superposition/cells/{dist}/n{n}/gamma{gamma}/m{m}/seed{seed}/model.safetensors``
(W (n, m), b (n,), loss_curve (steps,), float32) and ``train.json`` beside it (settings, run time).
"""

from __future__ import annotations


from depthwidth.rules import Device, Key, Keys, Rule, Speed
from depthwidth.superposition.grid import CELL_DIR, fmt_num, parse_distribution


# The stage's keys that change a training job's result (grid keys are wildcards, so growing the grid reruns
# nothing), and those it reads that do not (its ``speed`` params).
TRAIN_KEYS = ("batch_size", "steps", "warmup_steps", "lr", "min_lr_ratio", "lr_width_exponent")
TRAIN_KEYS += ("lr_width_reference", "lr_bias_over_m", "loss_scale", "path")
SPEED_KEYS = ("checkpoint_every", "device")


def stage_config(config: dict) -> dict:
    """The validated ``superposition`` subtree, or {} when the config has none."""
    return config["superposition"] if "superposition" in config else {}


def distributions(cfg: dict) -> list[str]:
    """Distribution names of the grid: one 'power-a<α>' per ``alphas`` entry, then ``distributions``."""
    names = [f"power-a{fmt_num(a)}" for a in cfg["alphas"]] + list(cfg["distributions"])
    for name in names:
        parse_distribution(name)  # raises naming the bad entry
    return names


def cells(cfg: dict) -> list[dict]:
    """Every cell of the grid as a dict of path fields (strings). Raises ValueError naming the key
    when the grid cannot work (a width ≥ n_features, no distribution at all)."""
    n = int(cfg["n_features"])
    too_wide = [m for m in cfg["widths"] if m >= n]
    if too_wide:
        raise ValueError(
            f"superposition.widths {too_wide} must be smaller than superposition.n_features={n}: "
            "lower the widths or raise n_features"
        )
    if not distributions(cfg):
        raise ValueError(
            "superposition.alphas and superposition.distributions are both empty: "
            "give at least one frequency law, e.g. alphas: [1.5]"
        )
    return [
        {"dist": d, "n": str(n), "gamma": fmt_num(g), "m": str(int(m)), "seed": str(int(s))}
        for d in distributions(cfg)
        for g in cfg["weight_decays"]
        for m in cfg["widths"]
        for s in cfg["seeds"]
    ]


def cell_paths(config: dict, name: str = "model.safetensors") -> list[str]:
    """Every cell file ``name`` of the configured grid (checked at parse time: a bad grid fails before
    any job); [] without a superposition section."""
    cfg = stage_config(config)
    return [CELL_DIR.format(**c) + "/" + name for c in cells(cfg)] if cfg else []


def job_grouping(config: dict) -> str:
    """'cell' (one job per cell) or 'law' (one job per law, n and seed trains all its (γ, m) cells)."""
    cfg = stage_config(config)
    return str(cfg["job_grouping"]) if cfg else "cell"


def job_cells(config: dict) -> list[dict]:
    """The (gamma, m) path fields of the cells one 'law' job trains, in training order."""
    cfg = stage_config(config)
    return [{"gamma": fmt_num(g), "m": str(int(m))} for g in cfg["weight_decays"] for m in cfg["widths"]]


def law_job_outputs(config: dict, name: str) -> list[str]:
    """The cell files ``name`` of one 'law' job, as patterns with the wildcards {dist}, {n} and {seed}."""
    return [
        CELL_DIR.format(dist="{dist}", n="{n}", seed="{seed}", **c) + "/" + name for c in job_cells(config)
    ]


def _job_widths(config: dict, wildcards: dict) -> list[int]:
    """Widths of the cells a job of ``wildcards`` trains: its one m, or every cell's m for a 'law' job."""
    if "m" in wildcards:
        return [int(wildcards["m"])]
    return [int(c["m"]) for c in job_cells(config)]


def runtime_minutes(config: dict, wildcards: dict) -> int:
    """Runtime request for the job of ``wildcards`` (SLURM): ~6·batch·n·m flops per cell-step at 2 GFLOP/s,
    plus 1 ms per cell-step of overheads, doubled, at least 5 minutes."""
    cfg = stage_config(config)
    n, B, steps = cfg["n_features"], cfg["batch_size"], cfg["steps"]
    s = sum(steps * (6.0 * 0.7 * B * n * m / 2e9 + 1e-3) for m in _job_widths(config, wildcards))
    return int(max(5, 2 * s / 60 + 1))


def mem_mb(config: dict, wildcards: dict) -> int:
    """Memory request for the job of ``wildcards``: W and its Adam moments per cell, three (batch × n) float32
    blocks (pre-activations and their copies), two (active features × n) tables with at most n rows, plus
    ~400 MB for Python and torch."""
    n, batch = int(wildcards["n"]), int(stage_config(config)["batch_size"])
    cells = sum(16 * n * m for m in _job_widths(config, wildcards))
    return int(400 + (cells + 12 * batch * n + 8 * n * n) / 1e6)


_ANALYSIS = Rule(params={"analysis": Keys("superposition.analysis")}, mem_mb=2000, runtime=10)
# What each rule takes from the config (depthwidth.rules). Both forms of superposition_train share one entry.
RULES = {
    "superposition_train": Rule(
        params={"train": Keys("superposition", TRAIN_KEYS)},
        speed=Speed("superposition", SPEED_KEYS),
        threads="superposition.threads",
        mem_mb=mem_mb,
        runtime=runtime_minutes,
        # gpu = 1 with device: cuda; the job then goes to the cluster's GPU partition (profiles/slurm)
        gpus=Device("superposition.device"),
    ),
    "superposition_tables": _ANALYSIS,
    "superposition_compare": Rule(
        params={"tolerance": Key("superposition.analysis.tolerance")}, mem_mb=1000, runtime=5
    ),
    "superposition_section": _ANALYSIS,
}


def compare_inputs(config: dict) -> dict:
    """Rule superposition_compare's inputs: exponents.csv, and where the paper-figures stage runs, its
    records of our cells against the paper's drawn Figs. 4b/6e and 5b (files, not code: the stages stay
    independent)."""
    out = {"exponents": "results/superposition/exponents.csv"}
    if "paperfigs" in config["stages"]:
        out["fig4b"] = "results/paperfigs/fig4b/compare.csv"
        out["fig5b"] = "results/paperfigs/fig5b/compare.csv"
    return out
