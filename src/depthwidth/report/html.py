"""Helpers for the stages' report sections: figure files, tables, number formatting, headline rows."""

from __future__ import annotations

import html
import io
import json
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on cluster nodes
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from depthwidth.files import atomic_write_bytes, atomic_write_text  # noqa: E402

HEADLINE_KEYS = ("quantity", "paper", "value", "err", "agree", "source", "note")


class Figures:
    """Where one section's figures go: ``<folder>/<name>.png`` with its caption beside it as
    ``<name>.txt``. ``html`` returns the <figure> element that points at the file; the report rule
    embeds the file into the page (``depthwidth.report.page``), so the page stays self-contained while
    every figure is also a PNG anyone can reuse or diff."""

    def __init__(self, folder: str | Path):
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
        atomic_write_text(self.folder / f"{name}.txt", caption + "\n")
        alt = html.escape(alt or caption.split(".")[0])
        src = html.escape((self.folder / f"{name}.png").as_posix())
        return f'<figure><img src="{src}" alt="{alt}"><figcaption>{html.escape(caption)}</figcaption></figure>'


def plain_log_ticks(ax, axis: str = "y") -> None:
    """Label a log axis that spans less than a decade with plain numbers (2, 3, 4) instead of 2×10⁰."""
    from matplotlib.ticker import FuncFormatter

    target = ax.yaxis if axis == "y" else ax.xaxis
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    target.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if str(f"{v:g}")[0] in "2345" else ""))


def table_html(df: pd.DataFrame, caption: str | None = None, float_format: str = "{:.4g}") -> str:
    body = df.to_html(index=False, border=0, classes="tbl", na_rep="–",
                      float_format=lambda x: float_format.format(x))
    cap = f"<p class='cap'>{html.escape(caption)}</p>" if caption else ""
    return cap + body


