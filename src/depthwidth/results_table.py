"""The results tables of README.md and docs/results.md, written from the default run's
``results/headline.csv`` (the papers' headline rows of the report, columns ``verdicts.COLUMNS``) and
``docs/paper_scale.csv`` (the paper-scale runs made here: the headline quantity, the result, the command
that made it and its date): a verdict line per paper, then one table per paper grouped by claim.

    python -m depthwidth.results_table README.md docs/results.md          # rewrite the tables
    python -m depthwidth.results_table --check README.md docs/results.md  # exit 1 where one is stale

Each file holds the table between the lines ``<!-- results-table:start -->`` and ``<!-- results-table:end -->``;
only that region is rewritten. Links to the stage pages are made relative to each file.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from pathlib import Path

import pandas as pd

from depthwidth.report.page import value_text
from depthwidth.report.rows import by_paper_and_claim, paper_verdicts
from depthwidth.sections import rewrite_files, rewrite_region
from depthwidth.verdicts import PAPERS

START, END = "<!-- results-table:start -->", "<!-- results-table:end -->"
HEADLINE = Path("results/headline.csv")
PAPER_SCALE = Path("docs/paper_scale.csv")
PAPER_SCALE_KEYS = ("quantity", "result", "command", "date")
# The columns of results/headline.csv the table reads (the file has every column of verdicts.COLUMNS).
HEADLINE_KEYS = (
    "stage",
    "paper",
    "claim",
    "quantity",
    "paper_text",
    "value",
    "value_text",
    "err",
    "at_bound",
)
HEADLINE_KEYS += ("verdict", "verdict_text")


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


def _record(row: dict) -> dict:
    """A headline.csv row (strings) with its numbers as floats or None, as ``page.value_text`` reads it."""
    out = dict(row)
    for k in ("value", "err", "low", "high"):
        try:
            v = float(out.get(k) or "nan")
            out[k] = v if math.isfinite(v) else None
        except ValueError:
            out[k] = None
    return out


def table(headline: pd.DataFrame, paper_scale: pd.DataFrame, stages_dir: str) -> str:
    """The markdown: a verdict line per paper, then per paper a table of its headline rows grouped by
    claim (the claim named on its first row); ``stages_dir`` is the stage pages' folder as the target
    file links to it (``docs/stages`` from README.md, ``stages`` from docs/results.md)."""
    runs = {r["quantity"]: r for r in paper_scale.to_dict("records")}
    orphans = sorted(set(runs) - set(headline["quantity"]))
    if orphans:
        raise TableError(
            f"{PAPER_SCALE}: {'; '.join(orphans)}: no headline row of that quantity in {HEADLINE}. Fix: write "
            "the quantity exactly as results/headline.csv names it, or remove the entry"
        )
    records = [_record(r) for r in headline.to_dict("records")]
    lines = [
        f"- **{_cell(v['text'].split(': ', 1)[0])}**: {_cell(v['text'].split(': ', 1)[1])}"
        for v in paper_verdicts(records)
    ]
    for paper, claims in by_paper_and_claim(records):
        lines += [
            "",
            f"**{_cell(PAPERS.get(paper, paper))}**",
            "",
            "| claim | quantity | paper | default run | paper-scale run here | verdict (default run) | stage |",
            "|---|---|---|---|---|---|---|",
        ]
        for claim, rows in claims:
            for i, r in enumerate(rows):
                run = runs.get(r["quantity"])
                scale = f"{_cell(run['result'])} ({_cell(run['date'])})" if run else "–"
                stage = r.get("stage", "")
                link = f"[{stage}]({stages_dir}/{stage}.md)" if stage else "–"
                lines.append(
                    f"| {_cell(claim) if i == 0 else ''} | {_cell(r['quantity'])} | {_cell(r['paper_text'])} "
                    f"| {_cell(value_text(r))} | {scale} | {_cell(r['verdict_text'] or r['verdict'])} | {link} |"
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
