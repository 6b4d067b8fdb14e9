"""No import cycle in the package: every import of a ``depthwidth`` module, at the top of a file or inside a
function (a deferred import hides a cycle from the interpreter but not from the design), read with ``ast``.

    PYTHONPATH=src .venv/bin/python -m pytest tests/test_imports.py -q
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def module_name(path: Path, src: Path = SRC) -> str:
    """``src/depthwidth/a/b.py`` -> ``depthwidth.a.b``; a package's ``__init__.py`` -> the package."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(src: Path = SRC, package: str = "depthwidth") -> dict[str, set[str]]:
    """Module -> the package's modules it imports (``from pkg import mod`` counts as importing ``pkg.mod``
    where that is a module, else ``pkg``)."""
    files = {module_name(p, src): p for p in sorted((src / package).rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for mod, path in files.items():
        is_pkg = path.name == "__init__.py"
        deps = graph.setdefault(mod, set())
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: resolve against this module's package
                    base = mod.split(".")[: len(mod.split(".")) - node.level + (1 if is_pkg else 0)]
                    origin = ".".join(base + ([node.module] if node.module else []))
                else:
                    origin = node.module or ""
                targets = [
                    f"{origin}.{a.name}" if f"{origin}.{a.name}" in files else origin for a in node.names
                ]
            else:
                continue
            deps.update(t for t in targets if t in files and t != mod)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_checker_finds_a_cycle(tmp_path):
    """The checker itself: a two-module cycle through a deferred import is found, a chain is not."""
    pkg = tmp_path / "depthwidth" / "sub"
    pkg.mkdir(parents=True)
    (tmp_path / "depthwidth" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from depthwidth.sub import b\n")
    (pkg / "b.py").write_text("def f():\n    from depthwidth.sub.a import x\n")
    (pkg / "c.py").write_text("from .b import f\n")
    graph = import_graph(tmp_path)
    assert graph["depthwidth.sub.c"] == {"depthwidth.sub.b"}
    assert cycles(graph) == [["depthwidth.sub.a", "depthwidth.sub.b"]]
    (pkg / "b.py").write_text("import math\n")
    assert cycles(import_graph(tmp_path)) == []


def test_no_import_cycle_in_the_package():
    graph = import_graph()
    assert len(graph) > 50 and sum(map(len, graph.values())) > 50  # it read the package
    assert cycles(graph) == [], "import cycles in src/depthwidth (each line one cycle's modules)"
