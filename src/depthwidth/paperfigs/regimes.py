"""The report's overlays of the toy figures of the two regimes (Figs. 3, 4a, 5a, 6c/6d and 7 of the superposition
paper): the readings of rule paperfigs_regimes against our superposition cells (cells.csv), each with its
figure, its per-point table and one summary line.

- ``load``: the readings (tables and summary, checked against the rule that wrote them) and our cells.
- ``regimes_html``: the section's part and the one-line summaries, one per figure.
- ``main``: the one-line summaries for any run's cells.csv, from the command line:

      python -m depthwidth.paperfigs.regimes results/superposition/cells.csv
"""

from __future__ import annotations

import html

import pandas as pd

from depthwidth.integrity import read_json, read_table
from depthwidth.paperfigs.fig3 import fig3_line, plot_fig3
from depthwidth.paperfigs.fig4a import fig4a_line, plot_fig4a
from depthwidth.paperfigs.fig5a import fig5a_line, plot_fig5a
from depthwidth.paperfigs.fig6cd import fig6cd_line, plot_fig6cd
from depthwidth.paperfigs.fig7 import fig7_line, plot_fig7
from depthwidth.paperfigs.ours import CELL_COLUMNS as OURS_CELL_COLUMNS
from depthwidth.sections import Figures, comparisons_html, table_html

RULE = "paperfigs_regimes"
#: the columns of our cells.csv the overlays read (rule superposition_tables writes them)
CELL_COLUMNS = OURS_CELL_COLUMNS
#: the columns each reading must hold
TABLE_COLUMNS = {
    "fig3a": ("gamma", "m", "phi_half"),
    "fig3b": ("gamma", "alpha", "phi_half"),
    "fig4a": ("regime", "law", "r2", "r2_err"),
    "fig5a": ("loss", "loss_unlearned", "gamma", "reliable", "how"),
    "fig6c": ("alpha", "m", "value"),
    "fig6d": ("alpha", "m", "value", "extreme"),
    "fig7a": ("gamma", "E", "loss"),
    "fig7b": ("E", "m", "loss"),
}


def _no_cells() -> pd.DataFrame:
    """An empty cells table with cells.csv's column types (the superposition stage is not in this run)."""
    return pd.DataFrame({c: pd.Series(dtype=str if c == "distribution" else float) for c in CELL_COLUMNS})


def load(tables: dict, summary_json: str, cells_csv: str | None) -> dict:
    """The readings (name -> DataFrame), their summary and our cells (an empty frame where the superposition
    stage does not run)."""
    out = {name: read_table(tables[name], RULE, cols) for name, cols in TABLE_COLUMNS.items()}
    out["summary"] = read_json(summary_json, RULE, ("fig3", "fig4a", "fig5a", "fig6c", "fig6d", "fig7"))
    out["cells"] = read_table(cells_csv, "superposition_tables", CELL_COLUMNS) if cells_csv else _no_cells()
    return out


def _part(intro: str, lines: list[str], figure: str, tables: list[tuple[pd.DataFrame, str]]) -> str:
    """One figure's part of the section: its intro, its summary lines, its overlay, and each (table, caption)
    that has rows: a frame with a ``verdict_text`` column is a figure's comparison records."""
    parts = [intro, *("<p>" + html.escape(line) + "</p>" for line in lines), figure]
    parts += [
        comparisons_html(df, caption) if "verdict_text" in df else table_html(df, caption)
        for df, caption in tables
        if df is not None and len(df)
    ]
    return "\n".join(parts)


