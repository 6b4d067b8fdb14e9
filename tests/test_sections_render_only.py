"""Sections only render: no fit, bootstrap or comparison with a paper runs at section time. Every
comparison is computed by a stage's own rule (``results/<stage>/comparisons.csv``, ``depthwidth.verdicts``)
and the section reads it. This scans the section code with ``ast``: each ``src/depthwidth/*/section.py``,
every module of the package whose name contains "section" (the parts a stage splits its section into),
and ``src/depthwidth/sections.py``."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "depthwidth"

# Imports a section must not make: the fitting layer, optimisers.
FORBIDDEN_MODULES = ("depthwidth.laws", "scipy.optimize", "lmfit")
# Calls a section must not make: the verdict procedure's tests and errors, fits and bootstraps.
FORBIDDEN_CALLS = frozenset(
    {
        "agree_within",
        "difference_test",
        "procedure_test",
        "interval_test",
        "outside_test",
        "compare",
        "bootstrap_error",
        "choose_error",
        "at_bound",
        "power_law_fit",
        "bootstrap",
    }
)

# Stages whose sections still compute comparisons while they are converted to the rule above; each
# listed stage is checked again (and must be taken off this list) once its comparisons come from its own
# rule. Empty it when every stage is converted.
NOT_YET: set[str] = set()


def section_modules() -> list[Path]:
    """Every module the rule applies to."""
    found = set(SRC.glob("*/section.py")) | {SRC / "sections.py"}
    found |= {p for p in SRC.rglob("*.py") if "section" in p.stem}
    return sorted(found)


def _module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    return ".".join(rel.parts)


def _resolve(node: ast.ImportFrom, module: str) -> str:
    """The absolute module of ``from ... import`` (relative imports resolved against ``module``)."""
    if not node.level:
        return node.module or ""
    base = module.split(".")[: -node.level]
    return ".".join(base + ([node.module] if node.module else []))


def _forbidden_module(name: str) -> bool:
    return any(name == m or name.startswith(m + ".") for m in FORBIDDEN_MODULES)


def violations(path: Path, module: str | None = None) -> list[str]:
    """What in ``path`` computes rather than renders, as "line N: ..." strings."""
    module = module or _module_name(path)
    tree = ast.parse(path.read_text(), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [f"line {node.lineno}: imports {a.name}" for a in node.names if _forbidden_module(a.name)]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(node, module)
            for a in node.names:
                full = f"{base}.{a.name}" if base else a.name
                if _forbidden_module(base) or _forbidden_module(full):
                    out.append(f"line {node.lineno}: imports {full}")
                elif a.name in FORBIDDEN_CALLS:
                    out.append(f"line {node.lineno}: imports {a.name} from {base}")
        elif isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in FORBIDDEN_CALLS:
                out.append(f"line {node.lineno}: calls {name}()")
    return out


def _stage(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def test_the_scan_covers_every_stage_section_and_the_shared_module():
    stages = {_stage(p) for p in section_modules()}
    every = {"lm_head", "hidden_states", "causal_tracing", "chinchilla", "superposition", "depth_toy"}
    assert every | {"paperfigs", "sections"} <= stages
    assert NOT_YET <= stages, f"NOT_YET names stages without a section: {sorted(NOT_YET - stages)}"


@pytest.mark.parametrize("path", section_modules(), ids=lambda p: str(p.relative_to(SRC)))
def test_section_code_only_renders(path):
    found = violations(path)
    if _stage(path) in NOT_YET:
        # listed as not yet converted: stays listed only while it still computes something
        assert found, f"{path.relative_to(SRC)} now only renders: take {_stage(path)!r} off NOT_YET"
        return
    assert not found, (
        f"{path.relative_to(SRC)} computes at section time ({'; '.join(found)}): move the fit or "
        "comparison into a rule of the stage that writes results/<stage>/comparisons.csv "
        "(depthwidth.verdicts) and render that file"
    )


def test_the_scan_fails_on_a_section_that_fits(tmp_path):
    fits = tmp_path / "section.py"
    fits.write_text(
        "import lmfit\n"
        "from scipy.optimize import curve_fit\n"
        "from depthwidth.laws.loglog import power_law_fit\n"
        "from depthwidth import verdicts as v\n"
        "from ..laws import group_offsets\n"
        "from depthwidth.sections import agree_within\n"
        "def headline(x, y):\n"
        "    fit = power_law_fit(x, y)\n"
        "    return v.compare('s', 'k', 'depth', 'c', 'q', v.difference_test(1, v.NONE, 1, 0.1))\n"
    )
    found = violations(fits, module="depthwidth.toy.section")
    assert len(found) == 8, found
    assert any("depthwidth.laws.group_offsets" in f for f in found)  # the relative import, resolved
    assert any("calls compare()" in f for f in found) and any("calls difference_test()" in f for f in found)
    renders = tmp_path / "renders.py"
    renders.write_text(
        "from depthwidth.verdicts import read_comparisons\n"
        "from depthwidth.sections import comparisons_html, headline_records\n"
        "def render(path):\n"
        "    c = read_comparisons(path, 'toy_compare')\n"
        "    return comparisons_html(c), headline_records(c)\n"
    )
    assert violations(renders, module="depthwidth.toy.section") == []


def test_sections_render_comparison_records_with_readable_headers(tmp_path):
    """What a section renders from its comparisons.csv: every record in a table with readable headers, no
    error for a fit at a bound, and only the headline records handed on (with the verdict as ``agree``)."""
    from depthwidth import verdicts as v
    from depthwidth.sections import comparisons_html, headline_records

    boot = v.bootstrap_error(np.random.default_rng(0).normal(0.9, 0.05, 400), "models")
    records = [
        v.compare("s", "a", "depth", "c", "α_m", v.difference_test(0.9, boot, 0.91, 0.04, 0.1), value=0.9, err=boot,
                  paper_value=0.91, paper_err=0.04, allowance=0.1, allowance_reason="drawn, no error"),
        v.compare("s", "b", "depth", "c", "α_ℓ", v.not_tested("the fit ends at a bound (alpha_m)"), value=10.0,
                  err=boot, paper_value=1.2, bound_params=["alpha_m"], headline=False),
        v.compare("s", "c", "depth", "c", "θ", v.not_tested("stated in words"), value_text="not run",
                  paper_text="small"),
    ]  # fmt: skip
    v.write_comparisons(tmp_path / "c.csv", records)
    df = v.read_comparisons(tmp_path / "c.csv", "s_compare")
    html = comparisons_html(df)
    assert html.count("<tr") == 4 and ">This run</th>" in html and "err_method" not in html
    assert "0.9 ± 0.05" in html and "bootstrap over models, 400 resamples" in html
    assert "10 (at a bound: alpha_m; no error)" in html and "not run" in html
    assert "+ allowance; allowance ± 0.1 (drawn, no error)" in html  # an allowance is shown with its reason
    rows = headline_records(df)
    assert [r["key"] for r in rows] == ["a", "c"] and rows[0]["agree"] is True and rows[1]["agree"] is None
    assert rows[1]["value"] is None and rows[0]["source"] == ""
