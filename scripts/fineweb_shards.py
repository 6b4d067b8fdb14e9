"""Write the first n_docs documents of the configured corpus as parquet shards (rule fineweb_shards)."""

from depthwidth.download.fineweb import materialise
from depthwidth.logs import setup_logging

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
c = sm.params.corpus
where = materialise(
    list(sm.output),
    n_docs=c["n_docs"],
    docs_per_shard=c["docs_per_shard"],
    source=c["source"],
    dataset=c["hub_dataset"],
    config=c["hub_config"],
    revision=c["hub_revision"],
    split=c["split"],
    mirror_file=sm.input.get("mirror"),
    mirror_docs=c["mirror_docs"],
    local_path=sm.input.get("corpus"),
    text_column=c["text_column"],
    sources=sm.params.sources,
)
log.info("fineweb_shards: %d documents from %s in %d shards", c["n_docs"], where, len(sm.output))
