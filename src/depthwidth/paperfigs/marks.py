"""Markers, error bars and lines inside one axes frame, read from the drawing objects.

- ``marker_shape``: circle, square, diamond, triangle_up/down, … from a filled path's operators and corners.
- ``find_markers``: filled paths of marker size inside a frame; a fill and the outline drawn around it
  (same colour, same centre) count once. The centre is the centre of the path's box, which is the
  marker's anchor for the symmetric shapes matplotlib draws (its triangles span [-1, 1] in y too).
- ``find_errorbars``: vertical segments inside the frame through a marker's centre.
- ``find_lines``: stroked polylines inside the frame (the vertices).
- ``to_table``: rows with data coordinates, via two :class:`depthwidth.paperfigs.axes.Axis`.
"""

from __future__ import annotations

import numpy as np

from depthwidth.paperfigs.axes import Axis
from depthwidth.paperfigs.vector import Shape


def marker_shape(s: Shape) -> str:
    """The marker kind of a closed path."""
    if s.kind == "rect":
        return "square"
    if "c" in s.ops:
        return "circle"
    pts = np.array(s.pts, dtype=float)
    if len(pts) > 1 and np.allclose(pts[0], pts[-1], atol=1e-6):
        pts = pts[:-1]
    # distinct corners
    uniq = []
    for p in pts:
        if not any(np.hypot(*(p - q)) < 1e-3 for q in uniq):
            uniq.append(p)
    pts = np.array(uniq)
    n = len(pts)
    if n == 3:
        ys = np.sort(pts[:, 1])
        # the apex is the lone vertex: far from the other two in y
        return "triangle_up" if ys[2] - ys[1] > ys[1] - ys[0] else "triangle_down"
    if n == 4:
        xs, ys = np.unique(np.round(pts[:, 0], 3)), np.unique(np.round(pts[:, 1], 3))
        if len(xs) == 2 and len(ys) == 2:
            return "square"
        return "diamond"
    return f"polygon{n}"


def _inside(s: Shape, frame: tuple, pad: float = 0.5) -> bool:
    x0, y0, x1, y1 = frame
    return x0 - pad <= s.cx <= x1 + pad and y0 - pad <= s.cy <= y1 + pad


def marker_record(s, shape: str, edge: bool) -> dict:
    """One marker's row: its shape, centre, size, fill colour (rounded to 1e-4) and opacity; ``edge``
    whether it was found by its outline."""
    return {
        "shape": shape,
        "cx": s.cx,
        "cy": s.cy,
        "size": max(s.w, s.h),
        "fill_color": tuple(round(c, 4) for c in s.fill_color),
        "fill_alpha": s.fill_alpha,
        "edge": edge,
    }


def find_markers(
    shapes: list[Shape],
    frame: tuple,
    min_size: float = 2.0,
    max_size: float = 12.0,
    colors: list[tuple] | None = None,
    color_tol: float = 0.02,
) -> list[dict]:
    """Markers inside ``frame``: filled closed paths between ``min_size`` and ``max_size`` points wide
    (and, with ``colors``, of one of those fill colours). Returns dicts with shape, cx, cy (points),
    size, fill_color, fill_alpha, edge (True when an outline of the same colour and centre was merged)."""
    cands = []
    for s in shapes:
        if s.kind not in ("curve", "rect") or not s.fill or s.fill_color is None or not _inside(s, frame):
            continue
        if not (min_size <= s.w <= max_size and min_size <= s.h <= max_size):
            continue
        if colors is not None and not any(
            np.max(np.abs(np.subtract(s.fill_color, c))) <= color_tol for c in colors
        ):
            continue
        cands.append(s)
    out: list[dict] = []
    for s in sorted(cands, key=lambda s: s.w * s.h):
        for m in out:
            same_colour = np.max(np.abs(np.subtract(m["fill_color"], s.fill_color))) <= color_tol
            if same_colour and abs(m["cx"] - s.cx) < 0.05 and abs(m["cy"] - s.cy) < 0.05:
                m["edge"] = True
                m["outer_size"] = max(s.w, s.h)
                break
        else:
            out.append(marker_record(s, marker_shape(s), edge=False))
    return out


def find_errorbars(shapes: list[Shape], frame: tuple, markers: list[dict], tol: float = 0.05) -> list[dict]:
    """Vertical stroked segments inside ``frame`` whose x is a marker's centre and whose span holds its
    centre: (cx, y_lo, y_hi) in points, one per marker at most (the longest)."""
    best: dict = {}
    for s in shapes:
        if s.kind not in ("line", "curve") or not s.stroke or not _inside(s, frame, pad=2):
            continue
        if s.w > tol or s.h <= 0:
            continue
        for i, m in enumerate(markers):
            if abs(s.cx - m["cx"]) <= tol and s.y0 - tol <= m["cy"] <= s.y1 + tol:
                if i not in best or s.h > best[i]["y_hi"] - best[i]["y_lo"]:
                    best[i] = {"marker": i, "cx": s.cx, "y_lo": s.y0, "y_hi": s.y1}
    return list(best.values())


def find_lines(shapes: list[Shape], frame: tuple, min_points: int = 2, min_len: float = 5.0) -> list[dict]:
    """Stroked, unfilled polylines inside ``frame`` (not its spines or ticks): their vertices."""
    out = []
    for s in shapes:
        if s.kind not in ("curve", "line") or not s.stroke or s.fill or not _inside(s, frame):
            continue
        if max(s.w, s.h) < min_len or len(s.pts) < min_points:
            continue
        out.append({"stroke_color": s.stroke_color, "stroke_alpha": s.stroke_alpha, "pts": list(s.pts)})
    return out


def to_table(
    markers: list[dict],
    xaxis: Axis,
    yaxis: Axis,
    errorbars: list[dict] | None = None,
    how: str = "vector marker",
) -> list[dict]:
    """Marker rows with data coordinates x, y (and y_lo, y_hi where an error bar was found), the axes'
    tick residuals and how each point was read."""
    bars = {b["marker"]: b for b in errorbars or []}
    rows = []
    for i, m in enumerate(markers):
        row = {
            **{k: m[k] for k in ("shape", "cx", "cy", "size", "fill_alpha")},
            "fill_color": "#" + "".join(f"{round(255 * c):02x}" for c in m["fill_color"]),
            "x": float(xaxis.to_data(m["cx"])),
            "y": float(yaxis.to_data(m["cy"])),
            "y_lo": np.nan,
            "y_hi": np.nan,
            "x_tick_residual_pt": xaxis.residual_pt,
            "y_tick_residual_pt": yaxis.residual_pt,
            "how": how + (" (fill + outline)" if m.get("edge") else ""),
        }
        if i in bars:
            row["y_lo"] = float(yaxis.to_data(bars[i]["y_lo"]))
            row["y_hi"] = float(yaxis.to_data(bars[i]["y_hi"]))
        rows.append(row)
    return rows
