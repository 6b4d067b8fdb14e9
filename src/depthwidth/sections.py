"""Helpers for the stages' report sections: figure files, tables, number formatting, headline rows.
The assembled page is ``depthwidth.report.page``."""

from __future__ import annotations

import html
import io
import json
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on cluster nodes
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from depthwidth.files import atomic_write_bytes, atomic_write_text  # noqa: E402
from depthwidth.integrity import seal  # noqa: E402

# A headline row is a comparison record (depthwidth.verdicts.Comparison.row(): these keys and the rest of
# verdicts.COLUMNS), made by the stage's comparison rule.
RECORD_KEYS = ("stage", "key", "paper", "claim", "quantity", "paper_text", "verdict", "verdict_text")


# The one look of every figure of the report: seaborn's white grid, its colour-blind-safe palette (the
# colour cycle C0, C1, ... of plain matplotlib calls too) and one text size; set by ``Figures``.
THEME = {
    "context": "notebook",
    "style": "whitegrid",
    "palette": "colorblind",
    "font_scale": 0.8,
    "rc": {"axes.titlesize": 10, "legend.fontsize": 8, "legend.framealpha": 0.85, "figure.dpi": 110},
}


def apply_theme() -> None:
    """Set :data:`THEME` for every figure drawn after it (seaborn and plain matplotlib alike)."""
    import seaborn as sns

    sns.set_theme(**THEME)


class Figures:
    """Where one section's figures go: ``<folder>/<name>.png`` with its caption beside it as
    ``<name>.txt``. ``html`` returns the <figure> element that points at the file; the report rule
    embeds the file into the page (``depthwidth.report.page``), so the page stays self-contained while
    every figure is also a PNG anyone can reuse or diff. Making one applies the report's theme
    (:func:`apply_theme`), so every section draws its figures in the same style."""

    def __init__(self, folder: str | Path):
        apply_theme()
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.names: list[str] = []

    def html(self, fig, name: str, caption: str, alt: str | None = None, dpi: int = 110) -> str:
        """Save ``fig`` as ``<folder>/<name>.png`` (and the caption), close it, return its <figure>."""
        if name in self.names:
            raise ValueError(f"figure name {name!r} used twice in {self.folder}")
        self.names.append(name)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight", metadata={"Software": None})
        plt.close(fig)
        atomic_write_bytes(self.folder / f"{name}.png", buf.getvalue())
        seal(self.folder / f"{name}.png")  # the report checks it before embedding
        atomic_write_text(self.folder / f"{name}.txt", caption + "\n")
        alt = html.escape(alt or caption.split(".")[0])
        src = html.escape((self.folder / f"{name}.png").as_posix())
        return (
            f'<figure><img src="{src}" alt="{alt}"><figcaption>{html.escape(caption)}</figcaption></figure>'
        )


def plain_log_ticks(ax, axis: str = "y") -> None:
    """Label a log axis that spans less than a decade with plain numbers (2, 3, 4) instead of 2×10⁰."""
    from matplotlib.ticker import FuncFormatter

    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    target.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if str(f"{v:g}")[0] in "2345" else ""))


def table_html(df: pd.DataFrame, caption: str | None = None, float_format: str = "{:.4g}") -> str:
    body = df.to_html(
        index=False, border=0, classes="tbl", na_rep="–", float_format=lambda x: float_format.format(x)
    )
    cap = f"<p class='cap'>{html.escape(caption)}</p>" if caption else ""
    return cap + body


def fmt_pm(value, err=None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if err is None or (isinstance(err, float) and not math.isfinite(err)):
        return f"{value:.{digits}g}"
    return f"{value:.{digits}g} ± {err:.2g}"


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and not math.isfinite(x))


def headline_records(comparisons: pd.DataFrame) -> list[dict]:
    """The rows of a stage's ``comparisons.csv`` marked ``headline``, as dicts for :func:`write_section`
    (missing numbers as None). Each keeps every column of the record and adds ``agree`` (True for "yes" and
    "reproduced exactly", False for "no", else None) and ``source`` (the paper's source), the keys the
    headline table has read so far."""
    rows = []
    for r in comparisons[comparisons["headline"]].to_dict("records"):
        r = {k: (None if _missing(v) else v) for k, v in r.items()}
        r["agree"] = {"yes": True, "reproduced exactly": True, "no": False}.get(r["verdict"])
        r["source"] = r.get("paper_source") or ""
        rows.append(r)
    return rows


