"""The fitting layer (``depthwidth.laws``): every fit of the package goes through it (an AST scan of every
module), a new law is one class in one file, the group-offset law recovers α, A and B_g, and the log-log
line reproduces ordinary least squares.

    PYTHONPATH=src .venv/bin/python -m pytest tests/test_laws.py -q
"""

from __future__ import annotations

import ast
import importlib.util
import textwrap
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from test_imports import import_graph

from depthwidth.laws import law, model, resample
from depthwidth.laws.group_offsets import fit_group_offsets, grouped_data
from depthwidth.laws.loglog import LOGLOG, power_law_fit
from depthwidth.laws.power import POWER

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "depthwidth"

# What counts as fitting code (outside depthwidth/laws/ none of it may appear):
# - a call of an optimiser or regression, by its final name (``lmfit.minimize``, ``minimize(...)``, …);
FIT_CALLS = {
    "minimize",
    "least_squares",
    "leastsq",
    "curve_fit",
    "Minimizer",
    "linregress",
    "polyfit",
    "lstsq",
}
# - a call of anything of lmfit's (``lmfit.Parameters()``, ``lmfit.Model(…)``; a type annotation is no call);
# - an import from lmfit, or of a fitter, regression or resampler from scipy, numpy, statsmodels or sklearn;
FIT_MODULES = ("lmfit", "scipy.optimize", "scipy.stats", "numpy.polynomial", "statsmodels", "sklearn")
FIT_IMPORTS = FIT_CALLS | {"bootstrap", "resample", "OLS", "WLS", "Polynomial", "polynomial"}
# - a function (at any depth: methods, nested functions) named as a residual or a Jacobian, named
#   ``bootstrap``, or named as a power-law fit (``power_law_fit``, ``fit_power_law``);
NAME_TOKENS = {"residual", "residuals", "resid", "jacobian", "jac"}
# - a bootstrap draw: n indices out of n with replacement (``rng.integers(0, n, n)``), or ``choice`` without
#   ``replace=False``.
# Allowed, each with its reason: (module, rule) -> why.
ALLOWED = {
    ("depthwidth.chinchilla.replication", "call minimize"): (
        "Besiroglu et al.'s procedure repeated as published (L-BFGS-B on their objective from their grid), "
        "compared against the layer's fit of the same law"
    ),
    ("depthwidth.chinchilla.replication", "import scipy.optimize.minimize"): "the same replication",
    ("depthwidth.chinchilla.replication", "bootstrap draw choice with replacement"): (
        "the notebook's own bootstrap repeated draw for draw (np.random.seed, np.random.choice: the legacy "
        "generator's stream, which laws.resample's Generator does not give), so that its errors match to "
        "every digit"
    ),
    ("depthwidth.paperfigs.axes", "call polyfit"): (
        "a figure reader's axis calibration (drawing coordinate -> data value, the straight line through "
        "an axis's tick marks, its tick residual reported), not a fitted law"
    ),
    ("depthwidth.superposition.grads", "def _residual_into"): (
        "the toy model's training kernel (y − ŷ of the forward pass, for the gradient), not a fitted law"
    ),
}


def _import_hits(node) -> list[str]:
    if isinstance(node, ast.ImportFrom) and node.module and not node.level:
        if node.module.split(".")[0] == "lmfit":
            return [f"import {node.module}"]
        if node.module.startswith(FIT_MODULES):
            return [f"import {node.module}.{a.name}" for a in node.names if a.name in FIT_IMPORTS]
    return []


def _call_hits(node: ast.Call) -> list[str]:
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
    if name in FIT_CALLS:
        return [f"call {name}"]
    root = f
    while isinstance(root, ast.Attribute):
        root = root.value
    if isinstance(f, ast.Attribute) and isinstance(root, ast.Name) and root.id == "lmfit":
        return [f"call lmfit {name}"]
    if name == "integers" and len(node.args) == 3 and ast.dump(node.args[1]) == ast.dump(node.args[2]):
        return ["bootstrap draw integers(lo, n, n)"]
    if name == "choice":
        replace = [k.value for k in node.keywords if k.arg == "replace"]
        if not (replace and isinstance(replace[0], ast.Constant) and replace[0].value is False):
            return ["bootstrap draw choice with replacement"]
    return []


