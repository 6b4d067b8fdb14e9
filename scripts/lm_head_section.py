"""Report section of the LM-head stage (rule lm_head_section)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth.lm_head_report import render
from depthwidth.logs import setup_logging
from depthwidth.report import write_section

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
geo = pd.read_csv(sm.input.geometry)
loss = pd.read_csv(sm.input.loss)
fit = json.loads(Path(sm.input.fit).read_text())
norms = {Path(p).name.removesuffix("_norms.npy"): np.load(p) for p in sm.input.norms}
body, rows = render(geo, loss, fit, norms, dead_fraction=sm.params.dead_norm_fraction)
write_section(sm.output.html, sm.output.headline, "lm_head",
              "LM-head geometry and loss vs width (Liu, Liu & Gore 2025)", body, rows)
