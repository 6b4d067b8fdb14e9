"""Figs. 6e and 5b of the superposition paper read off their vector PDFs: the model exponent α_m against the
data exponent α, one opaque circle per (γ, α) with a vertical error bar, colour = weight decay γ (Fig. 5b
draws the weak regime, γ > 0, the same way).

How it is read: axes from the tick marks (labels are outlines: 0, 1, 2 on both axes, given in order);
markers are the filled circles (fill + outline ring); an error bar is a filled 1.5 pt wide rectangle
centred on a marker (the illustration program turned the error-bar strokes into fills), its ends are
the error bar's ends; γ is decoded through the colour bar, an embedded 8 × 153 pixel image whose rows
span γ = −1 (bottom) to 1 (top), by the nearest colour-bar row. The decoding error is stated as the
colour distance to that row and the γ step of one row.

- ``read_fig6e``, ``read_fig5b``: the points as a DataFrame, and a summary (counts, tick residuals,
  decoding error); ``read_exponent_panel`` reads one such panel.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth.paperfigs.axes import calibrate, find_frames
from depthwidth.paperfigs.marks import find_markers, to_table
from depthwidth.paperfigs.vector import image_array, read_page

FIG6E_LABELS = {"x": [0.0, 1.0, 2.0], "y": [0.0, 1.0, 2.0]}
FIG5B_LABELS = {"x": [1.0, 1.5, 2.0], "y": [0.0, 0.5, 1.0]}
GAMMA_RANGE = (-1.0, 1.0)
#: the paper's exp-10 weight decays (config/paper.yaml): a decoded γ is snapped to the nearest
GAMMA_GRID = np.linspace(-1.0, 1.0, 10)


def read_fig6e(pdf: str | Path) -> tuple[pd.DataFrame, dict]:
    """Fig. 6e: α_m against α for the strong and weak regimes (60 circles with error bars)."""
    shapes = read_page(pdf)
    # panel e: the lower right frame
    frame = max(find_frames(shapes), key=lambda f: (f[0] > 200, -f[1]))
    return read_exponent_panel(shapes, frame, FIG6E_LABELS)


def read_fig5b(pdf: str | Path) -> tuple[pd.DataFrame, dict]:
    """Fig. 5b: α_m against α in the weak regime (γ > 0), drawn as Fig. 6e (circles, error bars, γ by
    colour) over the line α − 1; panel b is the right frame, ticks 1.0, 1.5, 2.0 on x and 0, 0.5, 1 on y."""
    shapes = read_page(pdf)
    frame = max(find_frames(shapes), key=lambda f: f[0])
    return read_exponent_panel(shapes, frame, FIG5B_LABELS)


def read_exponent_panel(shapes, frame, labels: dict) -> tuple[pd.DataFrame, dict]:
    """α_m against α off one panel of opaque circles with error bars, γ through the colour bar right of
    ``frame``; ``labels``: the major tick values of x and y, in order."""
    xa = calibrate(shapes, frame, "bottom", "linear", labels["x"])
    ya = calibrate(shapes, frame, "left", "linear", labels["y"])
    marks = [m for m in find_markers(shapes, frame, min_size=4.5, max_size=7.0) if m["shape"] == "circle"]
    bars = [
        s
        for s in shapes
        if s.kind == "rect"
        and s.fill
        and abs(s.w - 1.5) < 0.1
        and frame[0] < s.cx < frame[2]
        and frame[1] < s.cy < frame[3]
    ]
    # the colour bar of panel e: the narrow image right of the frame
    cbar = min(
        (s for s in shapes if s.kind == "image" and s.x0 > frame[2] and s.w < 10),
        key=lambda s: s.x0 - frame[2],
    )
    pix = image_array(cbar).astype(float) / 255.0
    col = pix[:, pix.shape[1] // 2, :]  # row 0 at the top = γ max
    gam = np.linspace(GAMMA_RANGE[1], GAMMA_RANGE[0], len(col))
    rows = to_table(
        marks, xa, ya, how="vector circle; error bar from a filled 1.5 pt rectangle; γ via colour bar"
    )
    out = []
    for r, m in zip(rows, marks):
        c = np.array(m["fill_color"], dtype=float)
        d = np.sqrt(((col - c) ** 2).sum(axis=1))
        k = int(np.argmin(d))
        bar = [
            b
            for b in bars
            if abs(b.cx - m["cx"]) < 0.05
            and b.y0 - 0.05 <= m["cy"] <= b.y1 + 0.05
            and np.max(np.abs(np.subtract(b.fill_color, m["fill_color"]))) < 0.01
        ]
        lo = hi = np.nan
        if bar:
            b = max(bar, key=lambda b: b.h)
            lo, hi = float(ya.to_data(b.y0)), float(ya.to_data(b.y1))
        out.append(
            {
                "alpha": r["x"],
                "alpha_m": r["y"],
                "alpha_m_lo": lo,
                "alpha_m_hi": hi,
                "alpha_m_err": (hi - lo) / 2 if bar else np.nan,
                "gamma_decoded": float(gam[k]),
                "gamma": round(float(GAMMA_GRID[np.argmin(np.abs(GAMMA_GRID - gam[k]))]), 6),
                "gamma_color_dist": float(d[k]),
                "fill_color": r["fill_color"],
                "how": r["how"],
            }
        )
    df = pd.DataFrame(out).sort_values(["gamma", "alpha"]).reset_index(drop=True)
    df["gamma_snap_dist"] = (df["gamma_decoded"] - df["gamma"]).abs()
    summary = {
        "found": len(df),
        "with_error_bar": int(df["alpha_m_err"].notna().sum()),
        "n_bars": len(bars),
        "x_axis": {"n_ticks": xa.n_ticks, "residual_pt": xa.residual_pt},
        "y_axis": {"n_ticks": ya.n_ticks, "residual_pt": ya.residual_pt},
        "gamma_step": float(abs(gam[1] - gam[0])),
        "max_gamma_color_dist": float(df["gamma_color_dist"].max()),
        "max_gamma_snap_dist": float(df["gamma_snap_dist"].max()),
        "gammas": sorted(set(df["gamma"].round(4))),
    }
    return df, summary
