"""Assemble results/report.html from every enabled stage's section (rule report)."""

import glob
import json

import pandas as pd

from depthwidth.logs import setup_logging
from depthwidth.provenance import provenance_html
from depthwidth.report import assemble_report
from depthwidth.synthesis import synthesis_html

log = setup_logging(snakemake.log[0])  # noqa: F821
sm = snakemake  # noqa: F821
sections, rows = [], []
for stage in sm.params.stages:
    with open(sm.input[f"{stage}_html"]) as f:
        sections.append((stage, f.read()))
    with open(sm.input[f"{stage}_headline"]) as f:
        rows.extend({**r, "stage": stage} for r in json.load(f))
# Stages may leave extra provenance (model revisions, corpora) as results/<stage>/provenance.json.
extra = []
# Model sources and revisions: each fetched model's manifest (hub id and revision, wheel, file checksum).
for path in sorted(glob.glob("data/models/*/manifest.json")):
    with open(path) as f:
        extra.append({"title": f"Model source and revision: {path}", "data": json.load(f)})
for path in sorted(glob.glob("results/*/provenance.json")):
    with open(path) as f:
        extra.append({"title": f"Stage provenance: {path}", "data": json.load(f)})
def _load(key):
    if key in sm.input.keys():
        with open(sm.input[key]) as f:
            return json.load(f)
    return None


synthesis = synthesis_html(_load("synthesis_chinchilla"), _load("synthesis_width"))
# The config is recorded whole on purpose: it is what the provenance block documents.
page = assemble_report(sm.params.title, sections, rows, provenance_html(sm.config, extra), synthesis_html=synthesis,
                       reduced=dict(getattr(sm.params, "reduced", {}) or {}))
with open(sm.output.html, "w") as f:
    f.write(page)
pd.DataFrame(rows).to_csv(sm.output.headline, index=False)
log.info("report: %d sections, %d headline rows, %.0f kB", len(sections), len(rows), len(page) / 1024)
