"""Our superposition exponents beside the paper's, cell by cell: α_m at (γ, α) from Fig. 4b's heat map
(every cell of the paper's grid) and Fig. 6e (with error bars, for the six γ it draws).

Agreement per cell: |ours − paper| ≤ 2·sqrt(se_ours² + σ_paper²), the paper's value and σ_paper its Fig. 6e
point and error bar where it draws the cell (Fig. 5b draws the same points: one answer for the cell), else
its Fig. 4b heat-map value with the median Fig. 6e error bar (the paper's typical error; the heat map has
none) plus the heat map's decoding error. A γ of ours that is not on the paper's grid (the default run's γ = 0.3)
is compared with the nearest paper γ and flagged.

- ``compare_exponents``: the per-cell table against Figs. 4b/6e.
- ``compare_points``: the per-cell table against a figure of points with error bars (Fig. 5b).
- ``summary_line``, ``points_line``: one line per figure.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _nearest(grid: np.ndarray, gamma: float) -> float:
    """The paper's γ nearest ours."""
    return float(grid[np.argmin(np.abs(grid - gamma))])


def _at(table: pd.DataFrame, gamma: float, alpha: float) -> pd.DataFrame:
    """The rows of a reading at (γ, α)."""
    return table[np.isclose(table["gamma"], gamma, atol=1e-3) & np.isclose(table["alpha"], alpha, atol=1e-2)]


def _judged(r, g: float, value: float, sigma_paper: float, **shown) -> dict:
    """One cell of ours against the paper's ``value`` at the nearest γ ``g``: agree when
    |ours − paper| ≤ 2·sqrt(se² + σ_paper²) (se the OLS error; rule paperfigs_compare judges on the
    bootstrap over seeds, ``paperfigs.figures``); ``shown``: the paper's columns of the table."""
    se = float(r["stderr"]) if np.isfinite(r["stderr"]) else 0.0
    tol = 2 * float(np.hypot(se, sigma_paper))
    boot = {
        f"ours_{k}": r[c]
        for k, c in (("boot_sd", "boot_sd"), ("boot_lo", "boot_lo"), ("boot_hi", "boot_hi"),
                     ("boot_resamples", "boot_resamples"), ("seeds", "n_seeds"), ("widths", "n_widths"),
                     ("wboot_sd", "wboot_sd"), ("wboot_lo", "wboot_lo"), ("wboot_hi", "wboot_hi"),
                     ("wboot_resamples", "wboot_resamples"))
        if c in r
    }  # fmt: skip
    return {
        "gamma": float(r["gamma"]),
        "paper_gamma": g,
        "gamma_on_grid": bool(abs(g - r["gamma"]) < 1e-3),
        "alpha": float(r["alpha"]),
        "ours": float(r["exponent"]),
        "ours_se": se,
        **boot,
        "paper": value,
        "paper_sigma": sigma_paper,
        **shown,
        "tolerance": tol,
        "agree": bool(abs(float(r["exponent"]) - value) <= tol),
    }


def compare_exponents(
    ours: pd.DataFrame, fig4b: pd.DataFrame, fig6e: pd.DataFrame, decode_err: float
) -> pd.DataFrame:
    """``ours``: superposition exponents.csv (alpha, gamma, exponent, stderr). Returns one row per our cell
    with the paper's values and the verdict."""
    typical = float(fig6e["alpha_m_err"].median())
    grid = np.array(sorted(fig4b["gamma"].unique()))
    rows = []
    for _, r in ours.iterrows():
        g = _nearest(grid, r["gamma"])
        cell = fig4b[(fig4b["gamma"] == g) & (np.isclose(fig4b["alpha"], r["alpha"]))]
        if cell.empty:
            continue
        p = float(cell["alpha_m"].iloc[0])
        e6 = _at(fig6e, g, r["alpha"])
        p6, s6 = (
            (float(e6["alpha_m"].iloc[0]), float(e6["alpha_m_err"].iloc[0]))
            if not e6.empty
            else (np.nan,) * 2
        )
        # where Fig. 6e draws the cell, its point and error bar (Fig. 5b's too: one answer for the cell);
        # else the heat map's value with Fig. 6e's median error bar and the heat map's decoding error
        drawn = bool(np.isfinite(p6) and np.isfinite(s6))
        value, sigma_paper = (p6, s6) if drawn else (p, typical + decode_err)
        how = (
            "Fig. 6e's error bar at this cell"
            if drawn
            else f"Fig. 6e's median error bar {typical:.3f} (no point drawn here) + the heat map's decoding error {decode_err:.3f}"
        )
        source = (
            "Fig. 6e (point and error bar read off the vector PDF)"
            if drawn
            else "Fig. 4b (heat map decoded through its colour bar)"
        )
        rows.append(
            _judged(
                r, g, value, sigma_paper, paper_fig4b=p, paper_fig6e=p6, paper_fig6e_err=s6,
                paper_sigma_how=how, paper_source=source,
            )
        )  # fmt: skip
    return pd.DataFrame(rows)


