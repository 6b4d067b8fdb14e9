"""Config → params (``RULES``) and file lists of the download rules (``fetch_file``, ``fineweb_shards``).

Plain functions of the validated config (defaults already filled in by ``depthwidth.config``).
"""

from __future__ import annotations

import re
from pathlib import Path

from depthwidth.download.fetch import load_manifest, resolve_mirrors
from depthwidth.download.fineweb import mirror_covers, shard_names
from depthwidth.rules import Call, Keys, Rule

#: the pinned files, path under data/raw/ -> {sha256, description, urls, convert}
MANIFEST = load_manifest()


def raw_path_pattern(manifest: dict = MANIFEST) -> str:
    """Wildcard constraint of ``{raw_path}``: only pinned files can be fetched."""
    return "|".join(re.escape(k) for k in manifest)


def pinned_sha256(config: dict, wildcards: dict) -> str:
    """Params function of rule fetch_file: the pinned checksum of the file, so a change of pin refetches it."""
    return MANIFEST[wildcards["raw_path"]]["sha256"]


def sources(config: dict, project_dir: str | Path) -> dict:
    """Where pinned files and model weights may come from: the mirror folders (absolute, in order),
    whether to try the network, and its timeout. Where a file comes from does not change its bytes,
    so these must never trigger a rerun (``Rule(sources=True)`` in depthwidth.rules)."""
    data = config["data"]
    return {
        "mirrors": [str(p) for p in resolve_mirrors(data["mirrors"], project_dir)],
        "allow_network": data["allow_network"],
        "timeout_s": data["timeout_s"],
    }


def corpus(config: dict) -> dict:
    """The FineWeb corpus settings (``hidden_states.corpus``, shared with lm_head's ``fineweb`` corpus)."""
    return config["hidden_states"]["corpus"]


def fineweb_shard_paths(config: dict) -> list[str]:
    """The parquet shards that hold the configured FineWeb documents."""
    c = corpus(config)
    return [f"data/fineweb/{c['name']}/{s}" for s in shard_names(c["n_docs"], c["docs_per_shard"])]


def fineweb_shards_input(config: dict) -> dict:
    """The mirrored first documents when they cover the request, a local corpus file, or nothing (hub)."""
    c = corpus(config)
    if c["source"] == "local":
        return {"corpus": c["local_path"]}
    if mirror_covers(c["hub_dataset"], c["hub_config"], c["n_docs"], c["mirror_docs"]):
        return {"mirror": f"data/raw/{c['mirror_file']}"}
    return {}


def local_file_errors(config: dict) -> list[str]:
    """The local corpus file named by ``hidden_states.corpus.local_path`` (source local) must exist: a
    missing one stops the run when the workflow is parsed, naming the key, the path and the fix (instead of
    Snakemake's MissingInputException, which names neither)."""
    c = corpus(config)
    if c["source"] != "local" or not c.get("local_path") or Path(c["local_path"]).expanduser().exists():
        return []
    return [
        f"config key 'hidden_states.corpus.local_path' is '{c['local_path']}', which does not exist (relative "
        f"paths are read from the working directory, {Path.cwd()}). Fix: point it at your parquet, JSON or "
        "JSONL file, or set hidden_states.corpus.source: fineweb."
    ]


RULES = {
    "fetch_file": Rule(params={"sha256": Call(pinned_sha256)}, sources=True),
    "fineweb_shards": Rule(params={"corpus": Keys("hidden_states.corpus")}, sources=True),
}
