"""A power law with one offset per group: L = A / m^α + B_g, A and α shared by every group, one B per group
(the superposition paper's fit of LLM losses against width, one offset per family and corpus).

    fit = fit_group_offsets(widths, losses, groups, unit=models, n_bootstrap=200)
    fit.alpha, fit.alpha_err, fit.A, fit.B["opt / wikitext"], fit.bootstrap  # values, errors, resamples

Fitted by lmfit's Levenberg–Marquardt (``leastsq``) on the linear residual, with m in units of its
geometric mean (so A is of the order of the loss range; A is reported for m in its own units).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import lmfit
import numpy as np
import pandas as pd

from depthwidth.laws.law import FitData
from depthwidth.laws.model import Law, fit
from depthwidth.laws.resample import bootstrap


class GroupOffsetPowerLaw(Law):
    """L = A / m^α + B_g on ``FitData`` m (width), loss and g (group index); starts α = 1 (within [0, 5]),
    A = the loss range (≥ 0), B_g = the group's lowest loss minus half the range."""

    name = "group_offsets"
    params = ("alpha", "A")
    method = "leastsq"
    scale = "linear"

    def parameters(self, d: FitData) -> lmfit.Parameters:
        y = d.loss
        p = lmfit.Parameters()
        p.add("alpha", value=1.0, min=0.0, max=5.0)
        spread = max(float(y.max() - y.min()), 1e-3)
        p.add("A", value=spread, min=0.0)
        for k in range(len(d.groups)):
            p.add(f"B{k}", value=float(y[d.g == k].min()) - 0.5 * spread)
        return p

    def predict(self, v: dict, d: FitData) -> np.ndarray:
        b = np.array([v[f"B{k}"] for k in range(len(d.groups))])
        return v["A"] * d.m ** (-v["alpha"]) + b[d.g]

    def values(self, res, d: FitData) -> dict[str, float]:
        out = super().values(res, d)
        out.update({f"B[{g}]": float(res.params[f"B{k}"].value) for k, g in enumerate(d.groups)})
        return out

    def stderrs(self, res, d: FitData) -> dict[str, float | None]:
        """lmfit's standard errors (None where it could not estimate them)."""
        lm = {"alpha": "alpha", "A": "A", **{f"B[{g}]": f"B{k}" for k, g in enumerate(d.groups)}}
        return {
            k: (None if res.params[p].stderr is None else float(res.params[p].stderr)) for k, p in lm.items()
        }


GROUP_OFFSETS = GroupOffsetPowerLaw()


def grouped_data(widths, losses, groups, unit=None) -> FitData:
    """``FitData`` of the law: m, loss, the group index of each row (groups in order of first appearance)
    and the resampling unit's label per row (``unit``, optional)."""
    m = np.asarray(widths, dtype=np.float64)
    y = np.asarray(losses, dtype=np.float64)
    g = np.asarray([str(x) for x in groups])
    names = list(dict.fromkeys(g))
    idx = np.array([names.index(k) for k in g])
    labels = None if unit is None else np.asarray([str(u) for u in unit])
    return FitData(m=m, loss=y, g=idx, groups=names, unit=labels)


def why_not(d: FitData, min_widths: int = 3) -> str | None:
    """Why ``d`` cannot determine α (None when it can): fewer than ``min_widths`` distinct widths, no group
    with two widths, or no more points than parameters."""
    n_widths = len(np.unique(d.m))
    widths_per_group = {k: len(np.unique(d.m[d.g == i])) for i, k in enumerate(d.groups)}
    n_params = 2 + len(d.groups)
    if n_widths < min_widths:
        listed = ", ".join(str(int(x)) for x in np.unique(d.m))
        return (
            f"only {n_widths} distinct width{'' if n_widths == 1 else 's'} ({listed}); the width exponent "
            f"needs at least {min_widths}"
        )
    if max(widths_per_group.values()) < 2:
        return "no group (family, corpus) has two widths, so every offset B_g absorbs its point"
    if len(d) <= n_params:
        return f"{len(d)} points for {n_params} parameters"
    return None