def _fig3(r: dict, figures: Figures, summed: bool) -> tuple[str, str]:
    s, cells = r["summary"]["fig3"], r["cells"]
    match = s["match"]
    cmp = r["tables"]["fig3"]
    line = fig3_line(cmp, s)
    a, b = s["a"], s["b"]
    part = _part(
        "<h3>Represented fraction against the paper's Fig. 3</h3><p>Fig. 3a read off the vector PDF: "
        f"{a['found']} of {a['expected']} circles (φ_1/2 against γ, one curve per m, m decoded through the ln m "
        f"colour bar to within {a['max_m_color_dist']:.3f} in colour); tick residuals {a['x_axis']['residual_pt']:.1e} / "
        f"{a['y_axis']['residual_pt']:.1e} pt. Fig. 3b, a raster heat map, decoded through its colour bar: "
        f"{b['found']} of {b['expected']} cells, one colour-bar row = {b['value_step']:.3f} in φ_1/2. Neither panel "
        f"prints its setting; panel a's m = {match['m_b']} curve equals panel b's α = {match['alpha_a']:g} row to "
        f"{match['rms']:.4f} RMS (the next best pair {match['runner_up']['rms']:.3f}), so panel a is drawn at "
        f"α = {match['alpha_a']:g} and panel b at m = {match['m_b']} (the paper's exp-10, 20000 steps, one seed).</p>",
        [line],
        figures.html(
            plot_fig3(r["fig3a"], r["fig3b"], cells, match["alpha_a"], match["m_b"], summed=summed),
            "toy_fig3_overlay",
            "Fig. 3: the paper's represented fraction φ_1/2 (open circles, colour = ln m; right: its heat map at "
            f"m = {match['m_b']}) and ours (filled squares, seed mean ± 2 std) at the cells the figure draws.",
        ),
        [(r["records"]["fig3"], "Per cell: our seed-mean φ_1/2 against the paper's value at that cell.")],
    )
    return part, line


def _fig4a(r: dict, figures: Figures) -> tuple[str, str]:
    s = r["summary"]["fig4a"]
    cmp = r["tables"]["fig4a"]
    line = fig4a_line(cmp, s)
    part = _part(
        "<h3>R² of the loss-width line against the paper's Fig. 4a</h3><p>Fig. 4a is an embedded raster: its "
        f"{s['found']} of {s['expected']} bars are read off the image (colour = law, matplotlib's first three "
        f"colours; the R² axis from its {s['y_axis']['n_ticks']} tick marks, one pixel = "
        f"{2 * s['r2_err']:.4f} in R²). The bars are the paper's exp-17 (n = 10240, m = 8 … 1024; power law "
        "α = 1.2, exponential e^(−i/1000), linear); ours are the R² of log loss (seed means) on log m of each of "
        "our curves, flagged where the setting differs. The figure's claim, that the power law gives a straight "
        "line in both regimes, is checked on ours as R² ≥ 0.95.</p>",
        [line],
        figures.html(
            plot_fig4a(r["fig4a"], cmp),
            "toy_fig4a_overlay",
            "Fig. 4a: the paper's R² of the loss-width line per law and regime (bars) and ours (markers; open where "
            "the setting differs from the paper's exp-17).",
        ),
        [
            (
                r["records"]["fig4a"],
                "Per curve of ours: its R² against the paper's bar of the same law and regime.",
            )
        ],
    )
    return part, line


def _fig5a(r: dict, figures: Figures, summed: bool) -> tuple[str, str]:
    s, cells = r["summary"]["fig5a"], r["cells"]
    cmp = r["tables"]["fig5a"]
    line = fig5a_line(cmp, s)
    bs = s["by_source"]
    part = _part(
        "<h3>Loss against the loss by unlearned features: the paper's Fig. 5a</h3><p>Fig. 5a holds about "
        f"{s['expected']} semi-transparent circles (10 γ × 17 α × 6 m); its transparency was flattened, so the file "
        "keeps the opaque circles whole, the sparse translucent ones as fragments cut along each other's edges, "
        "and the dense cloud as three embedded images. Read: "
        f"{s['found']} circles ({', '.join(f'{v} {k}' for k, v in bs.items())}), {s['reliable']} with a reliable "
        f"colour; the rest are hidden or merged. Tick residuals {s['x_axis']['residual_pt']:.1e} / "
        f"{s['y_axis']['residual_pt']:.1e} pt. Both axes span [0, 4/3], the loss of a model that learns nothing "
        "summed over the n = 1000 features, so the paper plots sums; ours are our per-element losses × n. "
        "Single circles cannot be matched to their (α, m), so each γ is compared as a distribution: the excess "
        "loss − loss by unlearned of ours against the paper's 10–90 % range at that γ.</p>",
        [line],
        figures.html(
            plot_fig5a(r["fig5a"], cells, summed),
            "toy_fig5a_overlay",
            "Fig. 5a: the paper's circles as read (colour = γ) and ours (black-edged, seed means, loss and loss by "
            "unlearned features summed over the features), with the diagonal loss = loss by unlearned.",
        ),
        [
            (
                r["records"]["fig5a"],
                "Per γ of the paper's grid: our cells' median excess loss against the paper's.",
            )
        ],
    )
    return part, line


