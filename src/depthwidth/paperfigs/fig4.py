"""Fig. 4b of the superposition paper decoded: the heat map of the model exponent α_m over weight decay γ
(x, the paper's ten values linspace(−1, 1, 10)) and data exponent α (y, 0 … 2 in steps of 0.125), an
embedded raster image, decoded through its colour bar.

How it is read: the heat map's axes come from the tick marks around it (labels are outlines: γ = −1, 0, 1;
α = 0, 0.5, …, 2); each cell's centre is mapped into the image's pixels and its colour taken as the median
of the 3 × 3 pixels there (the image was resampled, about 17 × 9 pixels per cell). The colour bar is a
second image beside it, whose axis ticks (0, 0.5, …, 2.0) give each of its pixel rows a value; a cell's α_m
is the value of the colour-bar row nearest in RGB. The decoding error is stated per cell: the RGB distance
to that row, the spread of the cell's pixels, and the value step of one colour-bar row.

- ``read_fig4b``: the 170 cells as a DataFrame and a summary.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth.paperfigs.axes import calibrate, find_frames, fit_axis
from depthwidth.paperfigs.vector import image_array, read_page

GAMMAS = np.linspace(-1.0, 1.0, 10)
ALPHAS = np.arange(17) * 0.125
LABELS = {"x": [-1.0, 0.0, 1.0], "y": [0.0, 0.5, 1.0, 1.5, 2.0]}
CBAR_LABELS = [0.0, 0.5, 1.0, 1.5, 2.0]


def colorbar(shapes, cbar, labels=CBAR_LABELS) -> tuple[np.ndarray, np.ndarray, dict]:
    """(rgb per row, value per row, axis summary) of a vertical colour-bar image with ticks on its right;
    ``labels``: the tick values, bottom to top."""
    ticks = sorted(
        {
            round(s.cy, 3)
            for s in shapes
            if s.kind in ("rect", "line") and abs(s.x0 - cbar.x1) < 0.6 and s.h < 1.2 and 2 < s.w < 4
        }
    )
    if len(ticks) != len(labels):
        raise ValueError(f"colour bar: {len(ticks)} ticks at {ticks}, expected {len(labels)} ({labels})")
    ax = fit_axis(ticks, list(labels), "linear", "given label values matched to ticks in order")
    pix = image_array(cbar).astype(float) / 255.0
    rgb = pix[:, pix.shape[1] // 2, :]
    h = pix.shape[0]
    y = cbar.y1 - (np.arange(h) + 0.5) * (cbar.y1 - cbar.y0) / h
    return (
        rgb,
        ax.to_data(y),
        {"n_ticks": ax.n_ticks, "residual_pt": ax.residual_pt, "vmax_at_top": float(ax.to_data(cbar.y1))},
    )


def decode_heatmap(heat, xa, ya, rgb, vals, gammas, alphas, value: str) -> list[dict]:
    """One row per (γ, α) cell of the heat-map image ``heat`` (γ on x, α on y, maps ``xa``, ``ya``): the
    3×3-pixel median colour at the cell's centre decoded to the nearest colour-bar row (``rgb`` rows with
    values ``vals``), as column ``value``, with its colour distance and the spread inside the 3×3 patch."""
    pix = image_array(heat).astype(float) / 255.0
    h, w = pix.shape[:2]
    rows = []
    for g in gammas:
        for a in alphas:
            px = (float(xa.to_coord(g)) - heat.x0) / (heat.x1 - heat.x0) * w
            py = (heat.y1 - float(ya.to_coord(a))) / (heat.y1 - heat.y0) * h
            i, j = int(np.floor(py)), int(np.floor(px))
            patch = pix[max(i - 1, 0) : i + 2, max(j - 1, 0) : j + 2].reshape(-1, 3)
            c = np.median(patch, axis=0)
            d = np.sqrt(((rgb - c) ** 2).sum(axis=1))
            k = int(np.argmin(d))
            rows.append(
                {
                    "gamma": round(float(g), 6),
                    "alpha": float(a),
                    value: float(vals[k]),
                    "color_dist": float(d[k]),
                    "cell_spread": float(np.sqrt(((patch - c) ** 2).sum(axis=1)).max()),
                    "how": "raster cell (3×3 median) decoded through the colour bar",
                }
            )
    return rows


def read_fig4b(pdf: str | Path) -> tuple[pd.DataFrame, dict]:
    shapes = read_page(pdf)
    frames = find_frames(shapes)
    frame = max(frames, key=lambda f: f[0])
    xa = calibrate(shapes, frame, "bottom", "linear", LABELS["x"])
    ya = calibrate(shapes, frame, "left", "linear", LABELS["y"])
    images = sorted((s for s in shapes if s.kind == "image" and s.x0 > frame[0] - 1), key=lambda s: s.x0)
    heat, cbar = images[0], images[1]
    rgb, vals, cb = colorbar(shapes, cbar)
    rows = decode_heatmap(heat, xa, ya, rgb, vals, GAMMAS, ALPHAS, "alpha_m")
    df = pd.DataFrame(rows)
    summary = {
        "expected": len(GAMMAS) * len(ALPHAS),
        "found": len(df),
        "colorbar": cb,
        "value_step": float(np.median(np.abs(np.diff(vals)))),
        "max_color_dist": float(df["color_dist"].max()),
        "median_color_dist": float(df["color_dist"].median()),
        "max_cell_spread": float(df["cell_spread"].max()),
        "x_axis": {"n_ticks": xa.n_ticks, "residual_pt": xa.residual_pt},
        "y_axis": {"n_ticks": ya.n_ticks, "residual_pt": ya.residual_pt},
    }
    return df, summary
