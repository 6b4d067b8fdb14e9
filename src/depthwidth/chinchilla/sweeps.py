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
# Distinct values each exponent's axis needs: a power law c·x^-α next to a free offset needs 3 points;
# with α held (``fixed``) 2, with α and c held 1.
AXES = {"width": "alpha_m", "depth": "alpha_l", "tokens": "alpha_D"}
COEFFICIENTS = {"width": "c_m", "depth": "c_l", "tokens": "c_D"}
# What a user's sweep may do with rows that repeat a run (the same width, depth, tokens, loss, params and
# group): stop (the default, naming the rows) or drop (keep the first of each set of repeats).
DUPLICATES = ("stop", "drop")

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


def check_sweep(
    df: pd.DataFrame,
    name: str,
    n_exponents: int = 3,
    source: str | None = None,
    fixed: dict | None = None,
) -> pd.DataFrame:
    """Raise ``SweepError`` unless ``df`` can be fitted with ``n_exponents`` free exponents; return ``df``.

    Checks, in order: required columns present; no NaN loss; width, depth, tokens, loss (and params where
    given) finite and > 0; enough distinct widths, depths and token counts for the exponents that are
    free (:func:`distinct_needed`: ``n_exponents`` for a free exponent, a power law with its own
    coefficient next to the shared offset L0 needing three distinct values of its variable; 2 where the
    sweep's ``fixed`` holds the exponent, 1 where it holds the exponent and its coefficient).
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
    fixed = dict(fixed or {})
    for col, exponent in AXES.items():
        n, need = int(pd.Series(df[col]).nunique()), distinct_needed(col, n_exponents, fixed)
        if n < need:
            values = [v.item() if hasattr(v, "item") else v for v in sorted(pd.unique(df[col]))[:8]]
            held = "held" if exponent in fixed else "free"
            raise SweepError(
                f"{where}: column '{col}' has {n} distinct value(s) ({values}); a {held} {exponent} "
                f"needs at least {need} (else the {col} term is not determined). Fix: add runs at more {col} "
                f"values, or hold the {col} term in this sweep's entry of chinchilla.sweeps: "
                f"{_hold_fix(col, n, n_exponents, fixed)}"
            )
    return df


def distinct_needed(col: str, n_exponents: int, fixed: dict) -> int:
    """Distinct values of ``col`` (width, depth or tokens) a sweep needs: ``n_exponents`` where its
    exponent is free, at most 2 where ``fixed`` holds the exponent, 1 where it holds the coefficient too."""
    if AXES[col] not in fixed:
        return n_exponents
    return 1 if COEFFICIENTS[col] in fixed else min(2, n_exponents)


def _hold_fix(col: str, n: int, n_exponents: int, fixed: dict) -> str:
    """The ``fixed:`` entry (YAML, as it goes into the config) that lets ``n`` distinct values through."""
    exponent, coefficient = AXES[col], COEFFICIENTS[col]
    held = {**fixed, exponent: fixed.get(exponent, 1.0)}
    if distinct_needed(col, n_exponents, held) > n:
        held[coefficient] = fixed.get(coefficient, 1.0e-6)
    text = ", ".join(
        f"{k}: {v!r}" if not isinstance(v, float) else f"{k}: {_yaml_float(v)}" for k, v in held.items()
    )
    why = (
        f" (with one {col} the term {coefficient}/{col}^{exponent} is a constant that L0 takes up, so its "
        "coefficient is held too; the sweep then says nothing about "
        f"{exponent})"
        if coefficient in held and coefficient not in fixed
        else f" ({exponent} 1.0, or the value you assume; the sweep then says nothing about {exponent})"
    )
    return f"fixed: {{{text}}}{why}."


def _yaml_float(v: float) -> str:
    """A float as YAML reads it back as a float (an exponent needs its sign: 1.0e-06, not 1e-06)."""
    text = repr(float(v))
    if "e" in text:
        mantissa, exp = text.split("e")
        mantissa = mantissa if "." in mantissa else mantissa + ".0"
        text = f"{mantissa}e{'' if exp.startswith(('-', '+')) else '+'}{exp}"
    return text


def check_duplicates(
    df: pd.DataFrame, name: str, source: str | None, duplicates: str = "stop", config_key: str | None = None
) -> pd.DataFrame:
    """Rows that repeat a run (equal in every contract column present: width, depth, tokens, loss, params,
    group) would count one run several times and pull the fit towards it. ``duplicates="stop"`` raises
    ``SweepError`` naming the rows and both fixes; ``"drop"`` keeps the first of each set of repeats and
    logs how many were dropped."""
    cols = [c for c in REQUIRED + OPTIONAL if c in df.columns]
    repeat = df.duplicated(subset=cols, keep="first").to_numpy()
    if not repeat.any():
        return df
    if duplicates == "drop":
        log.warning(
            "%s: %d repeated row(s) dropped (duplicates: drop)", _where(name, source), int(repeat.sum())
        )
        return df[~repeat].reset_index(drop=True)
    first = df.duplicated(subset=cols, keep=False).to_numpy() & ~repeat
    key = config_key or f"the chinchilla.sweeps entry named '{name}'"
    raise SweepError(
        f"{_where(name, source)}: {int(repeat.sum())} row(s) repeat an earlier run in every column of "
        f"{cols} (0-based data rows {_rows(repeat, df.index)}, repeating rows {_rows(first, df.index)}); "
        "fitted as they are, each repeat would count its run again. Fix: remove the repeated rows from the "
        f"file, or add `duplicates: drop` to {key} to keep the first of each."
    )


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


def sweep_key(name: str, index: int | None = None) -> str:
    """The config key of a sweep's file: ``chinchilla.sweeps[<index>].path`` (the entry named ``name``)."""
    at = f"[{index}]" if index is not None else ""
    return f"chinchilla.sweeps{at}.path (the entry named '{name}')"


