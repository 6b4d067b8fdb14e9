"""One verdict procedure for every comparison with the papers.

Each stage's rules compute its comparisons as :class:`Comparison` records and write them to
``results/<stage>/comparisons.csv`` (:func:`write_comparisons`); the section only renders them, and the
report assembles ``results/headline.csv`` from the records marked ``headline``. Every record carries:

- the paper's value, its error and where it was read (``paper_source``);
- our value and its error with the method (:class:`Error`): a bootstrap over a named unit with its
  resample count and Monte Carlo error, a covariance error only where :func:`choose_error` found it within
  1.25× of a bootstrap, a profile interval, or none (a fit at a bound prints no error);
- the test used, what it can exclude, an allowance with its stated reason, a p-value where one exists;
- one verdict word from :data:`VERDICTS`: "yes", "no", "cannot tell", "not tested", "reproduced exactly",
  or "–" (no paper number); ``verdict_text`` adds the why ("cannot tell (leans 1.2)", "not tested: …").

The tests:

- :func:`difference_test`: two independent estimates (ours and the paper's, from different data or
  runs): |Δ| ≤ k·√(σ² + σ_paper²) + allowance, k = 2 (about 95 %).
- :func:`procedure_test`: two estimates from the same data (the paper's own fit redone): their noise is
  shared, so only the procedures are compared: "reproduced exactly" within the paper's printed digits.
- :func:`interval_test`: a claim stated as a value without error ("≈ 1"): does our interval hold it, and
  which of the candidate values the data lean to (:func:`leans`).
- :func:`not_tested` / :func:`no_paper_number`: why the data cannot make the comparison.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth.integrity import check_sealed, seal
from depthwidth.files import atomic_write_csv

# The verdict words, one vocabulary for every stage, the headline and the README table.
YES, NO, CANNOT_TELL, NOT_TESTED, EXACT, NO_PAPER_NUMBER = (
    "yes",
    "no",
    "cannot tell",
    "not tested",
    "reproduced exactly",
    "–",
)
VERDICTS = (YES, NO, CANNOT_TELL, NOT_TESTED, EXACT, NO_PAPER_NUMBER)
# Which paper a claim belongs to.
PAPERS = {
    "superposition": "Superposition yields robust neural scaling (arXiv 2505.10465)",
    "depth": "Inverse depth scaling from most layers being similar (arXiv 2602.05970)",
}
# A user's sweep of runs (chinchilla.sweeps beyond the built-in ones): its records' claim starts with this,
# and the report shows them in their own table, never in the papers' results/headline.csv.
SWEEP_PREFIX = "sweep: "


def sweep_claim(name: str) -> str:
    """The claim of a user's sweep called ``name``: "sweep: <name>" (see :data:`SWEEP_PREFIX`)."""
    if not name:
        raise VerdictError("a sweep's claim names the sweep")
    return f"{SWEEP_PREFIX}{name}"


# Error methods.
BOOTSTRAP, COVARIANCE, PROFILE, EXACT_VALUE, NO_ERROR = "bootstrap", "covariance", "profile", "exact", "none"
# The standard error of a fitted line where the data hold no resampling unit (one replicate): stated, never
# used for a "yes" or "no" (compare refuses it there).
LINE_FIT = "line fit"
ERROR_METHODS = (BOOTSTRAP, COVARIANCE, PROFILE, EXACT_VALUE, LINE_FIT, NO_ERROR)
# A covariance error stands for the bootstrap only within this factor of it (either way).
COVARIANCE_WITHIN = 1.25
# A bootstrap whose standard deviation feeds a verdict or a calibration needs at least this many resamples.
MIN_RESAMPLES = 200
# k of the difference test: |Δ| ≤ k·σ (about 95 % for normal errors).
K_SIGMA = 2.0


class VerdictError(ValueError):
    """A comparison record that breaks the procedure (an unknown word, an error method without its unit,
    a bootstrap too small to read a standard deviation from)."""


