"""What a width exponent α_m and a depth exponent α_ℓ imply for the loss-optimal shape of a model at a fixed
parameter count N ∝ ℓ m² (paper B's decomposed law). The Chinchilla stage and the report's synthesis across
the two papers both read it here."""

from __future__ import annotations


def shape_exponents(alpha_m, alpha_l) -> dict:
    """At fixed N ∝ ℓ m², the optimum balances α_m c_m m^-α_m = 2 α_ℓ c_ℓ ℓ^-α_ℓ, so
    m* ∝ N^a, ℓ* ∝ N^b with a = α_ℓ/(α_m + 2α_ℓ), b = α_m/(α_m + 2α_ℓ), and the width+depth part of
    the loss falls as N^-β with β = α_m α_ℓ/(α_m + 2α_ℓ). α_m = α_ℓ = 1 gives a = b = β = 1/3 (m ∝ ℓ).
    Works elementwise on arrays of exponents as well as on numbers."""
    den = alpha_m + 2 * alpha_l
    return {
        "width_exponent": alpha_l / den,
        "depth_exponent": alpha_m / den,
        "N_exponent": alpha_m * alpha_l / den,
        "ratio_exponent": (alpha_l - alpha_m) / den,
    }
