"""Train one superposition toy cell (rule superposition_train)."""

from depthwidth.logs import setup_logging
from depthwidth.superposition.train import superposition_train

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
w = sm.wildcards
superposition_train(
    w.dist,
    int(w.n),
    float(w.gamma),
    int(w.m),
    int(w.seed),
    dict(sm.params.train),
    sm.output.model,
    sm.output.info,
    checkpoint_every=int(sm.resources.checkpoint_every),
    threads=sm.threads,
    device="cuda" if int(sm.resources.gpu) else "cpu",
)
