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
# Depth paper: the teacher-student toy's depth exponent (no error bars given): ≈ 1 with independent teacher
# blocks (ensemble averaging), ≈ 3 with tied blocks once the students have converged (procedural assembly).
ALPHA_L_TOY_INDEPENDENT = PaperValue(
    1.0, None, "depth paper, teacher-student toy, independent teacher blocks"
)
ALPHA_L_TOY_TIED = PaperValue(3.0, None, "depth paper, teacher-student toy, tied teacher blocks (converged)")
# Superposition paper: loss vs width of real LLMs, and the toy model's regimes.
ALPHA_M_LLM = PaperValue(0.91, 0.04, "superposition paper, LLM loss vs width")
ALPHA_M_STRONG = PaperValue(1.0, None, "superposition paper, strong regime: loss ∝ 1/m")
# Superposition paper, appendix: token frequencies of real text follow p_i ∝ i^-α with α near 1, so weak
# superposition (α_m = α − 1) would predict a width exponent near 0.
TOKEN_FREQUENCY_ALPHA = PaperValue(
    1.0, None, "superposition paper, appendix: token frequencies p_i ∝ i^-α, α ≈ 1"
)

# Depth paper's notebook: its Adam fit (ln c float64, exponents and E float32) of the decomposed law to the 203 Chinchilla points left
# after dropping the 40 highest-loss runs (50k steps); c_D and α_D are not printed there.
_ADAM = "depth paper's notebook, Adam fit (50k steps)"
CHINCHILLA_ADAM_FIT = {
    "c_m": PaperValue(333.38, None, _ADAM),
    "alpha_m": PaperValue(0.9769, None, _ADAM),
    "c_l": PaperValue(1284.4, None, _ADAM),
    "alpha_l": PaperValue(1.2014, None, _ADAM),
    "L0": PaperValue(1.7503, None, _ADAM),
}
# The Chinchilla law L = E + A/N^α + B/D^β (approach 3): Hoffmann et al. 2022 (arXiv 2203.15556, their
# Huber fit) and the replication by Besiroglu, Erdil, Barnett & You 2024 (arXiv 2404.10102, Table 1:
# standard errors from 4000 bootstrap resamples), on the points the Chinchilla stage reads.
_HOFFMANN = "Hoffmann et al. 2022, approach 3"
HOFFMANN_FIT = {
    "A": PaperValue(406.4, None, _HOFFMANN),
    "B": PaperValue(410.7, None, _HOFFMANN),
    "E": PaperValue(1.69, None, _HOFFMANN),
    "alpha": PaperValue(0.34, None, _HOFFMANN),
    "beta": PaperValue(0.28, None, _HOFFMANN),
}
# Table 1 is their Huber-density maximum likelihood with a free scale (the notebook's cell 24; in effect
# least absolute deviations), not the δ = 1e-3 Huber optimum: its E is printed as 1.82.
_BESIROGLU = "Besiroglu et al. 2024, Table 1"
BESIROGLU_FIT = {
    "A": PaperValue(482.01, 124.58, _BESIROGLU),
    "B": PaperValue(2085.43, 1293.23, _BESIROGLU),
    "E": PaperValue(1.82, 0.03, _BESIROGLU),
    "alpha": PaperValue(0.3478, 0.02, _BESIROGLU),
    "beta": PaperValue(0.3658, 0.02, _BESIROGLU),
}
# Their notebook's printed outputs (github epoch-research/analyzing-chinchilla, data_analysis.ipynb at
# NOTEBOOK_COMMIT). Cell 18 ("Replicate exactly"): the δ = 1e-3 Huber optimum from
# their 4500-start L-BFGS-B grid, the true target of the stage's replication. Cell 24: the Huber-density
# maximum likelihood with free scale (BFGS from Hoffmann et al.'s estimates; ends with success False at
# scale e^−12.27), Table 1's estimator; cell 25 prints it with the bootstrap standard errors of cell 21
# (4000 resamples drawn with np.random.seed(42), each refitted by BFGS from Hoffmann et al.'s estimates).
NOTEBOOK_COMMIT = "92258837425e1b5f2851d624287f0120583a3d0e"
_NOTEBOOK = "Besiroglu et al.'s notebook data_analysis.ipynb, cell "
NOTEBOOK_OPTIMUM = {
    "A": PaperValue(477.84171252965143, None, _NOTEBOOK + "18"),
    "B": PaperValue(2143.8637880335505, None, _NOTEBOOK + "18"),
    "E": PaperValue(1.817235504463726, None, _NOTEBOOK + "18"),
    "alpha": PaperValue(0.34731265761033453, None, _NOTEBOOK + "18"),
    "beta": PaperValue(0.3671826173946711, None, _NOTEBOOK + "18"),
    "objective": PaperValue(0.0010182740346154362, None, _NOTEBOOK + "18"),
}
NOTEBOOK_TABLE1 = {
    "A": PaperValue(482.00572, 124.52232, _NOTEBOOK + "25"),
    "B": PaperValue(2085.43420, 1293.28410, _NOTEBOOK + "25"),
    "E": PaperValue(1.81686, 0.02566, _NOTEBOOK + "25"),
    "alpha": PaperValue(0.34781, 0.01540, _NOTEBOOK + "25"),
    "beta": PaperValue(0.36585, 0.02060, _NOTEBOOK + "25"),
}
# Hoffmann et al.'s estimates to the digits the notebook starts its BFGS refits from (cell 16).
HOFFMANN_PRECISE = (6.0073404, 6.0179186, 0.5267228, 0.33917084, 0.2849083)
NOTEBOOK_BOOTSTRAP_SEED = 42
NOTEBOOK_BOOTSTRAP_RESAMPLES = 4000
# Depth paper, Fig. 6 (github liuyz0/DepthScaling causal-trace/): causal tracing of one fact in six Pythias
# (float16, one noise draw of 3σ); only Pythia-12B knows it. Its prompt and model are kept here too.
CAUSAL_TRACE_SENTENCE = "The space needle is in downtown Seattle"
CAUSAL_TRACE_MODEL_ID = "EleutherAI/pythia-12b"
CAUSAL_TRACE_P_CLEAN = PaperValue(0.36, None, "depth paper, Fig. 6: Pythia-12B, p(Seattle) clean")
CAUSAL_TRACE_P_CORRUPT = PaperValue(
    0.012, None, "depth paper, Fig. 6: Pythia-12B, p(Seattle) with the subject corrupted"
)
# Depth paper: LLM hidden states on FineWeb (Pythia), the share of tokens whose angle profile is smooth.
SMOOTH_BULK_PERCENT = PaperValue(
    99.6, None, "depth paper, Pythia hidden states on FineWeb: tokens in the smooth bulk (%)"
)
