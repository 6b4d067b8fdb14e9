"""Panels of a figure page: the axes frame, its tick marks, and the map from drawing coordinates to data.

A tick is a short segment (a stroked line, or a thin filled rectangle where an illustration program
turned strokes into fills) perpendicular to a spine, touching it. Major ticks are the longest class;
their values come from text labels where the PDF has text (matplotlib writes glyphs as text) or, where
labels are glyph outlines, from values given by the caller (read off the figure's raster image), matched
to the major ticks in drawing order. On a log axis the minor ticks (2…9 × 10^k) then check the map: every
tick, major and minor, gets a residual against it.

- ``find_frames``: axes frames (left, bottom, right, top) from long spines.
- ``find_ticks``: the tick marks on one side of a frame.
- ``Axis``/``fit_axis``: the map coord → value, fitted to (coord, value) pairs, with residuals.
- ``calibrate``: one axis from its ticks and labels (text or given values).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from depthwidth.paperfigs.vector import Shape


def _segment(s: Shape, thin: float = 1.5):
    """(orientation, fixed coord, lo, hi, thickness) of a straight thin object, or None."""
    if s.kind == "line" or (s.kind in ("rect", "curve") and s.ops in ("mlllh", "mllll", "ml", "mlh")):
        if s.w <= thin and s.h > s.w:
            return ("v", s.cx, s.y0, s.y1, s.w)
        if s.h <= thin and s.w > s.h:
            return ("h", s.cy, s.x0, s.x1, s.h)
    return None


def find_frames(shapes: list[Shape], min_len: float = 30.0, tol: float = 1.5) -> list[tuple]:
    """Axes frames as (x0, y0, x1, y1): a left spine and a bottom spine meeting at a corner, the frame
    spanning the bottom spine's length and the left spine's height. Sorted left to right, top to bottom."""
    segs = [g for g in (_segment(s) for s in shapes) if g and g[3] - g[2] >= min_len]
    vs = [g for g in segs if g[0] == "v"]
    hs = [g for g in segs if g[0] == "h"]
    frames = set()
    for v in vs:
        for h in hs:
            if abs(h[2] - v[1]) <= tol + v[4] and abs(v[2] - h[1]) <= tol + h[4]:
                # the right spine / top spine, if drawn, give the far edges
                frames.add(
                    (round(v[1], 3), round(h[1], 3), round(h[3] - 0.5 * v[4], 3), round(v[3] - 0.5 * h[4], 3))
                )
    # a box whose corner is also another box's corner: keep the largest per (x0, y0)
    best: dict = {}
    for f in frames:
        k = (round(f[0]), round(f[1]))
        if k not in best or (f[2] - f[0]) * (f[3] - f[1]) > (best[k][2] - best[k][0]) * (
            best[k][3] - best[k][1]
        ):
            best[k] = f
    return sorted(best.values(), key=lambda f: (-round(f[3] / 20), f[0]))


@dataclass
class Tick:
    pos: float  # coordinate along the axis (x for the bottom axis, y for the left axis)
    length: float
    major: bool = False


def find_ticks(
    shapes: list[Shape], frame: tuple, side: str = "bottom", max_len: float = 8.0, tol: float = 1.0
) -> list[Tick]:
    """The tick marks on ``side`` ("bottom" or "left") of ``frame``, outside or inside the spine, sorted
    by position; ``major`` marks the longest length class (ticks within 15 % of the longest)."""
    x0, y0, x1, y1 = frame
    out: dict = {}
    for s in shapes:
        g = _segment(s, thin=1.2)
        if not g or g[3] - g[2] > max_len or g[3] - g[2] < 0.3:
            continue
        o, c, lo, hi, _ = g
        if (
            side == "bottom"
            and o == "v"
            and x0 - tol <= c <= x1 + tol
            and (abs(hi - y0) <= tol + 0.6 or abs(lo - y0) <= tol + 0.6)
        ):
            out.setdefault(round(c, 2), Tick(c, hi - lo))
        elif (
            side == "left"
            and o == "h"
            and y0 - tol <= c <= y1 + tol
            and (abs(hi - x0) <= tol + 0.6 or abs(lo - x0) <= tol + 0.6)
        ):
            out.setdefault(round(c, 2), Tick(c, hi - lo))
    ticks = sorted(out.values(), key=lambda t: t.pos)
    if ticks:
        longest = max(t.length for t in ticks)
        for t in ticks:
            t.major = t.length >= 0.85 * longest
    return ticks


@dataclass
class Axis:
    """value = f⁻¹(slope · coord + intercept), f = log10 on a log axis. ``residual_pt``: the largest
    distance in points between a tick and where the map puts its value; ``residual_rel``: the same as a
    relative error of the value (log axis) or relative to the axis span (linear axis)."""

    scale: str
    slope: float
    intercept: float
    n_ticks: int = 0
    residual_pt: float = 0.0
    residual_rel: float = 0.0
    label_source: str = ""
    ticks: list = field(default_factory=list)

    def to_data(self, coord):
        t = self.slope * np.asarray(coord, dtype=np.float64) + self.intercept
        return 10.0**t if self.scale == "log" else t

    def to_coord(self, value):
        v = np.asarray(value, dtype=np.float64)
        t = np.log10(v) if self.scale == "log" else v
        return (t - self.intercept) / self.slope


def fit_axis(coords, values, scale: str, label_source: str = "") -> Axis:
    """Least-squares map from tick coordinates to their values (in log10 on a log axis)."""
    c = np.asarray(coords, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    if len(c) < 2 or len(np.unique(c)) < 2:
        raise ValueError(f"an axis needs two ticks at different positions with known values; got {len(c)}")
    t = np.log10(v) if scale == "log" else v
    slope, intercept = np.polyfit(c, t, 1)
    ax = Axis(scale, float(slope), float(intercept), n_ticks=len(c), label_source=label_source)
    ax.ticks = list(zip(c.tolist(), v.tolist()))
    pred = ax.to_coord(v)
    ax.residual_pt = float(np.max(np.abs(pred - c)))
    tr = slope * c + intercept
    ax.residual_rel = (
        float(np.max(np.abs(10 ** (tr - t) - 1)))
        if scale == "log"
        else float(np.max(np.abs(tr - t)) / (t.max() - t.min()))
    )
    return ax


_SUP = str.maketrans("−–", "--")


def parse_label(chars: list[Shape]) -> float | None:
    """The value of a tick label from its glyphs: plain numbers ("0.5", "−1") or a power written as a
    base with a smaller raised exponent (matplotlib's 10^{−1})."""
    if not chars:
        return None
    chars = sorted(chars, key=lambda c: c.x0)
    big = max(c.size for c in chars)
    base = "".join(c.text for c in chars if c.size >= 0.85 * big).translate(_SUP).strip()
    exp = "".join(c.text for c in chars if c.size < 0.85 * big).translate(_SUP).strip()
    try:
        if exp:
            return float(base) ** float(exp) if base not in ("", "×10") else None
        if re.fullmatch(r"-?\d+(\.\d*)?([eE]-?\d+)?", base):
            return float(base)
    except ValueError:
        return None
    return None


def text_labels(
    shapes: list[Shape], frame: tuple, ticks: list[Tick], side: str, reach: float = 30.0
) -> list[tuple]:
    """(tick position, value) for each major tick with a text label beside it."""
    x0, y0, x1, y1 = frame
    chars = [s for s in shapes if s.kind == "char" and s.text.strip()]
    out = []
    for t in ticks:
        if not t.major:
            continue
        if side == "bottom":
            near = [c for c in chars if y0 - reach <= c.cy < y0 and abs(c.cx - t.pos) < 12]
            if near:  # the row of glyphs nearest the axis (an axis title sits further out)
                top = max(c.y1 for c in near)
                near = [c for c in near if c.y1 >= top - 1.5 * max(d.size for d in near)]
            # keep the glyph run centred on the tick
            near = [
                c
                for c in near
                if _run_centre(near, c) is not None and abs(_run_centre(near, c) - t.pos) < 2.5
            ]
        else:
            near = [c for c in chars if x0 - 2 * reach <= c.x1 < x0 and abs(c.cy - t.pos) < 6]
        v = parse_label(near)
        if v is not None:
            out.append((t.pos, v))
    return out


def _run_centre(chars: list[Shape], c: Shape):
    run = [d for d in chars if abs(d.y0 - c.y0) < 6]
    if not run:
        return None
    return 0.5 * (min(d.x0 for d in run) + max(d.x1 for d in run))


def calibrate(
    shapes: list[Shape], frame: tuple, side: str, scale: str, labels: list[float] | None = None
) -> Axis:
    """The axis map of one side of a panel. With ``labels`` None the major ticks' text labels give the
    values; otherwise ``labels`` are the major ticks' values in increasing position (read off the
    figure's raster where the PDF draws labels as outlines). On a log axis, minor ticks between two
    decades are assigned 2…9 × the decade below and enter the residual."""
    ticks = find_ticks(shapes, frame, side)
    majors = [t for t in ticks if t.major]
    if labels is None:
        pairs = text_labels(shapes, frame, ticks, side)
        source = "text labels"
    else:
        if len(labels) != len(majors):
            raise ValueError(
                f"{side} axis of panel {tuple(round(v, 1) for v in frame)}: {len(majors)} major ticks found at "
                f"{[round(t.pos, 2) for t in majors]}, {len(labels)} label values given ({labels}); give one value per major tick"
            )
        pairs = [(t.pos, v) for t, v in zip(majors, labels)]
        source = "given label values matched to major ticks in order"
    if len(pairs) < 2:
        raise ValueError(f"{side} axis of panel {frame}: fewer than two labelled major ticks ({pairs})")
    ax = fit_axis([p for p, _ in pairs], [v for _, v in pairs], scale, source)
    if scale == "log":
        extra = []
        for t in ticks:
            if t.major:
                continue
            v = float(ax.to_data(t.pos))
            k = np.floor(np.log10(v) + 1e-9)
            mult = round(v / 10**k)
            if 2 <= mult <= 9:
                extra.append((t.pos, mult * 10**k))
        if extra:
            allp = pairs + extra
            ax = fit_axis(
                [p for p, _ in allp], [v for _, v in allp], scale, source + "; minor ticks 2…9 × 10^k checked"
            )
    return ax
