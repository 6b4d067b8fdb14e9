"""Sweeps: named tables of training runs that the decomposed law L = c_m/m^α_m + c_ℓ/ℓ^α_ℓ + c_D/D^α_D + L0
can be fitted to.

The contract (one row per run): ``width`` (d_model), ``depth`` (n_layers), ``tokens`` (training tokens),
``loss`` (nats/token), optionally ``params`` (parameter count) and ``group`` (e.g. the training set); any
other column is an extra and is carried along untouched. ``check_sweep`` refuses a table that cannot be
fitted, with an error naming the sweep, its file, the column, the rows and the fix.

Sources: a user's CSV/parquet with a column mapping (``read_sweep``) or a built-in loader
(``LOADERS``): ``chinchilla`` (the stage's points.csv as it is produced), ``openlm_grid`` and
``openlm_main`` (the public runs of Gadre et al. 2024, arXiv 2403.08540, fetched checksum-pinned into
``data/raw/openlm_scaling/``; see that folder's SOURCE.md in the shared mirror).
"""

from __future__ import annotations

import inspect
import json
import logging
import re
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth.laws.law import kept_mask
from depthwidth.download.fetch import check_pinned, load_manifest
from depthwidth.integrity import read_table, write_table

log = logging.getLogger("depthwidth.chinchilla.sweeps")

REQUIRED = ("width", "depth", "tokens", "loss")
OPTIONAL = ("params", "group")
# Columns that must be > 0 where present (params may be missing: NaN is allowed there).
POSITIVE = ("width", "depth", "tokens", "loss", "params")
# Distinct values each exponent's axis needs: a power law c·x^-α next to a free offset needs 3 points.
AXES = {"width": "alpha_m", "depth": "alpha_l", "tokens": "alpha_D"}

RULE = "chinchilla_sweep_points"  # the rule that loads a sweep (named in the fix of a damaged file)
OPENLM_DIR = "openlm_scaling"  # under data/raw/ and under each mirror (manifest keys start with it)
OPENLM_TRAIN_SETS = ("c4_original", "rpj", "rw_original")
OPENLM_VAL_SETS = (
    "openlm",
    "c4_val",
    "paloma_c4_en",
    "paloma_dolma_100_programing_languages",
    "paloma_falcon-refinedweb",
    "paloma_ptb",
    "paloma_redpajama",
    "de-en",
)


class SweepError(ValueError):
    """A sweep that cannot be fitted; the message names the sweep, its file, the column, rows and fix."""


def _where(name: str, source: str | None) -> str:
    return f"sweep '{name}'" + (f" (file {source})" if source else "")


def _rows(mask: np.ndarray, index: pd.Index, limit: int = 8) -> str:
    bad = list(index[mask])
    more = f" … and {len(bad) - limit} more" if len(bad) > limit else ""
    return ", ".join(map(str, bad[:limit])) + more


def check_sweep(df: pd.DataFrame, name: str, n_exponents: int = 3, source: str | None = None) -> pd.DataFrame:
    """Raise ``SweepError`` unless ``df`` can be fitted with ``n_exponents`` free exponents; return ``df``.

    Checks, in order: required columns present; no NaN loss; width, depth, tokens, loss (and params where
    given) finite and > 0; at least ``n_exponents`` distinct widths, depths and token counts (a power law
    with its own coefficient next to the shared offset L0 needs three distinct values of its variable;
    with fewer, its exponent is not determined by the data).
    """
    where = _where(name, source)
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise SweepError(
            f"{where} lacks column(s) {missing} (has {list(df.columns)}). Fix: map the file's columns to "
            f"{list(REQUIRED)} in the sweep's `columns:` entry, e.g. {{width: d_model, depth: n_layers}}."
        )
    if len(df) == 0:
        raise SweepError(f"{where} has no rows. Fix: point the sweep at a file with runs in it.")
    loss = pd.to_numeric(df["loss"], errors="coerce").to_numpy(float)
    nan = np.isnan(loss)
    if nan.any():
        raise SweepError(
            f"{where}: column 'loss' is NaN or not a number in {int(nan.sum())} row(s) (0-based rows "
            f"{_rows(nan, df.index)}). "
            "Fix: drop the runs without a final loss (diverged or unfinished) before fitting."
        )
    for col in POSITIVE:
        if col not in df.columns:
            continue
        x = pd.to_numeric(df[col], errors="coerce").to_numpy(float)
        given = ~np.isnan(x) if col == "params" else np.ones(len(x), bool)
        bad = given & ~(np.isfinite(x) & (x > 0))
        if bad.any():
            raise SweepError(
                f"{where}: column '{col}' must be a positive finite number; {int(bad.sum())} row(s) are not "
                f"(0-based rows {_rows(bad, df.index)}: values {list(x[bad][:8])}). Fix: correct or drop those rows, "
                "or map the right file column to it."
            )
    for col, exponent in AXES.items():
        n = int(pd.Series(df[col]).nunique())
        if n < n_exponents:
            raise SweepError(
                f"{where}: column '{col}' has {n} distinct value(s) ({sorted(pd.unique(df[col]))[:8]}); fitting "
                f"{n_exponents} exponents needs at least {n_exponents} (else {exponent} is not determined). Fix: add "
                f"runs at more {col} values, or fit fewer exponents (fix {exponent})."
            )
    return df


