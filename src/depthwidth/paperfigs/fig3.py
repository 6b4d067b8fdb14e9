"""Fig. 3 of the superposition paper read off its vector PDF: weight decay γ controls superposition, seen in
the represented fraction φ_1/2 (the fraction of the n = 1000 rows W_i with ‖W_i‖ > 0.5), and our cells
beside it.

What the panels hold (the paper's exp-10 and exp-10-3: n = 1000, 20000 steps, batch 2048, one seed per
cell; γ = linspace(−1, 1, 10); α = 1 + linspace(0, 1, 9) and 1 + linspace(−1, 0, 9), together 0 … 2 in
steps of 0.125; m = floor(exp(linspace(ln 10, ln 100, 6))) = 10, 15, 25, 39, 63, 100):

- panel a: φ_1/2 against γ, one circle per (γ, m) (60), joined by dashed lines per m, colour = ln m through
  a colour bar (ticks 2.5 … 4.5). Its two small insets (raster images) are not read.
- panel b: a raster heat map of φ_1/2 over γ (x, the ten γ) and α (y, the 17 α), colour bar 0 … 1.

Neither panel prints the value it is drawn at (panel a's α, panel b's m). They are found here by matching:
panel a's curve for each m against panel b's row at each α, across the ten γ. The curve for m = 39 equals
the row at α = 1.0 to an RMS of 0.004 (largest |Δ| 0.006, one colour-bar row of panel b is 0.007);
the next best row for m = 39 (α = 1.125) is off by 0.024 RMS, the best pair with another m (m = 25,
α = 1.125) by 0.050. So panel a is drawn at α = 1 and panel b at m = 39 (m_ran[3]).
exp-10 and exp-10-3 do not settle it on their own: they save every (γ, α, m) and hold no plotting code;
α = 1 is the one α both of them run (exp-10's alpha_ran[0] = 0 and exp-10-3's alpha_ran[-1] = 0 give the
exponent 1 + 0, so the paper holds two α = 1 runs), and 39 is m_ran[3], one of the two middle widths.
That the m = 39 curve and the α = 1 row agree to the decoding precision also at γ = −1/9, in the middle
of the transition, says both panels draw the same run. ``read_fig3`` repeats the match on every read and
records it in the summary (``match``).

How it is read: axes from the tick marks (labels are glyph outlines: γ = −1, 0, 1 on both x axes;
φ_1/2 = 0, 0.5, 1 on a's y; α = 0, 0.5, …, 2 on b's y, given in order; panel b draws its γ = 0 tick twice
at the same place, and the two are merged). Panel a's markers are the filled circles 5.06 pt wide with a
filled 6.06 pt outline ring of the same colour and centre (two dash pieces of the dashed lines, drawn as
circle-like fills without a ring, are left out); γ is read and snapped to linspace(−1, 1, 10); ln m is
decoded through the colour bar (an embedded 8 × 158 pixel image, rows valued by its ticks through
``fig4.colorbar``) by the nearest colour-bar row, and m snapped to the nearest m of the grid in log.
The decoded ln m sit at ln of the unfloored exp(linspace(ln 10, ln 100, 6)) (15.85, 25.1, 39.8, 63.1),
not at ln of the floored m: the paper coloured by the unfloored value. Panel b is decoded as
``fig4.read_fig4b`` decodes Fig. 4b: each cell's centre mapped into the image's pixels, the median of
the 3 × 3 pixels there, the nearest colour-bar row in RGB; the raster's own cell boundaries (17 rows of
9 pixels, 10 columns of 17.1 pixels) check the 17 × 10 grid.

Comparison: our seed-mean represented_fraction at each cell of ours that a panel draws (panel a: α equal
to panel a's α, m on the paper's m grid; panel b: m equal to panel b's m, α on its α grid), our γ put
on the nearest paper γ and flagged where it is off the grid (as ``toy``). Agree when
|ours − paper| ≤ max(0.1, 2 × our seed std). Why: the paper runs one seed per cell and states no error;
its decoding error is below 0.01; the paper's own single-seed scatter, read as the largest rise of φ_1/2
with γ along one of its curves or rows (φ_1/2 falls with γ), is about 0.05 (``summary['paper_jitter']``);
10 % of the features is twice that and still a tenth of the 0 → 1 transition the figure is about. Where
our seeds scatter more (near γ ≈ 0, where the transition sits), twice their standard deviation widens it.
An absolute tolerance, because φ_1/2 is a fraction that is 0 or 1 on most of the plane. The comparison
has power only where our cells sit: the runs at hand have γ = −1 and +1 (plateaus at 1 and near 0), not
the transition. The project reads the paper's toy loss as the MSE summed over the n features (n × our
per-element final_loss, as for Fig. 1); Fig. 3 draws no loss, so no unit conversion enters here.

- ``read_fig3``: panel a's points, panel b's cells and a summary (counts expected and found, tick
  residuals, colour-decoding errors, the (α, m) match).
- ``match_panels``: the (α, m) at which panel a's curves and panel b's rows agree, with residuals.
- ``compare_fig3``: our cells against the paper's points (panel a) and cells (panel b), with a verdict.
- ``fig3_line``: one line: how many of our cells agree, median |Δ|, points read.
- ``plot_fig3``: the paper's panels a and b with our cells overlaid.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth.paperfigs import fig4
from depthwidth.paperfigs.axes import find_frames, find_ticks, fit_axis
from depthwidth.paperfigs.fig6 import GAMMA_GRID
from depthwidth.paperfigs.ours import seed_means
from depthwidth.paperfigs.marks import find_markers, to_table
from depthwidth.paperfigs.vector import image_array, read_page

LABELS_A = {"x": [-1.0, 0.0, 1.0], "y": [0.0, 0.5, 1.0]}
LABELS_B = {"x": [-1.0, 0.0, 1.0], "y": [0.0, 0.5, 1.0, 1.5, 2.0]}
CBAR_A_LABELS = [2.5, 3.0, 3.5, 4.0, 4.5]  # ln m
CBAR_B_LABELS = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]  # φ_1/2
#: exp-10's widths: floor(exp(linspace(ln 10, ln 100, 6)))
M_GRID = np.floor(np.exp(np.linspace(np.log(10.0), np.log(100.0), 6))).astype(int)
#: the unfloored widths, whose logarithm the paper's colour encodes
M_UNFLOORED = np.exp(np.linspace(np.log(10.0), np.log(100.0), 6))
ALPHAS_B = fig4.ALPHAS  # 0 … 2 in steps of 0.125 (exp-10-3 below 1, exp-10 from 1)
GAMMAS_B = fig4.GAMMAS
#: panel a's circle (fill) and its outline ring, widths in points
CIRCLE = (4.5, 5.6)
RING = (5.8, 6.4)
#: agreement: |ours − paper| ≤ max(ABS_TOL, SEED_STD_K × our seed std)
ABS_TOL = 0.1
SEED_STD_K = 2.0


def _axis(shapes, frame, side: str, labels: list[float]):
    """A linear axis from the major ticks of one side, ticks closer than 0.5 pt merged (panel b draws its
    γ = 0 tick twice), matched in order to ``labels``."""
    majors: list[float] = []
    for t in find_ticks(shapes, frame, side):
        if t.major and not (majors and t.pos - majors[-1] < 0.5):
            majors.append(t.pos)
    if len(majors) != len(labels):
        raise ValueError(
            f"Fig. 3 {side} axis of {tuple(round(v, 1) for v in frame)}: {len(majors)} major ticks at "
            f"{[round(p, 2) for p in majors]}, expected {len(labels)} ({labels})"
        )
    return fit_axis(majors, labels, "linear", "given label values matched to major ticks in order")


def _bar_right_of(shapes, frame):
    """The narrow image right of ``frame``: its colour bar."""
    return min(
        (s for s in shapes if s.kind == "image" and s.x0 > frame[2] and s.w < 10),
        key=lambda s: s.x0 - frame[2],
    )


def _raster_grid(pix: np.ndarray) -> dict:
    """Rows and columns of a blocky raster from its own colour changes: the number of row runs, and the
    number of columns the median column width implies (equal neighbours hide a boundary)."""
    p = pix.astype(int)
    dy = np.flatnonzero(np.any(np.abs(np.diff(p, axis=0)).sum(axis=2) > 0, axis=1))
    dx = np.flatnonzero(np.any(np.abs(np.diff(p, axis=1)).sum(axis=2) > 0, axis=0))
    row_h = float(np.median(np.diff(dy))) if len(dy) > 1 else float(p.shape[0])
    col_w = float(np.median(np.diff(dx))) if len(dx) > 1 else float(p.shape[1])
    return {
        "pixels": [int(p.shape[0]), int(p.shape[1])],
        "row_pixels": row_h,
        "col_pixels": col_w,
        "rows": int(round(p.shape[0] / row_h)),
        "cols": int(round(p.shape[1] / col_w)),
    }


def _panel_a(shapes, frame) -> tuple[pd.DataFrame, dict]:
    xa = _axis(shapes, frame, "bottom", LABELS_A["x"])
    ya = _axis(shapes, frame, "left", LABELS_A["y"])
    marks = find_markers(shapes, frame, min_size=CIRCLE[0], max_size=RING[1])
    circles = [
        m
        for m in marks
        if m["shape"] == "circle"
        and m.get("edge")
        and CIRCLE[0] <= m["size"] <= CIRCLE[1]
        and RING[0] <= m.get("outer_size", 0) <= RING[1]
    ]
    n_pieces = sum(1 for m in marks if m["shape"] == "circle" and not m.get("edge"))
    rgb, vals, cb = fig4.colorbar(shapes, _bar_right_of(shapes, frame), CBAR_A_LABELS)
    how = "vector circle; ln m via colour bar"
    rows = []
    for r, m in zip(to_table(circles, xa, ya, how=how), circles):
        d = np.sqrt(((rgb - np.asarray(m["fill_color"], dtype=float)) ** 2).sum(axis=1))
        k = int(np.argmin(d))
        ln_m = float(vals[k])
        i = int(np.argmin(np.abs(np.log(M_GRID) - ln_m)))
        rows.append(
            {
                "gamma": round(float(GAMMA_GRID[np.argmin(np.abs(GAMMA_GRID - r["x"]))]), 6),
                "gamma_read": r["x"],
                "m": int(M_GRID[i]),
                "ln_m_decoded": ln_m,
                "m_decoded": float(np.exp(ln_m)),
                "m_color_dist": float(d[k]),
                "ln_m_unfloored_dist": float(abs(ln_m - np.log(M_UNFLOORED[i]))),
                "phi_half": r["y"],
                "fill_color": r["fill_color"],
                "x_tick_residual_pt": r["x_tick_residual_pt"],
                "y_tick_residual_pt": r["y_tick_residual_pt"],
                "how": r["how"],
            }
        )
    df = pd.DataFrame(rows).sort_values(["m", "gamma"]).reset_index(drop=True)
    df["gamma_snap_dist"] = (df["gamma_read"] - df["gamma"]).abs()
    summary = {
        "expected": len(GAMMA_GRID) * len(M_GRID),
        "found": len(df),
        "dash_pieces_left_out": n_pieces,
        "by_m": {int(k): int(v) for k, v in df.groupby("m").size().items()},
        "by_gamma": {round(float(k), 4): int(v) for k, v in df.groupby("gamma").size().items()},
        "x_axis": {"n_ticks": xa.n_ticks, "residual_pt": xa.residual_pt},
        "y_axis": {"n_ticks": ya.n_ticks, "residual_pt": ya.residual_pt},
        "colorbar": cb,
        "ln_m_step": float(np.median(np.abs(np.diff(vals)))),
        "max_m_color_dist": float(df["m_color_dist"].max()),
        "max_ln_m_unfloored_dist": float(df["ln_m_unfloored_dist"].max()),
        "max_gamma_snap_dist": float(df["gamma_snap_dist"].max()),
        "ln_m_decoded": {
            int(k): round(float(v), 4) for k, v in df.groupby("m")["ln_m_decoded"].median().items()
        },
    }
    return df, summary


def _panel_b(shapes, frame) -> tuple[pd.DataFrame, dict]:
    xa = _axis(shapes, frame, "bottom", LABELS_B["x"])
    ya = _axis(shapes, frame, "left", LABELS_B["y"])
    heat = min(
        (s for s in shapes if s.kind == "image" and s.x0 > frame[0] - 1 and s.w > 10), key=lambda s: s.x0
    )
    rgb, vals, cb = fig4.colorbar(shapes, _bar_right_of(shapes, frame), CBAR_B_LABELS)
    rows = fig4.decode_heatmap(heat, xa, ya, rgb, vals, GAMMAS_B, ALPHAS_B, "phi_half")
    df = pd.DataFrame(rows)
    grid = _raster_grid(image_array(heat))
    summary = {
        "expected": len(GAMMAS_B) * len(ALPHAS_B),
        "found": len(df),
        "raster_grid": grid,
        "x_axis": {"n_ticks": xa.n_ticks, "residual_pt": xa.residual_pt},
        "y_axis": {"n_ticks": ya.n_ticks, "residual_pt": ya.residual_pt},
        "colorbar": cb,
        "value_step": float(np.median(np.abs(np.diff(vals)))),
        "max_color_dist": float(df["color_dist"].max()),
        "median_color_dist": float(df["color_dist"].median()),
        "max_cell_spread": float(df["cell_spread"].max()),
    }
    return df, summary


def match_panels(points_a: pd.DataFrame, cells_b: pd.DataFrame) -> dict:
    """The (α, m) where panel a's curve for m equals panel b's row at α across the ten γ: the pair of least
    RMS difference, its largest |Δ|, the runner-up pair, the best pair with another m, and per m the α of
    its best row."""
    a = points_a.pivot_table(index="m", columns="gamma", values="phi_half")
    b = cells_b.pivot_table(index="alpha", columns="gamma", values="phi_half")
    b = b[a.columns]
    diff = a.to_numpy()[:, None, :] - b.to_numpy()[None, :, :]
    rms = np.sqrt(np.nanmean(diff**2, axis=2))
    order = np.argsort(rms, axis=None)
    (i, j), (i2, j2) = (np.unravel_index(k, rms.shape) for k in order[:2])
    others = [k for k in range(len(a.index)) if k != i]
    io = min(others, key=lambda k: rms[k].min())
    return {
        "alpha_a": float(b.index[j]),
        "m_b": int(a.index[i]),
        "rms": float(rms[i, j]),
        "max_abs": float(np.nanmax(np.abs(diff[i, j]))),
        "runner_up": {"m": int(a.index[i2]), "alpha": float(b.index[j2]), "rms": float(rms[i2, j2])},
        "best_other_m": {
            "m": int(a.index[io]),
            "alpha": float(b.index[np.argmin(rms[io])]),
            "rms": float(rms[io].min()),
        },
        "best_alpha_per_m": {
            int(m): {"alpha": float(b.index[np.argmin(rms[k])]), "rms": float(rms[k].min())}
            for k, m in enumerate(a.index)
        },
        "scripts": (
            "exp-10/exp-10-3 save every (γ, α, m) and hold no plotting code; α = 1 is the one α both run "
            "(1 + alpha_ran with alpha_ran[0] = 0 in exp-10, alpha_ran[-1] = 0 in exp-10-3); m = 39 is m_ran[3]"
        ),
    }


def _jitter(points_a: pd.DataFrame, cells_b: pd.DataFrame) -> float:
    """The paper's single-seed scatter: the largest rise of φ_1/2 from one γ to the next along a curve of
    panel a or a row of panel b (φ_1/2 falls with γ, so a rise is noise)."""
    rises = []
    for df, key in ((points_a, "m"), (cells_b, "alpha")):
        for _, g in df.groupby(key):
            rises.append(float(np.max(np.diff(g.sort_values("gamma")["phi_half"].to_numpy()), initial=0.0)))
    return max(rises)


def read_fig3(pdf: str | Path) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Fig. 3: panel a's points (gamma, gamma_read, m, ln_m_decoded, m_decoded, m_color_dist, phi_half,
    how, …), panel b's cells (gamma, alpha, phi_half, color_dist, cell_spread, how) and a summary."""
    shapes = read_page(pdf)
    frames = sorted(find_frames(shapes), key=lambda f: f[0])
    if len(frames) != 2:
        raise ValueError(f"Fig. 3: expected the two frames of panels a and b, found {len(frames)}")
    points_a, sa = _panel_a(shapes, frames[0])
    cells_b, sb = _panel_b(shapes, frames[1])
    match = match_panels(points_a, cells_b)
    points_a["alpha"] = match["alpha_a"]
    cells_b["m"] = match["m_b"]
    summary = {"a": sa, "b": sb, "match": match, "paper_jitter": _jitter(points_a, cells_b)}
    return points_a, cells_b, summary


