"""Names of the feature-frequency laws (the ``dist`` wildcard). Torch-free: Snakemake imports this
at parse time."""

from __future__ import annotations

import re
from dataclasses import dataclass

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
        return Distribution("power", alpha=float(mt["alpha"]), density=s)
    if mt["k"] is not None:
        if float(mt["k"]) <= 0:
            raise ValueError(f"exponential scale k in {name!r} must be > 0")
        return Distribution("exponential", k=float(mt["k"]), density=s)
    return Distribution("linear", density=s)