def _standardise(df: pd.DataFrame, columns: dict | None, name: str, source: str | None) -> pd.DataFrame:
    """Rename file columns to the contract's names (``columns`` maps contract name → file column)."""
    columns = dict(columns or {})
    unknown = [k for k in columns if k not in REQUIRED + OPTIONAL]
    if unknown:
        raise SweepError(
            f"{_where(name, source)}: column mapping has unknown key(s) {unknown}; "
            f"allowed: {list(REQUIRED + OPTIONAL)}. Fix: the keys are ours, the values the file's."
        )
    absent = {k: v for k, v in columns.items() if v not in df.columns}
    if absent:
        raise SweepError(
            f"{_where(name, source)}: mapped column(s) {absent} not in the file (has "
            f"{list(df.columns)}). Fix: correct the sweep's `columns:` entry."
        )
    clash = [k for k in columns if k in df.columns and columns[k] != k]
    out = df.drop(columns=clash).rename(columns={v: k for k, v in columns.items()})
    if "group" not in out.columns:
        out["group"] = name
    out["group"] = out["group"].astype(str)
    first = [c for c in REQUIRED + OPTIONAL if c in out.columns]
    return out[first + [c for c in out.columns if c not in first]].reset_index(drop=True)


def read_sweep(
    path: str | Path, name: str, columns: dict | None = None, n_exponents: int = 3
) -> pd.DataFrame:
    """A user's sweep from CSV or parquet: ``columns`` maps contract names to the file's, e.g.
    ``{"width": "d_model", "depth": "n_layers", "tokens": "D", "loss": "val_loss"}``; unmapped contract
    names are looked up as they are. Checked with ``check_sweep`` before it is returned."""
    path = Path(path)
    if not path.is_file():
        raise SweepError(f"{_where(name, str(path))}: no such file. Fix: correct the sweep's `path:`.")
    df = pd.read_parquet(path) if path.suffix in (".parquet", ".pq") else pd.read_csv(path)
    out = _standardise(df, columns, name, str(path))
    return check_sweep(out, name, n_exponents, source=str(path))


# ---------------------------------------------------------------- built-in loaders
def load_chinchilla(points_csv: str | Path, name: str = "chinchilla") -> pd.DataFrame:
    """The chinchilla stage's points.csv (params, flops, tokens, loss, d_model, n_layers, arch_params,
    params_rel_mismatch) as a sweep: d_model → width, n_layers → depth; the rest kept as extras. The
    stage's own points.csv must match the seal rule chinchilla_points wrote; another file is checked
    against a seal where it has one."""
    from depthwidth.chinchilla.points import POINTS_RULE

    own = Path(points_csv).as_posix().endswith("results/chinchilla/points.csv")
    df = read_table(points_csv, POINTS_RULE, require_seal=own)
    out = _standardise(
        df,
        {"width": "d_model", "depth": "n_layers", "tokens": "tokens", "loss": "loss", "params": "params"},
        name,
        str(points_csv),
    )
    return check_sweep(out, name, source=str(points_csv))


_SHAPE = re.compile(r"^d=(\d+)_l=(\d+)(?:_h=(\d+))?$")


