"""The one fitting core of the stage: a :class:`law.PowerLaw` (by default the decomposed law
L = c_m/m^α_m + c_ℓ/ℓ^α_ℓ + c_D/D^α_D + L0) fitted to :class:`law.FitData` by least squares on the log
residual log L − log L̂ with lmfit (scipy's trust-region reflective method), from several starts.

Every fit of the stage goes through here: the main fit and its variants (``fit``), the dropped-points
scan (``scan``), the sweeps and their profiles (``identify``). What differs between them is a
:class:`LawFit`: the law, one offset per group or one for all, parameters held fixed, how starts are
drawn, and options passed on to scipy's ``least_squares`` (``loss``, ``f_scale``: a robust loss). One
parameter builder with one set of bounds, one residual with its analytic Jacobian, one bootstrap and one
held-out check serve them all.

Parameters in lmfit: each coefficient c as ``log_c`` within ``LOG_C_BOUNDS`` (c = exp(log c), an lmfit
expression), each exponent within ``law.ALPHA_BOUNDS``, the offset as ``L0`` (or ``L0_<i>`` per group,
reported as ``L0[<group>]``) within [0, lowest loss of its rows].
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import lmfit
import numpy as np
import pandas as pd

from depthwidth.laws.law import (
    ALPHA_BOUNDS,
    DECOMPOSED,
    HOFFMANN_INIT,
    PAPER_INIT,
    FitData,
    PowerLaw,
)
from depthwidth.laws.model import NON_FINITE_RESIDUAL, log_residual  # noqa: F401 (NON_FINITE_RESIDUAL: part of the API)
from depthwidth.logs import Progress

# Bounds of each fitted log coefficient ln c. e^−20 ≈ 2e−9 of a loss near 2 nats is no term at all: the
# lower end only stops a term that the data do not need from running to c = 0 (on the default run only a
# sweep's runaway term, α at its bound of 10, comes near it). Trust-region steps scale with the distance to
# a bound, so moving it moves where a fit stops inside a flat direction.
LOG_C_BOUNDS = (-20.0, 30.0)
# The objectives a fit can minimise over the log residuals r (config key ``loss``): ``squared`` Σ r²,
# ``huber`` Σ Huber_δ(r) (½r² for |r| ≤ δ, δ(|r| − δ/2) beyond: Hoffmann et al.'s and Besiroglu et al.'s).
LOSSES = ("squared", "huber")


def loss_options(loss: str, huber_delta: float = 1e-3) -> dict:
    """The ``LawFit.least_squares`` options of a configured loss: none for ``squared``; for ``huber``,
    scipy's ``loss="huber"`` with ``f_scale`` = δ, whose cost ½·δ²·ρ(r²/δ²) is exactly Σ Huber_δ(r)
    (scipy applies the loss to the residual vector, so the residual and its Jacobian stay the same)."""
    if loss == "squared":
        return {}
    if loss == "huber":
        if not huber_delta > 0:
            raise ValueError(f"huber_delta must be positive (got {huber_delta})")
        return {"loss": "huber", "f_scale": float(huber_delta)}
    raise ValueError(f"unknown loss '{loss}': use one of {list(LOSSES)}")


def huber(r: np.ndarray, delta: float) -> np.ndarray:
    """Huber_δ(r) per element: ½r² for |r| ≤ δ, δ(|r| − δ/2) beyond."""
    a = np.abs(r)
    return np.where(a <= delta, 0.5 * r**2, delta * (a - 0.5 * delta))


def objective(r: np.ndarray, least_squares: dict) -> float:
    """The objective a fit with these ``least_squares`` options minimises at the residuals ``r``: Σ r² for
    the plain sum of squares, Σ Huber_δ(r) for ``loss="huber"`` (δ = ``f_scale``)."""
    loss = least_squares.get("loss", "linear")
    if loss == "linear":
        return float(np.sum(r**2))
    if loss == "huber":
        return float(np.sum(huber(r, least_squares.get("f_scale", 1.0))))
    raise ValueError(f"no objective for least_squares loss '{loss}' (have linear, huber)")


# ---------------------------------------------------------------- starts
def paper_starts(d: FitData, n: int, rng: np.random.Generator) -> list[dict]:
    """Starts in the paper's units: Liu et al.'s starting point, then ``n`` − 1 random ones (exponents
    0.1 … 3, coefficients 1 … 1e4, L0 0.5 … 2, log-uniform where it spans decades). The main fit's."""
    starts = [dict(PAPER_INIT)]
    for _ in range(max(n - 1, 0)):
        s = dict(PAPER_INIT)
        for k in DECOMPOSED.exponents:
            s[k] = float(np.exp(rng.uniform(np.log(0.1), np.log(3.0))))
        for k in DECOMPOSED.coefficients:
            s[k] = float(np.exp(rng.uniform(np.log(1.0), np.log(1e4))))
        s["L0"] = float(rng.uniform(0.5, 2.0))
        starts.append(s)
    return starts