@dataclass(frozen=True)
class Error:
    """Our error of one value: ``value`` (a standard deviation; None where none is stated), ``method``
    (:data:`ERROR_METHODS`), ``unit`` (what a bootstrap resamples: runs, models, seeds, widths, tokens),
    ``resamples`` and ``mc`` (the Monte Carlo error of the bootstrap sd, sd/√(2(B−1))), ``low``/``high``
    (an interval where one is stated: a bootstrap's percentiles or a profile's), ``level`` (its coverage)."""

    value: float | None
    method: str = NO_ERROR
    unit: str = ""
    resamples: int = 0
    mc: float | None = None
    low: float | None = None
    high: float | None = None
    level: float | None = None

    def __post_init__(self):
        if self.method not in ERROR_METHODS:
            raise VerdictError(f"error method {self.method!r}: use one of {', '.join(ERROR_METHODS)}")
        if self.method == BOOTSTRAP and (not self.unit or self.resamples <= 0):
            raise VerdictError("a bootstrap error names its resampling unit and its number of resamples")

    @property
    def text(self) -> str:
        """How the error was made, e.g. "bootstrap over 27 models, 1000 resamples (MC ± 2 %)"."""
        if self.method == BOOTSTRAP:
            mc = f", Monte Carlo ± {100 * self.mc / self.value:.0f} %" if self.mc and self.value else ""
            return f"bootstrap over {self.unit}, {self.resamples} resamples{mc}"
        if self.method == COVARIANCE:
            return f"covariance (within {COVARIANCE_WITHIN}× of the bootstrap over {self.unit})"
        if self.method == PROFILE:
            return f"profile likelihood, {100 * (self.level or 0.95):.0f} % interval"
        if self.method == EXACT_VALUE:
            return "exact (no sampling error)"
        if self.method == LINE_FIT:
            return f"standard error of the fitted line ({self.unit or 'no resampling unit'})"
        return "no error stated"


NONE = Error(None)


def bootstrap_error(samples, unit: str, central: float | None = None, level: float = 0.95) -> Error:
    """The bootstrap error of one value from its resampled values (NaN resamples dropped): the standard
    deviation, its Monte Carlo error sd/√(2(B−1)) and the percentile interval at ``level``. Fewer than
    :data:`MIN_RESAMPLES` finite resamples raise: an sd read from fewer is itself ± 5 % or worse."""
    s = np.asarray(samples, dtype=float)
    s = s[np.isfinite(s)]
    if len(s) < MIN_RESAMPLES:
        raise VerdictError(
            f"a bootstrap over {unit} with {len(s)} finite resamples: a verdict needs ≥ {MIN_RESAMPLES} "
            "(raise the config's bootstrap resample count)"
        )
    sd = float(np.std(s, ddof=1))
    q = (1 - level) / 2
    return Error(
        sd,
        BOOTSTRAP,
        unit=unit,
        resamples=len(s),
        mc=sd / math.sqrt(2 * (len(s) - 1)),
        low=float(np.quantile(s, q)),
        high=float(np.quantile(s, 1 - q)),
        level=level,
    )


def bootstrap_summary_error(
    sd: float,
    unit: str,
    resamples: int,
    low: float | None = None,
    high: float | None = None,
    level: float = 0.95,
) -> Error:
    """The bootstrap error of one value from a stored summary of its resamples (their sd, count and
    percentile interval), as :func:`bootstrap_error` would make it from the samples; fewer than
    :data:`MIN_RESAMPLES` resamples (or no finite sd) raise."""
    if not (resamples >= MIN_RESAMPLES) or sd is None or not math.isfinite(sd):
        raise VerdictError(
            f"a bootstrap over {unit} with {resamples} finite resamples: a verdict needs ≥ {MIN_RESAMPLES} "
            "(raise the config's bootstrap resample count)"
        )
    return Error(
        float(sd),
        BOOTSTRAP,
        unit=unit,
        resamples=int(resamples),
        mc=float(sd) / math.sqrt(2 * (resamples - 1)),
        low=None if low is None or not math.isfinite(low) else float(low),
        high=None if high is None or not math.isfinite(high) else float(high),
        level=level,
    )


def choose_error(covariance: float | None, bootstrap: Error) -> Error:
    """The error to state: the covariance error only where it is within :data:`COVARIANCE_WITHIN`× of
    the bootstrap (either way), else the bootstrap."""
    if bootstrap.method != BOOTSTRAP:
        raise VerdictError("choose_error compares a covariance error with a bootstrap error")
    if covariance is None or not math.isfinite(covariance) or covariance <= 0 or not bootstrap.value:
        return bootstrap
    ratio = covariance / bootstrap.value
    if 1 / COVARIANCE_WITHIN <= ratio <= COVARIANCE_WITHIN:
        return Error(covariance, COVARIANCE, unit=bootstrap.unit, resamples=bootstrap.resamples)
    return bootstrap


