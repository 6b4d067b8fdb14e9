"""The results tables of README.md and docs/results.md are written from results/headline.csv (the default
run's headline rows) and docs/paper_scale.csv by ``python -m depthwidth.results_table``; a table that does not
match its sources fails here.

    PYTHONPATH=src .venv/bin/python -m pytest tests/test_results_table.py -q
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from depthwidth.results_table import END, START, TableError, generated, main

ROOT = Path(__file__).resolve().parents[1]
TARGETS = ("README.md", "docs/results.md")


@pytest.mark.parametrize("target", TARGETS)
def test_the_table_is_current(target):
    text = (ROOT / target).read_text()
    rows = pd.read_csv(ROOT / "results/headline.csv")
    assert len(rows) > 10 and text.count(START) == 1
    assert not rows["claim"].str.startswith("sweep: ").any(), "a user's sweep in the papers' headline.csv"
    assert generated(Path(target), ROOT) == text, (
        f"{target}: stale results table. Fix: python -m depthwidth.results_table README.md docs/results.md"
    )


def _copy(tmp_path: Path) -> Path:
    for rel in (*TARGETS, "results/headline.csv", "docs/paper_scale.csv"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    return tmp_path


def test_a_changed_or_added_row_makes_the_tables_stale_and_the_command_rewrites_them(tmp_path, monkeypatch):
    root = _copy(tmp_path)
    monkeypatch.chdir(root)
    head = pd.read_csv("results/headline.csv", dtype=str, keep_default_na=False)
    head.loc[1, "value"] = "1.5"  # the converged α_ℓ (row 0, the Adam row, shows its printed digits as words)
    extra = {
        **head.iloc[0].to_dict(),
        "quantity": "a new headline quantity",
        "value": "0.123456",
        "value_text": "",
        "err": "",
    }
    pd.concat([head, pd.DataFrame([extra])]).to_csv("results/headline.csv", index=False)
    before = Path("README.md").read_text()
    assert main(["--check", *TARGETS]) == 1
    assert Path("README.md").read_text() == before  # --check changes nothing
    assert main(list(TARGETS)) == 0 and main(["--check", *TARGETS]) == 0
    readme, results = Path("README.md").read_text(), Path("docs/results.md").read_text()
    table = readme[readme.index(START) : readme.index(END)]
    first, second = head.iloc[0], head.iloc[1]
    assert f"|  | {second['quantity']} | {second['paper_text']} | 1.5 ± 0.29 |" in table
    # the added row joins its claim's group (the claim named once, on the group's first row)
    # shown to the digits of its paper's printed number (1.2014: five)
    assert f"|  | a new headline quantity | {first['paper_text']} | 0.12346 | – |" in table
    assert table.count(f"| {first['claim']} |") == 1
    assert "](docs/stages/chinchilla.md)" in table and "](stages/chinchilla.md)" in results
    # outside the markers nothing moved
    assert readme[: readme.index(START)] == before[: before.index(START)]
    assert readme[readme.index(END) :] == before[before.index(END) :]


def test_a_paper_scale_entry_that_names_no_headline_row_is_an_error(tmp_path, monkeypatch):
    root = _copy(tmp_path)
    monkeypatch.chdir(root)
    with open("docs/paper_scale.csv", "a") as f:
        f.write("a renamed quantity,0.5,snakemake --cores 2 results/report.html,2026-12-03\n")
    with pytest.raises(TableError, match="a renamed quantity: no headline row"):
        main(list(TARGETS))


def test_a_verdict_line_per_paper_heads_the_tables(tmp_path, monkeypatch):
    """Above the tables, one line per paper computed from the rows: a claim whose only row turns from
    yes to no moves from "reproduced" to "did not reproduce"."""
    root = _copy(tmp_path)
    monkeypatch.chdir(root)
    head = pd.read_csv("results/headline.csv", dtype=str, keep_default_na=False)
    region = generated(Path("README.md"), root).split(START)[1].split(END)[0]
    lines = [x for x in region.splitlines() if x.startswith("- **")]
    assert [x.split("**")[1] for x in lines] == ["The depth paper", "The superposition paper"]
    claim = head.loc[head["verdict"] == "yes", "claim"].iloc[-1]
    head.loc[head["claim"] == claim, ["verdict", "verdict_text"]] = ["no", "no: Δ = 1"]
    head.to_csv("results/headline.csv", index=False)
    region = generated(Path("README.md"), root).split(START)[1].split(END)[0]
    line = next(x for x in region.splitlines() if x.startswith("- **") and claim in x)
    assert f"did not reproduce: {claim}" in line


def test_readme_image_is_not_older_than_its_table():
    """results/report_top.png (the README's image) records the SHA-256 of the results/headline.csv it
    shows (rule report_screenshot); it must be the tracked table's."""
    import hashlib

    from depthwidth.browser import png_headline_hash

    table = hashlib.sha256((ROOT / "results/headline.csv").read_bytes()).hexdigest()
    assert png_headline_hash(ROOT / "results/report_top.png") == table, (
        "results/report_top.png is older than results/headline.csv. Fix: snakemake --cores 8 "
        "results/report_top.png (in the default run's folder), then commit both"
    )
