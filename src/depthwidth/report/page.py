"""The assembled report: one self-contained HTML page from the stages' sections (rule ``report``).

The page is the jinja2 template ``templates/report.html.j2``. Each section fragment points at its figure
files (``<img src="results/<stage>/figures/<name>.png">``, written by ``depthwidth.sections.Figures``);
``embed_figures`` replaces each with a data URI, so the page carries its figures while every figure is
also a PNG under ``results/<stage>/figures/``. A figure may only come from a folder the rule declares.
"""

from __future__ import annotations

import base64
import html
import math
import re
from pathlib import Path

import jinja2
from markupsafe import Markup

from depthwidth.integrity import IntegrityError, check_sealed, fix_hint, read_json
from depthwidth.report.rows import RowError, by_paper_and_claim, normalise, paper_verdicts, split_rows
from depthwidth.sections import fmt_pm
from depthwidth.verdicts import COLUMNS, PAPERS, SWEEP_PREFIX

TEMPLATES = Path(__file__).resolve().parent / "templates"

# What the paper configuration (config/paper.yaml) runs instead of a reduced one, per stage.
PAPER_SETTINGS = {
    "chinchilla": "the same 245 points; 32 starts and 100 held-out splits",
    "superposition": "n = 1000, m = 10…100, 10 weight decays × 9 exponents, batch 2048, 20k steps (exp-10)",
    "depth_toy": "6 variants (exp-9 and exp-9-1 to 9-6), 16 temperatures, 3 teacher replicates, depths 6–48, 40k–80k steps (GPU)",
    "hidden_states": "Pythia 70m–12b, Qwen2.5 and OPT on 4,800 FineWeb documents of 1,024 tokens (GPU)",
    "causal_tracing": "six Pythias (70m–12b) in float16 on the paper's sentence, one noise draw (GPU)",
    "lm_head": "27 models (OPT, Qwen2.5, GPT-2, Pythia) on wikitext-103, C4, pile-10k, bookcorpus",
    "paperfigs": "the same reading: the paper's own figure files",
}

# <img ... src="results/<stage>/figures/<name>.png" ...>: the files Figures.html points at.
_IMG_SRC = re.compile(r'(<img\b[^>]*?\bsrc=")(results/[^"]+\.png)(")')


class FigureError(FileNotFoundError):
    """A section points at a figure file that is missing or lies outside the declared figure folders."""


def embed_figures(
    fragment: str, figure_dirs: list[str | Path], where: str = "section", rule: str | None = None
) -> str:
    """``fragment`` with each ``<img src="results/...png">`` replaced by the file as a data URI.

    ``figure_dirs``: the figure folders the report rule declares as inputs; a figure elsewhere is an
    undeclared input and an error, as is a missing file (both name the file and ``where`` it is used).
    With ``rule`` (the section rule that wrote the figures), each file must also match the seal
    ``Figures`` wrote beside it (a truncated or damaged PNG is an error naming it and the fix)."""
    folders = [Path(d).as_posix().rstrip("/") + "/" for d in figure_dirs]

    def data_uri(m: re.Match) -> str:
        src = html.unescape(m.group(2))
        if not any(src.startswith(f) for f in folders):
            raise FigureError(
                f"{where} shows {src}, which is not in a declared figure folder "
                f"({', '.join(folders) or 'none'}): write it with Figures(results/<stage>/figures)"
            )
        path = Path(src)
        if not path.is_file():
            raise FigureError(
                f"{where} shows {src}, but that file is missing: rerun its section rule "
                f"(snakemake --cores all <your target> --forcerun {rule or '<stage>_section'})"
            )
        if rule is not None:
            check_sealed(path, rule)
        return (
            m.group(1) + "data:image/png;base64," + base64.b64encode(path.read_bytes()).decode() + m.group(3)
        )

    return _IMG_SRC.sub(data_uri, fragment)


# The verdict column's look: one css class per verdict word of depthwidth.verdicts.
VERDICT_CLASS = {
    "yes": "agree",
    "reproduced exactly": "agree",
    "no": "disagree",
    "cannot tell": "untested",
    "not tested": "untested",
    "–": "",
}
OUTCOME_CLASS = {
    "reproduced": "agree",
    "partly reproduced": "mixed",
    "did not reproduce": "disagree",
    "cannot tell": "untested",
    "cannot be tested in this run": "untested",
}


