"""Files of the paper-figures stage that both the rules (``pipeline``) and the jobs name, so that no job's
code imports the rules' module."""

#: rule paperfigs_regimes's tables (name -> path); its summary is ``REGIMES_SUMMARY``
REGIMES_TABLES = {
    name: f"results/paperfigs/{name}_points.csv"
    for name in ("fig3a", "fig3b", "fig4a", "fig5a", "fig6c", "fig6d", "fig7a", "fig7b")
}
REGIMES_SUMMARY = "results/paperfigs/regimes_readings.json"


def _r(name: str) -> str:
    return f"results/paperfigs/{name}"


_REGIMES = {"regimes": REGIMES_SUMMARY}
#: the compared figures, one rule paperfigs_compare job each: the reading files each compares (input name
#: -> file) and our superposition tables it needs ("cells", "exponents"); the figure records of
#: ``depthwidth.paperfigs.figures.FIGURES`` name them
FIGURE_INPUTS = {
    "fig8a": (
        {"points": _r("fig8a_points.csv"), "fits": _r("fig8a_fits.csv"), "summary": _r("fig8_summary.json")},
        (),
    ),
    "fig8b": (
        {
            "points": _r("fig8b_points.csv"),
            "fits": _r("fig8b_fits.csv"),
            "summary": _r("fig8b_summary.json"),
            "notebook": _r("fig8_summary.json"),
        },
        (),
    ),
    "fig4b": (
        {"fig4b": _r("fig4b_cells.csv"), "fig6e": _r("fig6e_points.csv"), "toy": _r("toy_readings.json")},
        ("exponents",),
    ),
    "fig5b": ({"fig5b": _r("fig5b_points.csv")}, ("exponents",)),
    "fig1": ({"fig1": _r("fig1_points.csv")}, ("cells",)),
    "fig3": ({"fig3a": REGIMES_TABLES["fig3a"], "fig3b": REGIMES_TABLES["fig3b"], **_REGIMES}, ("cells",)),
    "fig4a": ({"fig4a": REGIMES_TABLES["fig4a"], **_REGIMES}, ("cells",)),
    "fig5a": ({"fig5a": REGIMES_TABLES["fig5a"], **_REGIMES}, ("cells",)),
    "fig6c": ({"fig6c": REGIMES_TABLES["fig6c"], **_REGIMES}, ("cells",)),
    "fig6d": ({"fig6d": REGIMES_TABLES["fig6d"], **_REGIMES}, ("cells",)),
    "fig7": ({"fig7a": REGIMES_TABLES["fig7a"], "fig7b": REGIMES_TABLES["fig7b"], **_REGIMES}, ("cells",)),
}
COMPARED = tuple(FIGURE_INPUTS)