def _fig6cd(r: dict, figures: Figures, summed: bool) -> tuple[str, list[str]]:
    sc, sd, cells = r["summary"]["fig6c"], r["summary"]["fig6d"], r["cells"]
    cmp_c, cmp_d = r["tables"]["fig6c"], r["tables"]["fig6d"]
    lines = [fig6cd_line(cmp_c, sc, "c"), fig6cd_line(cmp_d, sd, "d")]
    g = sd["guide"]
    part = _part(
        "<h3>Strong representation and overlaps against the paper's Figs. 6c and 6d</h3><p>Fig. 6c read off the "
        f"vector PDF: {sc['found']} of {sc['expected']} circles (φ_1, the fraction of rows with ‖W_i‖ &gt; 1, against m "
        f"at γ = −1; α through the colour bar, within {sc['max_alpha_snap_dist']:.3f} of the paper's grid). Fig. 6d is an "
        f"embedded raster that draws several circles per (α, m) within a band a few per cent wide, so it is read as "
        f"the band's top and bottom circle per m ({sd['found']} of {sd['expected_extremes']}; tick residuals about half a "
        f"pixel, {sd['y_axis']['residual_pt']:.2f} pt), and each of our cells is compared with the band at its m. The "
        f"figure's dashed guide has slope {g['slope']:.3f}. The paper's code does not define the overlap of Fig. 6d; "
        "its values are those of the strongly represented rows (‖W_i‖ &gt; 1, the rows φ_1 counts): on our cells at "
        "the paper's settings, the mean square overlap of all represented rows (‖W_i‖ &gt; 0.5) is up to 3× the "
        "band at m = 10, that of the strongly represented rows falls inside it. Ours is the latter.</p>",
        lines,
        figures.html(
            plot_fig6cd(r["fig6c"], r["fig6d"], cells, summed),
            "toy_fig6cd_overlay",
            "Figs. 6c (left: strong representation fraction φ_1 against m, colour = α) and 6d (right: mean square "
            "overlap against m, the paper's band per m) with ours (filled, black edges) at our γ < 0 cells.",
        ),
        [
            (r["records"]["fig6c"], "Fig. 6c, per cell: our φ_1 against the paper's."),
            (
                r["records"]["fig6d"],
                "Fig. 6d, per cell: our mean square overlap of the strongly represented rows against the paper's.",
            ),
        ],
    )
    return part, lines


