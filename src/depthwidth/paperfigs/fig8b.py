"""Fig. 8b of the superposition paper read by fitting a drawing model to the figure: the loss's model part
L − B_g against width m, 27 models × 4 datasets, markers drawn at alpha 0.3.

The illustration program flattened the transparency: the 108 markers survive only as about 1,800
fragments in blended colours plus two embedded raster patches, so no marker is one path. What is known
exactly: each marker's x (its model's width m, from the published configs; the notebook's m, so OPT-350m
at 1024), its shape (dataset: circle wikitext, square c4, triangle-down pile, triangle-up bookcorpus), its
colour (family: matplotlib C0–C3), its opacity (0.3), its size (measured on isolated markers: a 5.06 pt
marker outlined by a 1 pt stroke, one blended colour) and the painting order (the notebook's loops:
family, then dataset, then model). The unknown is each marker's y.

How it is read: the page's filled paths and images inside panel b are rasterised (``K`` pixels per point,
pixel centres, no anti-aliasing) into a target image; the same drawing model paints the 108 markers, and
each marker's y is chosen to minimise the squared colour difference to the target, one marker at a time
with the others held (a composite of the markers painted before and after it is exact for alpha
blending), in sweeps until no marker moves. Black pixels (the fit line, text, legend) are left out. The
reading of each point states its final shift in the last sweep and the fit's pixel residual.

- ``read_fig8b``: the 108 points (model, dataset, m, model part) and a summary.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth.paperfigs.axes import calibrate, find_frames
from depthwidth.paperfigs.fig8 import FAMILY_COLORS, FIG8B_LABELS, llm_widths
from depthwidth.paperfigs.vector import filled_paths, image_array, read_page

ALPHA = 0.3
#: marker geometry measured on isolated markers of panel b (points): fill half-size and stroke half-width
HALF = 2.53
STROKE = 0.5
SHAPES = {"wikitext": "circle", "c4": "square", "pile": "triangle_down", "bookcorpus": "triangle_up"}


def _flatten(segs) -> list[list[tuple]]:
    polys, cur = [], []
    for op, c in segs:
        if op == "m":
            if len(cur) > 2:
                polys.append(cur)
            cur = [(c[0], c[1])]
        elif op == "l":
            cur.append((c[0], c[1]))
        elif op in ("c", "v", "y") and cur:
            p0 = cur[-1]
            if op == "c":
                p1, p2, p3 = (c[0], c[1]), (c[2], c[3]), (c[4], c[5])
            elif op == "v":
                p1, p2, p3 = p0, (c[0], c[1]), (c[2], c[3])
            else:
                p1, p2, p3 = (c[0], c[1]), (c[2], c[3]), (c[2], c[3])
            for t in np.linspace(0, 1, 9)[1:]:
                u = 1 - t
                cur.append(
                    (
                        u**3 * p0[0] + 3 * u * u * t * p1[0] + 3 * u * t * t * p2[0] + t**3 * p3[0],
                        u**3 * p0[1] + 3 * u * u * t * p1[1] + 3 * u * t * t * p2[1] + t**3 * p3[1],
                    )
                )
    if len(cur) > 2:
        polys.append(cur)
    return polys


def rasterise(pdf, frame, K: int) -> np.ndarray:
    """The panel inside ``frame`` as an (H, W, 3) float image: embedded images, then every filled path
    smaller than the panel in painting order, each subpath XOR-ed (holes kept), pixel centres."""
    from PIL import Image, ImageDraw

    shapes = read_page(pdf)
    x0, y0, x1, y1 = frame
    W, H = int((x1 - x0) * K), int((y1 - y0) * K)
    canvas = np.ones((H, W, 3))
    for s in shapes:
        if s.kind != "image" or s.x1 <= x0 or s.x0 >= x1 or s.w > 0.8 * (x1 - x0):
            continue
        a = image_array(s)
        w, h = int(round(s.w * K)), int(round(s.h * K))
        arr = np.asarray(Image.fromarray(a).resize((w, h), Image.NEAREST)) / 255.0
        ox, oy = int(round((s.x0 - x0) * K)), int(round((y1 - s.y1) * K))
        ys, xs = slice(max(oy, 0), min(oy + h, H)), slice(max(ox, 0), min(ox + w, W))
        canvas[ys, xs] = arr[ys.start - oy : ys.stop - oy, xs.start - ox : xs.stop - ox]
    for col, _alpha, _eo, segs in filled_paths(pdf):
        xs = [c[i] for _, c in segs for i in range(0, len(c), 2)]
        ys = [c[i] for _, c in segs for i in range(1, len(c), 2)]
        if not xs or col is None or max(xs) < x0 or min(xs) > x1 or max(ys) < y0 or min(ys) > y1:
            continue
        if max(xs) - min(xs) > 0.8 * (x1 - x0):
            continue  # the panel's background
        bx0, by0 = int(np.floor((min(xs) - x0) * K)) - 1, int(np.floor((y1 - max(ys)) * K)) - 1
        bw, bh = int(np.ceil((max(xs) - min(xs)) * K)) + 3, int(np.ceil((max(ys) - min(ys)) * K)) + 3
        mask = np.zeros((bh, bw), bool)
        for poly in _flatten(segs):
            im = Image.new("1", (bw, bh), 0)
            ImageDraw.Draw(im).polygon(
                [((x - x0) * K - bx0 - 0.5, (y1 - y) * K - by0 - 0.5) for x, y in poly], fill=1
            )
            mask ^= np.asarray(im)
        ys_, xs_ = slice(max(by0, 0), min(by0 + bh, H)), slice(max(bx0, 0), min(bx0 + bw, W))
        sub = mask[ys_.start - by0 : ys_.stop - by0, xs_.start - bx0 : xs_.stop - bx0]
        canvas[ys_, xs_][sub] = col
    return canvas


def marker_mask(shape: str, K: int) -> tuple[np.ndarray, int]:
    """Binary footprint of a marker (fill half-size HALF grown by STROKE) on a (2r+1)² pixel grid centred
    on the anchor, and r."""
    r = int(np.ceil((HALF + STROKE) * K)) + 1
    g = (np.arange(-r, r + 1)) / K
    px, py = np.meshgrid(g, -g)  # y up
    if shape == "circle":
        d = np.hypot(px, py) - HALF
    elif shape == "square":
        q = np.stack([np.abs(px) - HALF, np.abs(py) - HALF])
        d = np.hypot(np.maximum(q[0], 0), np.maximum(q[1], 0)) + np.minimum(np.maximum(q[0], q[1]), 0)
    else:
        s = 1 if shape == "triangle_up" else -1
        verts = np.array([(0, s * HALF), (-HALF, -s * HALF), (HALF, -s * HALF)])
        d = _polygon_sdf(px, py, verts)
    return d < STROKE, r


def _polygon_sdf(px, py, v) -> np.ndarray:
    """Signed distance to a convex polygon (negative inside)."""
    dist = np.full(px.shape, np.inf)
    inside = np.ones(px.shape, bool)
    n = len(v)
    area = 0.0
    for i in range(n):
        a, b = v[i], v[(i + 1) % n]
        area += a[0] * b[1] - b[0] * a[1]
    orient = np.sign(area)
    for i in range(n):
        a, b = v[i], v[(i + 1) % n]
        e = b - a
        wx, wy = px - a[0], py - a[1]
        t = np.clip((wx * e[0] + wy * e[1]) / (e @ e), 0, 1)
        dist = np.minimum(dist, np.hypot(wx - t * e[0], wy - t * e[1]))
        inside &= orient * (e[0] * wy - e[1] * wx) >= 0
    return np.where(inside, -dist, dist)


def read_fig8b(
    pdf: str | Path,
    groups_order: list[str],
    data_order: list[str],
    K: int = 8,
    span_dec: float = 0.6,
    max_sweeps: int = 8,
    swap_sweeps: int = 2,
    prior: tuple[float, float] | None = None,
) -> tuple[pd.DataFrame, dict]:
    """The 108 points of Fig. 8b. ``groups_order``, ``data_order``: the notebook's model classes and data
    names (the painting order);
    ``prior``: (A, α) of the notebook's fit, the start of every marker's y (y then moves within
    ±``span_dec`` decades of it)."""
    shapes = read_page(pdf)
    frames = find_frames(shapes)
    frame = max(frames, key=lambda f: f[0])
    xa = calibrate(shapes, frame, "bottom", "log", FIG8B_LABELS["x"])
    ya = calibrate(shapes, frame, "left", "log", FIG8B_LABELS["y"])
    target = rasterise(pdf, frame, K)
    H, W = target.shape[:2]
    valid = ~(target.max(axis=2) < 0.3)
    models = llm_widths()
    marks = []
    for fam in groups_order:
        for ds in data_order:
            for _, m in models[models["family"] == fam].iterrows():
                marks.append(
                    {"family": fam, "dataset": ds, "model": m["id"], "m": int(m["m"]), "shape": SHAPES[ds]}
                )
    masks = {s: marker_mask(s, K) for s in set(SHAPES.values())}
    A, alpha = prior
    for mk in marks:
        mk["col"] = int(round((float(xa.to_coord(mk["m"])) - frame[0]) * K - 0.5))
        mk["row"] = int(round((frame[3] - float(ya.to_coord(A / mk["m"] ** alpha))) * K - 0.5))
        mk["color"] = np.array(FAMILY_COLORS[mk["family"]])
    span = int(span_dec * abs(float(ya.to_coord(10.0)) - float(ya.to_coord(1.0))) * K)

    def paint(canvas, mk, sign=1):
        m, r = masks[mk["shape"]]
        rs, cs = mk["row"] - r, mk["col"] - r
        r0, r1, c0, c1 = max(rs, 0), min(rs + 2 * r + 1, H), max(cs, 0), min(cs + 2 * r + 1, W)
        if r0 >= r1 or c0 >= c1:
            return canvas
        sub = m[r0 - rs : r1 - rs, c0 - cs : c1 - cs]
        region = canvas[r0:r1, c0:c1]
        region[sub] = (1 - ALPHA) * region[sub] + ALPHA * mk["color"]
        return canvas

    def descend(k) -> bool:
        """Move marker k to its best row with the others held; True if it moved."""
        mk = marks[k]
        m, r = masks[mk["shape"]]
        c0, c1 = max(mk["col"] - r, 0), min(mk["col"] + r + 1, W)
        rows = np.arange(max(mk["prior_row"] - span, r), min(mk["prior_row"] + span, H - r - 1) + 1)
        # only the pixel rows the candidate positions cover: lo ≤ row ± r < hi (never outside the image)
        lo, hi = int(rows[0]) - r, int(rows[-1]) + r + 1
        below = np.ones((hi - lo, c1 - c0, 3))
        trans = np.ones((hi - lo, c1 - c0, 1))
        add = np.zeros((hi - lo, c1 - c0, 3))
        for j, o in enumerate(marks):
            if j == k or abs(o["col"] - mk["col"]) > 2 * r + 1:
                continue
            om, orr = masks[o["shape"]]
            rs, cs = o["row"] - orr - lo, o["col"] - orr - c0
            rr0, rr1, cc0, cc1 = (
                max(rs, 0),
                min(rs + 2 * orr + 1, hi - lo),
                max(cs, 0),
                min(cs + 2 * orr + 1, c1 - c0),
            )
            if rr0 >= rr1 or cc0 >= cc1:
                continue
            sub = om[rr0 - rs : rr1 - rs, cc0 - cs : cc1 - cs]
            if j < k:
                reg = below[rr0:rr1, cc0:cc1]
                reg[sub] = (1 - ALPHA) * reg[sub] + ALPHA * o["color"]
            else:
                t = trans[rr0:rr1, cc0:cc1]
                a_ = add[rr0:rr1, cc0:cc1]
                a_[sub] = (1 - ALPHA) * a_[sub] + ALPHA * o["color"]
                t[sub] = (1 - ALPHA) * t[sub]
        final0 = below * trans + add
        tgt = target[lo:hi, c0:c1]
        D = ALPHA * (mk["color"] - below) * trans
        g = (((final0 + D - tgt) ** 2).sum(axis=2) - ((final0 - tgt) ** 2).sum(axis=2)) * valid[lo:hi, c0:c1]
        mm = m[:, c0 - (mk["col"] - r) : c1 - (mk["col"] - r)].astype(float)
        # Δ(row) = Σ mask(p − row) g(p), for every allowed row at once (window i starts at pixel row lo + i)
        win = np.lib.stride_tricks.sliding_window_view(g, mm.shape)[rows - r - lo, 0]
        vals = np.einsum("nij,ij->n", win, mm)
        best_row = int(rows[int(np.argmin(vals))])
        if best_row != mk["row"]:
            mk["row"] = best_row
            return True
        return False

    def strip_error(col) -> float:
        """Squared colour error of the drawing model in the columns around ``col``."""
        r = max(v[1] for v in masks.values())
        c0, c1 = max(col - r, 0), min(col + r + 1, W)
        canvas = np.ones((H, c1 - c0, 3))
        for o in marks:
            if abs(o["col"] - col) > 2 * r + 1:
                continue
            om, orr = masks[o["shape"]]
            rs, cs = o["row"] - orr, o["col"] - orr - c0
            rr0, rr1, cc0, cc1 = (
                max(rs, 0),
                min(rs + 2 * orr + 1, H),
                max(cs, 0),
                min(cs + 2 * orr + 1, c1 - c0),
            )
            if rr0 >= rr1 or cc0 >= cc1:
                continue
            sub = om[rr0 - rs : rr1 - rs, cc0 - cs : cc1 - cs]
            reg = canvas[rr0:rr1, cc0:cc1]
            reg[sub] = (1 - ALPHA) * reg[sub] + ALPHA * o["color"]
        return float((((canvas - target[:, c0:c1]) ** 2).sum(axis=2) * valid[:, c0:c1]).sum())

    for mk in marks:
        mk["prior_row"] = mk["row"]
    moves, swaps = [], 0
    for _ in range(max_sweeps):
        moved = sum(descend(k) for k in range(len(marks)))
        # markers at one width can trade places (a local search moves one at a time): try every swap
        # in the first sweeps
        for col in sorted({mk["col"] for mk in marks}) if len(moves) < swap_sweeps else []:
            idx = [k for k, mk in enumerate(marks) if mk["col"] == col]
            e0 = strip_error(col)
            for a_i, i in enumerate(idx):
                for j in idx[a_i + 1 :]:
                    if marks[i]["row"] == marks[j]["row"] or (
                        marks[i]["shape"] == marks[j]["shape"] and marks[i]["family"] == marks[j]["family"]
                    ):
                        continue
                    keep = (marks[i]["row"], marks[j]["row"])
                    marks[i]["row"], marks[j]["row"] = keep[1], keep[0]
                    descend(i)
                    descend(j)
                    e1 = strip_error(col)
                    if e1 < e0 - 1e-9:
                        swaps += 1
                        moved += 1
                        e0 = e1
                    else:
                        marks[i]["row"], marks[j]["row"] = keep
        moves.append(moved)
        if moved == 0:
            break
    # residual of the whole drawing model against the target
    model = np.ones((H, W, 3))
    for mk in marks:
        paint(model, mk)
    resid = np.sqrt(((model - target) ** 2).sum(axis=2))[valid]
    rows_out = []
    for mk in marks:
        yc = frame[3] - (mk["row"] + 0.5) / K
        rows_out.append(
            {
                "family": mk["family"],
                "dataset": mk["dataset"],
                "model": mk["model"],
                "m": mk["m"],
                "shape": mk["shape"],
                "model_part": float(ya.to_data(yc)),
                "y_pt": yc,
                "how": f"drawing-model fit at {K} px/pt (one pixel = {1 / K:.3f} pt)",
            }
        )
    df = pd.DataFrame(rows_out)
    summary = {
        "expected": 108,
        "found": len(df),
        "sweeps": len(moves),
        "moves_per_sweep": moves,
        "swaps": swaps,
        "converged": moves[-1] == 0,
        "px_per_pt": K,
        "pixel_rms": float(np.sqrt(np.mean(resid**2))),
        "pixel_frac_off": float(np.mean(resid > 0.05)),
        "x_axis": {"n_ticks": xa.n_ticks, "residual_pt": xa.residual_pt},
        "y_axis": {"n_ticks": ya.n_ticks, "residual_pt": ya.residual_pt},
        "decades_per_pixel": float(1 / (K * abs(float(ya.to_coord(10.0)) - float(ya.to_coord(1.0))))),
    }
    return df, summary
