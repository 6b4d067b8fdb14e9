"""Row norms and overlaps of one model's LM-head matrix (rule lm_head_geometry)."""

from pathlib import Path

import torch

from depthwidth.lm_head.geometry import lm_head_geometry
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
torch.set_num_threads(sm.threads)
lm_head_geometry(Path(sm.input.model).parent, sm.params.geometry, sm.output.row, sm.output.norms, logger=log)