def unit_starts(d: FitData, n: int, rng: np.random.Generator) -> list[dict]:
    """Starts in units where every variable is about 1 (a sweep's geometric-mean units): coefficients a
    fraction of the loss, offsets below its minimum. The sweeps'."""
    lmin = float(d.loss.min())
    starts = [
        {"c_m": 0.3, "alpha_m": 0.5, "c_l": 0.3, "alpha_l": 1.0, "c_D": 0.3, "alpha_D": 0.3, "L0": 0.6 * lmin}
    ]
    for _ in range(max(n - 1, 0)):
        s = {c: float(np.exp(rng.uniform(np.log(0.01), np.log(3.0)))) for c in DECOMPOSED.coefficients}
        s.update({a: float(np.exp(rng.uniform(np.log(0.1), np.log(3.0)))) for a in DECOMPOSED.exponents})
        s["L0"] = float(rng.uniform(0.1, 0.95) * lmin)
        starts.append(s)
    return starts


def chinchilla_starts(d: FitData, n: int, rng: np.random.Generator) -> list[dict]:
    """Starts of the Chinchilla law with N and D in parameters and tokens: Hoffmann et al.'s estimates,
    then ``n`` − 1 random ones over Besiroglu et al.'s grid ranges (α, β 0.1 … 2, ln A, ln B 0 … 25,
    E 0.1 … 0.95 of the lowest loss)."""
    lmin = float(d.loss.min())
    starts = [{**HOFFMANN_INIT, "E": min(HOFFMANN_INIT["E"], 0.95 * lmin)}]
    for _ in range(max(n - 1, 0)):
        s = {k: float(rng.uniform(0.1, 2.0)) for k in ("alpha", "beta")}
        s.update({k: float(np.exp(rng.uniform(0.0, 25.0))) for k in ("A", "B")})
        s["E"] = float(rng.uniform(0.1, 0.95) * lmin)
        starts.append(s)
    return starts


def chinchilla_unit_starts(d: FitData, n: int, rng: np.random.Generator) -> list[dict]:
    """Starts of the Chinchilla law in units where N and D are about 1 (a sweep's): coefficients a
    fraction of the loss, offsets below its minimum."""
    lmin = float(d.loss.min())
    starts = [{"A": 0.3, "alpha": 0.3, "B": 0.3, "beta": 0.3, "E": 0.6 * lmin}]
    for _ in range(max(n - 1, 0)):
        s = {c: float(np.exp(rng.uniform(np.log(0.01), np.log(3.0)))) for c in ("A", "B")}
        s.update({a: float(np.exp(rng.uniform(np.log(0.05), np.log(2.0)))) for a in ("alpha", "beta")})
        s["E"] = float(rng.uniform(0.1, 0.95) * lmin)
        starts.append(s)
    return starts


