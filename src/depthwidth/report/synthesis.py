"""Synthesis across the two papers: what α_m (width) and α_ℓ (depth) imply for the loss-optimal shape.

At fixed parameters N ∝ ℓ m², minimising c_m/m^α_m + c_ℓ/ℓ^α_ℓ gives m* ∝ N^a, ℓ* ∝ N^b and a loss
term ∝ N^−β (see depthwidth.optimal_shape.shape_exponents). Uncertainties are carried through by Monte Carlo
over independent normal errors of the two exponents.
"""

from __future__ import annotations

import html

import numpy as np

from depthwidth.optimal_shape import shape_exponents
from depthwidth.papers import ALPHA_L_CHINCHILLA, ALPHA_M_LLM
from depthwidth.sections import table_html


def propagate(
    alpha_m: float, se_m: float, alpha_l: float, se_l: float, n: int = 20000, seed: int = 0
) -> dict:
    """Shape exponents with standard deviation and 95 % interval from normal errors on α_m and α_ℓ."""
    rng = np.random.default_rng(seed)
    am = alpha_m + (se_m or 0.0) * rng.standard_normal(n)
    al = alpha_l + (se_l or 0.0) * rng.standard_normal(n)
    ok = (am > 0) & (al > 0)
    samples = shape_exponents(am[ok], al[ok])
    central = shape_exponents(alpha_m, alpha_l)
    return {
        k: {
            "value": float(central[k]),
            "std": float(np.std(samples[k])),
            "ci95": [float(np.percentile(samples[k], 2.5)), float(np.percentile(samples[k], 97.5))],
        }
        for k in central
    }


def synthesis_rows(chinchilla_fit: dict | None, width_fit: dict | None) -> list[dict]:
    """One row per source combination of (α_m, α_ℓ) that this run has."""
    rows = []
    if chinchilla_fit:
        p = chinchilla_fit["params"]
        rows.append(
            (
                "α_m and α_ℓ both from the Chinchilla decomposed fit",
                p["alpha_m"]["value"],
                p["alpha_m"]["stderr"],
                p["alpha_l"]["value"],
                p["alpha_l"]["stderr"],
            )
        )
        if width_fit and width_fit.get("status") == "ok":
            rows.append(
                (
                    "α_m from LLM widths (LM-head stage), α_ℓ from Chinchilla",
                    width_fit["alpha"],
                    width_fit.get("alpha_err"),
                    p["alpha_l"]["value"],
                    p["alpha_l"]["stderr"],
                )
            )
    am, al = ALPHA_M_LLM, ALPHA_L_CHINCHILLA
    rows.append((f"the papers' values: α_m = {am.text}, α_ℓ = {al.text}", am.value, am.err, al.value, al.err))
    out = []
    for label, am, sm, al, sl in rows:
        r = propagate(am, sm, al, sl)
        out.append(
            {
                "source": label,
                "alpha_m": am,
                "alpha_m_err": sm,
                "alpha_l": al,
                "alpha_l_err": sl,
                **{f"{k}": v["value"] for k, v in r.items()},
                **{f"{k}_std": v["std"] for k, v in r.items()},
            }
        )
    return out


def synthesis_html(chinchilla_fit: dict | None, width_fit: dict | None) -> str:
    import pandas as pd

    rows = synthesis_rows(chinchilla_fit, width_fit)
    df = pd.DataFrame(rows)
    shown = pd.DataFrame(
        {
            "α_m, α_ℓ from": df["source"],
            "α_m": [
                f"{a:.3f} ± {s:.3f}" if s else f"{a:.3f}" for a, s in zip(df["alpha_m"], df["alpha_m_err"])
            ],
            "α_ℓ": [
                f"{a:.3f} ± {s:.3f}" if s else f"{a:.3f}" for a, s in zip(df["alpha_l"], df["alpha_l_err"])
            ],
            "m* ∝ N^a": [
                f"{a:.3f} ± {s:.3f}" for a, s in zip(df["width_exponent"], df["width_exponent_std"])
            ],
            "ℓ* ∝ N^b": [
                f"{a:.3f} ± {s:.3f}" for a, s in zip(df["depth_exponent"], df["depth_exponent_std"])
            ],
            "loss ∝ N^−β": [f"{a:.3f} ± {s:.3f}" for a, s in zip(df["N_exponent"], df["N_exponent_std"])],
            "m*/ℓ* ∝ N^(a−b)": [
                f"{a:+.3f} ± {s:.3f}" for a, s in zip(df["ratio_exponent"], df["ratio_exponent_std"])
            ],
        }
    )
    note = ""
    if width_fit and width_fit.get("status") != "ok":
        note = (
            f"<p class='note'>No α_m from LLM widths in this run: {html.escape(str(width_fit.get('reason', width_fit.get('status'))))}."
            "</p>"
        )
    return (
        "<section id='synthesis'><h2>Synthesis across the two papers</h2>"
        "<p>Width and depth terms of the loss, c_m/m^α_m + c_ℓ/ℓ^α_ℓ, at a fixed parameter count N ∝ ℓm², are "
        "smallest when α_m c_m m^−α_m = 2 α_ℓ c_ℓ ℓ^−α_ℓ. Then m* ∝ N^a and ℓ* ∝ N^b with a = α_ℓ/(α_m+2α_ℓ) and "
        "b = α_m/(α_m+2α_ℓ), and the two terms fall together as N^−β with β = α_mα_ℓ/(α_m+2α_ℓ). With α_m and "
        "α_ℓ both near 1 (strong superposition in width, ensemble averaging in depth), a = b = β = 1/3: the "
        "optimal shape keeps m ∝ ℓ, and the N-exponent is Chinchilla's 1/3. Errors are carried through by "
        "Monte Carlo over the exponents' standard errors.</p>"
        + note
        + table_html(shown, "What each pair of exponents implies for the loss-optimal shape.")
        + "</section>"
    )
