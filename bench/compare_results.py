"""Compare two runs' results: every json and csv file under ``OLD/results`` against the same file under
``NEW/results``, number by number, to a relative tolerance (1e-9 by default). Timing fields (keys with a
word that names seconds, steps or tokens per second, a date, host, version or path) and the ``.seal.json``
checksums beside each output are left out; ``--moved`` maps an output that an upgrade moved. Prints each
difference, the files only one run has, and a count; exits 1 where a shared file differs, where a file of
the earlier run is missing from the later one (``ONLY OLD``), or where a file cannot be read (``UNREADABLE``,
naming the file and why). An empty CSV (no header) and a header-only CSV compare as tables without rows. A
file only the later run has (``ONLY NEW``: an output it adds) is listed and is not a difference.

    .venv/bin/python bench/compare_results.py ../old_run . --moved fits/squared/=fits/decomposed/squared/

A refactor proves itself by this printing no ``DIFF`` line for the default run.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

import pandas as pd

# A key is a timing field when one of its underscore-separated words names a time, a rate or where and
# with what it ran (``train_seconds``, ``ms_per_step``, ``tokens_per_s_this_run``, ``path``), matched as
# whole words so that science keys such as ``m_times_mean_sq_overlap`` or ``angle_update_deg`` are compared.
TIMING = re.compile(
    r"(?:^|_)(?:seconds|elapsed|wall|time|date|created|host|hostname|duration|started|finished|path|python"
    r"|version|(?:ms|tokens|steps)_per_(?:s|step|second))(?:_|$)",
    re.IGNORECASE,
)


def differences(a, b, where: str, rel: float) -> list[str]:
    """Every place where ``b`` differs from ``a``: a number beyond ``rel``, a string, a key or a length."""
    out: list[str] = []
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a:
            if TIMING.search(str(k)):
                continue
            if k not in b:
                out.append(f"{where}.{k}: missing in new")
            else:
                out += differences(a[k], b[k], f"{where}.{k}", rel)
        out += [f"{where}.{k}: added in new" for k in b if k not in a and not TIMING.search(str(k))]
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: length {len(a)} -> {len(b)}"]
        for i, (x, y) in enumerate(zip(a, b)):
            out += differences(x, y, f"{where}[{i}]", rel)
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        both_nan = isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
        if not both_nan and a != b and not abs(a - b) <= rel * max(abs(a), abs(b)):
            out.append(f"{where}: {a!r} -> {b!r}")
    elif a != b:
        out.append(f"{where}: {str(a)[:80]!r} -> {str(b)[:80]!r}")
    return out


class Unreadable(ValueError):
    """A results file that cannot be read as JSON or CSV; the message names the file and why."""


def read(path: Path):
    """A json file as its value, a csv file as {column: values} (an empty file as {})."""
    try:
        if path.suffix == ".json":
            return json.loads(path.read_text())
        try:
            return pd.read_csv(path).to_dict("list")
        except pd.errors.EmptyDataError:  # no header at all (a 0- or 1-byte file): a table without columns
            return {}
    except (OSError, UnicodeDecodeError, ValueError, pd.errors.ParserError) as e:
        raise Unreadable(f"{path}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from e


def outputs(results: Path) -> dict[str, Path]:
    return {
        str(p.relative_to(results)): p
        for p in sorted(results.rglob("*"))
        if p.suffix in (".json", ".csv") and not p.name.endswith(".seal.json")
    }


def compare(
    old: Path, new: Path, moved: list[tuple[str, str]], rel: float = 1e-9
) -> tuple[int, int, list[str]]:
    """(files the same, files compared, report lines) for ``old/results`` against ``new/results``. A file
    of ``old`` missing from ``new`` or a file either side cannot read counts as compared and not the
    same."""
    a, b = outputs(old / "results"), outputs(new / "results")
    lines: list[str] = []
    same = compared = 0
    matched: set[str] = set()
    for rel_path, p in a.items():
        target = rel_path
        for src, dst in moved:
            target = target.replace(src, dst)
        compared += 1
        if target not in b:
            lines.append(f"ONLY OLD: {rel_path} (missing from {new / 'results'})")
            continue
        matched.add(target)
        try:
            diff = differences(read(p), read(b[target]), "", rel)
        except Unreadable as e:
            lines.append(f"UNREADABLE {rel_path}: {e}")
            continue
        if diff:
            lines.append(f"DIFF {rel_path} ({len(diff)}):")
            lines += [f"    {d}" for d in diff[:12]]
        else:
            same += 1
    lines += [f"ONLY NEW: {r}" for r in b if r not in matched]
    return same, compared, lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", type=Path, help="the folder of the earlier run (it holds results/)")
    ap.add_argument("new", type=Path, help="the folder of the later run")
    ap.add_argument("--moved", action="append", default=[], metavar="OLD=NEW", help="a moved path fragment")
    ap.add_argument("--rel", type=float, default=1e-9, help="relative tolerance (default 1e-9)")
    args = ap.parse_args()
    for folder in (args.old, args.new):
        if not (folder / "results").is_dir():
            sys.exit(f"{folder}/results is not a folder: name the folder a run was made in")
    moved = [tuple(m.split("=", 1)) for m in args.moved if "=" in m]
    if len(moved) != len(args.moved):
        sys.exit("--moved takes OLD=NEW, e.g. --moved fits/squared/=fits/decomposed/squared/")
    same, compared, lines = compare(args.old, args.new, moved, args.rel)
    print("\n".join(lines))
    print(f"{same} of {compared} files of the earlier run the same to {args.rel:g} relative")
    sys.exit(0 if same == compared else 1)


if __name__ == "__main__":
    main()