# ---------------------------------------------------------------- the model
@dataclass(frozen=True)
class LawFit:
    """How a law is fitted: ``law``; ``group_offsets`` (one offset per group of ``FitData.g``, else one);
    ``fixed`` (parameter → value held, by model name: ``c_m``, ``alpha_l``, ``L0`` or ``L0[<group>]``);
    ``starts`` (``(data, n, rng) → list of start dicts``, see ``paper_starts``, ``unit_starts``);
    ``least_squares``: keyword arguments passed through lmfit to scipy's ``least_squares`` (e.g.
    ``loss``, ``f_scale``), none by default (the plain sum of squares)."""

    law: PowerLaw = DECOMPOSED
    group_offsets: bool = False
    fixed: dict = field(default_factory=dict)
    starts: Callable = unit_starts
    least_squares: dict = field(default_factory=dict)

    def holding(self, **values) -> "LawFit":
        """The same fit with ``values`` held fixed as well."""
        return replace(self, fixed={**self.fixed, **values})

    def offsets(self, d: FitData) -> list[tuple[str, str]]:
        """(model name, lmfit name) of each offset: ("L0", "L0") or ("L0[<group>]", "L0_<index>")."""
        o = self.law.offset
        return [(f"{o}[{g}]", f"{o}_{i}") for i, g in enumerate(d.groups)] if self.group_offsets else [(o, o)]

    def params(self, d: FitData, init: dict) -> lmfit.Parameters:
        """lmfit parameters started at ``init`` (model names; ``fixed`` overrides and is held), with the
        core's bounds (module docstring). An offset starts at ``init``'s value for it, else ``init``'s
        shared offset, else half the lowest loss, and below 0.99 × the lowest loss of its rows."""
        init = {**init, **self.fixed}
        p = lmfit.Parameters()
        for c in self.law.coefficients:
            # c itself is exp(log c), computed where it is read (lmfit_values, values, stderrs): as an
            # lmfit expression it would be re-evaluated by lmfit's interpreter at every residual call
            p.add(f"log_{c}", value=float(np.log(init[c])), min=LOG_C_BOUNDS[0], max=LOG_C_BOUNDS[1])
        for a in self.law.exponents:
            p.add(a, value=float(np.clip(init[a], *ALPHA_BOUNDS)), min=ALPHA_BOUNDS[0], max=ALPHA_BOUNDS[1])
        for i, (name, lm) in enumerate(self.offsets(d)):
            lmin = float(d.loss[d.g == i].min()) if self.group_offsets else float(d.loss.min())
            start = init.get(name, init.get(self.law.offset, 0.5 * lmin))
            p.add(lm, value=float(np.clip(start, 0.0, 0.99 * lmin)), min=0.0, max=lmin)
        lm_of = dict(self.offsets(d))
        for k, v in self.fixed.items():
            if k in self.law.coefficients:
                p[f"log_{k}"].set(value=float(np.log(v)), vary=False)
            elif k in self.law.exponents:
                p[k].set(value=float(v), vary=False)
            elif k in lm_of:
                p[lm_of[k]].set(value=float(v), vary=False)
            else:
                raise KeyError(
                    f"cannot fix '{k}': the law's parameters are {list(self.law.params)} and its offsets "
                    f"{list(lm_of)}"
                )
        return p

    def lmfit_values(self, p: lmfit.Parameters) -> dict[str, float]:
        """Every value by lmfit name, with c = exp(log c) (numpy's exp) beside log c."""
        v = {k: q.value for k, q in p.items()}
        for c in self.law.coefficients:
            v[c] = np.exp(v[f"log_{c}"])
        return v

    def predict(self, v: dict, d: FitData) -> np.ndarray:
        """L̂ at every row of ``d`` from values by lmfit name (each row gets its group's offset)."""
        offs = np.array([v[lm] for _, lm in self.offsets(d)])
        return self.law.predict(v, d.variables(), offs[d.g] if self.group_offsets else offs[0])

    def residual(self, p: lmfit.Parameters, d: FitData) -> np.ndarray:
        """log L − log L̂ per row (``NON_FINITE_RESIDUAL`` where L̂ is not positive and finite)."""
        return log_residual(d.loss, self.predict(self.lmfit_values(p), d))

    def jacobian(self, p: lmfit.Parameters, d: FitData) -> np.ndarray:
        """The analytic Jacobian of :meth:`residual` (``log_residual_jacobian``)."""
        v = self.lmfit_values(p)
        rows = {lm: (d.g == i) if self.group_offsets else 1.0 for i, (_, lm) in enumerate(self.offsets(d))}
        return log_residual_jacobian(p, self.law, v, d.variables(), self.predict(v, d), rows)

    def values(self, res, d: FitData) -> dict[str, float]:
        """Parameter values of a fit by model name, in the law's order (offsets as L0 or L0[<group>])."""
        v = {
            k: float(np.exp(res.params[f"log_{k}"].value))
            if k in self.law.coefficients
            else float(res.params[k].value)
            for k in self.law.params
            if k != self.law.offset
        }
        for name, lm in self.offsets(d):
            v[name] = float(res.params[lm].value)
        return v

    def stderrs(self, res, d: FitData) -> dict[str, float | None]:
        """lmfit's standard errors from the covariance; None where it could not be estimated or the
        parameter is fixed. A coefficient's error is that of c = exp(log c) to first order, c·SE(log c)
        (lmfit's propagation of an expression parameter gives the same). With the Huber loss, the sandwich
        covariance instead (``huber_stderrs``); lmfit's is never used there: it scales the loss-weighted
        Jacobian by Σ r²/(n − p), which the outliers the loss discounts dominate."""
        names = [(k, k) for k in self.law.params if k != self.law.offset] + self.offsets(d)
        if self.least_squares.get("loss") == "huber":
            return huber_stderrs(self, res, d, names)
        out = {}
        for name, lm in names:
            coef = lm in self.law.coefficients
            q = res.params[f"log_{lm}" if coef else lm]
            ok = q.vary and q.stderr is not None and np.isfinite(q.stderr)
            out[name] = (
                (float(np.exp(q.value)) * float(q.stderr) if coef else float(q.stderr)) if ok else None
            )
        return out


