"""Report section of the Chinchilla stage (rule chinchilla_section)."""

import json

import pandas as pd

from depthwidth.chinchilla_report import render
from depthwidth.logs import setup_logging
from depthwidth.report import write_section

setup_logging(snakemake.log[0])  # noqa: F821
sm = snakemake  # noqa: F821
with open(sm.input.fit) as f:
    fit = json.load(f)
with open(sm.input.summary) as f:
    recon = json.load(f)
body, rows, shape = render(pd.read_csv(sm.input.points), recon, fit, pd.read_csv(sm.input.bootstrap),
                           sm.params.shape.get("n_params", [1e8, 1e9, 1e10, 1e11, 1e12]))
shape.to_csv(sm.output.shape, index=False)
write_section(sm.output.html, sm.output.headline, "chinchilla",
              "Chinchilla: the decomposed scaling law (Liu et al. 2026)", body, rows)
