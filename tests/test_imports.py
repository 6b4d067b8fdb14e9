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


# The floors of the house, lowest first: a module may import its own floor and the floors below, never one
# above. Every package module must sit on exactly one floor (a new top-level module or stage is placed here
# before it is used).
LAYERS = (
    (
        "foundation",
        (
            "depthwidth",
            "depthwidth.files",
            "depthwidth.logs",
            "depthwidth.papers",
            "depthwidth.integrity",
            "depthwidth.config",
            "depthwidth.config_reference",
            "depthwidth.sections",
            "depthwidth.optimal_shape",
            "depthwidth.rules",
            "depthwidth.codeprint",
        ),
    ),
    ("fitting", ("depthwidth.laws", "depthwidth.verdicts")),
    ("inputs", ("depthwidth.download", "depthwidth.models")),
    (
        "stages",
        (
            "depthwidth.superposition",
            "depthwidth.depth_toy",
            "depthwidth.hidden_states",
            "depthwidth.causal_tracing",
            "depthwidth.lm_head",
            "depthwidth.chinchilla",
            "depthwidth.paperfigs",
        ),
    ),
    (
        "report",
        (
            "depthwidth.report",
            "depthwidth.provenance",
            "depthwidth.plan",
            "depthwidth.browser",
            "depthwidth.results_table",
            # the `depthwidth` command and the modules that run it (python -m depthwidth[.chinchilla])
            "depthwidth.cli",
            "depthwidth.__main__",
            "depthwidth.chinchilla.__main__",
        ),
    ),
)
# Floors whose parts are independent: none imports another part of the same floor.
INDEPENDENT = ("inputs", "stages")
# The imports between stages that exist, each with its reason; any other one fails.
ALLOWED_BETWEEN = {
    # the per-layer angle metric of the paper's Fig. 3, one definition for the toy's students and for LLMs
    ("depthwidth.depth_toy.angles", "depthwidth.hidden_states.metrics"),
    # where a Hugging Face model keeps its block list, final norm and head (one table of model layouts)
    ("depthwidth.causal_tracing.trace", "depthwidth.hidden_states.metrics"),
    # one per-machine build cache for the package's C kernels (the superposition and depth-toy trainers)
    ("depthwidth.depth_toy.fused", "depthwidth.superposition.native"),
}


def part_of(module: str, layers=LAYERS) -> tuple[int, str]:
    """(floor index, the part of that floor) holding ``module``: the longest matching part name."""
    best = None
    for i, (_, parts) in enumerate(layers):
        for part in parts:
            inside = module == part or (part != "depthwidth" and module.startswith(part + "."))
            if inside and (best is None or len(part) > len(best[1])):
                best = (i, part)
    if best is None:
        raise KeyError(f"{module} sits on no floor: add it to LAYERS in tests/test_imports.py")
    return best


def contract_violations(graph, layers=LAYERS, independent=INDEPENDENT, allowed=ALLOWED_BETWEEN) -> list[str]:
    """Every import that runs up a floor, or between two parts of an independent floor (unless allowed)."""
    names = [name for name, _ in layers]
    found = []
    for mod in sorted(graph):
        floor, part = part_of(mod, layers)
        for dep in sorted(graph[mod]):
            dep_floor, dep_part = part_of(dep, layers)
            if dep_floor > floor:
                found.append(f"{mod} ({names[floor]}) imports {dep} ({names[dep_floor]}, a floor above)")
            elif (
                dep_floor == floor
                and dep_part != part
                and names[floor] in independent
                and (mod, dep) not in allowed
            ):
                found.append(f"{mod} imports {dep}: two parts of the independent floor {names[floor]}")
    return found


def test_every_module_sits_on_a_floor_and_no_import_runs_up():
    graph = import_graph()
    assert contract_violations(graph) == [], "imports against the floors of LAYERS (tests/test_imports.py)"
    # every allowed exception is still used: one that is gone is removed from the list
    used = {(m, d) for m, deps in graph.items() for d in deps}
    assert ALLOWED_BETWEEN <= used, ALLOWED_BETWEEN - used


def test_the_contract_fails_on_an_upward_import(tmp_path):
    """The real package with one deferred import added that runs up (a foundation module importing the
    report inside a function) and one between two stages: both are reported, nothing else is."""
    import shutil

    shutil.copytree(SRC / "depthwidth", tmp_path / "depthwidth", ignore=shutil.ignore_patterns("__pycache__"))
    files = tmp_path / "depthwidth" / "files.py"
    files.write_text(files.read_text() + "\n\ndef _f():\n    from depthwidth.report import page\n")
    section = tmp_path / "depthwidth" / "lm_head" / "section.py"
    section.write_text(section.read_text() + "\nfrom depthwidth.superposition.grid import law_error\n")
    assert contract_violations(import_graph(tmp_path)) == [
        "depthwidth.files (foundation) imports depthwidth.report.page (report, a floor above)",
        "depthwidth.lm_head.section imports depthwidth.superposition.grid: two parts of the independent floor stages",
    ]
    (tmp_path / "depthwidth" / "newtool.py").write_text("")
    try:
        contract_violations(import_graph(tmp_path))
    except KeyError as e:
        assert "depthwidth.newtool sits on no floor" in str(e)
    else:
        raise AssertionError("a module on no floor was not reported")


def test_the_paper_loop_imports_nothing_of_the_trainer_it_checks():
    """The ground truth of the superposition trainer reaches, through all its imports, only the name parser
    of the frequency laws: no piece of the trainer (train, fused, batch, grads, native, data)."""
    graph = import_graph()
    reached, todo = set(), ["depthwidth.superposition.reference"]
    while todo:
        for dep in graph[todo.pop()] - reached:
            reached.add(dep)
            todo.append(dep)
    assert reached == {"depthwidth.superposition.grid"}, reached
