"""The sums of power laws the fitting layer fits on the log residual, and the data every law is fitted to:
``PowerLaw`` (a sum of power laws plus an offset; ``DECOMPOSED`` is the decomposed law
L = c_m/m^α_m + c_ℓ/ℓ^α_ℓ + c_D/D^α_D + L0, ``CHINCHILLA`` the Chinchilla law), ``FitData`` (the one data
class of every fit of the layer) and the point selection. The fitting itself is ``lawfit``'s.

Units follow Liu et al. (2026): m = d_model · width_scale, ℓ = n_layers · depth_scale (100 by default),
D = tokens · tokens_scale (1e-6 by default).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

# Bounds of the fitted exponents α_m, α_ℓ, α_D.
ALPHA_BOUNDS = (1e-3, 10.0)
# Liu et al.'s starting point (their Adam fit starts here; lmfit's first start too).
PAPER_INIT = {
    "c_m": 200.0,
    "alpha_m": 1.0,
    "c_l": 200.0,
    "alpha_l": 1.0,
    "c_D": 10.0,
    "alpha_D": 0.33,
    "L0": 1.69,
}


@dataclass(frozen=True)
class PowerLaw:
    """A law L = Σ_i c_i · x_i^(−α_i) + offset. ``terms``: (coefficient, exponent, variable) per term, the
    variable a key of :meth:`FitData.variables`; ``offset``: the name of the constant (one per group where
    a fit asks for it). The fitting core (``depthwidth.laws.lawfit``) fits any such law: coefficients
    as logs, exponents within ``ALPHA_BOUNDS``, the offset between 0 and the lowest loss."""

    name: str
    terms: tuple[tuple[str, str, str], ...]
    offset: str = "L0"

    @property
    def params(self) -> tuple[str, ...]:
        """Parameter names in output order: coefficient and exponent of each term, then the offset."""
        return tuple(n for c, a, _ in self.terms for n in (c, a)) + (self.offset,)

    @property
    def coefficients(self) -> tuple[str, ...]:
        return tuple(c for c, _, _ in self.terms)

    @property
    def exponents(self) -> tuple[str, ...]:
        return tuple(a for _, a, _ in self.terms)

    def term_values(self, v, x: dict) -> list[np.ndarray]:
        """c_i · x_i^(−α_i) per term; ``v`` maps coefficient and exponent names to values, ``x`` variable
        names to arrays."""
        return [v[c] * x[var] ** (-v[a]) for c, a, var in self.terms]

    def predict(self, v, x: dict, offset) -> np.ndarray:
        """L̂ at the variables ``x`` (``offset`` a number, or an array: one offset per row)."""
        return sum(self.term_values(v, x)) + offset


# L = c_m/m^α_m + c_ℓ/ℓ^α_ℓ + c_D/D^α_D + L0 (Liu et al. 2026).
DECOMPOSED = PowerLaw(
    "decomposed", (("c_m", "alpha_m", "m"), ("c_l", "alpha_l", "ell"), ("c_D", "alpha_D", "D"))
)
# Its parameters in output order: c_m, alpha_m, c_l, alpha_l, c_D, alpha_D, L0.
PARAMS = DECOMPOSED.params
# Its exponents (alpha_m, alpha_l, alpha_D), and as the report lists them: the depth exponent first, each
# with its symbol and what it scales. The one set of exponent names for every stage that fits this law.
EXPONENTS = DECOMPOSED.exponents
EXPONENT_LABELS = {"alpha_l": ("α_ℓ", "depth"), "alpha_m": ("α_m", "width"), "alpha_D": ("α_D", "data")}
# L = A/N^α + B/D^β + E (Hoffmann et al. 2022, approach 3): N parameters, D tokens.
CHINCHILLA = PowerLaw("chinchilla", (("A", "alpha", "N"), ("B", "beta", "D")), offset="E")
# Hoffmann et al.'s estimates (N in parameters, D in tokens): the Chinchilla law's first start.
HOFFMANN_INIT = {"A": 406.4, "alpha": 0.34, "B": 410.7, "beta": 0.28, "E": 1.69}


def decomposed_law(m, ell, D, c_m, alpha_m, c_l, alpha_l, c_D, alpha_D, L0):
    """Loss (nats/token) of the decomposed law; m, ell, D already in fit units (``L0`` may be an array:
    one offset per row)."""
    v = {"c_m": c_m, "alpha_m": alpha_m, "c_l": c_l, "alpha_l": alpha_l, "c_D": c_D, "alpha_D": alpha_D}
    return DECOMPOSED.predict(v, {"m": m, "ell": ell, "D": D}, L0)


@dataclass
class FitData:
    """The one data class of every fit: the law's variables by name, every array of shape (n,): m (width),
    ell (depth), D (tokens) and N (parameters) where a law uses them (None where not), ``loss`` the fitted
    quantity (nats/token for the losses), ``g`` the group of each row (0 … G−1, default all 0) with
    ``groups`` their names, ``units`` the value of each original column that is 1 in fit units (recorded,
    not applied) and ``unit`` an optional label per row naming the resampling unit of a bootstrap (a
    model, a seed, a run; None: each row is its own unit)."""

    m: np.ndarray | None = None
    ell: np.ndarray | None = None
    D: np.ndarray | None = None
    loss: np.ndarray | None = None
    g: np.ndarray | None = None
    groups: list[str] = field(default_factory=lambda: ["all"])
    units: dict = field(default_factory=dict)
    N: np.ndarray | None = None
    unit: np.ndarray | None = None

    def __post_init__(self):
        if self.loss is None:
            raise ValueError("FitData needs the fitted values (loss)")
        if self.g is None:
            self.g = np.zeros(len(self.loss), int)

    def take(self, idx) -> "FitData":
        def pick(a):
            return None if a is None else a[idx]

        return FitData(
            pick(self.m),
            pick(self.ell),
            pick(self.D),
            self.loss[idx],
            self.g[idx],
            self.groups,
            self.units,
            pick(self.N),
            pick(self.unit),
        )

    def variables(self) -> dict[str, np.ndarray]:
        """The law's variables by name (the ``terms`` of a :class:`PowerLaw` refer to these keys): those of
        m, ell, D and N the data have."""
        names = {"m": self.m, "ell": self.ell, "D": self.D, "N": self.N}
        return {k: v for k, v in names.items() if v is not None}

    def __len__(self) -> int:
        return len(self.loss)


def kept_mask(loss: np.ndarray, drop_highest: int) -> np.ndarray:
    """Rows Liu et al. keep when they leave out the ``drop_highest`` = k highest-loss points: loss strictly
    below the k-th largest (so ties at the cut go too; k = 0 keeps every row)."""
    loss = np.asarray(loss, float)
    if drop_highest <= 0:
        return np.ones(len(loss), bool)
    if drop_highest >= len(loss):
        raise ValueError(f"dropping the {drop_highest} highest-loss points leaves none (have {len(loss)})")
    return loss < np.sort(loss)[-drop_highest]


# The config keys that put a run's width, depth and tokens in fit units (``select_points``).
SCALE_KEYS = ("width_scale", "depth_scale", "tokens_scale")


def unit_scales(cfg: dict) -> dict:
    """``select_points``' unit keywords (``SCALE_KEYS``) from a fit's settings."""
    return {k: cfg[k] for k in SCALE_KEYS}


def select_points(
    points: pd.DataFrame,
    drop_highest: int,
    width_scale: float,
    depth_scale: float,
    tokens_scale: float,
    depth_offset: float = 0.0,
) -> FitData:
    """Drop the ``drop_highest`` highest-loss points (``kept_mask``) and convert to fit units.
    ``depth_offset`` = −2 gives the variant without embedding and head layers."""
    loss = points["loss"].to_numpy(float)
    keep = kept_mask(loss, drop_highest)
    layers = points["n_layers"].to_numpy(float)[keep] + depth_offset
    if (layers <= 0).any():
        raise ValueError(f"depth offset {depth_offset} makes some depths non-positive")
    return FitData(
        m=points["d_model"].to_numpy(float)[keep] * width_scale,
        ell=layers * depth_scale,
        D=points["tokens"].to_numpy(float)[keep] * tokens_scale,
        loss=loss[keep],
    )
