"""Train one superposition toy cell (rule superposition_train)."""

from depthwidth.logs import setup_logging
from depthwidth.superposition.pipeline import train_cell

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
w = sm.wildcards
# How often to checkpoint does not change the result, so it is read from the config rather than passed as
# a param: editing it must not retrain every cell.
train = {**sm.params.train, "checkpoint_every": sm.config["superposition"].get("checkpoint_every", 0)}
train_cell(w.dist, int(w.n), float(w.gamma), int(w.m), int(w.seed), train,
           sm.output.model, sm.output.info, threads=sm.threads)
