"""Per-token, per-layer metrics of one model on the FineWeb shards (rule hidden_states_extract)."""

import torch

from depthwidth.fineweb import read_shards
from depthwidth.hidden_states import settings
from depthwidth.hidden_states.extract import extract
from depthwidth.logs import setup_logging
from depthwidth.models import load_model

sm = snakemake  # noqa: F821
log = setup_logging(sm.log[0])
torch.set_num_threads(max(1, sm.threads))
p = sm.params.extract
# Speed-only keys are read from the config, not params: tuning them must not rerun the extraction.
speed = settings.speed_settings(settings.section(sm.config))
docs = read_shards(list(sm.input.shards), limit=p["n_docs"])
loaded = load_model(sm.input.model.removesuffix("manifest.json"))
extract(
    loaded.model,
    loaded.tokenizer,
    docs["text"].tolist(),
    docs["doc_index"].tolist(),
    sm.output[0],
    model_name=sm.wildcards.model,
    max_tokens=p["max_tokens"],
    losses=tuple(p["losses"]),
    loss_stride=p["loss_stride"],
    device=p["device"],
    dtype=p["dtype"],
    keep_raw_tokens=p["keep_raw_tokens"],
    batch_tokens=speed["batch_tokens"],
    max_batch_docs=speed["max_batch_docs"],
    chunk_tokens=speed["loss_chunk_tokens"],
    checkpoint_every_s=speed["checkpoint_every_s"],
)
