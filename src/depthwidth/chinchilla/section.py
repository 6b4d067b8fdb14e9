"""The Chinchilla section of the report (rule chinchilla_section): it reads the stage's files and renders
them; every comparison with the papers and its verdict comes from results/chinchilla/comparisons.csv (rule
chinchilla_compare), and its headline rows are that file's rows marked ``headline``. The parts:
``section_fit`` (the main fit, the scan, the shape), ``section_robust`` (losses and cuts, leverage),
``section_law`` (the Chinchilla law), ``section_sweeps`` (other sweeps)."""

from __future__ import annotations

import pandas as pd

from depthwidth import verdicts
from depthwidth.chinchilla import section_fit as F
from depthwidth.chinchilla.points import POINT_COLUMNS, POINTS_RULE
from depthwidth.chinchilla.section_law import chinchilla_law_html
from depthwidth.chinchilla.section_robust import leverage_html, robustness_html
from depthwidth.chinchilla.section_sweeps import laws_html, sweeps_html
from depthwidth.integrity import read_json, read_table, write_table
from depthwidth.sections import Figures, table_html, write_section

TITLE = "Chinchilla: the decomposed scaling law (Liu et al. 2026)"
COMPARE_RULE = "chinchilla_compare"


def chinchilla_section(inputs: dict, outputs: dict) -> None:
    """Rule chinchilla_section. ``inputs``: paths ``comparisons, shape, robustness, fit_points, points,
    summary``, the squared cell's ``fit, bootstrap, scan``, ``sweeps`` (identify.json of each sweep) and,
    each optional, the Huber cell's ``fit_huber``, ``deltas, leverage``, ``law`` and ``law_fits``.
    ``outputs``: ``html, headline, figures`` and ``sweeps`` (the sweeps' exponents table)."""
    # every input is checked against the seal its rule wrote before anything is drawn
    rows = verdicts.read_comparisons(inputs["comparisons"], COMPARE_RULE)
    # words or digits as written ("1.2014" stays 1.2014, not the float 1.201 a table would print)
    rows["value_text"] = [value_text(t) for t in rows["value_text"]]
    fit = cell_record(inputs["fit"], "decomposed", "squared")
    figs = Figures(outputs["figures"])
    body = main_fit_html(inputs, fit, rows, figs)
    if inputs.get("fit_huber"):
        body += robust_html(inputs, fit, rows, figs)
    if inputs.get("law"):
        cells = [cell_record(f, "chinchilla", None) for f in _list(inputs.get("law_fits"))]
        body += chinchilla_law_html(read_json(inputs["law"], "chinchilla_law", ("replication",)), cells)
    summaries = [
        read_json(p, "chinchilla_sweep_identify", ("sweep", "params")) for p in _list(inputs.get("sweeps"))
    ]
    sweeps_body, table = sweeps_html(figs, summaries, rows)
    if outputs.get("sweeps"):
        write_table(table, outputs["sweeps"])
    body += comparisons_html(rows) + sweeps_body + laws_html(summaries)
    write_section(outputs["html"], outputs["headline"], "chinchilla", TITLE, body, headline_rows(rows))


def main_fit_html(inputs: dict, fit: dict, rows: pd.DataFrame, figs: Figures) -> str:
    recon = read_json(inputs["summary"], POINTS_RULE, ("n_points",))
    points = read_table(inputs["points"], POINTS_RULE, POINT_COLUMNS)
    boot = read_table(inputs["bootstrap"], "chinchilla_fit")
    scan = read_table(inputs["scan"], "chinchilla_drop_scan")
    fp = read_table(inputs["fit_points"], COMPARE_RULE)
    shape = read_table(inputs["shape"], COMPARE_RULE)
    alpha_l = rows.set_index("key")["err"].get("alpha_l_converged")
    parts = [
        F.intro_html(recon, fit),
        F.figure_points(figs, points),
        F.figure_fitted(figs, fp),
        F.figure_depth_part(figs, fp, fit, None if pd.isna(alpha_l) else float(alpha_l)),
        F.parameter_table_html(fit, rows),
        F.alpha_l_html(fit, rows),
        F.heldout_html(fit),
        F.figure_bootstrap_pairs(figs, boot, fit),
        F.figure_drop_scan(figs, scan),
        F.drop_scan_html(scan, fit),
        F.figure_shape(figs, shape),
        F.shape_html(fit, shape),
    ]
    return "\n".join(p for p in parts if p)


def robust_html(inputs: dict, fit: dict, rows: pd.DataFrame, figs: Figures) -> str:
    fit_huber = cell_record(inputs["fit_huber"], "decomposed", "huber")
    deltas = read_table(inputs["deltas"], "chinchilla_leverage")
    lev = read_table(inputs["leverage"], "chinchilla_leverage")
    robust = read_table(inputs["robustness"], COMPARE_RULE)
    return robustness_html(figs, robust, rows, fit_huber, deltas) + leverage_html(figs, lev, deltas, fit)


# The comparisons table: its columns and their headers.
COMPARISON_COLUMNS = {
    "quantity": "Quantity",
    "paper_text": "Paper",
    "value": "Ours",
    "err": "Error",
    "err_method": "Error method",
    "verdict_text": "Verdict",
    "p_value": "p",
    "test": "Test",
}


def comparisons_html(rows: pd.DataFrame) -> str:
    """The stage's comparisons with the papers (all but the sweeps'), one row per record."""
    r = rows[~rows["claim"].astype(str).str.startswith("sweep:")].copy()
    r["value"] = [t or v for t, v in zip(r["value_text"], r["value"])]
    return "<h3>Comparisons with the paper</h3>" + table_html(
        r[list(COMPARISON_COLUMNS)].rename(columns=COMPARISON_COLUMNS),
        "Every comparison of this stage (results/chinchilla/comparisons.csv, with the interval, p-value, "
        "what each test can exclude and notes). Two estimates from the same points are compared as "
        "procedures, not by their noise; a fit at a bound states no error.",
    )


def value_text(t) -> str:
    if t is None or (isinstance(t, float) and pd.isna(t)):
        return ""
    return repr(t) if isinstance(t, float) else str(t)


def headline_rows(rows: pd.DataFrame) -> list[dict]:
    """The records marked ``headline``, as dicts of comparisons.csv's columns; ``agree`` and ``source``
    repeat the verdict and the paper's source for readers of the older headline keys."""
    out = []
    for r in rows[rows["headline"]].to_dict(orient="records"):
        r = {k: (None if isinstance(v, float) and pd.isna(v) else v) for k, v in r.items()}
        agree = {verdicts.YES: True, verdicts.EXACT: True, verdicts.NO: False}.get(r["verdict"])
        out.append({**r, "agree": agree, "source": r["paper_source"]})
    return out


def cell_record(path, law: str, loss: str | None) -> dict:
    """The fit.json of the grid's cell (``law``, ``loss``; any loss when None), checked to be that cell's."""
    fit = read_json(path, "chinchilla_fit", ("params", "law", "loss"))
    if fit["law"] != law or loss not in (None, fit["loss"]):
        raise ValueError(
            f"{path}: a fit of the {fit['law']} law with loss {fit['loss']!r} where the cell "
            f"({law}, {loss or 'any loss'}) is read; rerun with --forcerun chinchilla_fit"
        )
    return fit


def _list(x) -> list:
    if not x:
        return []
    return [x] if isinstance(x, str) else list(x)
