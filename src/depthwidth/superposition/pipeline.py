"""Glue between the Snakemake rules and the science: cell lists, path formats, train/table steps.

Cell files: ``results/superposition/cells/{dist}/n{n}/gamma{gamma}/m{m}/seed{seed}/model.safetensors``
(W (n, m), b (n,), loss_curve (steps,), float32) and ``train.json`` beside it (settings, run time).
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

from depthwidth.superposition.analysis import cell_metrics, fit_power_law, theory_exponent
from depthwidth.superposition.grid import parse_distribution

log = logging.getLogger("depthwidth.superposition")

CELL_DIR = "results/superposition/cells/{dist}/n{n}/gamma{gamma}/m{m}/seed{seed}"

TRAIN_KEYS = ("batch_size", "steps", "warmup_steps", "lr", "min_lr_ratio", "lr_width_exponent",
              "lr_width_reference", "lr_bias_over_m", "path")


def fmt_num(x: float) -> str:
    """A grid value as it appears in paths: '-1', '0.5', '-0.777778' (6 significant digits)."""
    return f"{float(x):.6g}"


def distributions(cfg: dict) -> list[str]:
    """Distribution names of the grid: one 'power-a<α>' per ``alphas`` entry, then ``distributions``."""
    names = [f"power-a{fmt_num(a)}" for a in cfg.get("alphas", [])] + list(cfg.get("distributions", []))
    for name in names:
        parse_distribution(name)  # raises naming the bad entry
    return names


def cells(cfg: dict) -> list[dict]:
    """Every cell of the grid as a dict of path fields (strings). Raises ValueError naming the key
    when the grid cannot work (a width ≥ n_features, no distribution at all)."""
    n = int(cfg["n_features"])
    too_wide = [m for m in cfg["widths"] if m >= n]
    if too_wide:
        raise ValueError(f"superposition.widths {too_wide} must be smaller than superposition.n_features={n}: "
                         "lower the widths or raise n_features")
    if not distributions(cfg):
        raise ValueError("superposition.alphas and superposition.distributions are both empty: "
                         "give at least one frequency law, e.g. alphas: [1.5]")
    return [{"dist": d, "n": str(int(cfg["n_features"])), "gamma": fmt_num(g), "m": str(int(m)),
             "seed": str(int(s))}
            for d in distributions(cfg) for g in cfg["weight_decays"] for m in cfg["widths"] for s in cfg["seeds"]]


def cell_paths(cfg: dict, name: str = "model.safetensors") -> list[str]:
    return [CELL_DIR.format(**c) + "/" + name for c in cells(cfg)]


def train_params(cfg: dict) -> dict:
    """Exactly the config keys a training job uses, as plain values (the rule's params)."""
    return {k: cfg[k] for k in TRAIN_KEYS if k in cfg}


def estimate_minutes(cfg: dict, m: int) -> int:
    """Runtime request for one cell (SLURM): ~6·batch·n·m flops per step at 2 GFLOP/s, plus 1 ms/step
    of overheads, doubled, at least 5 minutes."""
    n, B, steps = cfg["n_features"], cfg["batch_size"], cfg["steps"]
    s = steps * (6.0 * 0.7 * B * n * m / 2e9 + 1e-3)
    return int(max(5, 2 * s / 60 + 1))


def _atomic_write_bytes(path: Path, write) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    write(tmp)
    os.replace(tmp, path)


def train_cell(dist: str, n: int, gamma: float, m: int, seed: int, params: dict, model_path: str,
               info_path: str, threads: int = 1) -> dict:
    """Train one cell (resuming from its checkpoint if any) and write its model and train.json."""
    # torch is imported here, not at the top: Snakemake imports this module when it parses the workflow
    from depthwidth.superposition.train import TrainSettings, remove_checkpoint, train_cells

    S = TrainSettings(n=int(n), batch=int(params["batch_size"]), steps=int(params["steps"]),
                      warmup_steps=int(params["warmup_steps"]), lr=float(params["lr"]),
                      min_lr_ratio=float(params.get("min_lr_ratio", 0.05)),
                      lr_width_exponent=float(params.get("lr_width_exponent", 0.0)),
                      lr_width_reference=float(params.get("lr_width_reference", 8.0)),
                      lr_bias_over_m=params.get("lr_bias_over_m"), seed=int(seed))
    model_path = Path(model_path)
    model_path.parent.mkdir(parents=True, exist_ok=True)
    ckpt = model_path.parent / "checkpoint.pt"
    t0 = time.monotonic()
    (res,) = train_cells(dist, [float(gamma)], [int(m)], S, checkpoint=ckpt,
                         checkpoint_every=int(params.get("checkpoint_every", 0)),
                         path=params.get("path", "auto"), threads=threads)
    seconds = time.monotonic() - t0
    tensors = {"W": res.W, "b": res.b, "loss_curve": res.losses}
    _atomic_write_bytes(model_path, lambda p: save_file(tensors, str(p)))
    info = {"dist": dist, "n": int(n), "gamma": float(gamma), "m": int(m), "seed": int(seed),
            "settings": dict(params), "train_seconds": seconds,
            "ms_per_step": 1e3 * seconds / max(S.steps, 1)}
    _atomic_write_bytes(Path(info_path), lambda p: Path(p).write_text(json.dumps(info, indent=2)))
    remove_checkpoint(ckpt)
    log.info("cell %s gamma=%s m=%s seed=%s done in %.1fs, last loss %.4g", dist, gamma, m, seed,
             seconds, float(res.losses[-1]))
    return info


def _alpha_of(dist: str) -> float | None:
    d = parse_distribution(dist)
    return d.alpha if d.law == "power" and not d.density else None


def cells_table(model_paths: list[str], analysis: dict):
    """cells.csv (a DataFrame): one row per trained cell (path fields parsed from the model path)."""
    import pandas as pd  # here, not at the top: every training job imports this module
    rows = []
    window = int(analysis["final_window"])
    for p in model_paths:
        parts = Path(p).parts
        i = parts.index("cells")
        dist, n, gamma, m, seed = parts[i + 1: i + 6]
        gamma = gamma.removeprefix("gamma")
        t = load_file(p)
        W, losses = t["W"], t["loss_curve"]
        met = cell_metrics(W, losses, min(window, len(losses)), analysis["norm_threshold"], analysis["etf_factor"])
        rows.append({"distribution": dist, "alpha": _alpha_of(dist), "gamma": float(gamma),
                     "n": int(n[1:]), "m": int(m[1:]), "seed": int(seed[4:]), "steps": len(losses),
                     **met})
    df = pd.DataFrame(rows)
    return df.sort_values(["distribution", "gamma", "m", "seed"]).reset_index(drop=True)


def exponents_table(cells_df, analysis: dict):
    """exponents.csv: one loss-vs-width fit per (distribution, gamma, n) over the widths in
    [fit_min_width, fit_max_width], seeds pooled, with the theory line for comparison."""
    lo = analysis.get("fit_min_width") or 0
    hi = analysis.get("fit_max_width") or np.inf
    rows = []
    for (dist, gamma, n), g in cells_df.groupby(["distribution", "gamma", "n"], sort=True):
        sel = g[(g.m >= lo) & (g.m <= hi)]
        fit = fit_power_law(sel.m, sel.final_loss)
        alpha = _alpha_of(dist)
        rows.append({"distribution": dist, "alpha": alpha, "gamma": gamma, "n": n,
                     "exponent": fit["exponent"], "stderr": fit["stderr"], "intercept": fit["intercept"],
                     "m_min": fit["m_min"], "m_max": fit["m_max"], "n_points": fit["n_points"],
                     "theory": theory_exponent(alpha, gamma),
                     "regime": "strong" if gamma < 0 else ("weak" if gamma > 0 else "mixed"),
                     "mean_represented_fraction": float(sel.represented_fraction.mean())})
    import pandas as pd

    return pd.DataFrame(rows)
