"""The results table of README.md and docs/results.md, written from the default run's
``results/headline.csv`` (every headline row of the report, in its order) and ``docs/paper_scale.csv``
(the paper-scale runs made here: the headline quantity, the result, the command that made it and its date).

    python -m depthwidth.results_table README.md docs/results.md          # rewrite the tables
    python -m depthwidth.results_table --check README.md docs/results.md  # exit 1 where one is stale

Each file holds the table between the lines ``<!-- results-table:start -->`` and ``<!-- results-table:end -->``;
only that region is rewritten. Links to the stage pages are made relative to each file.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from pathlib import Path

import pandas as pd

from depthwidth.sections import HEADLINE_KEYS, fmt_pm, rewrite_files, rewrite_region

START, END = "<!-- results-table:start -->", "<!-- results-table:end -->"
HEADLINE = Path("results/headline.csv")
PAPER_SCALE = Path("docs/paper_scale.csv")
PAPER_SCALE_KEYS = ("quantity", "result", "command", "date")


class TableError(ValueError):
    """A source file of the table is missing a column, or a paper-scale entry names no headline row."""


def _read(path: Path, keys: tuple[str, ...]) -> pd.DataFrame:
    if not path.is_file():
        raise TableError(f"{path}: missing. Fix: run the default workflow (it writes results/headline.csv)")
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [k for k in keys if k not in df.columns]
    if missing:
        raise TableError(f"{path}: no column {', '.join(missing)} (expected {', '.join(keys)})")
    return df


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ").strip() or "–"


def _digits(paper: str) -> int:
    """Significant digits to show: three, or as many as the paper's own first number states (1.2014: 5)."""
    m = re.search(r"\d+(?:\.\d+)?", paper)
    return max(3, len(m.group().replace(".", "").lstrip("0"))) if m else 3


def _value(value: str, err: str, paper: str) -> str:
    """The run's value as the report shows it (value ± error), or its words."""
    try:
        v = float(value)
    except ValueError:
        return _cell(value)
    e = float(err) if err else math.nan
    return fmt_pm(v, e if math.isfinite(e) else None, digits=_digits(paper))


def _verdict(verdict: str, note: str) -> str:
    """The report's verdict; "not tested" with its reason from the row's note: the clause after "Not
    tested:" where the note has one, else the whole note."""
    if verdict != "not tested":
        return _cell(verdict)
    m = re.search(r"not tested:\s*(.+)", note, re.IGNORECASE)
    reason = re.split(r";|\.(?:\s|$)", m.group(1))[0] if m else note.rstrip(".")
    reason = reason.strip()
    return f"not tested: {_cell(reason)}" if reason else "not tested"


def table(headline: pd.DataFrame, paper_scale: pd.DataFrame, stages_dir: str) -> str:
    """The markdown table: one row per headline row; ``stages_dir`` is the stage pages' folder as the
    target file links to it (``docs/stages`` from README.md, ``stages`` from docs/results.md)."""
    runs = {r["quantity"]: r for r in paper_scale.to_dict("records")}
    orphans = sorted(set(runs) - set(headline["quantity"]))
    if orphans:
        raise TableError(
            f"{PAPER_SCALE}: {'; '.join(orphans)}: no headline row of that quantity in {HEADLINE}. Fix: write "
            "the quantity exactly as results/headline.csv names it, or remove the entry"
        )
    lines = [
        "| quantity | paper | default run | paper-scale run here | verdict (default run) | stage |",
        "|---|---|---|---|---|---|",
    ]
    for r in headline.to_dict("records"):
        run = runs.get(r["quantity"])
        scale = f"{_cell(run['result'])} ({_cell(run['date'])})" if run else "–"
        stage = r.get("stage", "")
        link = f"[{stage}]({stages_dir}/{stage}.md)" if stage else "–"
        lines.append(
            f"| {_cell(r['quantity'])} | {_cell(r['paper'])} | {_value(r['value'], r['err'], r['paper'])} | {scale} "
            f"| {_verdict(r.get('verdict', ''), r.get('note', ''))} | {link} |"
        )
    commands = sorted({(run["command"], run["date"]) for run in runs.values()}, key=lambda c: (c[1], c[0]))
    lines += ["", "The paper-scale runs, each made with its command on its date:", ""]
    lines += [f"- {date}: `{command}`" for command, date in commands]
    return "\n".join(lines)


def rewrite(text: str, new_table: str, where: str) -> str:
    """``text`` with the region between the markers replaced by ``new_table``."""
    return rewrite_region(text, START, END, new_table, where, TableError)


def generated(target: Path, root: Path = Path(".")) -> str:
    """The text ``target`` should have: its own text with the table region written anew."""
    headline = _read(root / HEADLINE, HEADLINE_KEYS)
    paper_scale = _read(root / PAPER_SCALE, PAPER_SCALE_KEYS)
    stages_dir = os.path.relpath(root / "docs" / "stages", (root / target).parent).replace(os.sep, "/")
    return rewrite((root / target).read_text(), table(headline, paper_scale, stages_dir), str(target))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+", type=Path, help="markdown files holding the table markers")
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 where a table is stale")
    args = ap.parse_args(argv)
    return rewrite_files(args.files, generated, args.check, "python -m depthwidth.results_table")


if __name__ == "__main__":
    sys.exit(main())
