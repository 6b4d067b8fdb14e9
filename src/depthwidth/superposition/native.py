"""Build a C source file of the package into a shared library once per machine, in a user cache folder.

- Folder: ``$DEPTHWIDTH_CACHE_DIR`` where set, else ``$XDG_CACHE_HOME/depthwidth``, else
  ``~/.cache/depthwidth``; the libraries lie in its ``kernels/`` subfolder, never in the project.
- Key: the SHA-256 of the source's bytes, the compiler flags, the compiler (its resolved path and its
  ``--version`` text) and the CPU (model and feature flags from ``/proc/cpuinfo``: ``-march=native`` builds
  for the CPU it runs on, so a cache folder shared by the nodes of a cluster keeps one build per CPU kind).
  A changed source, flag, compiler or CPU gives a new key and a new build; old builds stay until removed.
- Files: ``kernels/<name>-<key>.so`` and ``kernels/<name>-<key>.json`` (what the key was made of, the
  build's time, the compiler's warnings, and the library's size and SHA-256, written before the library is
  renamed into place).
- Checked before loading: a cached library is used only when its size and SHA-256 match its ``.json``
  (``verify``). A truncated, altered or foreign file (one that ``dlopen`` may still map, and that would
  then crash the process with SIGBUS or load the wrong code), or one without a recorded checksum, is
  logged with its path and the reason and built again under the lock.
- Several processes at once: the first takes an exclusive lock (``fcntl.flock`` on
  ``kernels/<name>-<key>.lock``) and builds; the others wait for it and then load its build. The build
  is written under a temporary name and renamed (``depthwidth.files.atomic_path``), so no process ever
  loads half a library, also where the file system ignores locks (then each process may build once).
- Clearing: ``rm -rf ~/.cache/depthwidth/kernels`` (or the folder above); the next process builds again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import platform
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from depthwidth.files import atomic_path, atomic_write_json, sha256_file

log = logging.getLogger("depthwidth.superposition")

CACHE_ENV = "DEPTHWIDTH_CACHE_DIR"

#: /proc/cpuinfo keys that name the CPU and its instruction set (x86 and ARM spellings)
_CPU_KEYS = (
    "vendor_id",
    "cpu family",
    "model",
    "model name",
    "flags",
    "CPU implementer",
    "CPU part",
    "Features",
)


@dataclass(frozen=True)
class Build:
    """A built library: its ``path``, cache ``key``, whether it was ``reused`` (built by an earlier or
    concurrent process), the ``seconds`` spent finding or building it and the compiler's ``warnings``."""

    path: Path
    key: str
    reused: bool
    seconds: float
    warnings: str = ""
    sha256: str = ""


def cache_dir() -> Path:
    """The user cache folder of the package (see the module docstring)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "depthwidth"


def find_compiler() -> str:
    """``$CC``, else ``cc``, ``gcc`` or ``clang`` on PATH; raises RuntimeError naming them where none is found."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        raise RuntimeError("no C compiler on PATH (cc, gcc or clang), and CC is not set")
    return cc


def compiler_id(cc: str) -> str:
    """The compiler's resolved path and the first lines of its ``--version`` text."""
    path = shutil.which(cc) or cc
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=True).stdout
    return f"{os.path.realpath(path)}: {' | '.join(out.strip().splitlines()[:2])}"


def cpu_id() -> str:
    """The CPU's model and feature flags (the first processor of ``/proc/cpuinfo``), else what ``platform``
    says."""
    try:
        first = Path("/proc/cpuinfo").read_text().split("\n\n")[0]
    except OSError:
        return f"{platform.machine()} {platform.processor()}"
    fields = dict(line.split(":", 1) for line in first.splitlines() if ":" in line)
    kept = {k.strip(): " ".join(sorted(v.split())) for k, v in fields.items() if k.strip() in _CPU_KEYS}
    return json.dumps(kept, sort_keys=True) if kept else f"{platform.machine()} {platform.processor()}"


