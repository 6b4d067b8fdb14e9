"""Tables of geometry and loss, and the fit L = A / m^alpha + B_(family, corpus) (rule lm_head_width_fit)."""

import json
from pathlib import Path

import pandas as pd

from depthwidth.lm_head import fit_width_law
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
geo = pd.DataFrame([json.loads(Path(p).read_text()) for p in sm.input.geometry])
geo.to_csv(sm.output.geometry, index=False)
cols = ["model", "family", "width", "n_layers", "corpus", "n_texts", "tokens", "loss_nats", "max_tokens"]
loss = pd.DataFrame([json.loads(Path(p).read_text()) for p in sm.input.loss], columns=cols + ["seconds"])[cols]
loss.to_csv(sm.output.loss, index=False)
if len(loss):
    fit = fit_width_law(loss["width"], loss["loss_nats"], loss["family"] + " / " + loss["corpus"],
                        min_widths=sm.params.fit["min_widths"])
else:
    fit = {"status": "skipped", "reason": "no decoder model has a loss (no corpora or only encoders)",
           "n_points": 0, "n_widths": 0, "groups": []}
fit["models"] = sorted(loss["model"].unique().tolist())
if fit["status"] == "ok":
    log.info("alpha_m = %.3f ± %.3f from %d points, %d widths", fit["alpha"], fit["alpha_err"] or float("nan"),
             fit["n_points"], fit["n_widths"])
else:
    log.info("width fit skipped: %s", fit["reason"])
with open(sm.output.fit, "w") as f:
    json.dump(fit, f, indent=2)