def _seed_means(cells: pd.DataFrame, summed: bool) -> pd.DataFrame:
    """Our represented fraction per (α, γ, m) as seed mean, std and count (``ours.seed_means``)."""
    o = seed_means(cells, "represented_fraction", ("alpha", "gamma", "m"), summed=summed)
    return o.rename(
        columns={"represented_fraction": "mean", "represented_fraction_std": "std", "seeds": "count"}
    )


def compare_fig3(
    cells: pd.DataFrame,
    points_a: pd.DataFrame,
    cells_b: pd.DataFrame,
    alpha_a: float,
    m_b: int,
    summed: bool,
) -> pd.DataFrame:
    """``cells``: superposition cells.csv (alpha, gamma, m, seed, represented_fraction). One row per cell of
    ours that a panel draws (a cell at α = ``alpha_a`` and m = ``m_b`` is judged against both panels):
    panel, gamma, paper_gamma, gamma_on_grid, alpha, m, ours (seed mean), ours_std, seeds, paper,
    diff, tolerance = max(ABS_TOL, SEED_STD_K × ours_std), agree."""
    ours = _seed_means(cells, summed)
    grid = np.asarray(GAMMA_GRID, dtype=float)
    rows = []
    for _, r in ours.iterrows():
        g = round(float(grid[np.argmin(np.abs(grid - r["gamma"]))]), 6)
        targets = []
        if np.isclose(r["alpha"], alpha_a) and int(r["m"]) in set(M_GRID.tolist()):
            p = points_a[np.isclose(points_a["gamma"], g, atol=1e-3) & (points_a["m"] == int(r["m"]))]
            targets.append(("a", p))
        if int(r["m"]) == int(m_b):
            p = cells_b[np.isclose(cells_b["gamma"], g, atol=1e-3) & np.isclose(cells_b["alpha"], r["alpha"])]
            targets.append(("b", p))
        for panel, p in targets:
            if p.empty:
                continue
            paper = float(p["phi_half"].iloc[0])
            tol = max(ABS_TOL, SEED_STD_K * float(r["std"]))
            rows.append(
                {
                    "panel": panel,
                    "gamma": float(r["gamma"]),
                    "paper_gamma": g,
                    "gamma_on_grid": bool(abs(g - r["gamma"]) < 1e-3),
                    "alpha": float(r["alpha"]),
                    "m": int(r["m"]),
                    "ours": float(r["mean"]),
                    "ours_std": float(r["std"]),
                    "seeds": int(r["count"]),
                    "paper": paper,
                    "diff": float(r["mean"]) - paper,
                    "tolerance": tol,
                    "agree": bool(abs(float(r["mean"]) - paper) <= tol),
                }
            )
    cols = [
        "panel",
        "gamma",
        "paper_gamma",
        "gamma_on_grid",
        "alpha",
        "m",
        "ours",
        "ours_std",
        "seeds",
        "paper",
        "diff",
        "tolerance",
        "agree",
    ]
    return pd.DataFrame(rows, columns=cols)