def parse_grid_key(key: str) -> dict:
    """``d=<d_model>_l=<n_layers>_h=<heads>-<a>-<lr>-<wd>-<b>-<tokens>-<warmup>-<cooldown>`` → fields.
    The cooldown (3e-05) holds a '-', so the key splits into 9 parts; the first 7 are fields."""
    parts = key.split("-")
    if len(parts) != 9:
        raise SweepError(
            f"OpenLM grid key '{key}' does not split into 9 parts on '-'. Fix: check the "
            "file is the pinned exp_data/grid.json."
        )
    m = _SHAPE.match(parts[0])
    if not m or m.group(3) is None:
        raise SweepError(f"OpenLM grid key '{key}': shape '{parts[0]}' is not d=<int>_l=<int>_h=<int>.")
    return {
        "width": int(m.group(1)),
        "depth": int(m.group(2)),
        "n_heads": int(m.group(3)),
        "a": int(parts[1]),
        "lr": float(parts[2]),
        "wd": float(parts[3]),
        "batch": int(parts[4]),
        "tokens": int(parts[5]),
        "warmup": int(parts[6]),
        "cooldown": float("-".join(parts[7:])),
        "shape": parts[0],
        "key": key,
    }


def load_openlm_grid(root: str | Path, select: str = "best", name: str = "openlm_grid") -> pd.DataFrame:
    """exp_data/grid.json under ``root`` (the openlm_scaling folder) as a sweep.

    ``select="all"``: one row per run (435). ``select="best"`` (default): one row per (d_model, n_layers),
    the run of least loss over heads, warm-up and batch (50 rows; columns n_runs and loss_spread say over
    how many runs and how far apart). The law has no term for heads or hyper-parameters, so it describes
    a shape at its tuned hyper-parameters; every run of a (d_model, n_layers) has the same tokens, so
    keeping all runs would count one (m, ℓ, D) point up to 16 times and treat hyper-parameter misses
    (a diverged warm-up 100 run sits 2.3 nats above its shape's best) as noise of the law.
    """
    path = Path(root) / "exp_data" / "grid.json"
    check_pinned(path, rule=RULE)  # a pinned download is checked where it is used, not only when fetched
    raw = json.loads(path.read_text())
    df = pd.DataFrame([{**parse_grid_key(k), "loss": float(v)} for k, v in raw.items()])
    df["group"] = "grid"
    if select == "all":
        out = df
    elif select == "best":
        g = df.groupby(["width", "depth"])
        best = df.loc[g["loss"].idxmin()].copy()
        best["n_runs"] = g["loss"].size().to_numpy()
        best["loss_spread"] = (g["loss"].max() - g["loss"].min()).to_numpy()
        out = best.sort_values(["width", "depth"])
    else:
        raise SweepError(f"sweep '{name}': select must be 'best' or 'all', not '{select}'.")
    out = _standardise(out, None, name, str(path))
    return check_sweep(out, name, source=str(path))


def read_openlm_main(root: str | Path) -> tuple[pd.DataFrame, list[str]]:
    """Every main run with a known shape: one row per run with width, depth, n_heads, tokens, params,
    params_no_embed, multiplier, train_set, and one ``loss_<val set>`` column per evaluation (8).
    Returns (rows, names of the runs skipped because their shape is not in scaling/open_lm_configs)."""
    root = Path(root)
    manifest = load_manifest()
    rows, skipped = [], []
    for f in sorted((root / "exp_data" / "models").glob("*.json")):
        check_pinned(f, manifest, rule=RULE)  # pinned downloads are checked where they are used
        d = json.loads(f.read_text())
        h = d["hyperparameters"]
        cfg = root / h["model"]  # scaling/open_lm_configs/<shape>.json
        if not cfg.is_file():
            skipped.append(d["name"])
            continue
        check_pinned(cfg, manifest, rule=RULE)
        c = json.loads(cfg.read_text())
        row = {
            "width": int(c["hidden_dim"]),
            "depth": int(c["n_layers"]),
            "n_heads": int(c["n_heads"]),
            "tokens": int(h["tokens"]),
            "params": float(h["params"]),
            "params_no_embed": float(h["params_no_embed"]),
            "multiplier": float(h["chinchilla_multiplier"]),
            "train_set": d["dataset_name"],
            "shape": cfg.stem,
            "run": d["name"],
            "warmup": int(h["warmup"]),
        }
        for r in d["results"]:
            val = Path(r["val_data"][0]).parent.name
            if f"loss_{val}" in row:
                raise SweepError(f"OpenLM run {f.name}: validation set '{val}' appears twice.")
            row[f"loss_{val}"] = float(r["loss"])
        rows.append(row)
    if not rows:
        raise SweepError(
            f"no OpenLM main runs with a known shape under {root / 'exp_data' / 'models'}. "
            "Fix: fetch the pinned openlm_scaling files (manifest.yaml) into that folder."
        )
    return pd.DataFrame(rows), skipped


