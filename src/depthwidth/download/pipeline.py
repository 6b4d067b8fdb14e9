"""Config → params (``RULES``) and file lists of the download rules (``fetch_pinned_<group>``,
``fineweb_shards``).

Plain functions of the validated config (defaults already filled in by ``depthwidth.config``).
"""

from __future__ import annotations

import re
from pathlib import Path

from depthwidth.download.fetch import MANIFEST_PATH, load_manifest, pinned_group, resolve_mirrors
from depthwidth.download.fineweb import mirror_covers, shard_names
from depthwidth.rules import Call, Keys, Rule

#: the pinned files, path under data/raw/ -> {sha256, description, urls, convert}
MANIFEST = load_manifest()


def groups(manifest: dict = MANIFEST) -> dict[str, list[str]]:
    """The pinned files by group, the first folder of their path (``openlm_scaling``, ...): one fetch job
    per group (rule ``fetch_pinned_<group>``), since a job's start costs more than copying a pinned file
    from a mirror and checking it."""
    out: dict[str, list[str]] = {}
    for key in manifest:
        out.setdefault(pinned_group(key), []).append(key)
    bad = [g for g in out if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", g)]
    if bad:
        raise ValueError(
            f"{MANIFEST_PATH}: first folder(s) {bad} are not valid in a rule name (letters, digits, _)"
        )
    return out


def group_outputs(group: str, manifest: dict = MANIFEST) -> list[str]:
    """The files rule ``fetch_pinned_<group>`` writes, under data/raw/."""
    return [f"data/raw/{k}" for k in groups(manifest)[group]]


def group_pins(config: dict, wildcards: dict, group: str) -> dict[str, str]:
    """Params of rule fetch_pinned_<group>: each file's pinned checksum, so a change of pin refetches it."""
    return {k: MANIFEST[k]["sha256"] for k in groups()[group]}


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
    "fetch_pinned": Rule(params={"sha256": Call(group_pins)}, sources=True),
    "fineweb_shards": Rule(params={"corpus": Keys("hidden_states.corpus")}, sources=True),
}
