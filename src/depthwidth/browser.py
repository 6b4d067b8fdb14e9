"""Render the report in headless Chromium: load errors, image decoding and blankness, headline table.

Chromium runs the page with a checking script appended (to a copy; the report itself carries no script).
The script records JavaScript errors, and for each <img> whether it decoded and the spread of its
pixel values (a blank image has none); ``--dump-dom`` hands the results back.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--allow-file-access-from-files",
]

# Goes first, so errors of the page's own scripts are caught too.
ERRORS_JS = """<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message || e.type)), true);
</script>
"""

CHECK_JS = """
<script>
window.addEventListener('load', () => {
  const out = {errors: window.__errors, images: [], headline_rows: 0, sections: []};
  const t = document.getElementById('headline');
  if (t) out.headline_rows = t.querySelectorAll('tbody tr').length;
  document.querySelectorAll('section[id]').forEach(s => out.sections.push(s.id));
  document.querySelectorAll('img').forEach((img, i) => {
    const r = {index: i, alt: img.alt, decoded: img.complete && img.naturalWidth > 0,
               width: img.naturalWidth, height: img.naturalHeight, spread: 0};
    if (r.decoded) {
      const c = document.createElement('canvas');
      c.width = img.naturalWidth; c.height = img.naturalHeight;
      const ctx = c.getContext('2d'); ctx.drawImage(img, 0, 0);
      const d = ctx.getImageData(0, 0, c.width, c.height).data;
      let lo = 255, hi = 0, n = 0, dark = 0;
      for (let k = 0; k < d.length; k += 4 * 7) {
        const v = (d[k] + d[k + 1] + d[k + 2]) / 3; lo = Math.min(lo, v); hi = Math.max(hi, v); n++;
        if (v < 200) dark++;
      }
      r.spread = hi - lo; r.ink_fraction = dark / n;
    }
    out.images.push(r);
  });
  const pre = document.createElement('pre'); pre.id = '__check';
  pre.textContent = 'CHECK' + JSON.stringify(out) + 'END';
  document.body.appendChild(pre);
});
</script>
"""


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def check_report(
    html_path: str | Path,
    screenshot: str | Path | None = None,
    width: int = 1200,
    height: int = 1000,
    timeout: float = 120,
) -> dict:
    """Load ``html_path`` in headless Chromium; return {errors, images, headline_rows, sections}."""
    chrome = chromium_binary()
    if chrome is None:
        raise FileNotFoundError("no Chromium found (Debian: apt-get install chromium)")
    html = Path(html_path).read_text()
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "page.html"
        page.write_text(ERRORS_JS + html.replace("</body>", CHECK_JS + "</body>"))
        cmd = [
            chrome,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp}/profile",
            "--virtual-time-budget=10000",
            "--dump-dom",
            page.as_uri(),
        ]
        dom = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout).stdout
        m = re.search(r"CHECK(\{.*?\})END", dom, re.S)
        if not m:
            raise RuntimeError(f"the page did not finish loading in Chromium (DOM of {len(dom)} chars)")
        result = json.loads(m.group(1).replace("&quot;", '"').replace("&amp;", "&"))
        if screenshot is not None:
            Path(screenshot).parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                [
                    chrome,
                    *CHROMIUM_FLAGS,
                    f"--user-data-dir={tmp}/profile2",
                    f"--window-size={width},{height}",
                    f"--screenshot={Path(screenshot).resolve()}",
                    Path(html_path).resolve().as_uri(),
                ],
                capture_output=True,
                timeout=timeout,
                check=True,
            )
    return result


def report_screenshot(html_path: str | Path, png_path: str | Path) -> dict:
    """Rule ``report_screenshot``: check that the report renders cleanly in Chromium (no JavaScript
    errors, every image decodes and is not blank), then save a screenshot of its top."""
    from depthwidth.logs import log

    r = check_report(html_path, screenshot=png_path)
    bad = [i["alt"] for i in r["images"] if not i["decoded"] or i["spread"] == 0]
    log.info(
        "report in Chromium: %d JS errors, %d images (%d broken or blank), %d headline rows",
        len(r["errors"]),
        len(r["images"]),
        len(bad),
        r["headline_rows"],
    )
    if r["errors"] or bad:
        raise RuntimeError(f"report does not render cleanly: errors {r['errors']}, broken/blank images {bad}")
    return r
