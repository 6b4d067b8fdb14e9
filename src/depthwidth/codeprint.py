"""Fingerprints of the package code a rule runs, so that results know the code that made them.

What counts as a rule's code: the ``depthwidth`` modules its script imports, and every ``depthwidth``
module those import in turn (found by reading the ``import`` statements, deferred imports inside functions
included), with the ``__init__.py`` of each package on the way, plus the package data files those modules
name (a file or folder beside a module whose name appears in one of its string literals, docstrings left
out: the kernel's C
source, the download manifest, the report's templates), and, in a rule's ``code`` params entry
(``script_fingerprint``), the script itself. So the fingerprint says whether a rule's code changed, and
the workflow profile leaves Snakemake's own ``code`` trigger out (it reruns a script rule whose outputs are
older than its script file, which after a fresh clone is every rule). Third-party packages are left out
(their versions are in the report's provenance block).

The fingerprint is the SHA-256 of those files' paths (relative to the package, ``/``-separated) and
contents (line endings read as ``\\n``), so it is the same on every machine and checkout of the same code
and ignores modification times, ``__pycache__`` and ``.pyc`` files. Each rule carries it as a ``code``
params entry (``rules/common.smk``), so a plain ``snakemake`` reruns exactly the jobs whose code changed,
and ``--list-changes params`` or a dry run's "reason" lines show the change. ``integrity.seal`` records
the fingerprint of the running job's code in every seal, and the report's provenance block compares the
recorded fingerprints with the current code's.

Standard library only: ``rules/common.smk`` imports it while Snakemake parses the workflow.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import sys
from pathlib import Path

PACKAGE = "depthwidth"
ROOT = Path(__file__).resolve().parent
PREFIX = "depthwidth code "
_DOC_OWNERS = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def module_file(name: str, root: Path = ROOT) -> Path | None:
    """The source file of module ``name`` (``depthwidth.a.b``) under ``root``, or None."""
    parts = name.split(".")
    if parts[0] != PACKAGE:
        return None
    base = root.joinpath(*parts[1:])
    for f in (base.with_suffix(".py"), base / "__init__.py"):
        if f.is_file():
            return f
    return None


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = [PACKAGE, *rel.parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.lru_cache(maxsize=None)
def _parsed(path: Path, stamp: tuple) -> tuple[frozenset[str], frozenset[str]]:
    """(imported names that may be ``depthwidth`` modules, string literals other than docstrings) of one
    source file."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    names, strings, docstrings = set(), set(), set()
    for node in ast.walk(tree):  # breadth first: a docstring's owner comes before the docstring
        if isinstance(node, _DOC_OWNERS) and node.body and isinstance(node.body[0], ast.Expr):
            docstrings.add(id(node.body[0].value))
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolved against this module's package
                pkg = path.parent
                for _ in range(node.level - 1):
                    pkg = pkg.parent
                base = ".".join(filter(None, [_relative_package(pkg), node.module or ""]))
            else:
                base = node.module or ""
            names.add(base)
            names.update(f"{base}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            strings.add(node.value)
    return frozenset(n for n in names if n.split(".")[0] == PACKAGE), frozenset(strings)


def _relative_package(folder: Path) -> str:
    """The dotted name of a package folder, from the nearest folder named ``depthwidth`` upwards."""
    parts = []
    while folder.name and folder.name != PACKAGE:
        parts.append(folder.name)
        folder = folder.parent
    return ".".join([PACKAGE, *reversed(parts)])


def _stamp(path: Path) -> tuple:
    s = path.stat()
    return (s.st_mtime_ns, s.st_size)  # only to refresh the parse cache; never part of a fingerprint


def imports_of(path: str | Path) -> list[str]:
    """The ``depthwidth`` names a script or module imports (sorted)."""
    path = Path(path).resolve()
    return sorted(_parsed(path, _stamp(path))[0])


def _data_files(module: Path, strings: frozenset[str]) -> list[Path]:
    """Package data beside ``module`` that it names in a string literal (files under a named folder too)."""
    out = []
    for entry in sorted(module.parent.iterdir()):
        if entry.suffix in (".py", ".pyc") or entry.name.startswith((".", "__")):
            continue
        if (entry / "__init__.py").exists() or not any(entry.name in s for s in strings):
            continue
        if entry.is_dir():
            out.extend(
                f
                for f in sorted(entry.rglob("*"))
                if f.is_file() and "__pycache__" not in f.parts and not f.name.startswith(".")
            )
        else:
            out.append(entry)
    return out


def code_files(modules: list[str] | tuple[str, ...], root: Path = ROOT) -> list[Path]:
    """Every file of the package code that importing ``modules`` runs (see the module docstring), sorted."""
    root = Path(root).resolve()
    todo, seen, files = list(modules), set(), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        f = module_file(name, root)
        if f is None:  # a name imported from a module (a function), not a module
            continue
        files.add(f)
        parts = name.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))  # the packages on the way
        imported, strings = _parsed(f, _stamp(f))
        todo.extend(imported)
        files.update(_data_files(f, strings))
    return sorted(files, key=lambda p: p.relative_to(root).as_posix())


@functools.lru_cache(maxsize=None)
def _digest(path: Path, stamp: tuple) -> bytes:
    return hashlib.sha256(path.read_bytes().replace(b"\r\n", b"\n")).digest()


def fingerprint_of(
    modules: list[str] | tuple[str, ...], root: Path = ROOT, script: str | Path | None = None
) -> str:
    """``"depthwidth code <16 hex digits>"``: the SHA-256 of the code files of ``modules``, by relative
    path and content (line endings normalised), and of ``script`` (by its file name and content) where
    given."""
    root = Path(root).resolve()
    h = hashlib.sha256()
    for f in code_files(modules, root):
        h.update(f.relative_to(root).as_posix().encode() + b"\0")
        h.update(_digest(f, _stamp(f)))
    if script is not None:
        script = Path(script).resolve()
        h.update(b"scripts/" + script.name.encode() + b"\0")
        h.update(_digest(script, _stamp(script)))
    return PREFIX + h.hexdigest()[:16]


def script_fingerprint(script: str | Path, root: Path = ROOT) -> str:
    """The fingerprint of a rule's code: ``script`` (the rule's script) and the package code it imports.
    A rule's ``code`` params entry, so an edit of either reruns the rule's jobs, and a fresh clone or a
    moved checkout (new modification times, same contents) reruns nothing."""
    return fingerprint_of(tuple(imports_of(script)), root, script)


def running_code() -> dict | None:
    """In a job started by Snakemake's ``script:`` (the script runs as ``__main__``, from a copy named
    ``tmp<random>.<script>.py``): the script's name, the package modules it imports and their fingerprint
    (the rule's ``code`` params entry is that of the same modules and the script). None outside such a
    job."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not path or not hasattr(main, "snakemake"):
        return None
    name = Path(path).name
    if name.startswith("tmp") and name.count(".") >= 2:
        name = name.split(".", 1)[1]
    try:
        modules = [m for m in imports_of(path) if module_file(m) is not None]
        return {"script": Path(name).stem, "modules": modules, "fingerprint": fingerprint_of(tuple(modules))}
    except (OSError, SyntaxError, ValueError):
        return None