def larger_bootstrap(covariance: float | None, *bootstraps: Error) -> Error:
    """Of several bootstraps of one value over different units (e.g. seeds, and widths with their seeds
    pooled: one carries the seed-to-seed noise, the other a model's lack of fit), the larger, or the
    covariance error where it is within :data:`COVARIANCE_WITHIN`× of that one (:func:`choose_error`);
    no bootstrap gives no error."""
    boots = [b for b in bootstraps if b.method == BOOTSTRAP and b.value is not None]
    if not boots:
        return NONE
    return choose_error(covariance, max(boots, key=lambda b: b.value))


@dataclass(frozen=True)
class Verdict:
    """The outcome of one test: the word, the why (shown after it), what the test can exclude, its
    p-value where one exists."""

    word: str
    why: str = ""
    test: str = ""
    excludes: str = ""
    p_value: float | None = None

    def __post_init__(self):
        if self.word not in VERDICTS:
            raise VerdictError(f"verdict {self.word!r}: use one of {', '.join(map(repr, VERDICTS))}")
        if self.word in (NOT_TESTED, CANNOT_TELL) and not self.why:
            raise VerdictError(f"a verdict {self.word!r} says why")

    @property
    def text(self) -> str:
        if not self.why:
            return self.word
        if self.word == CANNOT_TELL:
            return f"{self.word} ({self.why})"
        return f"{self.word}: {self.why}"


def difference_test(
    value: float,
    err: Error,
    paper: float,
    paper_err: float | None,
    allowance: float = 0.0,
    k: float = K_SIGMA,
) -> Verdict:
    """Two independent estimates: "yes" where |Δ| ≤ k·√(σ² + σ_paper²) + allowance, else "no". Without any
    error or allowance there is no test ("not tested"). The test can exclude differences beyond its
    threshold; the p-value is the two-sided normal one of Δ/σ (allowance not counted)."""
    sigma = math.hypot(err.value or 0.0, paper_err or 0.0)
    if sigma == 0 and not allowance:
        return Verdict(NOT_TESTED, "neither value has an error, so no difference can be judged")
    if err.method == NO_ERROR and not paper_err and not allowance:
        return Verdict(NOT_TESTED, "our value has no error")
    delta = value - paper
    threshold = k * sigma + allowance
    p = float(math.erfc(abs(delta) / sigma / math.sqrt(2))) if sigma > 0 else None
    test = f"|Δ| ≤ {k:g}·√(σ² + σ_paper²)" + (" + allowance" if allowance else "")
    excludes = f"|Δ| > {threshold:.2g}"
    word = YES if abs(delta) <= threshold else NO
    why = "" if word == YES else f"Δ = {delta:+.3g}, beyond {threshold:.2g}"
    return Verdict(word, why, test, excludes, p)


def procedure_test(value: float, paper: float, digits: int | None = None) -> Verdict:
    """Two estimates from the same data by the paper's procedure redone: their noise is shared, so the
    test is the procedure's: "reproduced exactly" where ``value`` rounds to the paper's printed digits
    (``digits`` significant digits; default: those of ``paper`` as printed), else "no"."""
    if digits is None:
        digits = _significant_digits(paper)
    same = float(f"{value:.{digits}g}") == float(f"{paper:.{digits}g}")
    test = f"same data and procedure: equal to the paper's {digits} printed digits"
    if same:
        return Verdict(EXACT, "", test, f"any change in the {digits}th digit")
    return Verdict(NO, f"{value:.{digits + 1}g} against the printed {paper:.{digits}g}", test)


def _significant_digits(x: float) -> int:
    text = f"{x:.10g}".lstrip("-").replace(".", "").lstrip("0")
    return max(1, len(text.rstrip("0")) or 1)


def interval_test(
    low: float | None, high: float | None, claim: float, level: float = 0.95, what: str = "interval"
) -> Verdict:
    """A claim stated without error (e.g. "≈ 1"): "yes" where our ``level`` interval holds it, "no" where
    it does not; an interval open at either end cannot exclude the claim on that side."""
    test = f"the claim inside our {100 * level:.0f} % {what}"
    lo = -math.inf if low is None else low
    hi = math.inf if high is None else high
    ex = f"values outside [{_fmt(low)}, {_fmt(high)}]"
    if lo <= claim <= hi:
        return Verdict(YES, "", test, ex)
    return Verdict(NO, f"{claim:g} outside [{_fmt(low)}, {_fmt(high)}]", test, ex)


