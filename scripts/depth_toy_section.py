"""Report section of the depth toy (rule depth_toy_section)."""

import pandas as pd

from depthwidth.depth_toy.section import render
from depthwidth.logs import setup_logging
from depthwidth.report import write_section

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
body, rows = render(pd.read_csv(sm.input.runs), pd.read_csv(sm.input.exponents), pd.read_csv(sm.input.angles),
                    sm.params.headline_variant, sm.params.note, sm.params.angle_samples,
                    trajectory=pd.read_csv(sm.input.trajectory))
write_section(sm.output.html, sm.output.headline, "depth_toy",
              "Depth toy: smooth vs random-walk teachers (Liu et al. 2026)", body, rows)