# Closed forms of a Huber fit's covariance (``huber_covariance``): ``sandwich`` (the default) and
# ``huber_k2`` (Huber's 1981 formula with his K² correction, which assumes the points inside δ are spread
# like the whole design and the errors are independent of it).
HUBER_COVARIANCES = ("sandwich", "huber_k2")


def density_bandwidth(r: np.ndarray, delta: float) -> float:
    """Half-width h of the uniform window that estimates the density of the residuals at 0 in the
    sandwich: Silverman's rule 0.9·min(sd, IQR/1.349)·n^(−1/5), never below δ."""
    q75, q25 = np.percentile(r, [75, 25])
    spread = min(float(np.std(r, ddof=1)), float(q75 - q25) / 1.349)
    return max(float(delta), 0.9 * spread * len(r) ** -0.2)


def mean_psi_prime(r: np.ndarray, delta: float) -> float:
    """mean ψ′ of Huber_δ at the residuals ``r``, smoothed as in the sandwich (``density_bandwidth``):
    (δ/h)·share of |r| ≤ h, which is the share inside δ for h = δ and stays estimable when few are."""
    h = density_bandwidth(r, delta)
    return delta / h * float(np.mean(np.abs(r) <= h))


def huber_covariance(r: np.ndarray, J: np.ndarray, delta: float, form: str = "sandwich") -> np.ndarray | None:
    """Closed-form covariance of a Huber_δ M-estimate with residuals ``r`` and residual Jacobian ``J``
    (n, p) at the fit; None where no residual lies inside the window.

    ``sandwich``: n/(n − p) · A⁻¹ B A⁻¹ with B = Σ ψ(r_i)² J_iJ_iᵀ (ψ = clip(r, −δ, δ)) and
    A = Σ ψ′(r_i) J_iJ_iᵀ, ψ′ smoothed over the window |r| ≤ h (``density_bandwidth``): A = (δ/h)·Σ_{|r_i|≤h}
    J_iJ_iᵀ, which is Σ ψ′ J_iJ_iᵀ for h = δ. Only the points inside the window enter A, so A does not
    assume they are spread like the whole design; B does not assume the residuals are independent of it.
    ``huber_k2``: Huber's K² · (Σ ψ²/(n − p)) / (mean ψ′)² · (JᵀJ)⁻¹, K = 1 + (p/n)·var ψ′/(mean ψ′)²
    (Huber 1981, §7.6)."""
    if form not in HUBER_COVARIANCES:
        raise ValueError(f"unknown Huber covariance '{form}': use one of {list(HUBER_COVARIANCES)}")
    n, p = J.shape
    psi = np.clip(r, -delta, delta)
    if n <= p:
        return None
    if form == "huber_k2":
        m1 = float(np.mean(np.abs(r) <= delta))
        if m1 == 0:
            return None
        K = 1.0 + p / n * (1.0 - m1) / m1
        return K**2 * float(np.sum(psi**2)) / (n - p) / m1**2 * np.linalg.pinv(J.T @ J)
    h = density_bandwidth(r, delta)
    win = np.abs(r) <= h
    if not win.any():
        return None
    Ainv = np.linalg.pinv(delta / h * (J[win].T @ J[win]))
    B = (J * psi[:, None] ** 2).T @ J
    return n / (n - p) * Ainv @ B @ Ainv


