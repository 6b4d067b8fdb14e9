"""Drawing objects of one vector PDF page (pdfminer.six, MIT): paths, rectangles, lines, glyphs and
embedded images, in page points with y upwards, each with its fill and stroke colour and opacity.

pdfminer does not track the opacity set by ``gs`` (ExtGState ``ca``/``CA``); :class:`_Interpreter`
adds it, so a marker drawn at alpha 0.3 reads back with ``fill_alpha`` 0.3.

- ``read_page``: the objects of a page as :class:`Shape` rows; ``filled_paths``: its filled paths whole.
- ``image_array``: the pixels of an embedded image as an (h, w, 3) uint8 array.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class Shape:
    """One drawing object. ``kind``: curve, rect, line, char or image; ``x0 y0 x1 y1`` its box in
    points (y up); ``ops`` the path operators (e.g. "mcccch" for a circle) and ``pts`` its end points."""

    kind: str
    x0: float
    y0: float
    x1: float
    y1: float
    fill: bool = False
    stroke: bool = False
    fill_color: tuple | None = None
    stroke_color: tuple | None = None
    fill_alpha: float = 1.0
    stroke_alpha: float = 1.0
    linewidth: float = 0.0
    ops: str = ""
    pts: list = field(default_factory=list)
    text: str = ""
    size: float = 0.0
    image: object = None

    @property
    def cx(self) -> float:
        return 0.5 * (self.x0 + self.x1)

    @property
    def cy(self) -> float:
        return 0.5 * (self.y0 + self.y1)

    @property
    def w(self) -> float:
        return self.x1 - self.x0

    @property
    def h(self) -> float:
        return self.y1 - self.y0


def _rgb(color) -> tuple | None:
    """A pdfminer colour (gray float, RGB or CMYK tuple) as an RGB tuple in [0, 1]."""
    if color is None:
        return None
    if isinstance(color, (int, float)):
        return (float(color),) * 3
    c = [float(v) for v in color]
    if len(c) == 1:
        return (c[0],) * 3
    if len(c) == 3:
        return tuple(c)
    if len(c) == 4:
        k = c[3]
        return tuple((1 - v) * (1 - k) for v in c[:3])
    return None


def _classes():
    from pdfminer.converter import PDFPageAggregator
    from pdfminer.pdfinterp import PDFGraphicState, PDFPageInterpreter
    from pdfminer.pdftypes import dict_value, resolve1

    class AlphaState(PDFGraphicState):
        def __init__(self, fill_alpha: float = 1.0, stroke_alpha: float = 1.0) -> None:
            super().__init__()
            self.fill_alpha = fill_alpha
            self.stroke_alpha = stroke_alpha

        def copy(self):
            obj = super().copy()
            new = AlphaState(self.fill_alpha, self.stroke_alpha)
            new.__dict__.update(
                {k: v for k, v in obj.__dict__.items() if k not in ("fill_alpha", "stroke_alpha")}
            )
            return new

    class Interpreter(PDFPageInterpreter):
        # a form XObject starts from the graphics state of its caller (colours, width, opacity)
        inherit = None

        def init_state(self, ctm) -> None:
            super().init_state(ctm)
            self.graphicstate = self.inherit.copy() if self.inherit is not None else AlphaState()

        def subinterp(self):
            sub = super().subinterp()
            sub.__class__ = Interpreter
            sub.inherit = self.graphicstate.copy()
            return sub

        def do_gs(self, name) -> None:
            try:
                states = dict_value(resolve1(self.resources.get("ExtGState", {})))
                state = dict_value(resolve1(states[getattr(name, "name", name)]))
            except (KeyError, TypeError):
                return
            if "ca" in state:
                self.graphicstate.fill_alpha = float(resolve1(state["ca"]))
            if "CA" in state:
                self.graphicstate.stroke_alpha = float(resolve1(state["CA"]))

    class Device(PDFPageAggregator):
        #: every painted path whole (pdfminer splits a path with several subpaths, losing its holes):
        #: (fill colour, fill alpha, evenodd, [(op, x, y, ...) in page points])
        whole_paths: list

        def paint_path(self, gstate, stroke, fill, evenodd, path) -> None:
            if fill:
                from pdfminer.utils import apply_matrix_pt

                segs = []
                for seg in path:
                    xy = [float(v) for v in seg[1:]]
                    pts = [apply_matrix_pt(self.ctm, (xy[i], xy[i + 1])) for i in range(0, len(xy) - 1, 2)]
                    segs.append((str(seg[0]), [c for p in pts for c in p]))
                self.whole_paths.append(
                    (_rgb(gstate.ncolor), getattr(gstate, "fill_alpha", 1.0), bool(evenodd), segs)
                )
            before = len(self.cur_item._objs)
            super().paint_path(gstate, stroke, fill, evenodd, path)
            for item in self.cur_item._objs[before:]:
                item.fill_alpha = getattr(gstate, "fill_alpha", 1.0)
                item.stroke_alpha = getattr(gstate, "stroke_alpha", 1.0)

    return Interpreter, Device


_PARSED: dict[tuple, tuple[list[Shape], list[tuple]]] = {}  # the last page read: key -> (shapes, paths)


def read_page(path: str | Path, page: int = 0) -> list[Shape]:
    """Every drawing object of page ``page`` (0-based) of the PDF at ``path``, in drawing order.

    The page is parsed once per process while the file is unchanged (same size and modification time):
    a figure reading asks for the same page several times (Fig. 8b: its axes, its raster and its filled
    paths)."""
    return list(_parsed(path, page)[0])


def _parsed(path: str | Path, page: int) -> tuple[list[Shape], list[tuple]]:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: no such PDF (fetch it with the download stage, rule fetch_pinned_superposition_paper)"
        )
    st = path.stat()
    key = (str(path.resolve()), page, st.st_size, st.st_mtime_ns)
    if key not in _PARSED:
        _PARSED.clear()
        _PARSED[key] = _parse_page(path, page)
    return _PARSED[key]


def _parse_page(path: Path, page: int) -> tuple[list[Shape], list[tuple]]:
    from pdfminer.layout import LAParams, LTChar, LTContainer, LTCurve, LTImage, LTLine, LTRect
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfinterp import PDFResourceManager
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser

    Interpreter, Device = _classes()
    out: list[Shape] = []
    with open(path, "rb") as fh:
        doc = PDFDocument(PDFParser(fh))
        pages = list(PDFPage.create_pages(doc))
        if not 0 <= page < len(pages):
            raise ValueError(f"{path}: page {page} requested, the file has {len(pages)} page(s)")
        rsrc = PDFResourceManager()
        device = Device(rsrc, laparams=LAParams(all_texts=False))
        device.whole_paths = []
        interp = Interpreter(rsrc, device)
        interp.process_page(pages[page])
        layout = device.get_result()

        def walk(item) -> None:
            if isinstance(item, LTChar):
                out.append(
                    Shape(
                        "char",
                        item.x0,
                        item.y0,
                        item.x1,
                        item.y1,
                        text=item.get_text(),
                        size=item.size,
                        fill_color=_rgb(item.graphicstate.ncolor),
                    )
                )
            elif isinstance(item, LTImage):
                out.append(Shape("image", item.x0, item.y0, item.x1, item.y1, image=item.stream))
            elif isinstance(item, (LTRect, LTLine, LTCurve)):
                kind = "rect" if isinstance(item, LTRect) else "line" if isinstance(item, LTLine) else "curve"
                path_ = item.original_path or []
                out.append(
                    Shape(
                        kind,
                        item.x0,
                        item.y0,
                        item.x1,
                        item.y1,
                        fill=bool(item.fill),
                        stroke=bool(item.stroke),
                        fill_color=_rgb(item.non_stroking_color) if item.fill else None,
                        stroke_color=_rgb(item.stroking_color) if item.stroke else None,
                        fill_alpha=float(getattr(item, "fill_alpha", 1.0)),
                        stroke_alpha=float(getattr(item, "stroke_alpha", 1.0)),
                        linewidth=float(item.linewidth or 0.0),
                        ops="".join(str(s[0]) for s in path_),
                        pts=[tuple(map(float, p)) for p in item.pts],
                    )
                )
            if isinstance(item, LTContainer):
                for child in item:
                    walk(child)

        walk(layout)
    return out, device.whole_paths


def filled_paths(path: str | Path, page: int = 0) -> list[tuple]:
    """Every filled path of a page whole, in painting order: (fill RGB, fill alpha, evenodd, segments),
    segments as (operator, [x0, y0, x1, y1, …]) in page points (m, l, c, v, y, h)."""
    return list(_parsed(path, page)[1])


def image_array(shape: Shape) -> np.ndarray:
    """The pixels of an embedded image (``kind == "image"``) as an (h, w, 3) uint8 array, row 0 at the top."""
    stream = shape.image
    attrs = stream.attrs  # inline images use the abbreviated keys (W, H, BPC, F)
    width = int(attrs.get("Width", attrs.get("W")))
    height = int(attrs.get("Height", attrs.get("H")))
    bpc = int(attrs.get("BitsPerComponent", attrs.get("BPC", 8)))
    if attrs.get("F") is not None and attrs.get("Filter") is None:
        attrs["Filter"] = {"Fl": "FlateDecode"}.get(getattr(attrs["F"], "name", attrs["F"]), attrs["F"])
        if "DP" in attrs:
            attrs["DecodeParms"] = attrs["DP"]
    data = stream.get_data()
    n = len(data) // (width * height) if bpc == 8 else 0
    if bpc != 8 or n not in (1, 3):
        raise ValueError(
            f"image {stream.get('Subtype')}: {bpc} bits, {n} channels; only 8-bit gray or RGB is read"
        )
    arr = np.frombuffer(data[: width * height * n], dtype=np.uint8).reshape(height, width, n)
    return np.repeat(arr, 3, axis=2) if n == 1 else arr.copy()