def fig3_line(cmp: pd.DataFrame, summary: dict) -> str:
    """One line for Fig. 3: how many of our cells agree, median |Δφ_1/2|, points read, flags."""
    mt = summary["match"]
    read = (
        f"{summary['a']['found']} of {summary['a']['expected']} points read in a (α = {mt['alpha_a']:g}), "
        f"{summary['b']['found']} of {summary['b']['expected']} cells in b (m = {mt['m_b']})"
    )
    label = "Fig. 3 (represented fraction φ_1/2 vs weight decay γ)"
    if cmp.empty:
        return (
            f"{label}: none of our cells is at a (γ, m, α) the paper draws (a: α = {mt['alpha_a']:g}, "
            f"m ∈ {{{', '.join(str(m) for m in M_GRID)}}}; b: m = {mt['m_b']}, α ∈ 0…2 step 0.125); {read}"
        )
    n, k = len(cmp), int(cmp["agree"].sum())
    per = ", ".join(f"{p}: {int(g['agree'].sum())}/{len(g)}" for p, g in cmp.groupby("panel"))
    off = sorted(cmp.loc[~cmp["gamma_on_grid"], "gamma"].unique())
    flag = f"; γ = {', '.join(f'{g:g}' for g in off)} compared with the nearest paper γ" if off else ""
    med = float(cmp["diff"].abs().median())
    return (
        f"{label}: {k} of {n} of our cells agree within |Δφ| ≤ max({ABS_TOL:g}, {SEED_STD_K:g} × our seed std) "
        f"({per}; median |Δ| = {med:.3f}; γ of ours: {', '.join(f'{g:g}' for g in sorted(cmp['gamma'].unique()))}); "
        f"{read}{flag}"
    )