def outside_test(
    low: float, high: float, other: float, other_err: float | None, k: float = K_SIGMA
) -> Verdict:
    """A claim that our value is far from another (e.g. "α − 1 ≈ 0, not the LLMs' α_m = 0.91 ± 0.04"):
    "yes" where our whole range [``low``, ``high``] (an interval, or the span of a sensitivity check) lies
    outside ``other`` ± k·``other_err``, "no" where it overlaps that band."""
    band = k * (other_err or 0.0)
    lo_b, hi_b = other - band, other + band
    test = f"our range [{_fmt(low)}, {_fmt(high)}] outside {other:g} ± {k:g}·{other_err or 0:g}"
    excludes = f"values within [{lo_b:.3g}, {hi_b:.3g}]"
    if high < lo_b or low > hi_b:
        return Verdict(YES, "", test, excludes)
    return Verdict(NO, f"[{_fmt(low)}, {_fmt(high)}] reaches [{lo_b:.3g}, {hi_b:.3g}]", test, excludes)


def leans(p_values: dict[str, float]) -> str:
    """Which of the candidate values the data lean to, from each candidate's p-value (calibrated the same
    way for all): "leans 1.2: p = 0.55 for 1.2, 0.10 for 1"."""
    if not p_values:
        raise VerdictError("leans needs a p-value per candidate")
    best = max(p_values, key=p_values.get)
    ps = ", ".join(f"{p_values[k]:.2g} for {k}" for k in sorted(p_values, key=p_values.get, reverse=True))
    return f"leans {best}: p = {ps}"


def not_tested(why: str) -> Verdict:
    """The data cannot make the comparison; ``why`` says what is missing."""
    return Verdict(NOT_TESTED, why)


def cannot_tell(lean: str) -> Verdict:
    """The test ran and cannot decide; ``lean`` says which way the data lean (:func:`leans`)."""
    return Verdict(CANNOT_TELL, lean)


def no_paper_number() -> Verdict:
    return Verdict(NO_PAPER_NUMBER)


def at_bound(params: dict[str, float], bounds: dict[str, tuple[float | None, float | None]], rtol=1e-3):
    """The names of parameters at (within ``rtol`` of the span, or of |bound|, of) a bound of their
    range: an exponent at its cap, a coefficient or an offset at 0. A fit with any such parameter prints
    no error (its covariance and profile are not those of an interior optimum)."""
    hits = []
    for name, v in params.items():
        lo, hi = bounds.get(name, (None, None))
        if v is None or not math.isfinite(v):
            continue
        for b in (lo, hi):
            if b is None or not math.isfinite(b):
                continue
            scale = (hi - lo) if lo is not None and hi is not None and math.isfinite(hi - lo) else abs(b)
            if abs(v - b) <= rtol * max(scale, 1e-12) or (b == 0 and abs(v) < 1e-8):
                hits.append(name)
                break
    return hits


@dataclass(frozen=True)
class Comparison:
    """One comparison with a paper: a row of ``results/<stage>/comparisons.csv`` (and, with ``headline``,
    of ``results/headline.csv``). Build it with :func:`compare`."""

    stage: str
    key: str
    paper: str  # "superposition" or "depth" (:data:`PAPERS`)
    claim: str  # the claim it tests, which groups rows on the first screen
    quantity: str
    paper_text: str  # the paper's statement as shown, e.g. "1.2 ± 0.3" or "≈ 1"
    paper_value: float | None
    paper_err: float | None
    paper_source: str
    value: float | None
    value_text: str  # our value as words where it is not a number ("not fitted")
    err: float | None
    err_method: str
    err_unit: str
    err_resamples: int
    err_mc: float | None
    low: float | None
    high: float | None
    test: str
    excludes: str
    allowance: float | None
    allowance_reason: str
    p_value: float | None
    verdict: str
    verdict_text: str
    at_bound: str
    note: str
    headline: bool
    link: str = ""  # where in the docs to read on (a stage page)
    extra: dict = field(default_factory=dict, compare=False)

    def row(self) -> dict:
        d = asdict(self)
        d.pop("extra")
        return d