def huber_stderrs(
    how: LawFit, res, d: FitData, names: list[tuple[str, str]], form: str = "sandwich"
) -> dict[str, float | None]:
    """Closed-form standard errors of a Huber fit (δ = ``f_scale``), ``huber_covariance`` of the log
    residual and its analytic Jacobian at the fit. A coefficient's error is c·SE(log c). None where fixed
    or not estimable. The stage reports a Huber fit's bootstrap as its error; these serve where a fit is
    repeated too often for a bootstrap, and tests hold them against it on the Chinchilla points."""
    delta = how.least_squares.get("f_scale", 1.0)
    r = how.residual(res.params, d)
    J = how.jacobian(res.params, d)
    varying = [k for k, q in res.params.items() if q.vary]
    cov = huber_covariance(r, J, delta, form)
    out = {}
    for name, lm in names:
        key = f"log_{lm}" if lm in how.law.coefficients else lm
        if cov is None or key not in varying:
            out[name] = None
            continue
        i = varying.index(key)
        se = float(np.sqrt(max(cov[i, i], 0.0)))
        out[name] = se * float(np.exp(res.params[key].value)) if key != lm else se
    return out


def log_residual_jacobian(
    p, law: PowerLaw, v: dict, x: dict, pred: np.ndarray, offset_rows: dict
) -> np.ndarray:
    """Jacobian of the log residual log L − log L̂ of ``law`` with respect to lmfit's varying parameters of
    ``p``, in their order: (n, n_varying).

    ``v``: values by lmfit name at the current point (coefficients as ``log_<c>`` and c); ``x``: the law's
    variables; ``pred``: L̂ there (rows where it is not positive and finite, which the residual replaces by
    a constant, get zero rows); ``offset_rows``: each offset's lmfit name → the rows it applies to (bool,
    or 1.0 for every row). With c·x^(−α) the term of one variable: ∂L̂/∂log c = c·x^(−α),
    ∂L̂/∂α = −c·x^(−α)·log x, ∂L̂/∂L0 = 1 on its rows, and ∂(log L − log L̂)/∂θ = −(∂L̂/∂θ)/L̂. Replaces
    lmfit's two-point differences (one extra evaluation per parameter and iteration)."""
    columns = {}
    for (c, a, var), term in zip(law.terms, law.term_values(v, x)):
        columns[f"log_{c}"] = term
        columns[a] = -term * np.log(x[var])
    for name, rows in offset_rows.items():
        columns[name] = np.broadcast_to(np.asarray(rows, float), pred.shape)
    names = [k for k, q in p.items() if q.vary]
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = np.where(np.isfinite(pred) & (pred > 0), -1.0 / pred, 0.0)
    return np.stack([columns[k] * scale for k in names], axis=1)


# ---------------------------------------------------------------- fitting
def best_of_starts(
    residual,
    param_sets,
    args: tuple,
    max_nfev: int = 20000,
    jac=None,
    covar: bool = True,
    **least_squares_kws,
):
    """The lowest-objective (χ², or Σ Huber_δ with ``loss="huber"``: ``objective``, set on the result as
    ``objective``) lmfit least-squares fit of ``residual`` over the ``param_sets`` (an iterable of
    ``lmfit.Parameters``); a start that fails or ends non-finite is skipped. RuntimeError if every one does.
    ``jac``: the analytic Jacobian, called as ``jac(params, *args)`` (columns in the order of the varying
    parameters, see :func:`log_residual_jacobian`); None: lmfit's two-point differences. ``covar=False``
    skips lmfit's covariance and standard errors (refits that keep only the values).
    ``least_squares_kws`` go to scipy's ``least_squares`` (e.g. ``loss``, ``f_scale``)."""
    extra = {"jac": jac} if jac is not None else {}
    best = None
    for params in param_sets:
        try:
            res = lmfit.minimize(
                residual,
                params,
                args=args,
                method="least_squares",
                max_nfev=max_nfev,
                ftol=1e-12,
                xtol=1e-12,
                gtol=1e-12,
                calc_covar=covar,
                **extra,
                **least_squares_kws,
            )
        except (ValueError, FloatingPointError):
            continue
        # χ² as lmfit sums it for the plain sum of squares (the comparison of every default fit)
        res.objective = (
            float(res.chisqr) if not least_squares_kws else objective(res.residual, least_squares_kws)
        )
        if np.isfinite(res.objective) and (best is None or res.objective < best.objective - 1e-14):
            best = res
    if best is None:
        raise RuntimeError("every start of the law's fit failed")
    return best


