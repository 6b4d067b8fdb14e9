"""Train one superposition toy cell, or every cell of one law (rule superposition_train, both forms)."""

from depthwidth.logs import setup_logging
from depthwidth.superposition.grid import LAW_JOB_CHECKPOINT, parse_cell_path
from depthwidth.superposition.train import cell_checkpoint, superposition_train_cells

sm = snakemake  # noqa: F821
setup_logging(sm.log[0])
w = sm.wildcards
if "m" in w.keys():  # job_grouping: cell
    models, infos = [sm.output.model], [sm.output.info]
    checkpoint = cell_checkpoint(sm.output.model)
else:  # job_grouping: law
    models, infos = list(sm.output.models), list(sm.output.infos)
    checkpoint = LAW_JOB_CHECKPOINT.format(dist=w.dist, n=w.n, seed=w.seed)
cells = [parse_cell_path(p) for p in models]
superposition_train_cells(
    w.dist,
    int(w.n),
    [c["gamma"] for c in cells],
    [c["m"] for c in cells],
    int(w.seed),
    dict(sm.params.train),
    models,
    infos,
    checkpoint,
    checkpoint_every=int(sm.params.speed["checkpoint_every"]),
    threads=sm.threads,
    device=sm.params.speed["device"],
)