def configuration_html(reduced: dict) -> str:
    """The run's configuration, stated once above the headline table: which stages ran reduced settings
    and what ``--configfile config/paper.yaml`` runs instead (folded, one line until opened)."""
    smaller = [s for s, r in reduced.items() if r]
    full = [s for s, r in reduced.items() if not r]
    if not reduced:
        return ""
    if not smaller:
        return "<p class='note'>Configuration: the papers' settings (config/paper.yaml) in every stage.</p>"
    out = [
        "<details class='note'><summary>Configuration of this run: reduced settings in "
        + ", ".join(f"<b>{html.escape(s)}</b>" for s in smaller)
        + ("; the papers' settings in " + ", ".join(html.escape(s) for s in full) if full else "")
        + ". What <code>--configfile config/paper.yaml</code> runs instead:</summary><ul>"
    ]
    out += [
        f"<li><b>{html.escape(s)}</b>: {html.escape(PAPER_SETTINGS.get(s, 'the paper settings'))}</li>"
        for s in smaller
    ]
    out.append("</ul></details>")
    return "".join(out)


def verdicts_html(records: list[dict]) -> str:
    """The first screen: one line per paper (:func:`depthwidth.report.rows.paper_verdicts`)."""
    if not records:
        return ""
    out = ["<div id='verdicts'>"]
    for p in paper_verdicts(records):
        parts = []
        for words, hits in p["outcomes"]:
            claims = "; ".join(
                html.escape(c) + (f" <span class='why'>({html.escape(why)})</span>" if why else "")
                for c, why in hits
            )
            parts.append(
                f"<span class='{OUTCOME_CLASS.get(words, '')}'>{html.escape(words)}</span>: {claims}"
            )
        body = ". ".join(parts) if parts else "no claim with a paper number"
        out.append(
            f"<p class='verdict'><b>{html.escape(p['name'])}</b> "
            f"<span class='note'>({html.escape(p['title'])})</span>: {body}.</p>"
        )
    out.append("</div>")
    return "".join(out)


def _digits(paper_text: str) -> int:
    """Significant digits to show: three, or as many as the paper's first number states (1.2014: 5)."""
    m = re.search(r"\d+(?:\.\d+)?", paper_text or "")
    return max(3, len(m.group().replace(".", "").lstrip("0"))) if m else 3


def _finite(x) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def value_text(r: dict) -> str:
    """Our value as the tables show it: value ± error (to the paper's digits where it prints more), or
    the record's words; a fit at a bound shows no error."""
    v = _finite(r.get("value"))
    if v is None:
        return str(r.get("value_text") or "–")
    err = None if r.get("at_bound") else _finite(r.get("err"))
    return fmt_pm(v, err, digits=_digits(str(r.get("paper_text") or "")))


def _note(r: dict) -> str:
    """The row's note, with how its error was made and any parameter at a bound."""
    bits = [str(r.get("note") or "")]
    if r.get("at_bound"):
        bits.append(f"at a bound: {r['at_bound']} (no error printed)")
    method = str(r.get("err_method") or "")
    if method and method != "none" and "legacy" not in method:
        bits.append(f"error: {method}")
    return "; ".join(b.strip().rstrip(".;") for b in bits if b and b.strip())


def _verdict_cell(r: dict) -> str:
    word = str(r.get("verdict") or "")
    text = str(r.get("verdict_text") or word)
    return f"<td class='{VERDICT_CLASS.get(word, '')}'>{html.escape(text)}</td>"


