"""Figures across models, tables and headline rows of the hidden-states stage (rule hidden_states_section)."""

import pandas as pd

from depthwidth.hidden_states.section import models_table, read_model_outputs, render
from depthwidth.logs import setup_logging
from depthwidth.report import write_section

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
tables, groups, samples, summaries = {}, {}, {}, {}
for m in sm.params.models:
    tables[m], groups[m], samples[m], summaries[m] = read_model_outputs(
        sm.input[f"layers_{m}"], sm.input[f"groups_{m}"], sm.input[f"sample_{m}"], sm.input[f"summary_{m}"]
    )
pd.concat(tables.values(), ignore_index=True).to_csv(sm.output.layers, index=False)
models_table(summaries).to_csv(sm.output.models, index=False)
body, rows = render(tables, groups, samples, summaries)
write_section(sm.output.html, sm.output.headline, "hidden_states",
              "LLM hidden states on FineWeb: most layers are similar (Liu et al. 2026)", body, rows)