COLUMNS = tuple(f.name for f in fields(Comparison) if f.name != "extra")


def compare(
    stage: str,
    key: str,
    paper: str,
    claim: str,
    quantity: str,
    verdict: Verdict,
    value: float | None = None,
    err: Error = NONE,
    paper_value: float | None = None,
    paper_err: float | None = None,
    paper_text: str | None = None,
    paper_source: str = "",
    value_text: str = "",
    allowance: float | None = None,
    allowance_reason: str = "",
    bound_params: list[str] | tuple[str, ...] = (),
    note: str = "",
    headline: bool = True,
    link: str = "",
) -> Comparison:
    """One comparison record, checked: a known paper and verdict, an allowance only with its reason, no
    error stated for a fit at a bound (``bound_params`` names the parameters there)."""
    if paper not in PAPERS:
        raise VerdictError(f"{stage}/{key}: paper {paper!r}: use one of {', '.join(PAPERS)}")
    if allowance and not allowance_reason:
        raise VerdictError(f"{stage}/{key}: an allowance is data with a stated reason")
    if err.method == LINE_FIT and verdict.word in (YES, NO):
        raise VerdictError(f"{stage}/{key}: a line-fit error cannot decide a verdict; bootstrap over a unit")
    if bound_params and err.value is not None:
        err = NONE  # a boundary solution has no error to print
    if paper_text is None:
        if paper_value is None:
            paper_text = "–"
        else:
            paper_text = f"{paper_value:g}" if paper_err is None else f"{paper_value:g} ± {paper_err:g}"
    if verdict.word != NO_PAPER_NUMBER and paper_text.strip() in ("", "–"):
        raise VerdictError(f"{stage}/{key}: verdict {verdict.word!r} without a paper statement")
    return Comparison(
        stage=stage,
        key=key,
        paper=paper,
        claim=claim,
        quantity=quantity,
        paper_text=paper_text,
        paper_value=paper_value,
        paper_err=paper_err,
        paper_source=paper_source,
        value=None if value is None else float(value),
        value_text=value_text,
        err=err.value,
        err_method=err.text if err.value is not None or err.method != NO_ERROR else NO_ERROR,
        err_unit=err.unit,
        err_resamples=err.resamples,
        err_mc=err.mc,
        low=err.low,
        high=err.high,
        test=verdict.test,
        excludes=verdict.excludes,
        allowance=allowance,
        allowance_reason=allowance_reason,
        p_value=verdict.p_value,
        verdict=verdict.word,
        verdict_text=verdict.text,
        at_bound=", ".join(bound_params),
        note=note,
        headline=headline,
        link=link,
    )


def write_comparisons(path: str | Path, comparisons: list[Comparison]) -> None:
    """``results/<stage>/comparisons.csv``: one row per record (columns :data:`COLUMNS`), sealed. Keys are
    unique within a stage."""
    keys = [(c.stage, c.key) for c in comparisons]
    dup = sorted({k for k in keys if keys.count(k) > 1})
    if dup:
        raise VerdictError(f"{path}: comparison keys used twice: {dup}")
    df = pd.DataFrame([c.row() for c in comparisons], columns=list(COLUMNS))
    atomic_write_csv(path, df)
    seal(path, rows=len(df))


def read_comparisons(path: str | Path, rule: str) -> pd.DataFrame:
    """A comparisons file checked against its seal and the columns; ``headline`` as booleans."""
    check_sealed(path, rule)
    # words stay words: a value_text "1.2014" is the paper's printed digits, not a number to round
    text = ("value_text", "paper_text", "verdict_text", "note", "at_bound", "allowance_reason", "err_unit")
    df = pd.read_csv(path, keep_default_na=False, na_values=[""], dtype={c: str for c in text})
    df[list(text)] = df[list(text)].fillna("")
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise VerdictError(f"{path}: no column {', '.join(missing)}; remake it (its stage's comparison rule)")
    bad = sorted(set(df["verdict"]) - set(VERDICTS))
    if bad:
        raise VerdictError(f"{path}: unknown verdict words {bad}")
    df["headline"] = df["headline"].astype(str).str.lower().isin(("true", "1"))
    return df


def _fmt(x) -> str:
    return "open" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.3g}"
