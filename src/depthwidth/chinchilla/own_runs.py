"""Your own runs without a config: a table of runs fitted as a ``chinchilla.sweeps`` entry is (the same
rule functions, the same settings), or, where the table has parameter counts and tokens but no width and
depth, the Chinchilla law L = E + A/N^α + B/D^β alone.

``sweep_settings`` fills a sweep entry from the schema's defaults (what the workflow's config validation
fills in); ``fit_sweep`` runs rules chinchilla_sweep_points and chinchilla_sweep_identify's functions on
it; ``fit_chinchilla_law`` fits the Chinchilla law to N and D as ``compare.compare_laws`` fits it beside the
decomposed law (units, starts, bootstrap, held-out check).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth.chinchilla.compare import chinchilla_law_fit, law_summary
from depthwidth.chinchilla.identify import chinchilla_sweep_identify
from depthwidth.chinchilla.pipeline import sweep_identify_params, sweep_load_params
from depthwidth.chinchilla.replication import compute_optimal
from depthwidth.chinchilla.sweeps import SweepError, chinchilla_sweep_points
from depthwidth.config import load_schema
from depthwidth.laws import lawfit
from depthwidth.laws.law import FitData
from depthwidth.laws.lawfit import LawFit

# The Chinchilla law needs these columns (contract names); group is optional.
ND_REQUIRED = ("params", "tokens", "loss")


def sweep_defaults() -> dict:
    """Every key of a ``chinchilla.sweeps`` entry that has a default, with it (from the schema)."""
    props = load_schema()["properties"]["chinchilla"]["properties"]["sweeps"]["items"]["properties"]
    return {k: v["default"] for k, v in props.items() if "default" in v}


def sweep_settings(name: str, path: str | Path, columns: dict, **settings) -> dict:
    """A ``chinchilla.sweeps`` entry for a CSV/parquet of runs: the schema's defaults, then ``settings``
    (keys of the entry: bootstrap, profile, fixed, group_offsets, drop_highest, …; unknown keys raise)."""
    defaults = sweep_defaults()
    unknown = sorted(set(settings) - set(defaults))
    if unknown:
        raise SweepError(f"sweep '{name}': unknown setting(s) {unknown}; known: {sorted(defaults)}")
    return {**defaults, **settings, "name": name, "path": str(path), "columns": dict(columns)}


def rule_params(spec: dict) -> tuple[dict, dict]:
    """(rule chinchilla_sweep_points's ``spec``, rule chinchilla_sweep_identify's ``cfg``) for one sweep
    entry, as the workflow's params functions make them."""
    config = {"chinchilla": {"sweeps": [spec]}}
    wildcards = {"sweep": spec["name"]}
    return sweep_load_params(config, wildcards), sweep_identify_params(config, wildcards)


def fit_sweep(spec: dict, out_dir: str | Path) -> dict:
    """Rules chinchilla_sweep_points and chinchilla_sweep_identify on one sweep entry, writing
    ``runs.csv``, ``identify.json`` and ``profile.csv`` under ``out_dir``; returns the identify summary."""
    out = Path(out_dir)
    load, cfg = rule_params(spec)
    chinchilla_sweep_points(load, out / "runs.csv")
    return chinchilla_sweep_identify(out / "runs.csv", cfg, out / "identify.json", out / "profile.csv")


def check_nd(df: pd.DataFrame, name: str, source: str) -> pd.DataFrame:
    """A table for the Chinchilla law alone: params, tokens and loss present, finite and > 0, and at least
    three distinct values of params and of tokens (each power law beside the offset needs three)."""
    where = f"sweep '{name}' (file {source})"
    missing = [c for c in ND_REQUIRED if c not in df.columns]
    if missing:
        raise SweepError(
            f"{where} lacks column(s) {missing} (has {list(df.columns)}). Fix: name the file's columns with "
            "--params, --tokens and --loss."
        )
    for col in ND_REQUIRED:
        x = pd.to_numeric(df[col], errors="coerce").to_numpy(float)
        bad = ~(np.isfinite(x) & (x > 0))
        if bad.any():
            rows = ", ".join(map(str, np.flatnonzero(bad)[:8]))
            raise SweepError(
                f"{where}: column '{col}' must be a positive finite number; {int(bad.sum())} row(s) are not "
                f"(0-based rows {rows}). Fix: correct or drop those rows."
            )
    for col in ("params", "tokens"):
        n = int(df[col].nunique())
        if n < 3:
            raise SweepError(
                f"{where}: column '{col}' has {n} distinct value(s); the Chinchilla law needs at least 3. "
                "Fix: add runs at more values."
            )
    return df


def nd_data(df: pd.DataFrame) -> FitData:
    """N, D and loss of a table as ``FitData``, each of N and D in units of its geometric mean (as
    ``identify.to_data`` makes them), one group per value of ``group`` (else one)."""
    N, D = df["params"].to_numpy(float), df["tokens"].to_numpy(float)
    units = {"params": float(np.exp(np.log(N).mean())), "tokens": float(np.exp(np.log(D).mean()))}
    groups = sorted(df["group"].astype(str).unique()) if "group" in df.columns else ["all"]
    g = (
        pd.Categorical(df["group"].astype(str), categories=groups).codes
        if "group" in df.columns
        else np.zeros(len(df), int)
    )
    return FitData(
        None,
        None,
        D / units["tokens"],
        df["loss"].to_numpy(float),
        np.asarray(g, int),
        groups,
        units,
        N / units["params"],
    )


def fit_chinchilla_law(df: pd.DataFrame, cfg: dict) -> dict:
    """The Chinchilla law on ``df`` (params, tokens, loss, optional group) with a sweep's settings
    ``cfg`` (group_offsets, loss, huber_delta, n_starts, seed, bootstrap, heldout_splits,
    heldout_fraction), fitted as ``compare.compare_laws`` fits it: values with errors, bootstrap
    intervals, AIC/BIC, held-out error and the compute-optimal split N* ∝ C^a, D* ∝ C^b."""
    d = nd_data(df)
    how = chinchilla_law_fit(
        d,
        LawFit(
            group_offsets=cfg["group_offsets"],
            least_squares=lawfit.loss_options(cfg["loss"], cfg["huber_delta"]),
        ),
    )
    res = lawfit.fit(d, how, n_starts=cfg["n_starts"], seed=cfg["seed"])
    v = how.values(res, d)
    boot = (
        lawfit.bootstrap(d, how, v, cfg["bootstrap"], seed=cfg["seed"], n_starts=1)
        if cfg["bootstrap"] > 0
        else pd.DataFrame()
    )
    held = (
        lawfit.held_out(d, how, v, cfg["heldout_splits"], cfg["heldout_fraction"], seed=cfg["seed"])
        if cfg["heldout_splits"] > 0
        else None
    )
    out = law_summary(d, how, res, boot, held)
    out["split"] = {"kind": "N* ∝ C^a, D* ∝ C^b at fixed C = 6ND", **compute_optimal(v["alpha"], v["beta"])}
    out.update(n=len(d), units=d.units, groups=d.groups, converged=bool(res.success))
    return out