def headline_table_html(records: list[dict], reduced: dict | None = None) -> str:
    """The papers' headline rows, grouped by paper and claim; ``reduced``: stage -> True where this run
    used a reduced configuration rather than the paper's, stated once above the table."""
    if not records:
        return configuration_html(reduced or {}) + "<p class='note'>No headline rows in this run.</p>"
    out = [
        configuration_html(reduced or {}),
        "<table class='tbl' id='headline'><colgroup><col class='c-q'><col class='c-p'><col class='c-v'>"
        "<col class='c-a'><col class='c-n'></colgroup><thead><tr><th>quantity</th><th>paper</th>"
        "<th>this run</th><th>verdict</th><th>note</th></tr></thead><tbody>",
    ]
    for paper, claims in by_paper_and_claim(records):
        out.append(f"<tr class='paper'><th colspan='5'>{html.escape(PAPERS.get(paper, paper))}</th></tr>")
        for claim, rows in claims:
            out.append(f"<tr class='claim'><td colspan='5'>{html.escape(claim)}</td></tr>")
            for r in rows:
                stage = html.escape(str(r.get("stage") or ""))
                out.append(
                    f"<tr><td>{html.escape(str(r['quantity']))} <a class='from' href='#{stage}'>{stage}</a></td>"
                    f"<td>{html.escape(str(r['paper_text']))}</td><td class='num'>{html.escape(value_text(r))}</td>"
                    f"{_verdict_cell(r)}<td class='note'>{html.escape(_note(r))}</td></tr>"
                )
    out.append("</tbody></table>")
    return "".join(out)


def sweeps_table_html(records: list[dict]) -> str:
    """The sweeps of runs (claims "sweep: <name>"): their own table, below the papers' (empty: nothing)."""
    if not records:
        return ""
    out = [
        "<section id='your-sweeps'><h2>Sweeps of runs</h2><p class='note'>The sweeps of "
        "<code>chinchilla.sweeps</code> (the built-in public ones and yours): fitted with the same law and "
        "checks, shown apart from the papers' rows and written to results/your_sweeps.csv (not "
        "results/headline.csv).</p>"
        "<table class='tbl' id='sweeps'><thead><tr><th>sweep</th><th>quantity</th><th>this run</th>"
        "<th>interval</th><th>verdict</th><th>note</th></tr></thead><tbody>"
    ]
    for r in records:
        lo, hi = _finite(r.get("low")), _finite(r.get("high"))
        interval = "–" if lo is None and hi is None else f"{fmt_pm(lo)} – {fmt_pm(hi)}"
        out.append(
            f"<tr><td>{html.escape(str(r['claim'])[len(SWEEP_PREFIX) :])}</td>"
            f"<td>{html.escape(str(r['quantity']))}</td><td class='num'>{html.escape(value_text(r))}</td>"
            f"<td class='num'>{html.escape(interval)}</td>{_verdict_cell(r)}"
            f"<td class='note'>{html.escape(_note(r))}</td></tr>"
        )
    out.append("</tbody></table></section>")
    return "".join(out)


# ---------------------------------------------------------------- the page at one width
_H3 = re.compile(r"<h3([^>]*)>(.*?)</h3>", re.S)
_TH = re.compile(r"(<th\b[^>]*>)([^<]*)(</th>)")
_TD = re.compile(r"<td>([^<]*)</td>")
# A cell that holds a number or a short numeric expression ("0.945 ± 0.085", "0.245 – open (> 4.7)",
# "12.5 %"): right-aligned and kept on one line; anything else is prose (left-aligned, wraps).
_NUMERIC = re.compile(r"^[\s\-−+–~≈<>()\[\],.%×·±/0-9eE]*\d[\s\-−+–~≈<>()\[\],.%×·±/0-9eEopn]*$")


_TABLE = re.compile(r"<table\b([^>]*)>(.*?)</table>", re.S)
# Tables with more columns than this are set smaller, their numbers wrapping at spaces (never inside one).
WIDE_COLUMNS = 9


# A table of more columns than this and at most TRANSPOSE_ROWS rows is shown transposed (one row per
# column): 27 columns side by side do not fit a page, 27 rows of three values do.
TRANSPOSE_COLUMNS, TRANSPOSE_ROWS = 16, 8
_CELL = re.compile(r"<t([hd])\b[^>]*>(.*?)</t[hd]>", re.S)