def load_openlm_main(
    root: str | Path, val_set: str = "c4_val", name: str = "openlm_main", n_exponents: int = 3
) -> pd.DataFrame:
    """The main runs (exp_data/models/*.json) as a sweep: loss = the ``val_set`` evaluation (default
    c4_val, the C4 validation loss that Gadre et al. fit), group = training set. Runs of open_lm_1b and
    open_lm_7b are skipped (their width and depth are not published; logged with their count).

    The main runs have 2 depths (8 and 24), so the full law (``n_exponents=3``) refuses them: pass
    ``n_exponents=2`` and fix α_ℓ to fit them alone."""
    df, skipped = read_openlm_main(root)
    if skipped:
        log.info("openlm_main: skipped %d runs of unknown shape (%s)", len(skipped), ", ".join(skipped))
    col = f"loss_{val_set}"
    if col not in df.columns:
        raise SweepError(
            f"sweep '{name}': no validation set '{val_set}'; the runs have "
            f"{[c[5:] for c in df.columns if c.startswith('loss_')]}."
        )
    df = df.assign(loss=df[col], group=df["train_set"]).sort_values(["group", "width", "depth", "tokens"])
    out = _standardise(df, None, name, str(Path(root) / "exp_data" / "models"))
    out.attrs["skipped_runs"] = skipped
    return check_sweep(out, name, n_exponents, source=str(Path(root) / "exp_data" / "models"))


def compare_grid_main(root: str | Path) -> pd.DataFrame:
    """Runs of grid.json and main runs at the same (d_model, n_layers, tokens): one row per (grid run,
    main run) with the grid loss and, per validation set, main loss − grid loss. Used to establish which
    validation set grid.json reports (``grid_val_set``)."""
    grid = load_openlm_grid(root, select="all")
    main, _ = read_openlm_main(root)
    m = grid.merge(main, on=["width", "depth", "tokens"], suffixes=("_grid", "_main"))
    out = m[
        [
            "width",
            "depth",
            "tokens",
            "n_heads_grid",
            "warmup_grid",
            "batch",
            "loss",
            "train_set",
            "n_heads_main",
            "warmup_main",
        ]
    ].rename(columns={"loss": "loss_grid"})
    # The grid run with the main run's heads and warm-up is the nearest thing to the same run.
    out["same_hparams"] = (m["n_heads_grid"] == m["n_heads_main"]) & (m["warmup_grid"] == m["warmup_main"])
    for v in OPENLM_VAL_SETS:
        out[f"diff_{v}"] = m[f"loss_{v}"] - m["loss"]
    return out.reset_index(drop=True)


def grid_val_set(root: str | Path, tol: float = 0.02) -> dict:
    """Which (training set, validation set) reproduces grid.json's loss on the overlapping runs.

    The grid run compared with a main run is the one with the same shape, tokens, heads and warm-up
    (``same_hparams``). A pair matches when that grid loss is within ``tol`` nats of the main run's
    evaluation on every overlapping shape. Returns {"match": [(train, val), …] (empty when none), "best":
    (train, val, median |difference|) of least median, "n_overlap_shapes", "tol", "table": per (train, val)
    the median and max over shapes of |difference| and the signed differences per shape}."""
    cmp = compare_grid_main(root)
    cmp = cmp[cmp["same_hparams"]]
    rows = []
    for ts, sub in cmp.groupby("train_set"):
        for v in OPENLM_VAL_SETS:
            per_shape = sub.assign(a=sub[f"diff_{v}"].abs()).groupby(["width", "depth"])["a"].min()
            signed = sub.groupby(["width", "depth"])[f"diff_{v}"].first()
            rows.append(
                {
                    "train_set": ts,
                    "val_set": v,
                    "median_abs_diff": float(per_shape.median()),
                    "max_abs_diff": float(per_shape.max()),
                    "n_shapes": int(len(per_shape)),
                    "diffs": {f"{w}x{d}": round(float(x), 4) for (w, d), x in signed.items()},
                }
            )
    table = pd.DataFrame(rows).sort_values("median_abs_diff").reset_index(drop=True)
    match = [(r.train_set, r.val_set) for r in table.itertuples() if r.max_abs_diff <= tol]
    best = table.iloc[0]
    return {
        "match": match,
        "best": (best.train_set, best.val_set, float(best.median_abs_diff)),
        "n_overlap_shapes": int(cmp.groupby(["width", "depth"]).ngroups),
        "tol": tol,
        "table": table,
    }


