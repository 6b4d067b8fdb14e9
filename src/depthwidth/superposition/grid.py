"""The superposition grid's names: the feature-frequency laws (the ``dist`` wildcard) and the cell files'
layout (``CELL_DIR``, ``parse_cell_path``). Torch-free: Snakemake imports this at parse time, and the
trainer, tables and section read cell paths with it (none of them imports the rules' ``pipeline``)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

# Largest exponent α of a power law p_i ∝ i^-α (the same bound as superposition.alphas in the schema).
# The paper uses α in [0, 2] (exp-10: 1 + linspace(0, 1, 9), exp-10-3: 1 + linspace(-1, 0, 9)). The
# sampler draws from float32 probabilities, whose smallest positive value is 2^-149 ≈ 1.4e-45:
# p_n/p_1 = n^-α stays above it for n = 10240 (exp-17) up to α ≈ 11.2 (10240^-10 ≈ 1e-40), in float64 up
# to α ≈ 77. A larger exponent is a typo (power-a1000 for power-a1.000) and makes every feature but the
# first never active.
ALPHA_MAX = 10.0
# ln of the smallest positive float32 (2^-149): a law whose p_n/p_1 falls below it has features with p_i = 0
LN_FLOAT32_TINY = -149 * math.log(2.0)

# Distribution names used as a wildcard in output paths, e.g. "power-a1.5", "exponential-k400",
# "linear", with an optional activation-density suffix "-s0.25".
_DIST_RE = re.compile(
    r"^(?:power-a(?P<alpha>\d+(?:\.\d+)?)|exponential-k(?P<k>\d+(?:\.\d+)?)|(?P<linear>linear))"
    r"(?:-s(?P<s>\d+(?:\.\d+)?))?$"
)


@dataclass(frozen=True)
class Distribution:
    """A feature-frequency law. ``law`` is 'power' (p_i ∝ i^-alpha), 'exponential' (p_i ∝ e^{-(i-1)/k})
    or 'linear' (p_i ∝ (n - i + 1)/n), i = 1..n; ``density`` s rescales p ← p·(1 + s(1/p_1 − 1))."""

    law: str
    alpha: float | None = None
    k: float | None = None
    density: float = 0.0

    @property
    def name(self) -> str:
        base = {
            "power": f"power-a{self.alpha:g}",
            "exponential": f"exponential-k{self.k:g}",
            "linear": "linear",
        }
        return base[self.law] + (f"-s{self.density:g}" if self.density else "")


def parse_distribution(name: str) -> Distribution:
    """Parse a distribution name ('power-a1.5', 'exponential-k400', 'linear', '...-s0.5')."""
    mt = _DIST_RE.match(name)
    if mt is None:
        raise ValueError(
            f"unknown feature distribution {name!r}: use 'power-a<alpha>' (e.g. power-a1.5), "
            "'exponential-k<k>' (e.g. exponential-k400) or 'linear', optionally followed by "
            "'-s<density>' with density in [0, 1] (e.g. power-a1-s0.5)"
        )
    s = float(mt["s"]) if mt["s"] else 0.0
    if not 0.0 <= s <= 1.0:
        raise ValueError(f"activation density s={s} in {name!r} must lie in [0, 1]")
    if mt["alpha"] is not None:
        alpha = float(mt["alpha"])
        if alpha > ALPHA_MAX:
            raise ValueError(
                f"power-law exponent α={alpha:g} in {name!r} is outside [0, {ALPHA_MAX:g}] "
                f"(the paper uses 0 to 2; p_i ∝ i^-{alpha:g} leaves only the first features ever active). "
                f"Fix: give an exponent from 0 to {ALPHA_MAX:g} with its decimal point, e.g. power-a1.5 for α = 1.5"
            )
        return Distribution("power", alpha=alpha, density=s)
    if mt["k"] is not None:
        if float(mt["k"]) <= 0:
            raise ValueError(f"exponential scale k in {name!r} must be > 0")
        return Distribution("exponential", k=float(mt["k"]), density=s)
    return Distribution("linear", density=s)


def log_smallest_ratio(dist: Distribution, n: int) -> float:
    """ln(p_n / p_1) of ``dist`` over n features (the density rescaling only raises it)."""
    if dist.law == "power":
        return -dist.alpha * math.log(n)
    if dist.law == "exponential":
        return -(n - 1) / dist.k
    return -math.log(n)


def law_error(name: str, n: int) -> str | None:
    """Why the law ``name`` cannot be used with n features, or None: a name that does not parse, a
    parameter out of range, or a law whose rarest feature has p_i = 0 in float32 (where the sampler draws)."""
    try:
        dist = parse_distribution(name)
    except ValueError as e:
        return str(e)
    ln_ratio = log_smallest_ratio(dist, n)
    if ln_ratio < LN_FLOAT32_TINY:
        if dist.law == "power":
            fix = f"use α ≤ {-LN_FLOAT32_TINY / math.log(n):.3g} for n_features={n}"
        else:
            fix = f"use k ≥ {(n - 1) / -LN_FLOAT32_TINY:.3g} for n_features={n}"
        return (
            f"{name!r} gives p_n/p_1 = e^{ln_ratio:.4g} with n_features={n}, below the smallest float32 "
            f"(e^{LN_FLOAT32_TINY:.4g}): the rarest features would have p_i = 0 and never be active. Fix: {fix}"
        )
    return None


def config_errors(section: dict) -> list[tuple[tuple, str]]:
    """The superposition config section's own check (named by ``check`` in its schema): every frequency law
    of ``alphas`` and ``distributions`` judged by :func:`law_error` with the section's ``n_features``, as
    (key path, message) pairs. Values of the wrong type are left to the items' own schema."""
    n = section.get("n_features")
    n = n if isinstance(n, int) and not isinstance(n, bool) and n >= 2 else 2
    out = []
    for i, a in enumerate(section.get("alphas") or []):
        number = isinstance(a, (int, float)) and not isinstance(a, bool) and math.isfinite(a)
        if number and 0 <= a <= ALPHA_MAX and (msg := law_error(f"power-a{a:g}", n)):
            out.append((("alphas", i), msg))
    for i, d in enumerate(section.get("distributions") or []):
        if isinstance(d, str) and (msg := law_error(d, n)):
            out.append((("distributions", i), msg))
    return out


CELL_DIR = "results/superposition/cells/{dist}/n{n}/gamma{gamma}/m{m}/seed{seed}"


def fmt_num(x: float) -> str:
    """A grid value as it appears in paths: '-1', '0.5', '-0.777778' (6 significant digits)."""
    return f"{float(x):.6g}"


def parse_cell_path(path: str | Path) -> dict:
    """The cell of a cell file path: {'dist', 'n', 'gamma', 'm', 'seed'} (typed), the one parser of
    CELL_DIR."""
    parts = Path(path).parts
    i = parts.index("cells")
    dist, n, gamma, m, seed = parts[i + 1 : i + 6]
    return {
        "dist": dist,
        "n": int(n.removeprefix("n")),
        "gamma": float(gamma.removeprefix("gamma")),
        "m": int(m.removeprefix("m")),
        "seed": int(seed.removeprefix("seed")),
    }


LAW_JOB_CHECKPOINT = "results/superposition/jobs/{dist}/n{n}/seed{seed}/checkpoint.pt"


def alpha_of(dist: str) -> float | None:
    """α of a plain power law p_i ∝ i^-α; None for every other law."""
    d = parse_distribution(dist)
    return d.alpha if d.law == "power" and not d.density else None
