"""The assembled report: one self-contained HTML page from the stages' sections (rule ``report``).

The page is the jinja2 template ``templates/report.html.j2``. Each section fragment points at its figure
files (``<img src="results/<stage>/figures/<name>.png">``, written by ``depthwidth.sections.Figures``);
``embed_figures`` replaces each with a data URI, so the page carries its figures while every figure is
also a PNG under ``results/<stage>/figures/``. A figure may only come from a folder the rule declares.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

import jinja2
from markupsafe import Markup

from depthwidth.integrity import IntegrityError, check_sealed, fix_hint, read_json
from depthwidth.sections import HEADLINE_KEYS, fmt_pm

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


# The verdict column: a comparison that was made (yes / no), one the data cannot make ("not tested", the
# row's note says why), or a row with no paper number to compare with ("–").
VERDICTS = {True: ("agree", "yes"), False: ("disagree", "no")}


def verdict(row: dict) -> tuple[str, str]:
    """(css class, word) of a headline row's verdict."""
    if row.get("agree") in VERDICTS:
        return VERDICTS[row["agree"]]
    if str(row.get("paper", "–")).strip() in ("", "–"):
        return "", "–"
    return "untested", "not tested"


def configuration_html(reduced: dict) -> str:
    """The run's configuration, stated once above the headline table: which stages ran reduced settings
    and what ``--configfile config/paper.yaml`` runs instead."""
    smaller = [s for s, r in reduced.items() if r]
    full = [s for s, r in reduced.items() if not r]
    if not reduced:
        return ""
    if not smaller:
        return "<p class='note'>Configuration: the papers' settings (config/paper.yaml) in every stage.</p>"
    out = [
        "<p class='note'>Configuration of this run: reduced settings in "
        + ", ".join(f"<b>{html.escape(s)}</b>" for s in smaller)
        + ("; the papers' settings in " + ", ".join(html.escape(s) for s in full) if full else "")
        + ". What <code>--configfile config/paper.yaml</code> runs instead:</p><ul class='note'>"
    ]
    out += [
        f"<li><b>{html.escape(s)}</b>: {html.escape(PAPER_SETTINGS.get(s, 'the paper settings'))}</li>"
        for s in smaller
    ]
    out.append("</ul>")
    return "".join(out)


def headline_table_html(rows: list[dict], reduced: dict | None = None) -> str:
    """``reduced``: stage -> True where this run used a reduced configuration rather than the paper's;
    stated once above the table."""
    out = [
        configuration_html(reduced or {}),
        "<table class='tbl' id='headline'><thead><tr><th>quantity</th><th>paper</th><th>this run</th>"
        "<th>agrees?</th><th>from</th><th>note</th></tr></thead><tbody>",
    ]
    for r in rows:
        cls, word = verdict(r)
        value = r.get("value")
        shown = fmt_pm(value, r.get("err")) if isinstance(value, (int, float)) else html.escape(str(value))
        out.append(
            f"<tr><td>{html.escape(str(r['quantity']))}</td><td>{html.escape(str(r['paper']))}</td>"
            f"<td class='val'>{shown}</td><td class='{cls}'>{word}</td><td>{html.escape(str(r['source']))}</td>"
            f"<td class='note'>{html.escape(str(r.get('note', '')))}</td></tr>"
        )
    out.append("</tbody></table>")
    return "".join(out)


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
    """The self-contained page: title, headline table, synthesis, one section per stage (figures
    embedded from ``figure_dirs``), provenance. ``sections``: (stage, fragment) in report order."""
    embedded = [
        (stage, Markup(embed_figures(frag, figure_dirs, f"section {stage}", f"{stage}_section")))
        for stage, frag in sections
    ]
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            title=title,
            sections=embedded,
            headline=Markup(headline_table_html(headline_rows, reduced)),
            synthesis=Markup(synthesis_html),
            intro=Markup(intro_html),
            provenance=Markup(provenance_html),
        )
    )


def read_section(stage: str, inputs: dict) -> tuple[str, list[dict]]:
    """One stage's section fragment and headline rows, checked: both must match the seals that
    ``write_section`` wrote, every headline row must have ``HEADLINE_KEYS``, and the figure folder must
    exist (each figure is checked when embedded). A failure names the file and the fix."""
    rule = f"{stage}_section"
    html_path, figures = Path(inputs[f"{stage}_html"]), Path(inputs[f"{stage}_figures"])
    check_sealed(html_path, rule)
    rows = read_json(inputs[f"{stage}_headline"], rule)
    bad = (
        [r for r in rows if not isinstance(r, dict) or set(HEADLINE_KEYS) - set(r)]
        if isinstance(rows, list)
        else [rows]
    )
    if bad:
        raise IntegrityError(
            f"{inputs[f'{stage}_headline']}: not a list of headline rows with the keys "
            f"{list(HEADLINE_KEYS)} (first bad entry: {str(bad[0])[:200]}). {fix_hint(rule)}"
        )
    if not figures.is_dir():
        raise IntegrityError(f"{figures}: the figure folder of section {stage} is missing. {fix_hint(rule)}")
    return html_path.read_text(), rows


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
) -> None:
    """Rule ``report``: the page and ``headline.csv`` from the declared ``inputs`` (named as in
    ``depthwidth.report.pipeline.inputs``); provenance hashes exactly these files."""
    import pandas as pd

    from depthwidth.files import atomic_write_csv, atomic_write_text
    from depthwidth.logs import log
    from depthwidth.provenance import provenance_html
    from depthwidth.report.synthesis import synthesis_html

    sections, rows = [], []
    for stage in stages:
        fragment, stage_rows = read_section(stage, inputs)
        sections.append((stage, fragment))
        rows.extend({**r, "stage": stage} for r in stage_rows)
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
    atomic_write_text(html_path, page)
    atomic_write_csv(headline_path, pd.DataFrame([{**r, "verdict": verdict(r)[1]} for r in rows]))
    log.info(
        "report: %d sections, %d headline rows, %d declared inputs, %.0f kB",
        len(sections),
        len(rows),
        len(declared),
        len(page) / 1024,
    )
