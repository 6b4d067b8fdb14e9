"""Tables of geometry and loss, and the fit L = A / m^alpha + B_(family, corpus) (rule lm_head_width_fit)."""

from depthwidth.lm_head.width_fit import lm_head_width_fit
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
lm_head_width_fit(
    list(sm.input.geometry),
    list(sm.input.loss),
    min_widths=sm.params.fit["min_widths"],
    bootstrap_resamples=sm.params.fit["bootstrap_resamples"],
    seed=sm.params.fit["seed"],
    geometry_csv=sm.output.geometry,
    loss_csv=sm.output.loss,
    fit_json=sm.output.fit,
    logger=log,
)
