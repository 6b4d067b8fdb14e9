"""Fig. 1b and 1d of the superposition paper read off its vector PDF: the toy model's loss against width m
in the weak (b) and strong (d) superposition regimes, and our cells beside them.

What the panels hold (the paper's exp-17, ``exp/exp-17.py`` of its repository; config/paper_large.yaml):
n = 10240 features, m = 2^3 … 2^10, three feature-frequency laws told apart by colour (legend of panel b,
whose text is drawn in the series' colours): linear decay p_i ∝ n − i, power-law decay p_i ∝ i^−1.2
(α = 1.2) and exponential decay p_i ∝ e^{−i/1000} (exp-17's 'exponential'; its 'exponential1', k = 400,
is not drawn: the blue series' loss at m = 1024 is ≈ 0.4, the tail mass of k = 1000). Weak regime γ = 0.1,
strong γ = −1 (exp-17's default weight decay: γ < 0 grows the weights, strong superposition, as in our
toy); loss = the MSE summed over the n features, last of 40000 steps. Panel b draws the series as
circles joined by dashed lines, panel d as squares with dashed power-law guides; panel d also holds grey
circles, LLM losses (read here, labelled ``llm``, never compared), and a black dashed slope −1 guide. The
dashed lines are drawn as filled dash outlines and are not read: the markers carry every data point.

How it is read: axes from the tick marks (labels are glyph outlines: 10^1…10^3 on b's x, 10^1…10^4 on d's x,
10^−1, 10^0 on b's y, 10^−2…10^0 on d's y, given in order; every minor tick checks the log map); markers are
the filled circles (b) or squares (d) of marker size in the series' colours; the colour → law map is the
legend text's colour nearest each marker colour; m is read and snapped to the nearest power of two.

- ``read_fig1``: the points of both panels as a DataFrame, and a summary (counts, tick residuals).
- ``series_slopes``: the log-log slope of each series, over all its m and over the paper's fit range.
- ``compare_losses``, ``compare_slopes``, ``losses_line``: our seed-mean losses at the paper's points, the
  slopes per series, and one line per panel; ``main``: the same from the command line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth.laws.loglog import power_law_fit
from depthwidth.paperfigs.axes import calibrate, find_frames
from depthwidth.paperfigs.ours import seed_means
from depthwidth.paperfigs.marks import _inside, find_markers, marker_record, marker_shape, to_table
from depthwidth.paperfigs.vector import read_page

PANELS = {
    "b": {
        "regime": "weak",
        "gamma": 0.1,
        "shape": "circle",
        "labels": {"x": [10.0, 100.0, 1000.0], "y": [0.1, 1.0]},
    },
    "d": {
        "regime": "strong",
        "gamma": -1.0,
        "shape": "square",
        "labels": {"x": [10.0, 100.0, 1000.0, 10000.0], "y": [0.01, 0.1, 1.0]},
    },
}
#: the legend's words → the law (our distribution name, its α where it has one), per exp-17.py
LAWS = {
    "Linear": ("linear", "linear", np.nan),
    "Power": ("power", "power-a1.2", 1.2),
    "Exponential": ("exponential", "exponential-k1000", np.nan),
}
N_FEATURES = 10240
#: the width range of a marker's outline ring, in points (all 48 measure 6.06)
RING = (5.8, 6.4)
WIDTHS = 2 ** np.arange(3, 11)
#: the smallest m of the paper's fit per law (config/paper_large.yaml, fit_min_width_by_law)
FIT_MIN_WIDTH = {"exponential": 8, "power": 32, "linear": 32}
#: the paper draws no error bars on Fig. 1: a loss of ours agrees when |ours − paper| ≤ RTOL · paper + 2 SE
RTOL = 0.25


def _legend(shapes) -> dict:
    """Legend word → its text colour: runs of glyphs that spell one of ``LAWS`` (panel b's legend)."""
    chars = sorted(
        (s for s in shapes if s.kind == "char" and s.fill_color is not None), key=lambda c: (-c.y0, c.x0)
    )
    rows: dict = {}
    for c in chars:
        rows.setdefault(round(c.y0), []).append(c)
    out = {}
    for run in rows.values():
        text = "".join(c.text for c in sorted(run, key=lambda c: c.x0))
        for word in LAWS:
            if text.startswith(word):
                out[word] = tuple(run[0].fill_color)
    if set(out) != set(LAWS):
        raise ValueError(f"Fig. 1 legend: found {sorted(out)}, expected {sorted(LAWS)}")
    return out


def _rings(shapes, frame, shape: str) -> list[dict]:
    """The toy markers of one panel: each is a fill and a filled outline ring 6.06 pt wide in a series
    colour (not grey). The fills are cut by the dashed lines' pieces of the same colour and centre, so the
    rings carry the markers: circles in panel b, square rings (one closed path with a hole) in panel d."""
    out = []
    for s in shapes:
        if s.kind not in ("curve", "rect") or not s.fill or s.fill_color is None or not _inside(s, frame):
            continue
        if not (RING[0] <= s.w <= RING[1] and RING[0] <= s.h <= RING[1]) or len(set(s.fill_color)) == 1:
            continue
        kind = marker_shape(s)
        if (shape == "circle") != (kind == "circle"):
            continue
        out.append(marker_record(s, shape, edge=True))
    return out


def read_fig1(pdf: str | Path) -> tuple[pd.DataFrame, dict]:
    """Fig. 1b and 1d: one row per marker (panel, regime, series, law, alpha, m, loss, how)."""
    shapes = read_page(pdf)
    frames = sorted(find_frames(shapes), key=lambda f: f[0])
    if len(frames) != 2:
        raise ValueError(f"Fig. 1: expected the two frames of panels b and d, found {len(frames)}")
    legend = _legend(shapes)
    rows, summary = [], {}
    for (panel, spec), frame in zip(PANELS.items(), frames):
        xa = calibrate(shapes, frame, "bottom", "log", spec["labels"]["x"])
        ya = calibrate(shapes, frame, "left", "log", spec["labels"]["y"])
        toy = _rings(shapes, frame, spec["shape"])
        marks = find_markers(shapes, frame, min_size=1.5, max_size=7.0)
        llm = [
            m
            for m in marks
            if m["shape"] == "circle" and len(set(m["fill_color"])) == 1 and m["fill_color"][0] > 0.3
        ]
        how = f"vector {spec['shape']} (outline ring); law by legend colour"
        for r, m in zip(to_table(toy, xa, ya, how=how), toy):
            dist = {w: float(np.max(np.abs(np.subtract(c, m["fill_color"])))) for w, c in legend.items()}
            word = min(dist, key=dist.get)
            series, distribution, alpha = LAWS[word]
            rows.append(
                {
                    "panel": panel,
                    "regime": spec["regime"],
                    "paper_gamma": spec["gamma"],
                    "series": series,
                    "distribution": distribution,
                    "alpha": alpha,
                    "n": N_FEATURES,
                    "m_read": r["x"],
                    "m": int(WIDTHS[np.argmin(np.abs(np.log(WIDTHS / r["x"])))]),
                    "loss": r["y"],
                    "legend_color_dist": dist[word],
                    "fill_color": r["fill_color"],
                    "x_tick_residual_pt": r["x_tick_residual_pt"],
                    "y_tick_residual_pt": r["y_tick_residual_pt"],
                    "how": r["how"],
                }
            )
        for r in to_table(llm, xa, ya, how="vector grey circle (LLM loss; not compared)"):
            rows.append(
                {
                    "panel": panel,
                    "regime": spec["regime"],
                    "paper_gamma": np.nan,
                    "series": "llm",
                    "distribution": "",
                    "alpha": np.nan,
                    "n": np.nan,
                    "m_read": r["x"],
                    "m": np.nan,
                    "loss": r["y"],
                    "legend_color_dist": np.nan,
                    "fill_color": r["fill_color"],
                    "x_tick_residual_pt": r["x_tick_residual_pt"],
                    "y_tick_residual_pt": r["y_tick_residual_pt"],
                    "how": r["how"],
                }
            )
        summary[panel] = {
            "found": len(toy),
            "llm_found": len(llm),
            "x_axis": {"n_ticks": xa.n_ticks, "residual_pt": xa.residual_pt, "residual_rel": xa.residual_rel},
            "y_axis": {"n_ticks": ya.n_ticks, "residual_pt": ya.residual_pt, "residual_rel": ya.residual_rel},
        }
    df = pd.DataFrame(rows).sort_values(["panel", "series", "m_read"]).reset_index(drop=True)
    toy = df[df["series"] != "llm"]
    summary["max_m_snap_rel"] = float((toy["m_read"] / toy["m"] - 1).abs().max())
    summary["max_legend_color_dist"] = float(toy["legend_color_dist"].max())
    summary["by_series"] = {f"{p}/{s}": len(g) for (p, s), g in toy.groupby(["panel", "series"])}
    return df, summary


def _slope(m, loss) -> float:
    """The slope of log loss on log m (the fitting layer's log-log line; NaN below two distinct m)."""
    return -power_law_fit(m, loss)["exponent"]


def series_slopes(points: pd.DataFrame) -> pd.DataFrame:
    """Per toy series of Fig. 1: the OLS slope of log loss on log m over all its points and over the
    paper's fit range (m ≥ ``FIT_MIN_WIDTH`` of its law), and the theory's slope (weak: −(α − 1) where the
    law has an α; strong: −1)."""
    rows = []
    for (panel, series), g in points[points["series"] != "llm"].groupby(["panel", "series"]):
        fit = g[g["m"] >= FIT_MIN_WIDTH[series]]
        a = float(g["alpha"].iloc[0])
        weak = g["regime"].iloc[0] == "weak"
        rows.append(
            {
                "panel": panel,
                "regime": g["regime"].iloc[0],
                "series": series,
                "alpha": a,
                "n_points": len(g),
                "slope_all": _slope(g["m"], g["loss"]),
                "fit_min_m": FIT_MIN_WIDTH[series],
                "slope_fit_range": _slope(fit["m"], fit["loss"]),
                "theory": -(a - 1) if weak else -1.0,
            }
        )
    return pd.DataFrame(rows)


def _ours(cells: pd.DataFrame, summed: bool) -> pd.DataFrame:
    """Seed means of our cells' final loss in the paper's unit (summed over the n features) and their SE
    (``ours.seed_means``), as columns mean, std, se, count."""
    o = seed_means(cells, "final_loss", ("distribution", "alpha", "gamma", "n", "m"), summed=summed)
    return o.rename(
        columns={"final_loss": "mean", "final_loss_std": "std", "final_loss_se": "se", "seeds": "count"}
    )


def _match(ours: pd.DataFrame, p: pd.Series, max_dalpha: float = 0.1) -> pd.DataFrame:
    """Our cells of the paper point's law and regime: the same distribution, or for the power law the
    nearest α within ``max_dalpha``; γ = −1 for the strong regime, the nearest γ > 0 for the weak."""
    if p["series"] == "power":
        c = ours[
            ours["distribution"].str.fullmatch(r"power-a[0-9.]+")
            & (ours["alpha"] - p["alpha"]).abs().le(max_dalpha)
        ]
        if len(c):
            c = c[(c["alpha"] - p["alpha"]).abs() == (c["alpha"] - p["alpha"]).abs().min()]
    else:
        c = ours[ours["distribution"] == p["distribution"]]
    if p["regime"] == "strong":
        return c[np.isclose(c["gamma"], -1.0)]
    c = c[c["gamma"] > 0]
    if len(c):
        c = c[(c["gamma"] - p["paper_gamma"]).abs() == (c["gamma"] - p["paper_gamma"]).abs().min()]
    return c


def compare_losses(cells: pd.DataFrame, points: pd.DataFrame, summed: bool) -> pd.DataFrame:
    """``cells``: superposition cells.csv (distribution, alpha, gamma, n, m, seed, final_loss); ``summed``:
    whether its final_loss is already summed over features (superposition.analysis.loss_summed_over_features).
    One row per Fig. 1 toy point with a cell of ours at the same m (law and regime as ``_match``), our
    seed-mean loss (summed over our n features) and SE; agree: |ours − paper| ≤ RTOL · paper + 2 SE. Flags:
    alpha_exact, gamma_on_paper, n_same (the paper's n = 10240; a different n changes the summed loss)."""
    ours = _ours(cells, summed)
    rows = []
    for _, p in points[points["series"] != "llm"].iterrows():
        c = _match(ours, p)
        c = c[c["m"] == p["m"]]
        for _, r in c.iterrows():
            tol = RTOL * p["loss"] + 2 * r["se"]
            rows.append(
                {
                    "panel": p["panel"],
                    "regime": p["regime"],
                    "series": p["series"],
                    "m": int(p["m"]),
                    "paper_alpha": p["alpha"],
                    "alpha": r["alpha"],
                    "alpha_exact": bool(np.isclose(r["alpha"], p["alpha"]))
                    if p["series"] == "power"
                    else True,
                    "paper_gamma": p["paper_gamma"],
                    "gamma": r["gamma"],
                    "gamma_on_paper": bool(np.isclose(r["gamma"], p["paper_gamma"])),
                    "paper_n": int(p["n"]),
                    "n": int(r["n"]),
                    "n_same": bool(r["n"] == p["n"]),
                    "paper": p["loss"],
                    "ours": r["mean"],
                    "ours_se": r["se"],
                    "seeds": int(r["count"]),
                    "ratio": r["mean"] / p["loss"],
                    "tolerance": tol,
                    "agree": bool(abs(r["mean"] - p["loss"]) <= tol),
                }
            )
    return pd.DataFrame(rows)


def compare_slopes(cells: pd.DataFrame, points: pd.DataFrame, summed: bool) -> pd.DataFrame:
    """Per Fig. 1 toy series: the paper's slope (all m, fit range) beside ours, the OLS slope of our
    seed-mean log loss on log m over every width we ran for the matched law and regime (a slope does not
    depend on the loss unit)."""
    ps = series_slopes(points)
    ours = _ours(cells, summed)
    rows = []
    for _, s in ps.iterrows():
        p = points[(points["panel"] == s["panel"]) & (points["series"] == s["series"])].iloc[0]
        c = _match(ours, p)
        for (a, g, n), cg in c.groupby(["alpha", "gamma", "n"], dropna=False):
            rows.append(
                {
                    **s.to_dict(),
                    "our_alpha": a,
                    "our_gamma": g,
                    "our_n": int(n),
                    "our_m": f"{int(cg['m'].min())}-{int(cg['m'].max())}",
                    "our_slope": _slope(cg["m"], cg["mean"]),
                }
            )
        if c.empty:
            rows.append(
                {
                    **s.to_dict(),
                    "our_alpha": np.nan,
                    "our_gamma": np.nan,
                    "our_n": np.nan,
                    "our_m": "",
                    "our_slope": np.nan,
                }
            )
    return pd.DataFrame(rows)


def losses_line(cmp: pd.DataFrame, slopes: pd.DataFrame, panel: str, n_points: int) -> str:
    """One line per panel: how many of its points have a cell of ours, how many agree, with the flags, and
    the slopes paper vs ours."""
    label = f"Fig. 1{panel} ({PANELS[panel]['regime']} regime, loss vs m)"
    sl = slopes[slopes["panel"] == panel]
    sl_txt = "; ".join(
        f"{r.series}: paper slope {r.slope_all:.2f} (m ≥ {r.fit_min_m}: {r.slope_fit_range:.2f}"
        + (f", theory {r.theory:.2f})" if np.isfinite(r.theory) else ")")
        + (
            f", ours {r.our_slope:.2f} (α = {r.our_alpha:g}, γ = {r.our_gamma:g}, m {r.our_m})"
            if np.isfinite(r.our_slope)
            else ", none of ours"
        )
        for r in sl.itertuples()
    )
    c = cmp[cmp["panel"] == panel] if len(cmp) else cmp
    if c.empty:
        return f"{label}: none of its {n_points} points is at a cell of ours (same law, regime and m); slopes: {sl_txt}"
    n, k = len(c), int(c["agree"].sum())
    flags = []
    if not c["alpha_exact"].all():
        flags.append(
            "α = "
            + ", ".join(f"{a:g}" for a in sorted(c.loc[~c["alpha_exact"], "alpha"].unique()))
            + " compared with the paper's 1.2"
        )
    if not c["gamma_on_paper"].all():
        flags.append(
            "γ = "
            + ", ".join(f"{g:g}" for g in sorted(c.loc[~c["gamma_on_paper"], "gamma"].unique()))
            + f" compared with the paper's {PANELS[panel]['gamma']:g}"
        )
    if not c["n_same"].all():
        flags.append(
            "n = "
            + ", ".join(f"{v:g}" for v in sorted(c.loc[~c["n_same"], "n"].unique()))
            + f" against the paper's {N_FEATURES}"
        )
    med = float(c["ratio"].median())
    return (
        f"{label}: {k} of {n} of our cells agree with the paper's point within {RTOL:.0%} (+ 2 SE) "
        f"(median ours/paper = {med:.2f}; {n_points} points read){'; ' + '; '.join(flags) if flags else ''}; slopes: {sl_txt}"
    )


def main(argv: list[str] | None = None) -> None:
    """``python -m depthwidth.paperfigs.fig1 CELLS_CSV [FIG1_PDF] [--summed]``: our cells (superposition
    cells.csv) against the paper's Fig. 1b/1d, as Markdown tables and one line per panel."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("cells_csv")
    ap.add_argument("pdf", nargs="?", default="data/raw/superposition_paper/figures/Fig-1-2.pdf")
    ap.add_argument("--summed", action="store_true", help="cells.csv's final_loss is summed over features")
    a = ap.parse_args(argv)
    points, s = read_fig1(a.pdf)
    cells = pd.read_csv(a.cells_csv)
    cmp, sl = compare_losses(cells, points, a.summed), compare_slopes(cells, points, a.summed)
    print(sl.round(3).to_markdown(index=False))
    print()
    if len(cmp):
        print(cmp.round(4).to_markdown(index=False))
        print()
    for p in PANELS:
        print(losses_line(cmp, sl, p, s[p]["found"]))


if __name__ == "__main__":
    main()
