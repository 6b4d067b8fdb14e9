"""Train every student of one (teacher kind, variant, replicate) job (rule depth_toy_train_<variant>)."""

from depthwidth.depth_toy.train import depth_toy_train
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
depth_toy_train(
    sm.params.train,
    sm.params.speed,
    sm.wildcards.kind,
    int(sm.wildcards.rep),
    list(sm.output.students),
    sm.output.angles,
    threads=sm.threads,
)