def _transposed(attrs: str, body: str) -> str | None:
    """A plain table (one header row, no spans) with its rows and columns swapped; None where it is not
    plain or not wide and short enough to be worth it."""
    if "colspan" in body or "rowspan" in body or "<thead" not in body:
        return None
    rows = [[c for _, c in _CELL.findall(r)] for r in re.findall(r"<tr\b[^>]*>(.*?)</tr>", body, re.S)]
    if len(rows) < 2 or len(rows[0]) <= TRANSPOSE_COLUMNS or len(rows) - 1 > TRANSPOSE_ROWS:
        return None
    if any(len(r) != len(rows[0]) for r in rows):
        return None
    lines = [f"<table{attrs}><tbody>"]
    for j, name in enumerate(rows[0]):
        cells = "".join(f"<td>{r[j]}</td>" for r in rows[1:])
        lines.append(f"<tr><th>{name}</th>{cells}</tr>")
    lines.append("</tbody></table>")
    return "".join(lines)


def _mark_wide(m: re.Match) -> str:
    attrs, body = m.group(1), m.group(2)
    head = body.split("</tr>", 1)[0]
    if head.count("<th") <= WIDE_COLUMNS:
        return m.group(0)
    flipped = _transposed(attrs.replace('class="', 'class="transposed ', 1), body)
    if flipped is not None:
        return flipped
    if 'class="' in attrs:
        attrs = attrs.replace('class="', 'class="wide ', 1)
    elif "class='" in attrs:
        attrs = attrs.replace("class='", "class='wide ", 1)
    else:
        attrs += ' class="wide"'
    return f"<table{attrs}>{body}</table>"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", re.sub(r"<[^>]+>", "", text).lower()).strip("-")[:48] or "part"


def numeric_cell(text: str) -> bool:
    """True for a cell that reads as a number (right-aligned, one line); prose is False."""
    t = html.unescape(text).strip()
    return bool(t) and len(t) <= 28 and bool(_NUMERIC.match(t))


def layout_fragment(stage: str, fragment: str) -> str:
    """A section made to read at one width: an id on each <h3> with a contents list under the section's
    heading and a link back to the top after each part; table headers that may wrap at '_'; numeric
    cells right-aligned on one line, prose left-aligned."""
    used: set[str] = set()
    parts = []

    def anchor(m: re.Match) -> str:
        attrs, title = m.group(1), m.group(2)
        ident = re.search(r'id=["\']([^"\']+)', attrs)
        if ident:
            slug = ident.group(1)
        else:
            slug = f"{stage}-{_slug(title)}"
            while slug in used:
                slug += "-2"
            attrs += f' id="{slug}"'
        used.add(slug)
        parts.append((slug, re.sub(r"<[^>]+>", "", title)))
        return f"<p class='top'><a href='#top'>↑ top</a></p><h3{attrs}>{title}</h3>"

    out = _H3.sub(anchor, fragment)
    out = _TABLE.sub(_mark_wide, out)
    out = _TH.sub(lambda m: m.group(1) + m.group(2).replace("_", "_<wbr>") + m.group(3), out)
    out = _TD.sub(
        lambda m: f"<td class='num'>{m.group(1)}</td>" if numeric_cell(m.group(1)) else m.group(0), out
    )
    if parts:
        toc = (
            "<nav class='toc'>In this section: "
            + " · ".join(f"<a href='#{slug}'>{html.escape(html.unescape(t))}</a>" for slug, t in parts)
            + "</nav>"
        )
        at = out.find("</h2>")
        out = out[: at + 5] + toc + out[at + 5 :] if at >= 0 else toc + out
    close = out.rfind("</section>")
    back = "<p class='top'><a href='#top'>↑ top</a></p>"
    return out[:close] + back + out[close:] if close >= 0 else out + back


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


def render_page(
    title: str,
    sections: list[tuple[str, str]],
    headline_rows: list[dict],
    provenance_html: str,
    figure_dirs: list[str | Path],
    synthesis_html: str = "",
    intro_html: str = "",
    reduced: dict | None = None,
) -> str:
    """The self-contained page: title, a verdict per paper, the papers' headline table grouped by paper
    and claim, your sweeps, synthesis, one section per stage (figures embedded from ``figure_dirs``, a
    contents list each), provenance. ``sections``: (stage, fragment) in report order; ``headline_rows``:
    records (``depthwidth.report.rows.normalise``), users' sweeps among them."""
    embedded = [
        (
            stage,
            Markup(
                layout_fragment(
                    stage, embed_figures(frag, figure_dirs, f"section {stage}", f"{stage}_section")
                )
            ),
        )
        for stage, frag in sections
    ]
    papers, sweeps = split_rows(headline_rows)
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            title=title,
            sections=embedded,
            verdicts=Markup(verdicts_html(papers)),
            headline=Markup(headline_table_html(papers, reduced)),
            sweeps=Markup(sweeps_table_html(sweeps)),
            synthesis=Markup(layout_fragment("synthesis", synthesis_html) if synthesis_html else ""),
            intro=Markup(intro_html),
            provenance=Markup(provenance_html),
        )
    )


