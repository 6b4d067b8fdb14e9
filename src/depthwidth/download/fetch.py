"""Checksum-pinned fetching with local mirrors, written atomically.

A file is looked for first in each mirror folder (``<mirror>/<relpath>``), then at its URLs. Whatever
the source, its SHA-256 must match the pin in ``manifest.yaml`` before it is renamed into place, so a
killed or corrupted fetch never leaves a file that looks complete.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import io
import json
import logging
import os
import re
import urllib.request
from pathlib import Path
from typing import Callable

import yaml

from depthwidth.files import DiskFullError, atomic_copy, atomic_write_bytes, sha256_file

log = logging.getLogger("depthwidth.download.fetch")

MANIFEST_PATH = Path(__file__).with_name("manifest.yaml")


class FetchError(RuntimeError):
    """A pinned file could not be obtained; the message lists every place tried and how to fix it."""


class UnwritableError(FetchError):
    """A pinned file was obtained but could not be written into its folder (a read-only ``data/``, a folder
    without write permission); the message names the file, the cause and the fix."""


def _write(dest: str | Path, write: Callable, *args) -> None:
    """Run ``write(*args)`` (an atomic write of ``dest``); a folder that cannot be written raises
    ``UnwritableError`` naming it and the fix (a full disk stays ``DiskFullError``, which names its own)."""
    try:
        write(*args)
    except DiskFullError:
        raise
    except OSError as e:
        folder = Path(dest).parent
        raise UnwritableError(
            f"{dest}: cannot be written ({e.strerror or e}; the folder {folder} is read-only or not "
            f"writable by this user). Nothing was changed. Fix: make it writable (e.g. chmod -R u+w {folder}, "
            "or remount the disk read-write), or run in a working folder you can write, then run the same "
            "command again."
        ) from e


def load_manifest(path: str | Path = MANIFEST_PATH) -> dict:
    return yaml.safe_load(Path(path).read_text())


def pinned_group(key: str) -> str:
    """The group of a pinned file, the first folder of its manifest key: one fetch job per group (rule
    ``fetch_pinned_<group>``)."""
    return key.split("/")[0]


def pinned_key(path: str | Path, manifest: dict | None = None) -> str | None:
    """The manifest key of ``path`` (its path below a ``data/raw/`` folder), or None for a file that is
    not pinned."""
    parts = Path(path).as_posix().split("/")
    rel = next(
        ("/".join(parts[i + 2 :]) for i in range(len(parts) - 2) if parts[i : i + 2] == ["data", "raw"]), None
    )
    manifest = load_manifest() if manifest is None else manifest
    return rel if rel in manifest else None


def check_pinned(
    path: str | Path, manifest: dict | None = None, *, rule: str | None = None, sources: dict | None = None
) -> str | None:
    """Check a pinned file where a step uses it: ``path`` under a ``data/raw/`` folder whose path below it
    is a manifest key must still have the pinned SHA-256 (a file edited, truncated or replaced after its
    download would otherwise be used as is). Returns the manifest key, or None for a file that is not pinned
    (not checked).

    A damaged file is fetched again (``sources``: the ``mirrors``, ``allow_network`` and ``timeout_s`` of
    rule fetch_pinned_<group>'s params) and the step goes on with the pinned bytes; where no source gives them, or
    without ``sources``, this raises ``IntegrityError`` naming the file, the cause and the one command that
    recovers: ``snakemake --cores all <your target> --forcerun <rule>`` (``rule``: the step that reads the file), which
    fetches it again once a source holds it."""
    from depthwidth.integrity import IntegrityError

    path = Path(path)
    manifest = load_manifest() if manifest is None else manifest
    rel = pinned_key(path, manifest)
    if rel is None:
        return None
    want = manifest[rel]["sha256"]
    got = sha256_file(path) if path.is_file() else "none (no such file)"
    if got == want:
        return rel
    cause = (
        f"its SHA-256 is {got}, not the {want} pinned for {rel} in {MANIFEST_PATH.name}: it was changed or "
        "damaged after its download"
    )
    why = "it was not fetched again here"
    if sources is not None:
        log.warning("%s: %s; fetching it again", path, cause)
        try:
            where = fetch(
                rel,
                path,
                sources["mirrors"],
                manifest=manifest,
                timeout=sources["timeout_s"],
                allow_network=sources["allow_network"],
            )
        except UnwritableError as e:
            force = f" --forcerun {rule}" if rule else ""
            raise IntegrityError(
                f"{path}: {cause}; a good copy was found, but "
                + str(e).split(" Fix:")[0].replace(f"{path}: ", "", 1)
                + f" Fix: make {path.parent} writable (e.g. chmod -R u+w {path.parent}, or remount it "
                f"read-write), then: snakemake --cores all <your target>{force}"
            ) from e
        except FetchError as e:
            why = "fetching it again failed: " + str(e).split("\nFix:")[0]  # the fix follows, once
        else:
            log.warning("%s: fetched again from %s (sha256 ok)", path, where)
            return rel
    force = f" --forcerun {rule}" if rule else ""
    if sources is not None and rule:  # the rerun of the step fetches it again
        fix = (
            f"Fix: put the pinned file into a mirror folder (data.mirrors) as <mirror>/{rel} or run where one "
            f"of its URLs is reachable, then: snakemake --cores all <your target>{force}"
        )
    else:
        fix = (
            f"Fix: rm {path} && snakemake --cores all <your target>{force} (rule fetch_pinned_{pinned_group(rel)} "
            "fetches it again)"
        )
    raise IntegrityError(f"{path}: {cause}; {why}. Nothing was computed from it. {fix}")


def nanogpt_table_a9(raw: bytes) -> bytes:
    """nanoGPT's scaling_laws.ipynb holds Table A9 as the string ``chinchilla_models_txt``: a list of
    ``[params, d_model, ffw_size, kv_size, n_heads, n_layers]``. Write it as our CSV (params in millions)."""
    text = raw.decode("utf-8")
    try:  # a notebook is JSON: join the cells' source lines so the string is contiguous again
        nb = json.loads(text)
        text = "\n".join("".join(c.get("source", [])) for c in nb.get("cells", []))
    except json.JSONDecodeError:
        pass
    m = re.search(r'chinchilla_models_txt\s*=\s*(?:"""|\'\'\')(.*?)(?:"""|\'\'\')', text, re.S)
    if not m:
        raise ValueError("no chinchilla_models_txt string in the downloaded notebook")
    rows = ast.literal_eval(m.group(1).strip())
    buf = io.StringIO()
    w = csv.writer(buf)  # csv's default line terminator is \r\n, as in the pinned file
    w.writerow(["params_millions", "d_model", "ffw_size", "kv_size", "n_heads", "n_layers"])
    for p, *rest in rows:
        w.writerow([int(round(p / 1e6)), *map(int, rest)])
    return buf.getvalue().encode()


