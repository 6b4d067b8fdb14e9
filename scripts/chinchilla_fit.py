"""Fit the decomposed law to the Chinchilla points (rule chinchilla_fit)."""

import json

import pandas as pd

from depthwidth.chinchilla import run_fit
from depthwidth.logs import setup_logging

setup_logging(snakemake.log[0])  # noqa: F821
sm = snakemake  # noqa: F821
fit, boot = run_fit(pd.read_csv(sm.input.points), sm.params.fit)
boot.to_csv(sm.output.bootstrap, index=False)
with open(sm.output.fit, "w") as f:
    json.dump(fit, f, indent=2)
