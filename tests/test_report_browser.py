"""The report in a real browser: loads without errors, every image decodes and is not blank, the
headline table and every enabled stage's section are there."""

import base64
import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from _helpers import needs_shared_data  # noqa: E402
from depthwidth.browser import check_report, chromium_binary  # noqa: E402

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
    assert shot.stat().st_size > 20_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