CONVERTERS: dict[str, Callable[[bytes], bytes]] = {"nanogpt_table_a9": nanogpt_table_a9}


def resolve_mirrors(mirrors: list[str], project_dir: str | Path) -> list[Path]:
    """Absolute mirror folders, in order. A relative entry is tried against the working directory
    and against the project folder (where the Snakefile lives). ``..`` is taken away by the name (as the
    shell's ``cd`` does), symbolic links are kept as written: a mirror ``../shared/data`` whose ``shared``
    is a link to a folder names the same path, and gives the rules the same params, as a real folder."""
    out: list[Path] = []
    for m in mirrors:
        p = Path(m).expanduser()
        cands = [p] if p.is_absolute() else [Path.cwd() / p, Path(project_dir) / p]
        for c in cands:
            named = Path(os.path.normpath(os.path.abspath(c)))
            # where the name and the file system disagree (a `..` after a link), the file system wins
            c = named if named.exists() or not c.resolve().exists() else c.resolve()
            if c not in out:
                out.append(c)
    return out


def _download(url: str, timeout: float) -> bytes:
    req = urllib.request.Request(url, headers={"User-Agent": "depthwidth"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return r.read()


def fetch_all(
    relpaths: list[str],
    dests: list[str | Path],
    mirrors: list[str | Path],
    manifest: dict | None = None,
    timeout: float = 30.0,
    allow_network: bool = True,
) -> list[str]:
    """:func:`fetch` each pinned file of ``relpaths`` to the ``dests`` at the same place, in order, with
    a progress line every few seconds. Returns where each came from."""
    from depthwidth.logs import Progress

    if len(relpaths) != len(dests):
        raise ValueError(f"{len(relpaths)} pinned files but {len(dests)} destinations")
    manifest = load_manifest() if manifest is None else manifest
    progress, out = Progress(len(relpaths), "pinned files"), []
    for relpath, dest in zip(relpaths, dests):
        if pinned_key(dest, manifest) not in (None, relpath):
            raise ValueError(f"{dest} is not where {relpath} goes (data/raw/{relpath})")
        out.append(fetch(relpath, dest, mirrors, manifest, timeout=timeout, allow_network=allow_network))
        progress.update()
    return out


def fetch(
    relpath: str,
    dest: str | Path,
    mirrors: list[str | Path],
    manifest: dict | None = None,
    timeout: float = 30.0,
    allow_network: bool = True,
) -> str:
    """Put the pinned file ``relpath`` at ``dest``. Returns where it came from (a path or URL)."""
    manifest = load_manifest() if manifest is None else manifest
    if relpath not in manifest:
        raise FetchError(
            f"'{relpath}' is not in the manifest {MANIFEST_PATH}; known files: {sorted(manifest)}"
        )
    entry = manifest[relpath]
    want = entry["sha256"]
    tried: list[str] = []
    for mirror in mirrors:
        cand = Path(mirror) / relpath
        if not cand.is_file():
            tried.append(f"{cand}: not there")
            continue
        got = sha256_file(cand)
        if got != want:
            tried.append(
                f"{cand}: checksum mismatch (sha256 {got}, expected {want}); replace or delete that file"
            )
            log.warning("mirror file %s has the wrong checksum; skipping it", cand)
            continue
        _write(dest, atomic_copy, cand, dest)
        log.info("%s: copied from mirror %s (sha256 ok)", relpath, cand)
        return str(cand)
    for url in entry.get("urls", []) if allow_network else []:
        try:
            log.info("%s: downloading %s", relpath, url)
            data = _download(url, timeout)
            if entry.get("convert"):
                data = CONVERTERS[entry["convert"]](data)
        except Exception as e:  # noqa: BLE001 - any network or parse failure means: try the next source
            tried.append(f"{url}: {type(e).__name__}: {e}")
            continue
        got = hashlib.sha256(data).hexdigest()
        if got != want:
            tried.append(f"{url}: checksum mismatch (sha256 {got}, expected {want})")
            continue
        _write(dest, atomic_write_bytes, dest, data)
        log.info("%s: downloaded from %s (sha256 ok)", relpath, url)
        return url
    if not allow_network:
        tried.append("network: not tried (offline)")
    raise FetchError(
        f"Could not obtain '{relpath}' ({entry.get('description', '')}).\nTried, in order:\n  - "
        + "\n  - ".join(tried)
        + f"\nFix: put the file with sha256 {want} at <mirror>/{relpath} in one of the mirror folders "
        "(config key data.mirrors), or run where one of the URLs above is reachable."
    )
