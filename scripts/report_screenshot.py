"""Screenshot of the top of the report in headless Chromium, after checking that it renders (rule report_screenshot)."""

from depthwidth.browser import check_report
from depthwidth.logs import setup_logging

log = setup_logging(snakemake.log[0])  # noqa: F821
r = check_report(snakemake.input[0], screenshot=snakemake.output[0])  # noqa: F821
bad = [i["alt"] for i in r["images"] if not i["decoded"] or i["spread"] == 0]
log.info("report in Chromium: %d JS errors, %d images (%d broken or blank), %d headline rows",
         len(r["errors"]), len(r["images"]), len(bad), r["headline_rows"])
if r["errors"] or bad:
    raise RuntimeError(f"report does not render cleanly: errors {r['errors']}, broken/blank images {bad}")