def compare_points(ours: pd.DataFrame, points: pd.DataFrame, grid) -> pd.DataFrame:
    """``ours`` (exponents.csv) against a figure's points with error bars (``points``: gamma on the paper's
    ``grid``, alpha, alpha_m, alpha_m_err): each cell of ours whose γ, put on the grid, and α have a point.
    Agree: |ours − paper| ≤ 2·sqrt(se² + σ²), σ the point's error bar (half its length)."""
    grid = np.asarray(grid, dtype=float)
    rows = []
    for _, r in ours.iterrows():
        g = _nearest(grid, r["gamma"])
        p = _at(points, g, r["alpha"])
        if p.empty:
            continue
        pv, pe = float(p["alpha_m"].iloc[0]), float(p["alpha_m_err"].iloc[0])
        rows.append(
            _judged(
                r, g, pv, pe, paper_err=pe, paper_sigma_how="its error bar",
                paper_source="Fig. 5b (point and error bar read off the vector PDF)",
            )
        )  # fmt: skip
    return pd.DataFrame(rows)


def points_line(cmp: pd.DataFrame, label: str, n_points: int) -> str:
    """One line for a figure of points with error bars: how many of our cells it draws, how many agree."""
    if cmp.empty:
        return f"{label}: none of its {n_points} points is at a cell of ours"
    n, k = len(cmp), int(cmp["agree"].sum())
    off = cmp.loc[~cmp["gamma_on_grid"], "gamma"].unique()
    flag = f"; γ = {', '.join(f'{g:g}' for g in off)} compared with the nearest paper γ" if len(off) else ""
    med = float((cmp["ours"] - cmp["paper"]).abs().median())
    return (
        f"{label}: {k} of {n} of our cells agree with the paper's point within 2σ of its error bar and our SE "
        f"(median |Δ| = {med:.2f}; {n_points} points read){flag}"
    )


def summary_line(cmp: pd.DataFrame, label: str) -> str:
    if cmp.empty:
        return f"{label}: no cell of ours is on the paper's grid"
    n, k = len(cmp), int(cmp["agree"].sum())
    off = cmp.loc[~cmp["gamma_on_grid"], "gamma"].unique()
    flag = f"; γ = {', '.join(f'{g:g}' for g in off)} compared with the nearest paper γ" if len(off) else ""
    return f"{label}: {k} of {n} cells agree within the stated tolerance (median |Δ| = {float((cmp['ours'] - cmp['paper']).abs().median()):.2f}){flag}"


def main(argv: list[str] | None = None) -> None:
    """``python -m depthwidth.paperfigs.toy EXPONENTS_CSV [RESULTS_DIR]``: our cells against the paper's
    Figs. 4b/6e as a Markdown table (RESULTS_DIR holds the paperfigs readings; default results/paperfigs)."""
    import argparse
    import json
    from pathlib import Path

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("exponents_csv")
    ap.add_argument("results_dir", nargs="?", default="results/paperfigs")
    a = ap.parse_args(argv)
    d = Path(a.results_dir)
    f4, f6 = pd.read_csv(d / "fig4b_cells.csv"), pd.read_csv(d / "fig6e_points.csv")
    err = json.loads((d / "toy_readings.json").read_text())["cross_check"]["max_abs_diff"]
    cmp = compare_exponents(pd.read_csv(a.exponents_csv), f4, f6, err)
    print(cmp.round(3).to_markdown(index=False))
    print()
    print(summary_line(cmp, "Figs. 4b/6e"))


if __name__ == "__main__":
    main()
