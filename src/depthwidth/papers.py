"""The papers' own numbers, in one place: sections, the headline table and the synthesis read them here.

Each entry is (value, error or None, where it is stated). Superposition: Liu, Liu & Gore, arXiv 2505.10465.
Depth: Liu, Kangaslahti, Liu & Gore, arXiv 2602.05970.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PaperValue:
    value: float
    err: float | None
    source: str

    @property
    def text(self) -> str:
        """The paper's statement as text, e.g. "1.2 ± 0.3"."""
        return f"{self.value:g}" if self.err is None else f"{self.value:g} ± {self.err:g}"


# Depth paper: the decomposed Chinchilla fit (Adam, 50k steps; the notebook's digits where it prints them).
ALPHA_L_CHINCHILLA = PaperValue(1.2, 0.3, "depth paper, decomposed Chinchilla fit")
# Superposition paper: loss vs width of real LLMs, and the toy model's regimes.
ALPHA_M_LLM = PaperValue(0.91, 0.04, "superposition paper, LLM loss vs width")
ALPHA_M_STRONG = PaperValue(1.0, None, "superposition paper, strong regime: loss ∝ 1/m")
# Depth paper: LLM hidden states on FineWeb (Pythia), the share of tokens whose angle profile is smooth.
SMOOTH_BULK_PERCENT = PaperValue(99.6, None, "depth paper, Pythia hidden states on FineWeb: tokens in the smooth bulk (%)")
