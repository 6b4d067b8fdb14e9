"""The ``depthwidth`` command: ``depthwidth fit`` gives the numbers of the workflow's sweep rules on the same
table (to 1e-9), fits the Chinchilla law from N and D alone, and every module that runs with
``python -m`` answers ``--help`` with its usage.

    PYTHONPATH=src .venv/bin/python -m pytest -n 0 tests/test_cli.py -q
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from depthwidth.cli import main

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "depthwidth"


def runnable_modules() -> list[str]:
    """Every module of the package that does something under ``python -m``: a ``__main__`` guard or a
    package's ``__main__.py``."""
    out = []
    for p in sorted(SRC.rglob("*.py")):
        parts = list(p.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__main__":
            out.append(".".join(parts[:-1]))
        elif re.search(r"^if __name__ == ['\"]__main__['\"]", p.read_text(), re.M):
            out.append(".".join(parts))
    return out


def test_every_runnable_module_answers_help_with_its_usage():
    mods = runnable_modules()
    assert {
        "depthwidth",
        "depthwidth.chinchilla",
        "depthwidth.config",
        "depthwidth.cli",
    } <= set(mods)
    assert "depthwidth.chinchilla.sweeps" in mods and len(mods) >= 10
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    for mod in mods:
        p = subprocess.run(
            [sys.executable, "-m", mod, "--help"], capture_output=True, text=True, env=env, timeout=300
        )
        assert p.returncode == 0, f"python -m {mod} --help: exit {p.returncode}\n{p.stderr[-2000:]}"
        assert p.stdout.lower().startswith("usage:"), f"python -m {mod} --help printed {p.stdout[:200]!r}"
        assert "No such file" not in p.stdout + p.stderr  # "--help" is not read as a file name


def _runs(path: Path, noise: float = 0.004, seed: int = 1) -> pd.DataFrame:
    """27 runs on a 3 × 3 × 3 grid of width, depth and tokens, losses from the law with log-normal noise;
    the file's own column names, as a user's would be."""
    rng = np.random.default_rng(seed)
    w, d, t = np.meshgrid([256, 512, 1024], [4, 8, 16], [2e8, 8e8, 3.2e9], indexing="ij")
    w, d, t = w.ravel(), d.ravel(), t.ravel()
    loss = 0.9 * (w / 512) ** -0.8 + 0.4 * (d / 8) ** -1.1 + 0.6 * (t / 8e8) ** -0.3 + 1.8
    loss *= np.exp(noise * rng.standard_normal(len(w)))
    df = pd.DataFrame(
        {"d_model": w, "n_layers": d, "D": t, "val_loss": loss, "N": 12.0 * d * w.astype(float) ** 2}
    )
    df.to_csv(path, index=False)
    return df


SETTINGS = {"bootstrap": 0, "heldout_splits": 3, "profile": ["alpha_l"]}
FLAGS = ["--bootstrap", "0", "--heldout-splits", "3", "--profile", "alpha_l"]


def _close(a, b, path="") -> list[str]:
    """Every number of two JSON trees that differs by more than 1e-9 (relative), by its path."""
    if isinstance(a, dict):
        return [x for k in a for x in _close(a[k], b[k], f"{path}/{k}")]
    if isinstance(a, list):
        return [x for i, (u, w) in enumerate(zip(a, b)) for x in _close(u, w, f"{path}[{i}]")]
    if isinstance(a, float) and isinstance(b, float):
        ok = (np.isnan(a) and np.isnan(b)) or abs(a - b) <= 1e-9 * max(1.0, abs(a))
        return [] if ok else [f"{path}: {a} vs {b}"]
    return [] if a == b else [f"{path}: {a!r} vs {b!r}"]


def test_fit_gives_the_sweep_rules_numbers_and_the_chinchilla_law_from_n_and_d_alone(
    tmp_path, monkeypatch, capsys
):
    from depthwidth.chinchilla import pipeline
    from depthwidth.chinchilla.identify import chinchilla_sweep_identify
    from depthwidth.chinchilla.sweeps import chinchilla_sweep_points
    from depthwidth.config import deep_merge, validate_config
    from depthwidth.rules import job_params
    import yaml

    monkeypatch.chdir(tmp_path)
    _runs(tmp_path / "runs.csv")
    cols = {"width": "d_model", "depth": "n_layers", "tokens": "D", "loss": "val_loss", "params": "N"}
    # the workflow's way: an overlay's sweeps entry, validated, the rules' params, the rules' functions
    overlay = {"chinchilla": {"sweeps": [{"name": "runs", "path": "runs.csv", "columns": cols, **SETTINGS}]}}
    config = validate_config(deep_merge(yaml.safe_load((ROOT / "config.yaml").read_text()), overlay))
    wc = {"sweep": "runs"}
    spec = job_params(config, pipeline, "chinchilla_sweep_points", wc)["spec"]
    cfg = job_params(config, pipeline, "chinchilla_sweep_identify", wc)["cfg"]
    chinchilla_sweep_points(spec, "rule/runs.csv")
    rule = chinchilla_sweep_identify("rule/runs.csv", cfg, "rule/identify.json", "rule/profile.csv")

    args = [
        "fit",
        "runs.csv",
        "--width",
        "d_model",
        "--depth",
        "n_layers",
        "--tokens",
        "D",
        "--loss",
        "val_loss",
    ]
    assert main([*args, "--params", "N", "--out", "cli", *FLAGS]) == 0
    text = capsys.readouterr().out
    ours = json.loads((tmp_path / "cli" / "identify.json").read_text())
    assert _close(json.loads(json.dumps(rule)), ours) == []
    assert abs(ours["params"]["alpha_l"]["value"] - 1.1) < 0.15 and ours["identified"]["alpha_l"] is True
    assert "α_ℓ (depth)" in text and "identified" in text and "held-out RMSE of log L (3 splits" in text
    assert "Files in cli/:" in text and "figures/profile_alpha_l.png" in text
    assert (tmp_path / "cli/figures/depth_partial.png").stat().st_size > 10_000

    # the Chinchilla law from N and D alone: the numbers the sweep rule gives that law on the same runs
    pd.read_csv("runs.csv").drop(columns=["d_model", "n_layers"]).to_csv("nd.csv", index=False)
    assert (
        main(
            [
                "fit",
                "nd.csv",
                "--params",
                "N",
                "--tokens",
                "D",
                "--loss",
                "val_loss",
                "--out",
                "nd",
                *FLAGS[:4],
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    nd = json.loads((tmp_path / "nd" / "chinchilla_law.json").read_text())
    assert _close(ours["laws"]["chinchilla"]["params"], nd["params"]) == []
    assert nd["heldout"]["rmse_log_test_mean"] == pytest.approx(
        ours["laws"]["chinchilla"]["heldout"]["rmse_log_test_mean"], rel=1e-9
    )
    assert "the Chinchilla law alone" in text and "alpha" in text


def test_fit_refuses_a_table_it_cannot_fit_naming_the_column_and_the_fix(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _runs(tmp_path / "runs.csv")
    assert (
        main(
            [
                "fit",
                "runs.csv",
                "--width",
                "d_model",
                "--depth",
                "layers",
                "--tokens",
                "D",
                "--loss",
                "val_loss",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "'layers'" in err and "not in the file" in err
    assert main(["fit", "runs.csv", "--tokens", "D", "--loss", "val_loss"]) == 2
    assert "--params" in capsys.readouterr().err
    pd.read_csv("runs.csv").head(2).to_csv("two.csv", index=False)
    assert main(["fit", "two.csv", "--params", "N", "--tokens", "D", "--loss", "val_loss"]) == 2
    assert "column 'params' has 1 distinct value" in capsys.readouterr().err
    assert not Path("results/fit/two").exists() or not any(Path("results/fit/two").glob("*.json"))
