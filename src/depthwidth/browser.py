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
  const out = {errors: window.__errors, images: [], headline_rows: 0, sections: [], wide_tables: [],
               verdict_lines: [], viewport: [window.innerWidth, window.innerHeight]};
  const t = document.getElementById('headline');
  if (t) out.headline_rows = t.querySelectorAll('tbody tr').length;
  // A table wider than the page: its box reaches past the body's content box, or it scrolls sideways.
  const body = document.body.getBoundingClientRect();
  const pad = parseFloat(getComputedStyle(document.body).paddingRight) || 0;
  document.querySelectorAll('table').forEach((tb, i) => {
    const r = tb.getBoundingClientRect();
    if (r.right > body.right - pad + 1 || tb.scrollWidth > tb.clientWidth + 1) {
      const cap = tb.previousElementSibling;
      out.wide_tables.push({index: i, id: tb.id, width: Math.round(r.width), right: Math.round(r.right),
                            caption: cap ? cap.textContent.slice(0, 80) : ''});
    }
  });
  out.page_width = document.documentElement.scrollWidth;
  out.page_height = document.documentElement.scrollHeight;
  document.querySelectorAll('#verdicts p.verdict').forEach(p => {
    out.verdict_lines.push({text: p.textContent.slice(0, 300), bottom: Math.round(p.getBoundingClientRect().bottom)});
  });
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


# The page width the report is laid out for, and one screen's height (the first screen's size).
WIDTH, HEIGHT = 1300, 900


def check_report(
    html_path: str | Path,
    screenshot: str | Path | None = None,
    width: int = WIDTH,
    height: int = HEIGHT,
    timeout: float = 120,
) -> dict:
    """Load ``html_path`` in headless Chromium at ``width`` × ``height``; return {errors, images,
    headline_rows, sections, wide_tables (each table wider than the page), verdict_lines (each paper's
    line and where it ends, px from the top), page_width, page_height, viewport}."""
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
            f"--window-size={width},{height}",
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


# The PNG text key under which the screenshot records the SHA-256 of the headline table it shows.
HEADLINE_HASH_KEY = "depthwidth-headline-sha256"


def stamp_png(png_path: str | Path, headline_path: str | Path) -> str:
    """Record in the PNG (a text chunk) the SHA-256 of ``headline_path``, the table the picture shows, so
    a test can tell a screenshot older than its table. Returns the hash."""
    import hashlib

    from PIL import Image, PngImagePlugin

    digest = hashlib.sha256(Path(headline_path).read_bytes()).hexdigest()
    with Image.open(png_path) as im:
        im.load()
        info = PngImagePlugin.PngInfo()
        info.add_text(HEADLINE_HASH_KEY, digest)
        from depthwidth.files import atomic_path

        with atomic_path(png_path) as tmp:
            im.save(tmp, format="PNG", pnginfo=info, optimize=True)
    return digest


def png_headline_hash(png_path: str | Path) -> str | None:
    """The headline table's SHA-256 that :func:`stamp_png` recorded in the PNG (None where none)."""
    from PIL import Image

    with Image.open(png_path) as im:
        return getattr(im, "text", {}).get(HEADLINE_HASH_KEY)


def problems(result: dict) -> list[str]:
    """What is wrong with a rendered report (:func:`check_report`'s result): JavaScript errors, images
    that are missing, broken or blank, tables wider than the page."""
    out = [f"JavaScript error: {e}" for e in result["errors"]]
    out += [
        f"image missing or blank: {i['alt']!r}"
        for i in result["images"]
        if not i["decoded"] or i["spread"] == 0
    ]
    out += [
        f"table wider than the page: #{t['index']} {t['id'] or t['caption']!r} ({t['width']} px, right edge "
        f"{t['right']} px at a {result['viewport'][0]} px window)"
        for t in result["wide_tables"]
    ]
    return out


def report_screenshot(
    html_path: str | Path, png_path: str | Path, headline_path: str | Path | None = None
) -> dict:
    """Rule ``report_screenshot``: check that the report renders cleanly in Chromium at 1300 × 900 (no
    JavaScript errors, every image decodes and is not blank, no table wider than the page), then save a
    screenshot of its first screen, stamped with the hash of ``headline_path`` (:func:`stamp_png`)."""
    from depthwidth.logs import log

    r = check_report(html_path, screenshot=png_path)
    bad = problems(r)
    log.info(
        "report in Chromium: %d JS errors, %d images, %d tables wider than the page, %d headline rows, "
        "%d x %d px (%.1f screens)",
        len(r["errors"]),
        len(r["images"]),
        len(r["wide_tables"]),
        r["headline_rows"],
        r["page_width"],
        r["page_height"],
        r["page_height"] / r["viewport"][1],
    )
    if bad:
        raise RuntimeError("report does not render cleanly: " + "; ".join(bad))
    if headline_path is not None:
        stamp_png(png_path, headline_path)
    return r