def _fig7(r: dict, figures: Figures, summed: bool) -> tuple[str, str]:
    s, cells = r["summary"]["fig7"], r["cells"]
    cmp = r["tables"]["fig7"]
    line = fig7_line(cmp, s, cells)
    a, b, inf = s["a"], s["b"], s["inferred"]
    slopes = pd.DataFrame(s["slopes"])[["E", "s", "exponent", "stderr", "label", "line_exponent"]].rename(
        columns={
            "E": "Activation density E",
            "s": "Density s",
            "exponent": "α_m of the points",
            "stderr": "OLS error",
            "label": "Printed label",
            "line_exponent": "Slope of the drawn line",
        }
    )
    part = _part(
        "<h3>Activation density against the paper's Fig. 7</h3><p>Fig. 7 read off the vector PDF: panel a "
        f"{a['found']} of {a['expected']} circles (loss against E, γ through the colour bar, within "
        f"{a['max_gamma_snap_dist']:.3f} of the paper's grid), panel b {b['found']} of {b['expected']} (loss against m, "
        f"E through the colour bar); tick residuals a {a['x_axis']['residual_pt']:.1e} / {a['y_axis']['residual_pt']:.1e} pt, "
        f"b {b['x_axis']['residual_pt']:.1e} / {b['y_axis']['residual_pt']:.1e} pt. Panel a is drawn at m = "
        f"{inf['panel_a_m']} and panel b at γ = {inf['panel_b_gamma']:.4g}: the five points the panels share agree to "
        f"{inf['match_max_abs_log_ratio']:.1e} in log. Panel b's printed slope labels match neither its points nor "
        "its drawn lines (table below); the comparison uses the fit over all six m of the points, for the "
        "paper and for us.</p>",
        [line],
        figures.html(
            plot_fig7(r["fig7a"], r["fig7b"], cells, summed=summed),
            "toy_fig7_overlay",
            "Fig. 7: the paper's losses (faint, colour = γ in a, activation density E in b) and ours (filled, black "
            "edges; loss summed over the features, the paper's unit) at the cells we ran.",
        ),
        [
            (
                slopes,
                "Fig. 7b per density: α_m fitted to the paper's six points (± SE), the printed label, and the slope "
                "of the drawn line.",
            ),
            (r["records"]["fig7"], "Per point or density: ours against the paper's."),
        ],
    )
    return part, line


def regimes_html(r: dict, figures: Figures, summed: bool) -> tuple[str, list[str]]:
    """The overlays of Figs. 3, 4a, 5a, 6c/6d and 7 and their one-line summaries; ``summed``: our final_loss is already
    summed over the features (``superposition.analysis.loss_summed_over_features``)."""
    html3, line3 = _fig3(r, figures, summed)
    html4, line4 = _fig4a(r, figures)
    html5, line5 = _fig5a(r, figures, summed)
    html6, lines6 = _fig6cd(r, figures, summed)
    html7, line7 = _fig7(r, figures, summed)
    return "\n".join([html3, html4, html5, html6, html7]), [line3, line4, line5, *lines6, line7]


def with_comparisons(r: dict, summed: bool) -> dict:
    """``r`` (``load``) with each figure's per-cell table and records (``r["tables"]``, ``r["records"]``)
    as rule paperfigs_compare makes them, for the command line and the tests (the section reads the
    rule's files)."""
    from depthwidth.paperfigs.figures import COMPARE

    r = {**r, "tables": {}, "records": {}}
    inp = {**r, "regimes": r["summary"]}
    for name in ("fig3", "fig4a", "fig5a", "fig6c", "fig6d", "fig7"):
        table, _, recs = COMPARE[name](inp, summed)
        r["tables"][name], r["records"][name] = table, pd.DataFrame([c.row() for c in recs])
    return r


def main(argv: list[str] | None = None) -> None:
    """``python -m depthwidth.paperfigs.regimes CELLS_CSV [RESULTS_DIR] [--loss-summed]``: the one-line
    summaries of Figs. 3, 4a, 5a, 6c, 6d and 7 for a run's cells (RESULTS_DIR holds rule paperfigs_regimes's
    readings; default results/paperfigs)."""
    import argparse
    import tempfile
    from pathlib import Path

    from depthwidth.paperfigs.outputs import REGIMES_SUMMARY, REGIMES_TABLES

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("cells_csv")
    ap.add_argument("results_dir", nargs="?", default="results/paperfigs")
    ap.add_argument("--loss-summed", action="store_true", help="final_loss is summed over the features")
    a = ap.parse_args(argv)
    d = Path(a.results_dir)
    tables = {name: str(d / Path(path).name) for name, path in REGIMES_TABLES.items()}
    r = with_comparisons(load(tables, str(d / Path(REGIMES_SUMMARY).name), a.cells_csv), a.loss_summed)
    with tempfile.TemporaryDirectory() as tmp:
        _, lines = regimes_html(r, Figures(tmp), a.loss_summed)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