def _our_value(r: dict) -> str:
    if _missing(r.get("value")):
        return str(r.get("value_text") or "–")
    if r.get("at_bound"):
        return f"{r['value']:.3g} (at a bound: {r['at_bound']}; no error)"
    return fmt_pm(float(r["value"]), None if _missing(r.get("err")) else float(r["err"]))


def _cell(text: str, small: str = "") -> str:
    extra = f"<br><span class='note'>{html.escape(small)}</span>" if small else ""
    return f"<td style='text-align:left'>{html.escape(text)}{extra}</td>"


def comparisons_html(
    comparisons: pd.DataFrame | None, caption: str | None = None, show_claim: bool = False
) -> str:
    """A stage's comparison records (``comparisons.csv``) as a table that fits the page, prose left-aligned:
    what is compared, the paper's statement (and where it is read), our value ± error (and how the error
    was made), the verdict with its why, and the test (with an allowance and its reason where one is used,
    and the p-value where one exists) with the note. ``show_claim`` puts each row's claim above its quantity."""
    if comparisons is None or comparisons.empty:
        return ""
    head = "".join(
        f"<th style='text-align:left;width:{w}'>{h}</th>"
        for h, w in (
            ("Quantity", "20%"),
            ("Paper", "16%"),
            ("This run", "16%"),
            ("Verdict", "22%"),
            ("Test and note", "26%"),
        )
    )
    body = []
    for r in comparisons.to_dict("records"):
        r = {k: (None if _missing(v) else v) for k, v in r.items()}
        err = r["err_method"] if r.get("err_method") not in (None, "none") else ""
        allowance = (
            f"allowance ± {float(r['allowance']):.2g} ({r.get('allowance_reason')})"
            if r.get("allowance")
            else ""
        )
        p = f"p = {float(r['p_value']):.2g}" if r.get("p_value") is not None else ""
        test = "; ".join(str(x) for x in (r.get("test"), allowance, p, r.get("note")) if x)
        body.append(
            "<tr>"
            + _cell(str(r["quantity"]), str(r.get("claim") or "") if show_claim else "")
            + _cell(str(r["paper_text"]), str(r.get("paper_source") or ""))
            + _cell(_our_value(r), err)
            + _cell(str(r["verdict_text"]))
            + _cell(test)
            + "</tr>"
        )
    cap = f"<p class='cap'>{html.escape(caption)}</p>" if caption else ""
    return (
        f"{cap}<table class='tbl' style='table-layout:fixed;width:100%'><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def write_section(
    html_path: str | Path,
    json_path: str | Path,
    stage: str,
    title: str,
    body_html: str,
    headline_rows: list[dict],
) -> None:
    """Write a stage's report fragment and its headline rows, each sealed (the report checks both). A row
    is a comparison record (``RECORD_KEYS``, the rest of verdicts.COLUMNS)."""
    for r in headline_rows:
        if not isinstance(r, dict):
            raise ValueError(f"headline row {r!r} is not a mapping")
        missing = set(RECORD_KEYS) - set(r)
        if missing:
            raise ValueError(
                f"headline row {str(r)[:200]} lacks {sorted(missing)} (a comparison record: "
                "verdicts.compare(...).row(), written by the stage's comparison rule)"
            )
    atomic_write_text(
        html_path, f'<section id="{stage}">\n<h2>{html.escape(title)}</h2>\n{body_html}\n</section>\n'
    )
    seal(html_path)
    atomic_write_text(json_path, json.dumps(headline_rows, indent=2, default=float))
    seal(json_path, rows=len(headline_rows))


def rewrite_region(text: str, start: str, end: str, new: str, where: str, error=ValueError) -> str:
    """``text`` with the region between the marker lines ``start`` and ``end`` replaced by ``new`` (a docs
    file's generated table); ``error`` is raised, naming ``where``, unless each marker occurs once, in order."""
    if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
        raise error(f"{where}: needs one line {start} and, below it, one line {end} around the table")
    head, rest = text.split(start)
    _, tail = rest.split(end)
    return f"{head}{start}\n{new}\n{end}{tail}"


def rewrite_files(files, new_text, check: bool, fix: str) -> int:
    """Write ``new_text(path)`` into each of ``files`` where it differs (a generated docs table), or with
    ``check`` change nothing and name the stale ones with ``fix``, the command that rewrites them: 1 if
    any is stale under ``check``, else 0."""
    stale = []
    for f in files:
        new = new_text(f)
        if new != Path(f).read_text():
            stale.append(str(f))
            if not check:
                Path(f).write_text(new)
    if check and stale:
        print(f"stale table in {', '.join(stale)}. Fix: {fix} " + " ".join(map(str, files)), file=sys.stderr)
        return 1
    return 0