@dataclass
class GroupOffsetFit:
    """A fit of L = A / m^α + B_g: ``status`` "ok" with the values and their standard errors (lmfit's
    covariance), or "skipped" with a ``reason``; ``bootstrap``: one row per resample (alpha, A, B[<group>]
    (NaN where the resample has no row of the group), converged) over ``bootstrap_unit``."""

    status: str
    n_points: int
    n_widths: int
    groups: list[str]
    reason: str | None = None
    alpha: float = float("nan")
    alpha_err: float | None = None
    A: float = float("nan")
    A_err: float | None = None
    B: dict = field(default_factory=dict)
    B_err: dict = field(default_factory=dict)
    redchi: float = float("nan")
    width_scale: float = float("nan")
    success: bool = False
    bootstrap: pd.DataFrame | None = None
    bootstrap_unit: str | None = None

    def predict(self, m, group: str) -> np.ndarray:
        """L(m) = A / m^α + B of ``group``."""
        return self.A * np.asarray(m, dtype=np.float64) ** (-self.alpha) + self.B[group]

    def as_dict(self) -> dict:
        """JSON form: status, n_points, n_widths, groups, then reason (skipped) or the values, errors,
        redchi, width_scale and success (ok)."""
        base = {
            "status": self.status,
            "n_points": self.n_points,
            "n_widths": self.n_widths,
            "groups": self.groups,
        }
        if self.status != "ok":
            return {
                "status": self.status,
                "reason": self.reason,
                **{k: v for k, v in base.items() if k != "status"},
            }
        return {
            **base,
            "alpha": self.alpha,
            "alpha_err": self.alpha_err,
            "A": self.A,
            "A_err": self.A_err,
            "B": self.B,
            "B_err": self.B_err,
            "redchi": self.redchi,
            "width_scale": self.width_scale,
            "success": self.success,
        }


def _fit(d: FitData, min_widths: int) -> GroupOffsetFit:
    base = {"n_points": len(d), "n_widths": int(len(np.unique(d.m))), "groups": list(d.groups)}
    reason = why_not(d, min_widths)
    if reason:
        return GroupOffsetFit("skipped", reason=reason, **base)
    scale = float(np.exp(np.mean(np.log(d.m))))  # fit in m / m̄ so A is of order the loss range
    scaled = FitData(m=d.m / scale, loss=d.loss, g=d.g, groups=d.groups, units={"m": scale}, unit=d.unit)
    res = fit(GROUP_OFFSETS, scaled)
    v, se = GROUP_OFFSETS.values(res, scaled), GROUP_OFFSETS.stderrs(res, scaled)
    # A refers to m in units of `scale`; convert back to L = A' / m^α with A' = A · scale^α
    alpha = v["alpha"]
    return GroupOffsetFit(
        "ok",
        **base,
        alpha=alpha,
        alpha_err=se["alpha"],
        A=float(v["A"] * scale**alpha),
        A_err=float(se["A"] * scale**alpha) if se["A"] is not None else None,
        B={g: v[f"B[{g}]"] for g in d.groups},
        B_err={g: se[f"B[{g}]"] for g in d.groups},
        redchi=float(res.redchi),
        width_scale=scale,
        success=bool(res.success),
    )


def _present(d: FitData) -> FitData:
    """``d`` with its groups renumbered to those that have rows (a resample may leave a group out)."""
    keep = [k for k in range(len(d.groups)) if (d.g == k).any()]
    new = np.full(len(d.groups), -1)
    new[keep] = np.arange(len(keep))
    return FitData(m=d.m, loss=d.loss, g=new[d.g], groups=[d.groups[k] for k in keep], unit=d.unit)


def fit_group_offsets(
    widths,
    losses,
    groups,
    *,
    min_widths: int = 3,
    unit=None,
    unit_name: str = "models",
    n_bootstrap: int = 0,
    seed: int = 0,
) -> GroupOffsetFit:
    """Fit L = A / m^α + B_g to ``widths`` (n,), ``losses`` (n,) and ``groups`` (n,) labels (e.g.
    "opt / wikitext"). With ``n_bootstrap`` > 0, refit on that many resamples over ``unit`` (a label per
    row, e.g. the model; None: rows), named ``unit_name``; a resample that cannot determine α is skipped.
    """
    d = grouped_data(widths, losses, groups, unit)
    out = _fit(d, min_widths)
    if out.status == "ok" and n_bootstrap > 0:

        def refit(db: FitData, b: int) -> dict | None:
            f = _fit(_present(db), min_widths)
            if f.status != "ok":
                return None
            return {
                "alpha": f.alpha,
                "A": f.A,
                **{f"B[{g}]": f.B.get(g, np.nan) for g in d.groups},
                "converged": f.success,
            }

        out.bootstrap = bootstrap(d, refit, n_bootstrap, seed, unit_name if unit is not None else "rows")
        out.bootstrap_unit = out.bootstrap.attrs["unit"]
    return out