_PARQUET = (".parquet", ".pq")


def sweep_file_problem(path: str | Path) -> str | None:
    """Why ``path`` cannot be read as a sweep table, or None: it does not exist, is a folder, is empty, or
    is binary where a CSV is expected (a NUL byte or bytes that are not UTF-8 in its first 64 KiB), or a
    parquet without the parquet mark. Cheap: run while the workflow is parsed."""
    path = Path(path).expanduser()
    if not path.exists():
        return f"{path} does not exist (relative paths are read from the working directory, {Path.cwd()})"
    if not path.is_file():
        return f"{path} is a folder, not a CSV or parquet file"
    size = path.stat().st_size
    if size == 0:
        return f"{path} is empty (0 bytes)"
    with open(path, "rb") as fh:
        head = fh.read(65536)
    if path.suffix in _PARQUET:
        return None if head[:4] == b"PAR1" else f"{path} is not a parquet file (it lacks the mark PAR1)"
    if b"\0" in head:
        return f"{path} is binary (it holds NUL bytes), not a CSV; a parquet file needs the suffix .parquet"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 4:  # not a character cut at the end of the 64 KiB read
            return f"{path} is not UTF-8 text (byte {e.start}: {head[e.start : e.start + 1]!r}), so not a CSV"
    return None


def read_sweep_table(
    path: str | Path,
    sweep_name: str,
    config_key: str | None = None,
    columns: dict | None = None,
    n_exponents: int = 3,
    fixed: dict | None = None,
    duplicates: str = "stop",
) -> pd.DataFrame:
    """A user's sweep (CSV, or parquet by its suffix) read and checked as rule chinchilla_sweep_points
    checks it: the file (:func:`sweep_file_problem`, and what the reader says of it), the column mapping
    (``columns``: contract name → file column), repeated rows (:func:`check_duplicates`) and the rows'
    values (:func:`check_sweep` with ``n_exponents`` and ``fixed``). Every ``SweepError`` names the
    sweep, the file, ``config_key`` (default: :func:`sweep_key`) and a fix."""
    path = Path(path)
    key = config_key or sweep_key(sweep_name)
    fix = f"Fix: point {key} at a CSV (or .parquet) file with one row per run."
    problem = sweep_file_problem(path)
    if problem:
        raise SweepError(f"{_where(sweep_name, str(path))}: {problem}. {fix}")
    try:
        df = pd.read_parquet(path) if path.suffix in _PARQUET else pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise SweepError(f"{_where(sweep_name, str(path))}: no header and no rows. {fix}") from None
    except (UnicodeDecodeError, pd.errors.ParserError, ValueError, OSError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise SweepError(
            f"{_where(sweep_name, str(path))}: cannot be read as {'parquet' if path.suffix in _PARQUET else 'CSV'} "
            f"({type(e).__name__}: {first}). {fix}"
        ) from None
    out = _standardise(df, columns, sweep_name, str(path))
    if duplicates not in DUPLICATES:
        raise SweepError(f"sweep '{sweep_name}': duplicates must be one of {DUPLICATES}, not {duplicates!r}.")
    out = check_duplicates(out, sweep_name, str(path), duplicates, key.replace(".path ", " ", 1))
    return check_sweep(out, sweep_name, n_exponents, source=str(path), fixed=fixed)


def read_sweep(
    path: str | Path,
    name: str,
    columns: dict | None = None,
    n_exponents: int = 3,
    fixed: dict | None = None,
    duplicates: str = "stop",
) -> pd.DataFrame:
    """A user's sweep from CSV or parquet: ``columns`` maps contract names to the file's, e.g.
    ``{"width": "d_model", "depth": "n_layers", "tokens": "D", "loss": "val_loss"}``; unmapped contract
    names are looked up as they are. Read and checked by :func:`read_sweep_table`."""
    return read_sweep_table(path, name, None, columns, n_exponents, fixed, duplicates)


# ---------------------------------------------------------------- built-in loaders
def load_chinchilla(
    points_csv: str | Path, name: str = "chinchilla", fixed: dict | None = None
) -> pd.DataFrame:
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
    return check_sweep(out, name, source=str(points_csv), fixed=fixed)


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


def load_openlm_grid(
    root: str | Path, select: str = "best", name: str = "openlm_grid", fixed: dict | None = None
) -> pd.DataFrame:
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
    return check_sweep(out, name, source=str(path), fixed=fixed)


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
    root: str | Path,
    val_set: str = "c4_val",
    name: str = "openlm_main",
    n_exponents: int = 3,
    fixed: dict | None = None,
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
    return check_sweep(out, name, n_exponents, source=str(Path(root) / "exp_data" / "models"), fixed=fixed)


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
        accepted = inspect.signature(loader).parameters
        if "n_exponents" in accepted:
            kw.setdefault("n_exponents", n_exponents)
        if "fixed" in accepted:  # a held exponent needs fewer distinct values (check_sweep)
            kw.setdefault("fixed", spec.get("fixed"))
        return loader(spec["path"], name=name, **kw)
    return read_sweep(
        spec["path"],
        name,
        spec.get("columns"),
        n_exponents,
        spec.get("fixed"),
        spec.get("duplicates", "stop"),
    )


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
    out = check_sweep(
        df[keep].reset_index(drop=True), spec["name"], spec["n_exponents"], spec["path"], spec.get("fixed")
    )
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