def openlm_files(manifest: dict) -> list[str]:
    """The manifest keys (paths under data/raw/) of the OpenLM files: the inputs a rule needs."""
    return sorted(k for k in manifest if k.startswith(OPENLM_DIR + "/"))


LOADERS = {"chinchilla": load_chinchilla, "openlm_grid": load_openlm_grid, "openlm_main": load_openlm_main}


def load_sweep(spec: dict, n_exponents: int = 3) -> pd.DataFrame:
    """One ``sweeps:`` entry → a checked sweep table. ``spec`` has ``name`` and either ``loader``
    (a key of ``LOADERS``) with ``path`` (points.csv for chinchilla, the openlm_scaling folder for the
    OpenLM loaders) and optional ``options`` (keyword arguments of the loader), or ``path`` to a
    CSV/parquet with optional ``columns`` (contract name → file column)."""
    name = spec["name"]
    if spec.get("loader"):
        if spec["loader"] not in LOADERS:
            raise SweepError(f"sweep '{name}': unknown loader '{spec['loader']}'; known: {sorted(LOADERS)}.")
        loader = LOADERS[spec["loader"]]
        kw = dict(spec.get("options") or {})
        if "n_exponents" in inspect.signature(loader).parameters:
            kw.setdefault("n_exponents", n_exponents)
        return loader(spec["path"], name=name, **kw)
    return read_sweep(spec["path"], name, spec.get("columns"), n_exponents)


def chinchilla_sweep_points(spec: dict, runs_out, sources: dict | None = None) -> pd.DataFrame:
    """Rule chinchilla_sweep_points: one ``sweeps:`` entry → its checked runs (``runs_out`` CSV), less the
    ``drop_highest`` highest-loss runs (``law.kept_mask``, as the main fit drops them). Raises
    ``SweepError`` (naming the sweep, file and column) before anything is written. The pinned OpenLM
    files of an OpenLM loader are checked first and, where damaged, fetched again from ``sources``."""
    if sources is not None and str(spec.get("loader", "")).startswith("openlm"):
        manifest = load_manifest()
        for key in openlm_files(manifest):
            path = Path(spec["path"]) / key[len(OPENLM_DIR) + 1 :]
            if path.is_file():
                check_pinned(path, manifest, rule=RULE, sources=sources)
    df = load_sweep(spec, spec["n_exponents"])
    keep = kept_mask(df["loss"].to_numpy(float), spec["drop_highest"])
    out = check_sweep(df[keep].reset_index(drop=True), spec["name"], spec["n_exponents"], source=spec["path"])
    log.info(
        "sweep %s: %d runs (%d highest-loss left out), %d groups",
        spec["name"],
        len(out),
        int((~keep).sum()),
        out["group"].nunique(),
    )
    write_table(out, runs_out)  # sealed: rule chinchilla_sweep_identify checks it
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m depthwidth.chinchilla.sweeps FILE [--width COL ...]``: check a table of runs as a sweep
    entry's file is checked (``read_sweep``) and say what it holds or what to fix."""
    import argparse

    ap = argparse.ArgumentParser(
        prog="python -m depthwidth.chinchilla.sweeps",
        description="Check a CSV/parquet of runs as a chinchilla.sweeps entry's file is checked. To fit it: "
        "depthwidth fit FILE --width ... (docs/own_runs.md).",
    )
    ap.add_argument("file", help="CSV or parquet, one row per run")
    for col in REQUIRED + OPTIONAL:
        ap.add_argument(f"--{col}", help=f"the file's column for {col} (default: {col})")
    ap.add_argument(
        "--n-exponents", type=int, default=3, choices=(1, 2, 3), help="distinct values each axis needs"
    )
    a = ap.parse_args(argv)
    columns = {c: getattr(a, c) for c in REQUIRED + OPTIONAL if getattr(a, c)}
    try:
        df = read_sweep(a.file, Path(a.file).stem, columns, a.n_exponents)
    except SweepError as e:
        print(e)
        return 1
    counts = ", ".join(
        f"{df[c].nunique()} {w}"
        for c, w in (("width", "widths"), ("depth", "depths"), ("tokens", "token counts"))
    )
    print(f"ok: {a.file}: {len(df)} runs, {counts}, {df['group'].nunique()} group(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