def read_section(stage: str, inputs: dict) -> tuple[str, list[dict]]:
    """One stage's section fragment and headline rows as records (``rows.normalise``), checked: both
    files must match the seals that ``write_section`` wrote, every headline row must be a comparison
    record or a legacy row, and the figure folder must exist (each figure is checked when embedded). A
    failure names the file and the fix."""
    rule = f"{stage}_section"
    html_path, figures = Path(inputs[f"{stage}_html"]), Path(inputs[f"{stage}_figures"])
    check_sealed(html_path, rule)
    rows = read_json(inputs[f"{stage}_headline"], rule)
    if not isinstance(rows, list):
        rows = [rows]
    records = []
    for r in rows:
        try:
            records.append(normalise(r, stage))
        except RowError as e:
            raise IntegrityError(
                f"{inputs[f'{stage}_headline']}: not a list of headline rows ({e}; first bad entry: "
                f"{str(r)[:200]}). {fix_hint(rule)}"
            ) from e
    if not figures.is_dir():
        raise IntegrityError(f"{figures}: the figure folder of section {stage} is missing. {fix_hint(rule)}")
    return html_path.read_text(), records


def _files(value) -> list[str]:
    """A named input as a list of paths (Snakemake gives a string or a list)."""
    return [value] if isinstance(value, str) else [str(v) for v in value]


def report(
    title: str,
    stages: list[str],
    reduced: dict,
    config: dict,
    inputs: dict,
    html_path: str | Path,
    headline_path: str | Path,
    sweeps_path: str | Path | None = None,
) -> None:
    """Rule ``report``: the page, ``headline.csv`` (the papers' rows, columns ``verdicts.COLUMNS``) and
    ``sweeps_path`` (your sweeps' rows, same columns; kept out of the tracked headline.csv) from the
    declared ``inputs`` (named as in ``depthwidth.report.pipeline.inputs``); provenance hashes exactly
    these files."""
    import pandas as pd

    from depthwidth.files import atomic_write_csv, atomic_write_text
    from depthwidth.logs import log
    from depthwidth.provenance import provenance_html
    from depthwidth.report.synthesis import synthesis_html

    sections, rows = [], []
    for stage in stages:
        fragment, stage_rows = read_section(stage, inputs)
        sections.append((stage, fragment))
        rows.extend(stage_rows)
    # both fits are sealed by their rules: a damaged one stops the report naming it and the fix
    fits = {
        k: read_json(inputs[k], rule, keys, require_seal=sealed) if k in inputs else None
        for k, rule, keys, sealed in (
            ("synthesis_chinchilla", "chinchilla_fit", ("params",), True),
            ("synthesis_width", "lm_head_width_fit", ("status",), True),
        )
    }
    declared = [f for v in inputs.values() for f in _files(v)]
    provenance = provenance_html(
        config,
        declared,
        benchmarks=_files(inputs.get("benchmarks", [])),
        manifests=_files(inputs.get("manifests", [])),
    )
    page = render_page(
        title,
        sections,
        rows,
        provenance,
        [inputs[f"{s}_figures"] for s in stages],
        synthesis_html=synthesis_html(fits["synthesis_chinchilla"], fits["synthesis_width"]),
        reduced=reduced,
    )
    papers, sweeps = split_rows(rows)
    atomic_write_text(html_path, page)
    atomic_write_csv(headline_path, pd.DataFrame(papers, columns=list(COLUMNS)))
    if sweeps_path is not None:
        atomic_write_csv(sweeps_path, pd.DataFrame(sweeps, columns=list(COLUMNS)))
    log.info(
        "report: %d sections, %d headline rows, %d rows of your sweeps, %d declared inputs, %.0f kB",
        len(sections),
        len(papers),
        len(sweeps),
        len(declared),
        len(page) / 1024,
    )