def plot_fig3(
    points_a: pd.DataFrame,
    cells_b: pd.DataFrame,
    cells: pd.DataFrame | None = None,
    alpha_a: float | None = None,
    m_b: int | None = None,
    *,
    summed: bool,
):
    """The paper's panel a (circles at low opacity, dashed per m, colour = ln m) with our seed-mean cells at
    α = ``alpha_a`` (filled squares, black edges, same colours, ±2 seed std) and panel b (the heat map)
    with our cells at m = ``m_b`` as squares in the same colour scale. ``alpha_a``/``m_b`` default to the
    values the reading attached (points_a['alpha'], cells_b['m'])."""
    import matplotlib
    from matplotlib.figure import Figure

    if alpha_a is None:
        alpha_a = float(points_a["alpha"].iloc[0]) if "alpha" in points_a else 1.0
    if m_b is None:
        m_b = int(cells_b["m"].iloc[0]) if "m" in cells_b else 39
    cmap = matplotlib.colormaps["cividis"]
    norm = matplotlib.colors.Normalize(np.log(10.0), np.log(100.0))
    fig = Figure(figsize=(9.5, 3.8))
    ax, bx = fig.subplots(1, 2)
    for m, g in points_a.groupby("m"):
        g = g.sort_values("gamma")
        c = cmap(norm(np.log(m)))
        ax.plot(g["gamma"], g["phi_half"], "--", color=c, alpha=0.4)
        ax.plot(g["gamma"], g["phi_half"], "o", mfc="none", mec=c, ms=7, alpha=0.7, label=f"paper, m = {m}")
    ours = _seed_means(cells, summed) if cells is not None and len(cells) else None
    oa = ours[np.isclose(ours["alpha"], alpha_a) & ours["m"].isin(M_GRID)] if ours is not None else None
    if oa is not None and len(oa):
        for m, g in oa.groupby("m"):
            ax.errorbar(
                g["gamma"],
                g["mean"],
                yerr=2 * g["std"],
                fmt="s",
                color=cmap(norm(np.log(m))),
                mec="k",
                ms=6,
                zorder=3,
                label=f"ours, m = {m}",
            )
    ax.set_xlim(-1.15, 1.15)
    ax.set_ylim(-0.05, 1.08)
    ax.set_xlabel(r"weight decay $\gamma$")
    ax.set_ylabel(r"represented fraction $\phi_{1/2}$")
    drawn_a = oa is not None and len(oa)
    ax.set_title(
        f"Fig. 3a ($\\alpha$ = {alpha_a:g}): paper (open)"
        + (" and ours (filled)" if drawn_a else "; no cell of ours at this $\\alpha$ and the paper's m"),
        fontsize=9,
    )
    ax.legend(fontsize=6, ncol=2, loc="center right")
    fig.colorbar(matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap), ax=ax, label="ln m")
    piv = cells_b.pivot_table(index="alpha", columns="gamma", values="phi_half").sort_index()
    dg = np.diff(piv.columns.to_numpy()).mean() / 2
    da = np.diff(piv.index.to_numpy()).mean() / 2
    extent = (piv.columns[0] - dg, piv.columns[-1] + dg, piv.index[0] - da, piv.index[-1] + da)
    im = bx.imshow(
        piv.to_numpy(), origin="lower", aspect="auto", extent=extent, cmap="Purples", vmin=0, vmax=1
    )
    ob = ours[ours["m"] == int(m_b)] if ours is not None else None
    if ob is not None:
        if len(ob):
            bx.scatter(
                ob["gamma"], ob["alpha"], c=ob["mean"], cmap="Purples", vmin=0, vmax=1, marker="s",
                s=40, edgecolors="k", zorder=3, label=f"ours, m = {m_b}",
            )  # fmt: skip
            bx.legend(fontsize=7, loc="upper right")
    bx.set_xlabel("weight decay γ")
    bx.set_ylabel("data exponent α")
    bx.set_title(
        f"Fig. 3b (m = {m_b}): paper heat map"
        + (", our cells as squares" if ob is not None and len(ob) else "; no cell of ours at this m"),
        fontsize=9,
    )
    fig.colorbar(im, ax=bx, label=r"$\phi_{1/2}$")
    fig.tight_layout()
    return fig


def main(argv: list[str] | None = None) -> None:
    """``python -m depthwidth.paperfigs.fig3 CELLS_CSV [FIG3_PDF]``: our cells against the paper's Fig. 3 as
    a Markdown table and one line."""
    import argparse

    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("cells_csv")
    ap.add_argument("pdf", nargs="?", default="data/raw/superposition_paper/figures/Fig-3-2.pdf")
    ap.add_argument(
        "--loss-summed", action="store_true", help="the cells' losses are summed over the features"
    )
    a = ap.parse_args(argv)
    pa, cb, s = read_fig3(a.pdf)
    cmp = compare_fig3(
        pd.read_csv(a.cells_csv), pa, cb, s["match"]["alpha_a"], s["match"]["m_b"], a.loss_summed
    )
    if len(cmp):
        print(cmp.round(4).to_markdown(index=False))
        print()
    print(fig3_line(cmp, s))


if __name__ == "__main__":
    main()
