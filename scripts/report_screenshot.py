"""Screenshot of the top of the report in headless Chromium, after checking that it renders (rule report_screenshot)."""

from depthwidth.browser import report_screenshot
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
report_screenshot(sm.input.html, sm.output[0], sm.input.headline)