def _def_hits(node) -> list[str]:
    tokens = set(node.name.strip("_").lower().split("_"))
    power_fit = {"power", "law", "fit"} <= tokens or {"powerlaw", "fit"} <= tokens
    if tokens & NAME_TOKENS or node.name.strip("_") == "bootstrap" or power_fit:
        return [f"def {node.name}"]
    return []


def fitting_code(path: Path) -> list[str]:
    """Every piece of fitting code in one Python file (the rules above), as 'rule' strings with line numbers
    stripped off (``rule`` only), in file order."""
    hits = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            hits += _import_hits(node)
        elif isinstance(node, ast.Call):
            hits += _call_hits(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            hits += _def_hits(node)
    return hits


def violations(package: Path = PACKAGE, allowed: dict = ALLOWED) -> list[str]:
    """Fitting code outside ``<package>/laws/`` that the allow-list does not name: 'module: rule'."""
    out = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package.parent).with_suffix("")
        if rel.parts[1:2] == ("laws",):
            continue
        mod = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        out += [f"{mod}: {h}" for h in fitting_code(path) if (mod, h) not in allowed]
    return out


def test_no_fitting_code_outside_the_layer():
    assert violations() == []
    # the allow-list names only what is there (a stale entry would hide nothing and say something false)
    found = {(m, h) for m, h in ALLOWED}
    present = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        present |= {(".".join(rel.parts), h) for h in fitting_code(path)}
    assert found <= present


def test_the_layer_imports_no_stage():
    """The layer is at the ground floor: its modules import each other and ``depthwidth.logs`` only."""
    above = {
        mod: sorted(d for d in deps if not d.startswith("depthwidth.laws") and d != "depthwidth.logs")
        for mod, deps in import_graph().items()
        if mod.startswith("depthwidth.laws")
    }
    assert len(above) >= 9 and not any(above.values()), above


def test_the_scan_finds_a_fit_added_outside_the_layer(tmp_path):
    pkg = tmp_path / "depthwidth"
    (pkg / "laws").mkdir(parents=True)
    (pkg / "stage").mkdir()
    (pkg / "laws" / "fit.py").write_text("import lmfit\n\ndef residual(p, d):\n    return d\n")
    (pkg / "stage" / "clean.py").write_text("import numpy as np\n\ndef mean(x):\n    return np.mean(x)\n")
    assert violations(pkg, {}) == []
    (pkg / "stage" / "sneaky.py").write_text(
        textwrap.dedent(
            """
            import numpy as np
            from scipy.optimize import curve_fit

            def exponent(x, y, rng):
                def my_resid(p):
                    return y - p[0] * x ** -p[1]
                idx = rng.integers(0, len(x), len(x))
                slope = np.polyfit(np.log(x[idx]), np.log(y[idx]), 1)[0]
                return -slope, curve_fit(lambda x, c, a: c * x**-a, x, y)
            """
        )
    )
    assert sorted(violations(pkg, {})) == [
        "depthwidth.stage.sneaky: bootstrap draw integers(lo, n, n)",
        "depthwidth.stage.sneaky: call curve_fit",
        "depthwidth.stage.sneaky: call polyfit",
        "depthwidth.stage.sneaky: def my_resid",
        "depthwidth.stage.sneaky: import scipy.optimize.curve_fit",
    ]
    # an allow-list entry lets exactly its (module, rule) through
    assert len(violations(pkg, {("depthwidth.stage.sneaky", "call polyfit"): "test"})) == 4


# ---------------------------------------------------------------- a new law is one class in one file
CUTOFF_LAW = '''
"""A power law with an exponential cutoff: y = c · x^(−α) · exp(−x/τ)."""

import lmfit
import numpy as np

from depthwidth.laws.model import Law


class CutoffPowerLaw(Law):
    name = "cutoff"
    params = ("c", "alpha", "tau")
    scale = "log"

    def parameters(self, d):
        p = lmfit.Parameters()
        p.add("c", value=1.0, min=1e-9)
        p.add("alpha", value=1.0, min=0.0, max=5.0)
        p.add("tau", value=float(np.max(d.m)), min=1e-6)
        return p

    def predict(self, v, d):
        return v["c"] * d.m ** (-v["alpha"]) * np.exp(-d.m / v["tau"])
'''