def fmt_pm(value, err=None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if err is None or (isinstance(err, float) and not math.isfinite(err)):
        return f"{value:.{digits}g}"
    return f"{value:.{digits}g} ± {err:.2g}"


def agree_within(value, err, paper, paper_err, k: float = 2.0):
    """True if |value − paper| ≤ k·sqrt(err² + paper_err²) (k = 2: about 95 %); None if undefined."""
    if value is None or paper is None:
        return None
    sigma = math.sqrt((err or 0.0) ** 2 + (paper_err or 0.0) ** 2)
    if sigma == 0:
        return None
    return bool(abs(value - paper) <= k * sigma)


def headline_row(quantity: str, paper: str, value, err, agree, source: str, note: str = "") -> dict:
    """One row of the headline table: ``paper`` is the paper's statement as text (e.g. "1.2 ± 0.3")."""
    return {"quantity": quantity, "paper": paper, "value": value, "err": err, "agree": agree,
            "source": source, "note": note}


def write_section(html_path: str | Path, json_path: str | Path, stage: str, title: str, body_html: str,
                  headline_rows: list[dict]) -> None:
    """Write a stage's report fragment and its headline rows."""
    for r in headline_rows:
        missing = set(HEADLINE_KEYS) - set(r)
        if missing:
            raise ValueError(f"headline row {r} lacks {sorted(missing)}")
    Path(html_path).write_text(f'<section id="{stage}">\n<h2>{html.escape(title)}</h2>\n{body_html}\n</section>\n')
    Path(json_path).write_text(json.dumps(headline_rows, indent=2, default=float))


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.7em;margin-bottom:.2em} h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
table.tbl{border-collapse:collapse;margin:.5em 0 1em;font-size:.92em;display:block;overflow-x:auto;max-width:100%}
table.tbl th,table.tbl td{border:1px solid #ccc;padding:3px 8px;text-align:right}
table.tbl th{background:#f3f3f3} table.tbl td:first-child{text-align:left}
figure{margin:1em 0;display:inline-block;max-width:100%;vertical-align:top}
figure img{max-width:100%;border:1px solid #eee}
figcaption{font-size:.9em;color:#444;max-width:640px}
.cap{font-size:.9em;color:#444;margin-bottom:0}
.agree{color:#176b2c;font-weight:600} .disagree{color:#a3261c;font-weight:600}
.note{font-size:.88em;color:#555} td.val{white-space:nowrap}
table#headline td{text-align:left} table#headline td.val{text-align:right} nav a{margin-right:1em}
details{margin:1em 0} pre{background:#f7f7f7;padding:.6em;overflow-x:auto;font-size:.85em}
"""


# What the paper configuration (config/paper.yaml) runs instead of a reduced one, per stage.
PAPER_SETTINGS = {
    "chinchilla": "the same 245 points; 32 starts and 100 held-out splits",
    "superposition": "n = 1000, m = 10…100, 10 weight decays × 9 exponents, batch 2048, 20k steps (exp-10)",
    "depth_toy": "4 variants, 16 temperatures, 3 teacher replicates, depths 6–48, 40k–80k steps (GPU)",
    "hidden_states": "Pythia 70m–12b, Qwen2.5 and OPT on 4,800 FineWeb documents of 1,024 tokens (GPU)",
    "causal_tracing": "six Pythias (70m–12b) in float16 on the paper's sentence, one noise draw (GPU)",
    "lm_head": "27 models (OPT, Qwen2.5, GPT-2, Pythia) on wikitext-103, C4, pile-10k, bookcorpus",
}


def headline_table_html(rows: list[dict], reduced: dict | None = None) -> str:
    """``reduced``: stage -> True where this run used a reduced configuration rather than the paper's."""
    reduced = reduced or {}
    out = ["<table class='tbl' id='headline'><thead><tr><th>quantity</th><th>paper</th><th>this run</th>"
           "<th>agrees?</th><th>from</th><th>configuration</th><th>note</th></tr></thead><tbody>"]
    for r in rows:
        agree = r.get("agree")
        cls, word = {True: ("agree", "yes"), False: ("disagree", "no")}.get(agree, ("", "–"))
        value = r.get("value")
        shown = fmt_pm(value, r.get("err")) if isinstance(value, (int, float)) else html.escape(str(value))
        out.append(f"<tr><td>{html.escape(str(r['quantity']))}</td><td>{html.escape(str(r['paper']))}</td>"
                   f"<td class='val'>{shown}</td><td class='{cls}'>{word}</td><td>{html.escape(str(r['source']))}</td>"
                   f"<td class='note'>{html.escape(_config_note(r.get('stage'), reduced))}</td>"
                   f"<td class='note'>{html.escape(str(r.get('note', '')))}</td></tr>")
    out.append("</tbody></table>")
    smaller = [s for s, r in reduced.items() if r]
    if smaller:
        out.append("<p class='note'>Reduced configurations in this run, and what <code>--configfile "
                   "config/paper.yaml</code> runs instead:</p><ul class='note'>"
                   + "".join(f"<li><b>{html.escape(s)}</b>: {html.escape(PAPER_SETTINGS.get(s, 'the paper settings'))}</li>"
                             for s in smaller) + "</ul>")
    return "".join(out)


def _config_note(stage, reduced: dict) -> str:
    if stage not in reduced:
        return ""
    return "reduced (see below)" if reduced[stage] else "paper"


def assemble_report(title: str, sections: list[tuple[str, str]], headline_rows: list[dict],
                    provenance_html: str, intro_html: str = "", synthesis_html: str = "",
                    reduced: dict | None = None) -> str:
    """The self-contained page: title, headline table, one section per stage, provenance."""
    nav = (" ".join(f'<a href="#{s}">{s}</a>' for s, _ in sections)
           + (' <a href="#synthesis">synthesis</a>' if synthesis_html else "") + ' <a href="#provenance">provenance</a>')
    return (
        f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{CSS}</style></head><body>\n<h1>{html.escape(title)}</h1>\n<nav>{nav}</nav>\n{intro_html}"
        "<h2 id='headline-numbers'>Headline numbers</h2>\n<p class='note'>Each number the papers state, next to "
        "this run's value (± one standard error). 'agrees' means the two differ by at most twice their combined "
        "error.</p>\n" + headline_table_html(headline_rows, reduced) + "\n"
        + synthesis_html + "\n" + "\n".join(h for _, h in sections)
        + f"\n<section id='provenance'><h2>Provenance</h2>{provenance_html}</section>\n</body></html>\n"
    )
