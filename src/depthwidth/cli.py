"""``depthwidth fit``: fit the laws to your own training runs from one CSV, without a config.

    depthwidth fit runs.csv --width d_model --depth n_layers --tokens D --loss loss
    depthwidth fit runs.csv --params N --tokens D --loss loss          # the Chinchilla law alone
    python -m depthwidth fit ...        # the same (also python -m depthwidth.chinchilla)

With width and depth, the table is fitted exactly as a ``chinchilla.sweeps`` entry of the workflow (rules
chinchilla_sweep_points and chinchilla_sweep_identify, the schema's default settings unless an option
says otherwise): the decomposed law L = c_m/m^α_m + c_ℓ/ℓ^α_ℓ + c_D/D^α_D + L0 with profile intervals,
whether each exponent is identified and why not, the held-out error and, where ``--params`` is given, the
Chinchilla law beside it. Without width and depth, ``--params`` fits the Chinchilla law
L = E + A/N^α + B/D^β alone. Files go to ``--out`` (default results/fit/<file name>/).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from depthwidth.laws.law import EXPONENT_LABELS, EXPONENTS

# "α_ℓ (depth)", ... from the one table of exponent names (laws.law.EXPONENT_LABELS)
EXPONENT_NAMES = {a: f"{sym} ({what})" for a, (sym, what) in EXPONENT_LABELS.items()}


def _fmt(x, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return f"{x:.{digits}g}"


def _fixed(items: list[str]) -> dict:
    out = {}
    for item in items:
        key, _, value = item.partition("=")
        try:
            out[key.strip()] = float(value)
        except ValueError:
            raise SystemExit(f"--fix {item!r}: write NAME=VALUE, e.g. --fix alpha_l=1") from None
    return out


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="depthwidth",
        description="Fit the width/depth law (and the Chinchilla law) to your own training runs.",
        epilog="Documentation: docs/own_runs.md ('Fit your own runs').",
    )
    sub = ap.add_subparsers(dest="command", required=True, metavar="fit")
    f = sub.add_parser(
        "fit",
        help="fit a CSV or parquet of runs (one row per run)",
        description="Fit the laws to your own training runs from one CSV, without a config: with --width "
        "and --depth the decomposed law as the workflow's sweep rules fit it (and the Chinchilla law beside "
        "it with --params), else with --params the Chinchilla law alone. Prints the exponents, their "
        "profile intervals, whether each is identified and why, the held-out error, and where the files "
        "went.",
    )
    f.add_argument("runs", type=Path, help="CSV or parquet with one row per training run")
    f.add_argument("--width", help="column of the model width (d_model)")
    f.add_argument("--depth", help="column of the number of layers")
    f.add_argument("--tokens", default="tokens", help="column of the training tokens D (default: tokens)")
    f.add_argument("--loss", default="loss", help="column of the final loss, nats/token (default: loss)")
    f.add_argument(
        "--params", help="column of the parameter count N (the Chinchilla law; optional with width and depth)"
    )
    f.add_argument("--group", help="column that groups runs (e.g. training set); see --group-offsets")
    f.add_argument("--name", help="the sweep's name (default: the file name without its suffix)")
    f.add_argument("--out", type=Path, help="folder for the files (default: results/fit/<name>)")
    f.add_argument(
        "--group-offsets", action="store_true", help="one offset L0 per group instead of one shared"
    )
    f.add_argument(
        "--fix", action="append", default=[], metavar="NAME=VALUE", help="hold a parameter, e.g. alpha_l=1"
    )
    f.add_argument(
        "--profile",
        nargs="+",
        choices=EXPONENTS,
        help="exponents to profile (default: the sweep default, alpha_l)",
    )
    f.add_argument("--drop-highest", type=int, help="leave out the k highest-loss runs (default 0)")
    f.add_argument("--bootstrap", type=int, help="bootstrap refits (default: the sweep default, 20)")
    f.add_argument("--heldout-splits", type=int, help="random splits of the held-out check (default 10)")
    f.add_argument(
        "--n-exponents", type=int, choices=(1, 2, 3), help="distinct values each axis needs (default 3)"
    )
    f.add_argument("--objective", choices=("squared", "huber"), help="fit objective (default squared)")
    f.add_argument("--seed", type=int, help="seed of starts and resamples (default 0)")
    f.add_argument("--json", action="store_true", help="print the summary as JSON instead of text")
    return ap


def _settings(a) -> dict:
    s = {
        "fixed": _fixed(a.fix) if a.fix else None,
        "profile": a.profile,
        "drop_highest": a.drop_highest,
        "bootstrap": a.bootstrap,
        "heldout_splits": a.heldout_splits,
        "n_exponents": a.n_exponents,
        "loss": a.objective,
        "seed": a.seed,
        "group_offsets": True if a.group_offsets else None,
    }
    return {k: v for k, v in s.items() if v is not None}


def why_not_identified(s: dict, a: str, df=None) -> str:
    """Why exponent ``a`` of a sweep summary is not identified: fixed, at its bound, not profiled, its
    95 % profile interval open (on which side), and, for the width and depth exponents, width and depth
    moving together across the runs."""
    import numpy as np

    if a in s["fixed"]:
        return f"held fixed at {s['fixed'][a]:g}"
    if a in s["at_bound"]:
        return "ran to its bound"
    if a not in s["profiles"]:
        return "not profiled (--profile)"
    iv = s["profiles"][a]["intervals"]["95%"]
    sides = [w for w, closed in (("below", iv["closed_lo"]), ("above", iv["closed_hi"])) if not closed]
    why = f"95 % profile interval open {' and '.join(sides)}" if sides else ""
    if df is not None and a in ("alpha_m", "alpha_l"):
        r = float(np.corrcoef(np.log(df["width"].astype(float)), np.log(df["depth"].astype(float)))[0, 1])
        if abs(r) > 0.9:
            why += f"; width and depth move together (corr(log m, log ℓ) = {r:.2f})"
    if a == "alpha_D" and s["tokens_vs_size"]["tied"]:
        why += f"; tokens tied to size (corr(log D, log N) = {s['tokens_vs_size']['corr_logD_logN']:.2f})"
    return why.lstrip("; ") or "profile interval open"


def near_zero(params: dict) -> list[str]:
    """Coefficients and offsets of a fit that ran to 0 (their lower bound): no term of theirs is left."""
    return [
        k
        for k, v in params.items()
        if not k.startswith(("alpha", "beta")) and v["value"] is not None and abs(v["value"]) < 1e-6
    ]


def sweep_lines(s: dict, df) -> list[str]:
    """The printed summary of a sweep's identify summary. A fit with any parameter at a bound (an
    exponent at its cap, a coefficient or offset at 0) prints no standard errors: its covariance is not
    that of an interior optimum."""
    from depthwidth.chinchilla.identify import interval_text, sweep_shape

    zero = near_zero(s["params"])
    boundary = bool(zero or s["at_bound"])
    lines = [
        f"Decomposed law L = c_m/m^α_m + c_ℓ/ℓ^α_ℓ + c_D/D^α_D + L0: {s['n']} runs, {len(s['groups'])} group(s)"
        + (", one L0 per group" if s["group_offsets"] else "")
        + ("" if s["converged"] else " (the fit did NOT converge)"),
        f"  {'exponent':<14}{'value':>10}{'se (lmfit)':>12}  {'95 % profile interval':<26}identified",
    ]
    for a in EXPONENTS:
        p = s["params"][a]
        ident = s["identified"].get(a)
        word = "yes" if ident else f"no: {why_not_identified(s, a, df)}"
        se = "–" if boundary or a in s["fixed"] else _fmt(p["stderr"], 2)
        lines.append(
            f"  {EXPONENT_NAMES[a]:<14}{_fmt(p['value']):>10}{se:>12}  {interval_text(s, a, '95%'):<26}{word}"
        )
    l0 = {k: v for k, v in s["params"].items() if k.startswith("L0")}
    lines.append("  " + ", ".join(f"{k} = {_fmt(v['value'])}" for k, v in l0.items()))
    if boundary:
        at = [*s["at_bound"], *(f"{k} ≈ 0" for k in zero)]
        lines.append(
            f"  a boundary solution ({', '.join(at)}): no standard errors printed; a term at 0 is no term"
        )
    t = s["tokens_vs_size"]
    lines.append(
        f"  tokens vs size: corr(log D, log N) = {_fmt(t['corr_logD_logN'], 3)}"
        + (" (tied: α_D is confounded with the size terms)" if t["tied"] else "")
    )
    h = s.get("heldout")
    if h:
        key = "mean_abs_log_test_mean" if "loss" in s else "rmse_log_test_mean"
        what = "mean |log residual|" if "loss" in s else "RMSE of log L"
        lines.append(
            f"  held-out {what} ({h['n_splits']} splits of {100 * h['test_fraction']:.0f} %): "
            f"{_fmt(h[key])} ± {_fmt(h[key.replace('_mean', '_std')], 2)} (in-sample RMSE {_fmt(s['rmse_log'])})"
        )
    lines.append("  " + sweep_shape(s)[1])
    ch = s.get("laws", {}).get("chinchilla")
    if ch:
        lines += law_lines(ch, "Chinchilla law on the same runs")
        lower = s["laws"].get("lower", {})
        if lower:
            lines.append(
                "  lower (better): " + ", ".join(f"{k} {v}" for k, v in lower.items() if isinstance(v, str))
            )
    return lines


def law_lines(ch: dict, title: str = "Chinchilla law") -> list[str]:
    """The printed summary of a Chinchilla-law fit (``own_runs.fit_chinchilla_law`` or a sweep's)."""
    p = ch["params"]
    zero = near_zero(p)
    lines = [f"{title} L = E + A/N^α + B/D^β:"]
    for k in ("alpha", "beta"):
        ci = p[k].get("bootstrap_ci95")
        ci_text = f", bootstrap 95 % [{_fmt(ci[0], 3)}, {_fmt(ci[1], 3)}]" if ci else ""
        se = "" if zero else f" ± {_fmt(p[k]['stderr'], 2)}"
        lines.append(f"  {k:<6}{_fmt(p[k]['value']):>10}{se}{ci_text}")
    offs = {k: v for k, v in p.items() if k.startswith("E")}
    lines.append("  " + ", ".join(f"{k} = {_fmt(v['value'])}" for k, v in offs.items()))
    if zero:
        lines.append(f"  a boundary solution ({', '.join(zero)} ≈ 0): no standard errors printed")
    h = ch.get("heldout")
    if h:
        lines.append(
            f"  held-out RMSE of log L ({h['n_splits']} splits): {_fmt(h['rmse_log_test_mean'])} ± "
            f"{_fmt(h['rmse_log_test_std'], 2)}"
        )
    sp = ch.get("split", {})
    if "a" in sp:
        lines.append(f"  compute-optimal split: N* ∝ C^{_fmt(sp['a'], 3)}, D* ∝ C^{_fmt(sp['b'], 3)}")
    return lines


def figures(s: dict, out: Path) -> list[Path]:
    """Δχ² profile of each profiled exponent and the partial dependence on depth, as PNGs in ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for a, prof in s["profiles"].items():
        rows = sorted(prof["rows"], key=lambda r: r["value"])
        x = np.array([r["value"] for r in rows])
        obj = np.array([r["objective"] for r in rows])
        iv = prof["intervals"]["95%"]
        fig, ax = plt.subplots(figsize=(4.5, 3.2))
        scale = iv.get("scale") or (s["s2"] if "loss" not in s else 1.0)
        ax.plot(x, (obj - obj.min()) / scale, "o-", ms=3)
        ax.axhline(3.84, color="0.4", ls="--", lw=1, label="95 % (Δχ² = 3.84)")
        ax.set_xscale("log")
        ax.set_xlabel(EXPONENT_NAMES[a])
        ax.set_ylabel("Δχ² (profile)")
        ax.set_ylim(0, max(10, min(50, float(np.nanmax((obj - obj.min()) / scale)))))
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = out / f"profile_{a}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    dp = s.get("depth_partial")
    if dp:
        fig, ax = plt.subplots(figsize=(4.5, 3.2))
        depth = np.array(dp["depth"])
        ax.scatter(depth, dp["partial"], s=10, label="runs: L − width, token and offset terms")
        order = np.argsort(depth)
        ax.plot(depth[order], np.array(dp["depth_term"])[order], color="C1", label="fitted c_ℓ/ℓ^α_ℓ")
        ax.set_xlabel("depth (layers)")
        ax.set_ylabel("loss part (nats)")
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = out / "depth_partial.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def fit(a) -> int:
    import pandas as pd

    from depthwidth.chinchilla import own_runs
    from depthwidth.chinchilla.sweeps import SweepError
    from depthwidth.files import atomic_write_json

    name = a.name or a.runs.stem
    out = a.out or Path("results/fit") / name
    columns = {
        k: v
        for k, v in (
            ("width", a.width),
            ("depth", a.depth),
            ("tokens", a.tokens),
            ("loss", a.loss),
            ("params", a.params),
            ("group", a.group),
        )
        if v
    }
    try:
        if a.width and a.depth:
            spec = own_runs.sweep_settings(name, a.runs, columns, **_settings(a))
            s = own_runs.fit_sweep(spec, out)
            df = pd.read_csv(out / "runs.csv")
            figs = figures(s, out / "figures")
            summary = s
            lines = sweep_lines(s, df)
        elif a.width or a.depth:
            raise SweepError(
                "give both --width and --depth (the decomposed law), or neither and --params (the Chinchilla law)"
            )
        elif a.params:
            if not a.runs.is_file():
                raise SweepError(
                    f"sweep '{name}' (file {a.runs}): no such file. Fix: the path is relative to {Path.cwd()}"
                )
            raw = pd.read_parquet(a.runs) if a.runs.suffix in (".parquet", ".pq") else pd.read_csv(a.runs)
            absent = {k: v for k, v in columns.items() if v not in raw.columns}
            if absent:
                raise SweepError(
                    f"sweep '{name}' (file {a.runs}): column(s) {absent} not in the file (has {list(raw.columns)})"
                )
            df = own_runs.check_nd(raw.rename(columns={v: k for k, v in columns.items()}), name, str(a.runs))
            spec = own_runs.sweep_settings(name, a.runs, columns, **_settings(a))
            summary = own_runs.fit_chinchilla_law(df, own_runs.rule_params(spec)[1])
            atomic_write_json(out / "chinchilla_law.json", summary)
            figs = []
            lines = [f"{len(df)} runs, no width and depth given: the Chinchilla law alone."] + law_lines(
                summary
            )
        else:
            raise SweepError(
                "give --width and --depth (the decomposed law), or --params (the Chinchilla law from N and D)"
            )
    except (SweepError, KeyError, ValueError) as e:
        print(f"depthwidth fit: {e}", file=sys.stderr)
        return 2
    if a.json:
        print(json.dumps(summary, default=float, indent=1))
        return 0
    print(
        f"depthwidth fit {a.runs} (sweep '{name}'; settings: the workflow's sweep defaults"
        + (f", {_settings(a)}" if _settings(a) else "")
        + ")"
    )
    print("\n".join(lines))
    files = sorted(p for p in out.glob("*") if p.is_file() and not p.name.startswith("."))
    print(f"Files in {out}/: " + ", ".join(p.relative_to(out).as_posix() for p in files + figs))
    return 0


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    if a.command == "fit":
        return fit(a)
    return 2


if __name__ == "__main__":
    sys.exit(main())
