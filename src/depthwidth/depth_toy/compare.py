"""The depth toy's comparisons with the paper (rule depth_toy_compare → ``results/depth_toy/comparisons.csv``).

The paper states α_ℓ ≈ 1 for independent teacher blocks and ≈ 3 for tied ones once the students have
converged, without error bars. A run's exponent is compared only where it passes the convergence test
(``exponents.convergence_test``); the paper's missing error is replaced by an allowance, stated in the row
with its reason (:data:`ALLOWANCE`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from depthwidth import papers
from depthwidth import verdicts as v
from depthwidth.depth_toy.exponents import combined_exponent, convergence_verdict
from depthwidth.depth_toy.tables import TABLES_RULE
from depthwidth.integrity import read_table

PAPER = {"independent": papers.ALPHA_L_TOY_INDEPENDENT, "tied": papers.ALPHA_L_TOY_TIED}
# The paper gives no error bars: an allowance on its value, with the reason shown in the row.
ALLOWANCE = {
    "independent": (
        0.15,
        "the paper states ≈ 1 without error; its Fig. 4 spread over temperatures is about ± 0.15",
    ),
    "tied": (0.5, "the paper states ≈ 3 without error; its converged students span about 2.5–3.5"),
}
LABEL = {"independent": "independent teacher (random walk)", "tied": "tied teacher (smooth, converged)"}
CLAIM = "depth toy: α_ℓ ≈ 1 (independent) and ≈ 3 (tied, converged)"
LINK = "docs/stages/depth_toy.md"


def _test_row(conv: pd.DataFrame, kind: str, variant: str) -> dict | None:
    """The convergence-test row that stands for (kind, variant): the temperature whose loss moved most;
    ``converged`` only where every temperature passed."""
    c = conv[(conv["kind"] == kind) & (conv["variant"] == variant)]
    if c.empty:
        return None
    test = c.loc[c["loss_change"].abs().fillna(np.inf).idxmax()].to_dict()
    test["converged"] = bool(c["converged"].all())
    return test


def comparisons(ex: pd.DataFrame, conv: pd.DataFrame, variant: str) -> list[v.Comparison]:
    """One record per teacher kind for ``variant``: α_ℓ (inverse-variance mean over its temperatures) against
    the paper's value, compared only for a converged run."""
    out = []
    for kind in ("independent", "tied"):
        val, err, n = combined_exponent(ex, kind, variant)
        paper = PAPER[kind]
        allowance, reason = ALLOWANCE[kind]
        word, why = convergence_verdict(_test_row(conv, kind, variant), val)
        finite = bool(np.isfinite(val))
        e = (
            v.Error(float(err), v.LINE_FIT, unit=f"α_ℓ over depths, {n} fit(s) averaged")
            if finite and np.isfinite(err)
            else v.NONE
        )
        if word == "still moving" or not finite:
            verdict = v.not_tested(f"still moving: {why}")
        else:
            # a converged run: the exponent against the paper's value with the stated allowance
            verdict = v.difference_test(val, v.NONE, paper.value, None, allowance=allowance)
            e = v.NONE if verdict.word in (v.YES, v.NO) else e
        out.append(
            v.compare(
                "depth_toy",
                f"alpha_l_{kind}_{variant}",
                "depth",
                CLAIM,
                f"α_ℓ, {LABEL[kind]}, toy ({variant})",
                verdict,
                value=val if finite else None,
                value_text="" if finite else "not fitted",
                err=e,
                paper_value=paper.value,
                paper_text=f"≈ {paper.value:g}",
                paper_source=paper.source,
                allowance=allowance if verdict.word in (v.YES, v.NO) else None,
                allowance_reason=reason if verdict.word in (v.YES, v.NO) else "",
                note="; ".join(
                    x
                    for x in (
                        f"mean over {n} fits, inverse-variance weighted" if n > 1 else "",
                        f"converged: {why}" if verdict.word in (v.YES, v.NO) else "",
                    )
                    if x
                ),
                link=LINK,
            )
        )
    return out


def depth_toy_compare(exponents: str, convergence: str, out: str, headline_variant: str) -> None:
    """Rule depth_toy_compare: the comparisons of ``headline_variant`` (or the first variant run)."""
    ex = read_table(exponents, TABLES_RULE, ("kind", "variant", "temperature", "alpha", "alpha_se"))
    conv = read_table(convergence, TABLES_RULE, ("kind", "variant", "converged", "loss_change"))
    variants = list(dict.fromkeys(ex["variant"]))
    variant = headline_variant if headline_variant in variants else variants[0]
    v.write_comparisons(out, comparisons(ex, conv, variant))
