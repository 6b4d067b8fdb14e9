"""The report's overlays of the regime figures (Figs. 3, 4a, 5a, 6c/6d, 7): rule paperfigs_regimes's readings
written and read back with their seals, our cells checked for the columns the overlays need, and the
section's part built with one figure and one summary line per figure."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from _helpers import SHARED_DATA, needs_shared_data

pytestmark = (
    pytest.mark.workflow
)  # the readings of five figure PDFs at full size (11 CPU-s) and the overlays on them

FIGS = SHARED_DATA / "superposition_paper" / "figures"


@pytest.fixture(scope="module")
def readings(tmp_path_factory):
    from depthwidth.paperfigs.outputs import REGIMES_TABLES
    from depthwidth.paperfigs.readings import paperfigs_regimes

    d = tmp_path_factory.mktemp("regimes")
    tables = {name: str(d / f"{name}.csv") for name in REGIMES_TABLES}
    summary = paperfigs_regimes(
        FIGS / "Fig-3-2.pdf",
        FIGS / "Fig-4-3.pdf",
        FIGS / "Fig-5-1.pdf",
        FIGS / "Fig-6-3.pdf",
        FIGS / "Fig-7-2.pdf",
        tables=tables,
        summary_json=str(d / "regimes.json"),
    )
    return d, tables, summary


def _cells_at_the_papers_points(tables: dict) -> pd.DataFrame:
    """Cells of ours made from the paper's own Fig. 3a (α = 1) and Fig. 6c points (γ = −1), one seed,
    with every column the overlays read."""
    a3, c6 = pd.read_csv(tables["fig3a"]), pd.read_csv(tables["fig6c"])
    rows = [
        {"alpha": 1.0, "gamma": r.gamma, "m": int(r.m), "represented_fraction": r.phi_half}
        for r in a3.itertuples()
    ]
    rows += [
        {"alpha": r.alpha, "gamma": -1.0, "m": int(r.m), "strong_represented_fraction": r.value}
        for r in c6.itertuples()
    ]
    df = pd.DataFrame(rows).groupby(["alpha", "gamma", "m"], as_index=False).first()
    df["distribution"] = [f"power-a{a:g}" for a in df["alpha"]]
    m = df["m"].to_numpy(float)
    return df.assign(
        density=0.0,
        n=1000,
        seed=0,
        final_loss=0.5 / 1000,
        represented_fraction=df["represented_fraction"].fillna(1.0),
        strong_represented_fraction=df["strong_represented_fraction"].fillna(0.5),
        loss_unlearned=0.4 / 1000,
        strong_mean_sq_overlap=1.0 / m,
    )


@needs_shared_data
def test_readings_count_every_figure(readings):
    _, tables, s = readings
    assert (s["fig3"]["a"]["found"], s["fig3"]["b"]["found"]) == (60, 170)
    assert s["fig4a"]["found"] == s["fig4a"]["expected"] == 6
    assert (s["fig6c"]["found"], s["fig6d"]["found"]) == (102, 12)
    assert (s["fig7"]["a"]["found"], s["fig7"]["b"]["found"]) == (90, 30)
    assert s["fig5a"]["expected"] == 1020 and 150 <= s["fig5a"]["found"] <= 1020
    for name, path in tables.items():
        assert len(pd.read_csv(path)) > 0, name


@needs_shared_data
def test_cells_without_the_new_columns_are_refused_with_the_fix(readings, tmp_path):
    from depthwidth.integrity import IntegrityError, write_table
    from depthwidth.paperfigs.regimes import load

    d, tables, _ = readings
    old = _cells_at_the_papers_points(tables).drop(columns=["strong_mean_sq_overlap"])
    write_table(old, tmp_path / "cells.csv")
    with pytest.raises(IntegrityError, match="strong_mean_sq_overlap.*superposition_tables"):
        load(tables, str(d / "regimes.json"), str(tmp_path / "cells.csv"))


@needs_shared_data
def test_section_part_judges_cells_made_from_the_papers_points(readings, tmp_path):
    """Cells equal to the paper's Fig. 3a and 6c points agree at all of them; overlaps of 1/m sit inside Fig. 6d's
    band only where the band is near 1/m; one figure per overlay and one line per figure."""
    from depthwidth.integrity import write_table
    from depthwidth.paperfigs.regimes import load, regimes_html, with_comparisons
    from depthwidth.sections import Figures

    d, tables, _ = readings
    cells = _cells_at_the_papers_points(tables)
    write_table(cells, tmp_path / "cells.csv")
    r = with_comparisons(load(tables, str(d / "regimes.json"), str(tmp_path / "cells.csv")), False)
    body, lines = regimes_html(r, Figures(tmp_path / "figures"), False)
    # the records say what the tables say: one yes per agreeing cell of Fig. 6c
    assert (
        (r["records"]["fig6c"]["verdict"] == "yes").sum() == int(r["tables"]["fig6c"]["agree"].sum()) == 102
    )
    assert [line.split(" ")[1] for line in lines] == ["3", "4a", "5a:", "6c", "6d", "7"]
    # every cell of Fig. 3a (60), and ours at m = 39 judged against panel b as well, agree
    k = re.search(r"(\d+) of (\d+) of our cells agree", lines[0])
    assert k and k[1] == k[2] and int(k[1]) >= 60 and "a: 60/60" in lines[0]
    assert lines[3].startswith("Fig. 6c") and "102 of 102 of our cells" in lines[3] and "agree" in lines[3]
    assert "density sweep not run" in lines[5]
    pngs = sorted(p.name for p in (tmp_path / "figures").glob("*.png"))
    assert pngs == [f"toy_fig{k}_overlay.png" for k in ("3", "4a", "5a", "6cd", "7")]
    assert body.count("<figure") == 5
    # the same cells with φ_1 moved by 0.2: none of Fig. 6c's cells agree
    off = cells.assign(strong_represented_fraction=cells["strong_represented_fraction"] + 0.2)
    write_table(off, tmp_path / "off.csv")
    r = with_comparisons(load(tables, str(d / "regimes.json"), str(tmp_path / "off.csv")), False)
    _, lines = regimes_html(r, Figures(tmp_path / "figures_off"), False)
    assert set(r["records"]["fig6c"]["verdict"]) == {"no"}
    assert "0 of 102" in lines[3]
    assert np.isfinite(r["summary"]["fig6d"]["guide"]["slope"])


@needs_shared_data
def test_without_the_superposition_stage_each_figure_still_gets_its_line(readings, tmp_path):
    """A run whose stages leave out superposition has no cells.csv: every overlay shows the paper's points
    and says it has nothing of ours to compare."""
    from depthwidth.paperfigs.regimes import load, regimes_html, with_comparisons
    from depthwidth.sections import Figures

    d, tables, _ = readings
    r = with_comparisons(load(tables, str(d / "regimes.json"), None), False)
    body, lines = regimes_html(r, Figures(tmp_path / "figures"), False)
    assert len(lines) == 6 and body.count("<figure") == 5
    assert "none of our cells" in lines[0] and "no cell of ours to compare" in lines[2]
    assert "density sweep not run" in lines[5]