def fit(
    d: FitData,
    how: LawFit,
    n_starts: int = 8,
    seed: int = 0,
    inits: list[dict] | None = None,
    max_nfev: int = 20000,
    covar: bool = True,
) -> lmfit.minimizer.MinimizerResult:
    """Best fit over the ``inits`` (model names) and ``how.starts``' ``n_starts`` starts (seeded). The
    result has ``success`` (converged), ``message``, ``params`` (with stderr from the covariance),
    ``covar``, ``residual``, ``chisqr`` (sum of squared log residuals) and ``objective`` (what ``how``
    minimises: χ², or Σ Huber_δ); read values and errors with
    ``how.values(res, d)`` and ``how.stderrs(res, d)``."""
    rng = np.random.default_rng(seed)
    starts = (how.params(d, init) for init in list(inits or []) + how.starts(d, n_starts, rng))
    return best_of_starts(
        how.residual, starts, (d,), max_nfev, jac=how.jacobian, covar=covar, **how.least_squares
    )


def _has_every_group(d: FitData, n_groups: int) -> bool:
    return len(np.unique(d.g)) == n_groups


def bootstrap(
    d: FitData, how: LawFit, best: dict, n_resamples: int, seed: int = 0, n_starts: int = 2
) -> pd.DataFrame:
    """Refit on ``n_resamples`` resamples of the rows (with replacement), each from ``best`` and
    ``n_starts`` starts; one row per resample (values and ``converged``). With one offset per group, a
    resample that leaves a group out is skipped (its offset is not defined there)."""
    rng = np.random.default_rng(seed)
    rows = []
    prog = Progress(n_resamples, "bootstrap fits")
    for b in range(n_resamples):
        idx = rng.integers(0, len(d), len(d))
        db = d.take(idx)
        if not how.group_offsets or _has_every_group(db, len(d.groups)):
            res = fit(db, how, n_starts=n_starts, seed=seed + 1 + b, inits=[best], covar=False)
            rows.append({**how.values(res, d), "converged": bool(res.success)})
        prog.update()
    return pd.DataFrame(rows)


def bootstrap_spread(values) -> dict:
    """The one summary of a parameter's bootstrap refits: ``bootstrap_std`` (ddof 1; None below two
    refits) and ``bootstrap_ci95``, the 2.5 and 97.5 percentiles (None without refits)."""
    col = np.asarray(values, float)
    return {
        "bootstrap_ci95": [float(np.percentile(col, 2.5)), float(np.percentile(col, 97.5))]
        if len(col)
        else None,
        "bootstrap_std": float(col.std(ddof=1)) if len(col) > 1 else None,
    }


def held_out(
    d: FitData,
    how: LawFit,
    best: dict,
    n_splits: int,
    test_fraction: float = 0.2,
    seed: int = 0,
    n_starts: int = 2,
) -> dict:
    """Repeated random splits: refit on 1 − ``test_fraction`` of the rows (from ``best`` and ``n_starts``
    starts), error of log L on the held-out rows. Returns the mean and spread of the held-out RMSE of
    log L, the training RMSE, the held-out mean |relative error| of L and the held-out mean |log residual|
    (the measure that fits a Huber fit). A split that leaves a whole
    group out of the training part raises ValueError when each group has its own offset."""
    rng = np.random.default_rng(seed)
    n_test = max(1, int(round(test_fraction * len(d))))
    rmse_test, rmse_train, mape_test, mae_test = [], [], [], []
    for s in range(n_splits):
        perm = rng.permutation(len(d))
        te, tr = perm[:n_test], perm[n_test:]
        train, test = d.take(tr), d.take(te)
        if how.group_offsets and not _has_every_group(train, len(d.groups)):
            raise ValueError(
                "a held-out split left a whole group out of the training part; its offset is "
                "undefined (use fewer held-out runs or turn group_offsets off)"
            )
        res = fit(train, how, n_starts=n_starts, seed=seed + 1000 + s, inits=[best])
        pred = how.predict(how.lmfit_values(res.params), test)
        rmse_test.append(float(np.sqrt(np.mean((np.log(test.loss) - np.log(pred)) ** 2))))
        mae_test.append(float(np.mean(np.abs(np.log(test.loss) - np.log(pred)))))
        mape_test.append(float(np.mean(np.abs(pred - test.loss) / test.loss)))
        rmse_train.append(float(np.sqrt(np.mean(res.residual**2))))
    return {
        "n_splits": n_splits,
        "test_fraction": test_fraction,
        "rmse_log_test_mean": float(np.mean(rmse_test)),
        "rmse_log_test_std": float(np.std(rmse_test)),
        "rmse_log_train_mean": float(np.mean(rmse_train)),
        "mean_abs_rel_error_test": float(np.mean(mape_test)),
        "mean_abs_log_test_mean": float(np.mean(mae_test)),
    }
