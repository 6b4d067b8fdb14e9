"""Config → rule params (``RULES``) and input lists of the paper-figures stage: the only module
rules/paperfigs.smk imports. Every function is a plain function of the validated ``config`` (defaults
filled in from ``schemas/paperfigs.schema.yaml``)."""

from __future__ import annotations

from pathlib import Path

from depthwidth.paperfigs.outputs import COMPARED, FIGURE_INPUTS, REGIMES_SUMMARY, REGIMES_TABLES
from depthwidth.rules import Key, Rule

RAW = Path("data/raw/superposition_paper")

RULES = {
    "paperfigs_fig8": Rule(
        params={"n_boot": Key("paperfigs.n_boot"), "seed": Key("paperfigs.seed")},
        sources=True,
        mem_mb=2000,
        runtime=10,
    ),
    "paperfigs_fig8b": Rule(
        params={"n_boot": Key("paperfigs.law_n_boot"), "seed": Key("paperfigs.seed")},
        sources=True,
        mem_mb=4000,
        runtime=20,
    ),
    # the readings check their pinned PDFs and fetch a damaged one again (sources: not a rerun trigger)
    "paperfigs_toy": Rule(sources=True, mem_mb=2000, runtime=10),
    "paperfigs_regimes": Rule(sources=True, mem_mb=2000, runtime=10),
    "paperfigs_compare": Rule(
        params={"loss_summed": Key("superposition.analysis.loss_summed_over_features")},
        mem_mb=2000,
        runtime=10,
    ),
    "paperfigs_comparisons": Rule(mem_mb=1000, runtime=5),
    "paperfigs_section": Rule(
        params={"loss_summed": Key("superposition.analysis.loss_summed_over_features")},
        mem_mb=2000,
        runtime=10,
    ),
}


def compare_inputs(config: dict, wildcards) -> dict:
    """Rule paperfigs_compare's inputs for one figure: its readings, and our superposition tables it needs
    where that stage runs."""
    readings, ours = FIGURE_INPUTS[wildcards.figure]
    out = dict(readings)
    if "superposition" in config["stages"]:
        out.update({name: f"results/superposition/{name}.csv" for name in ours})
    return out


def comparisons_inputs() -> list[str]:
    """Every figure's compare.csv (rule paperfigs_comparisons gathers them)."""
    return [f"results/paperfigs/{name}/compare.csv" for name in COMPARED]


def inputs() -> dict:
    """The pinned files rules paperfigs_fig8 and paperfigs_fig8b read (fetched by rule fetch_pinned_superposition_paper)."""
    return {"pdf": str(RAW / "figures/Fig-8-2.pdf"), "notebook": str(RAW / "LLMs/nonlinearfit-3.ipynb")}


def toy_inputs() -> dict:
    """The pinned figure files rule paperfigs_toy reads."""
    return {
        "fig4": str(RAW / "figures/Fig-4-3.pdf"),
        "fig5": str(RAW / "figures/Fig-5-1.pdf"),
        "fig6": str(RAW / "figures/Fig-6-3.pdf"),
        "fig1": str(RAW / "figures/Fig-1-2.pdf"),
    }


def regimes_inputs() -> dict:
    """The pinned figure files rule paperfigs_regimes reads."""
    return {
        "fig3": str(RAW / "figures/Fig-3-2.pdf"),
        "fig4": str(RAW / "figures/Fig-4-3.pdf"),
        "fig5": str(RAW / "figures/Fig-5-1.pdf"),
        "fig6": str(RAW / "figures/Fig-6-3.pdf"),
        "fig7": str(RAW / "figures/Fig-7-2.pdf"),
    }


def section_inputs(config: dict) -> dict:
    """Rule paperfigs_section's inputs: the readings, and our superposition exponents where that stage runs."""
    out = {
        "comparisons": "results/paperfigs/comparisons.csv",
        **{f"table_{name}": f"results/paperfigs/{name}/table.csv" for name in COMPARED},
        **{f"extra_{name}": f"results/paperfigs/{name}/extra.csv" for name in COMPARED},
        "points": "results/paperfigs/fig8a_points.csv",
        "fits": "results/paperfigs/fig8a_fits.csv",
        "summary": "results/paperfigs/fig8_summary.json",
        "fig4b": "results/paperfigs/fig4b_cells.csv",
        "fig6e": "results/paperfigs/fig6e_points.csv",
        "fig5b": "results/paperfigs/fig5b_points.csv",
        "fig1": "results/paperfigs/fig1_points.csv",
        "toy": "results/paperfigs/toy_readings.json",
        "fig8b_points": "results/paperfigs/fig8b_points.csv",
        "fig8b_fits": "results/paperfigs/fig8b_fits.csv",
        "fig8b_summary": "results/paperfigs/fig8b_summary.json",
        **REGIMES_TABLES,
        "regimes": REGIMES_SUMMARY,
    }
    if "superposition" in config["stages"]:
        out["exponents"] = "results/superposition/exponents.csv"
        out["cells"] = "results/superposition/cells.csv"
    return out