def test_a_new_law_is_one_class_in_one_file(tmp_path):
    """A law written as one class in one file, with nothing of the layer changed, fits synthetic data
    y = 3 · x^−0.7 · e^(−x/40) with 1 % log-normal noise: α within 0.02 and within 3 standard errors, and a
    bootstrap over the seeds of the data (5 seeds, one row per seed and x) gives a spread of that size."""
    (tmp_path / "cutoff_law.py").write_text(CUTOFF_LAW)
    spec = importlib.util.spec_from_file_location("cutoff_law", tmp_path / "cutoff_law.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rng = np.random.default_rng(3)
    x = np.tile(np.geomspace(1, 100, 20), 5)
    seeds = np.repeat(np.arange(5), 20)
    y = 3.0 * x**-0.7 * np.exp(-x / 40.0) * np.exp(rng.normal(0, 0.01, x.size))
    d = law.FitData(m=x, loss=y, unit=seeds)
    cutoff = mod.CutoffPowerLaw()
    res = model.fit(cutoff, d)
    v, se = cutoff.values(res, d), cutoff.stderrs(res, d)
    assert res.success
    assert abs(v["alpha"] - 0.7) < 0.02 and abs(v["alpha"] - 0.7) < 3 * se["alpha"]
    assert v["tau"] == pytest.approx(40.0, rel=0.05) and v["c"] == pytest.approx(3.0, rel=0.03)

    def refit(db, b):
        return cutoff.values(model.fit(cutoff, db), db)

    boot = resample.bootstrap(d, refit, 30, seed=0, unit="seeds")
    assert boot.attrs["unit"] == "seeds" and len(boot) == 30
    assert 0.3 < boot["alpha"].std(ddof=1) / se["alpha"] < 3.0


def test_a_resample_over_a_unit_takes_whole_units():
    rng = np.random.default_rng(0)
    unit = np.array(["a", "a", "b", "c", "c", "c"])
    for _ in range(20):
        idx = resample.resample_indices(len(unit), rng, unit)
        drawn = unit[idx]
        # every drawn label brings all its rows (as often as it was drawn), 3 labels drawn in all
        counts = {u: int((drawn == u).sum()) for u in "abc"}
        per = {"a": 2, "b": 1, "c": 3}
        assert all(counts[u] % per[u] == 0 for u in "abc")
        assert sum(counts[u] // per[u] for u in "abc") == 3
    # with no unit the draw is the row bootstrap's, rng.integers(0, n, n)
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    assert np.array_equal(resample.resample_indices(6, a), b.integers(0, 6, 6))
    with pytest.raises(ValueError, match="needs a label per row"):
        resample.bootstrap(law.FitData(m=np.ones(3), loss=np.ones(3)), lambda d, b: {}, 2, unit="models")


# ---------------------------------------------------------------- the group-offset law
def _llm_like(rng, noise):
    """27 models of 5 families, each on 2 corpora: L = 60 / m^0.91 + B_(family, corpus)."""
    widths = {
        "opt": [768, 1024, 2048, 2560, 4096, 5120, 7168],
        "pythia": [512, 768, 1024, 2048, 2560, 4096],
        "qwen2.5": [896, 1536, 2048, 3584, 5120],
        "llama": [576, 960, 2048, 4096],
        "gpt2": [768, 1024, 1280, 1600, 2048],
    }
    offsets = {"opt": 2.1, "pythia": 2.4, "qwen2.5": 1.9, "llama": 2.0, "gpt2": 2.6}
    rows = []
    for fam, ms in widths.items():
        for corpus, dB in (("wikitext", 0.0), ("c4", 0.3)):
            for m in ms:
                y = 60.0 * m**-0.91 + offsets[fam] + dB + rng.normal(0, noise)
                rows.append((m, y, f"{fam} / {corpus}", f"{fam}-{m}"))
    return rows, offsets


def test_group_offset_law_recovers_alpha_A_and_offsets():
    """α = 0.91, A = 60 and the ten B_g from 54 points (27 models × 2 corpora, noise 0.003 nats): α within
    0.05 and 3 standard errors, every B_g within 0.03; the bootstrap over models (whole models resampled)
    has a spread of α of the order of the covariance error."""
    rows, offsets = _llm_like(np.random.default_rng(0), noise=0.003)
    m, y, g, model_of = map(np.array, zip(*rows))
    fit = fit_group_offsets(m, y, g, unit=model_of, n_bootstrap=40, seed=1)
    assert fit.status == "ok" and fit.success and fit.n_points == 54 and len(fit.groups) == 10
    assert abs(fit.alpha - 0.91) < 0.05 and abs(fit.alpha - 0.91) < 3 * fit.alpha_err
    assert fit.A == pytest.approx(60.0, rel=0.3) and fit.A_err > 0
    for fam, B in offsets.items():
        assert fit.B[f"{fam} / wikitext"] == pytest.approx(B, abs=0.03)
        assert fit.B[f"{fam} / c4"] == pytest.approx(B + 0.3, abs=0.03)
        assert fit.B_err[f"{fam} / c4"] > 0
    # the curve of one group through its own points, to the noise
    sel = g == "opt / c4"
    assert np.max(np.abs(fit.predict(m[sel], "opt / c4") - y[sel])) < 0.04
    boot = fit.bootstrap
    assert fit.bootstrap_unit == "models" and len(boot) >= 35 and boot["converged"].all()
    assert 0.3 < boot["alpha"].std(ddof=1) / fit.alpha_err < 3.0
    js = fit.as_dict()
    assert js["status"] == "ok" and js["alpha"] == fit.alpha and js["B"] == fit.B


def test_group_offset_law_says_why_it_cannot_fit():
    d = grouped_data([576, 576, 960], [3.7, 3.9, 3.3], ["x", "y", "x"])
    assert d.groups == ["x", "y"] and d.g.tolist() == [0, 1, 0]
    fit = fit_group_offsets([576, 576, 960], [3.7, 3.9, 3.3], ["x", "y", "x"])
    assert fit.status == "skipped" and "2 distinct width" in fit.reason
    assert fit.as_dict() == {
        "status": "skipped",
        "reason": fit.reason,
        "n_points": 3,
        "n_widths": 2,
        "groups": ["x", "y"],
    }
    assert "two widths" in fit_group_offsets([576, 640, 960], [3.7, 3.5, 3.3], ["a", "b", "c"]).reason


# ---------------------------------------------------------------- the log-log line and the plain power law
def test_loglog_line_is_ordinary_least_squares():
    """Slope and its standard error as scipy's linregress and the closed form of OLS give them, to 1e-12;
    the plain power law's lmfit fit on the log residual reaches the same exponent to 1e-9."""
    rng = np.random.default_rng(7)
    x = np.repeat(np.geomspace(4, 512, 8), 3)
    y = 2.5 * x**-1.3 * np.exp(rng.normal(0, 0.05, x.size))
    fit = power_law_fit(x, y)
    ref = stats.linregress(np.log(x), np.log(y))
    assert fit["exponent"] == pytest.approx(-ref.slope, rel=1e-12)
    assert fit["stderr"] == pytest.approx(ref.stderr, rel=1e-12)
    lx, ly = np.log(x), np.log(y)
    sxx = np.sum((lx - lx.mean()) ** 2)
    slope = np.sum((lx - lx.mean()) * (ly - ly.mean())) / sxx
    ssr = np.sum((ly - ly.mean() - slope * (lx - lx.mean())) ** 2)
    assert fit["exponent"] == pytest.approx(-slope, rel=1e-12)
    assert fit["stderr"] == pytest.approx(np.sqrt(ssr / (x.size - 2) / sxx), rel=1e-12)
    assert fit["log_c"] == pytest.approx(ly.mean() - slope * lx.mean(), rel=1e-12)
    assert (fit["n_points"], fit["n_x"]) == (24, 8)
    assert LOGLOG.predict(fit, 4.0) == pytest.approx(
        np.exp(fit["log_c"]) * 4.0 ** -fit["exponent"], rel=1e-15
    )
    d = law.FitData(m=x, loss=y)
    res = model.fit(POWER, d)
    assert POWER.values(res, d)["alpha"] == pytest.approx(fit["exponent"], rel=1e-9)
    assert POWER.stderrs(res, d)["alpha"] == pytest.approx(fit["stderr"], rel=1e-6)


def test_loglog_line_names_bad_points_and_needs_two_widths():
    with pytest.raises(ValueError, match=r"positions \[1\]"):
        power_law_fit([1.0, 2.0, 3.0], [1.0, -1.0, 0.5])
    fit = power_law_fit([1.0, 2.0, 4.0, 8.0], [1.0, 0.0, 0.25, 0.125], drop_invalid=True)
    assert fit["n_points"] == 3 and fit["exponent"] == pytest.approx(1.0, rel=1e-12)
    two = power_law_fit([2.0, 4.0], [1.0, 0.5])
    assert two["exponent"] == pytest.approx(1.0, rel=1e-12) and np.isnan(two["stderr"])
    assert np.isnan(power_law_fit([2.0, 2.0], [1.0, 0.5])["exponent"])


def _is_label(node) -> bool:
    """A string, or a tuple of strings: what a name table maps to."""
    if isinstance(node, ast.Tuple):
        return all(_is_label(e) for e in node.elts)
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _exponent_sets(source: str) -> list[int]:
    """Lines of the literals that spell the decomposed law's three exponent names and nothing else: a
    tuple, list or set of them in any order, or a dict from them to names or labels (a dict of other data
    keyed by exponent, like the values a verdict tests, is not a spelling of the names)."""
    names = {"alpha_m", "alpha_l", "alpha_D"}
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            items = node.keys if all(_is_label(v) for v in node.values) else []
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = node.elts
        else:
            continue
        if len(items) == 3 and {getattr(i, "value", None) for i in items} == names:
            lines.append(node.lineno)
    return lines


def test_the_exponent_names_are_written_once():
    """One set of exponent names for the package (``laws.law.EXPONENT_LABELS``); a stage derives its order
    and labels from it."""
    found = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        if lines := _exponent_sets(p.read_text()):
            found[str(p.relative_to(PACKAGE))] = lines
    assert list(found) == ["laws/law.py"] and len(found["laws/law.py"]) == 1, found
    # the scan sees a second spelling, as a tuple in another order or as a table of symbols
    assert len(_exponent_sets('ORDER = ("alpha_D", "alpha_m", "alpha_l")\n')) == 1
    assert len(_exponent_sets('N = {"alpha_l": "a", "alpha_m": "b", "alpha_D": "c"}\n')) == 1
    assert _exponent_sets('T = {"alpha_l": (1.0,), "alpha_m": (1.0,), "alpha_D": ()}\n') == []


def test_power_law_bootstrap_over_seeds_and_lack_of_fit():
    """The exponent's bootstrap over a unit resamples whole units; the lack-of-fit F-test finds a curved
    log-log relation among replicate seeds and passes a straight one."""
    from depthwidth.laws.replicates import lack_of_fit, power_law_bootstrap

    rng = np.random.default_rng(0)
    m = np.repeat([6.0, 9, 14, 21, 32, 48], 5)
    seed = np.tile(np.arange(5), 6)
    offset = rng.normal(0, 0.05, 5)[seed]  # one shift per seed: correlated within a seed
    y = m**-0.8 * np.exp(offset + rng.normal(0, 0.02, m.size))
    b = power_law_bootstrap(m, y, seed, 400, seed=1)
    assert b.shape == (400,) and np.isfinite(b).all()
    assert np.mean(b) == pytest.approx(0.8, abs=0.05) and 0 < np.std(b) < 0.05
    # the same draws with the rows as the unit are a different bootstrap
    assert not np.allclose(b, power_law_bootstrap(m, y, np.arange(m.size), 400, seed=1))
    straight = lack_of_fit(m, y)
    assert straight["lof_p"] > 0.05 and straight["lof_df"] == (4, 24)
    assert straight["means_exponent"] == pytest.approx(0.8, abs=0.05)
    curved = lack_of_fit(m, m**-0.8 * np.exp(0.3 * np.log(m) ** 2 + rng.normal(0, 0.02, m.size)))
    assert curved["lof_p"] < 1e-6
    assert np.isnan(lack_of_fit([6.0, 9.0], [1.0, 0.5])["lof_p"])  # two widths: no test
