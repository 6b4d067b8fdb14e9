"""The report in a real browser: loads without errors, every image decodes and is not blank, the
headline table and every enabled stage's section are there."""

import base64
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from _helpers import needs_shared_data  # noqa: E402
from depthwidth.browser import (  # noqa: E402
    HEIGHT,
    WIDTH,
    check_report,
    chromium_binary,
    png_headline_hash,
    problems,
    stamp_png,
)

needs_chromium = pytest.mark.skipif(
    chromium_binary() is None, reason="no Chromium (apt-get install chromium)"
)


def _png(blank: bool) -> str:
    fig, ax = plt.subplots(figsize=(2, 2))
    if blank:
        ax.set_axis_off()
    else:
        ax.plot([0, 1], [0, 1])
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode()


@needs_chromium
def test_checker_catches_blank_and_broken_images_and_errors(tmp_path):
    page = tmp_path / "p.html"
    page.write_text(
        "<html><body><table id='headline'><tbody><tr><td>x</td></tr></tbody></table>"
        f"<img alt='good' src='data:image/png;base64,{_png(False)}'>"
        f"<img alt='blank' src='data:image/png;base64,{_png(True)}'>"
        "<img alt='broken' src='data:image/png;base64,AAAA'>"
        "<script>undefinedFunction()</script></body></html>"
    )
    r = check_report(page)
    by_alt = {i["alt"]: i for i in r["images"]}
    assert by_alt["good"]["decoded"] and by_alt["good"]["spread"] > 100
    assert by_alt["blank"]["decoded"] and by_alt["blank"]["spread"] == 0
    assert not by_alt["broken"]["decoded"]
    assert any("undefinedFunction" in e for e in r["errors"]) and r["headline_rows"] == 1


@needs_chromium
@needs_shared_data
def test_full_test_report_renders(completed_run, tmp_path):
    # The whole test config, run once per session and shared with the other whole-workflow tests.
    results = completed_run / "results"
    report = results / "report.html"
    shot = tmp_path / "report_top.png"  # what rule report_screenshot makes
    r = check_report(report, screenshot=shot)
    assert r["errors"] == []
    assert r["headline_rows"] >= 8
    assert {"chinchilla", "superposition", "depth_toy", "hidden_states", "lm_head", "provenance"} <= set(
        r["sections"]
    )
    assert len(r["images"]) >= 10
    # Every figure on the page is also a PNG file with its caption beside it.
    pngs = sorted(results.glob("*/figures/*.png"))
    assert len(pngs) == len(r["images"])
    assert all(p.with_suffix(".txt").is_file() for p in pngs)
    bad = [i for i in r["images"] if not i["decoded"] or i["spread"] < 50 or i["ink_fraction"] < 0.002]
    assert bad == [], bad
    # at 1300 px no table is wider than the page, and each paper's verdict line is on the first screen
    assert r["viewport"][0] == WIDTH and r["wide_tables"] == [], r["wide_tables"]
    assert problems(r) == []
    assert len(r["verdict_lines"]) == 2 and max(v["bottom"] for v in r["verdict_lines"]) < HEIGHT
    assert r["verdict_lines"][0]["text"].startswith("The depth paper")
    assert shot.stat().st_size > 20_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@needs_chromium
def test_checker_finds_a_table_wider_than_the_page_and_the_report_css_wraps_wide_tables(tmp_path):
    """A raw table wider than the window is reported; the same kind of table inside a report section
    (many snake_case columns, long prose, long numbers) fits 1300 px and keeps its numbers on one line."""
    import pandas as pd

    from depthwidth.report.page import render_page
    from depthwidth.sections import table_html

    wide = tmp_path / "wide.html"
    wide.write_text(
        "<html><body><table id='w' style='width:2400px'><tr><td>x</td></tr></table></body></html>"
    )
    r = check_report(wide)
    assert [t["id"] for t in r["wide_tables"]] == ["w"] and "wider than the page" in problems(r)[0]

    cols = {f"a_long_snake_case_column_name_{i}": [0.123456789 * (i + 1), 1234567.5] for i in range(12)}
    cols["note"] = ["a long sentence of prose that has to wrap inside its cell " * 3, "short"]
    df = pd.DataFrame(cols)
    section = f'<section id="s"><h2>S</h2><h3>A part</h3>{table_html(df, "A wide table.")}</section>'
    page = tmp_path / "report.html"
    page.write_text(render_page("t", [("s", section)], [], "", []))
    r = check_report(page)
    assert r["wide_tables"] == [] and r["page_width"] <= WIDTH, (r["wide_tables"], r["page_width"])
    html = page.read_text()
    assert "<td class='num'>0.1235</td>" in html and "a_<wbr>long_<wbr>snake" in html
    assert "In this section: <a href='#s-a-part'>A part</a>" in html and "href='#top'" in html


@needs_chromium
def test_the_screenshot_records_the_table_it_shows(tmp_path):
    """The README's image carries the hash of the headline.csv it was made from: a changed table makes
    the recorded hash differ (what test_readme_image_is_not_older_than_its_table reads)."""
    shot, table = tmp_path / "top.png", tmp_path / "headline.csv"
    page = tmp_path / "p.html"
    page.write_text("<html><body><h1>x</h1></body></html>")
    check_report(page, screenshot=shot)
    table.write_text("a,b\n1,2\n")
    digest = stamp_png(shot, table)
    assert png_headline_hash(shot) == digest and len(digest) == 64
    table.write_text("a,b\n1,3\n")
    assert stamp_png(tmp_path / "top.png", table) != digest