def build_key(source: bytes, flags: list[str], compiler: str, cpu: str) -> tuple[str, dict]:
    """The cache key (16 hex digits) and what it is made of."""
    parts = {
        "source_sha256": hashlib.sha256(source).hexdigest(),
        "flags": list(flags),
        "compiler": compiler,
        "cpu": cpu,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:16], parts


def verify(lib: Path) -> tuple[str, str]:
    """(``""``, sha256) where the library ``lib`` is the file its ``.json`` records (size, then SHA-256),
    else (what is wrong, ``""``). Read before the library is loaded: ``dlopen`` maps a truncated file
    without complaint, and the first call into a missing page kills the process (SIGBUS)."""
    try:
        meta = json.loads(lib.with_suffix(".json").read_text())
    except (OSError, ValueError) as e:
        return f"its record {lib.with_suffix('.json').name} is missing or unreadable ({e})", ""
    if not isinstance(meta, dict) or "sha256" not in meta or "size" not in meta:
        return f"its record {lib.with_suffix('.json').name} holds no checksum", ""
    try:
        size = lib.stat().st_size
        if size != meta["size"]:
            return f"it is {size} bytes, the build wrote {meta['size']}", ""
        sha = sha256_file(lib)
    except OSError as e:
        return f"it cannot be read ({e})", ""
    if sha != meta["sha256"]:
        return f"its SHA-256 is {sha[:16]}…, the build wrote {str(meta['sha256'])[:16]}…", ""
    return "", sha


@contextlib.contextmanager
def _exclusive(lock_path: Path):
    """Hold an exclusive lock on ``lock_path`` (created if missing); a no-op where locks are unsupported."""
    try:
        import fcntl
    except ImportError:  # not POSIX: the atomic rename alone keeps the library whole
        yield
        return
    with open(lock_path, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX)
        except OSError:
            yield
            return
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def cached_build(
    name: str, source_path: Path, flags: list[str], libs: list[str], rebuild: bool = False
) -> Build:
    """The shared library built from ``source_path`` with ``flags``, from the cache where it is there
    (``reused``), else built now under the lock. ``rebuild``: replace a cached build (one that failed to
    load). Raises ``subprocess.CalledProcessError`` (with the compiler's output) where the build fails."""
    t = time.perf_counter()
    source = Path(source_path).read_bytes()
    cc = find_compiler()
    key, parts = build_key(source, flags, compiler_id(cc), cpu_id())
    folder = cache_dir() / "kernels"
    lib = folder / f"{name}-{key}.so"
    if lib.is_file() and not rebuild:
        problem, sha = verify(lib)
        if not problem:
            return Build(lib, key, True, time.perf_counter() - t, sha256=sha)
        log.warning("kernel build cache: %s is damaged (%s); building it again", lib, problem)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}-{key}.lock").touch()
    except OSError as e:
        raise RuntimeError(
            f"cannot write the kernel build cache {folder} ({e}); set {CACHE_ENV} to a writable folder"
        ) from e
    with _exclusive(folder / f"{name}-{key}.lock"):
        if lib.is_file() and not rebuild:  # another process built it while this one waited
            problem, sha = verify(lib)
            if not problem:
                return Build(lib, key, True, time.perf_counter() - t, sha256=sha)
        t_cc = time.perf_counter()
        with atomic_path(lib) as tmp:
            done = subprocess.run(
                [cc, *flags, str(source_path), "-o", str(tmp), *libs],
                capture_output=True,
                text=True,
                check=True,
            )
            seconds = time.perf_counter() - t_cc
            sha = sha256_file(tmp)
            # the record first, then the library: a reader never sees a library newer than its record
            atomic_write_json(
                lib.with_suffix(".json"),
                {
                    **parts,
                    "source": str(source_path),
                    "built_seconds": round(seconds, 3),
                    "warnings": done.stderr,
                    "size": tmp.stat().st_size,
                    "sha256": sha,
                },
            )
    return Build(lib, key, False, time.perf_counter() - t, done.stderr, sha)
