"""Report section of the superposition stage (rule superposition_section)."""

import json
from pathlib import Path

import pandas as pd
from safetensors.numpy import load_file

from depthwidth.logs import setup_logging
from depthwidth.report import write_section
from depthwidth.superposition.report import render

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
cells = pd.read_csv(sm.input.cells)
exps = pd.read_csv(sm.input.exponents)
# only the extreme cells are drawn: load just those
want = {(cells.distribution.iloc[0], g, m, int(cells.seed.min()))
        for g in (cells.gamma.min(), cells.gamma.max()) for m in (cells.m.min(), cells.m.max())}
models = {}
for p in sm.input.models:
    parts = Path(p).parts
    i = parts.index("cells")
    key = (parts[i + 1], float(parts[i + 3][5:]), int(parts[i + 4][1:]), int(parts[i + 5][4:]))
    if key in want:
        models[key] = load_file(p)
infos = [json.loads(Path(p).read_text()) for p in sm.input.infos]
body, rows = render(cells, exps, models, infos, dict(sm.params.analysis))
write_section(sm.output.html, sm.output.headline, "superposition",
              "Superposition toy model: width scaling in two regimes (Liu, Liu & Gore 2025)", body, rows)
