"""Files of the paper-figures stage that both the rules (``pipeline``) and the jobs name, so that no job's
code imports the rules' module."""

#: rule paperfigs_regimes's tables (name -> path); its summary is ``REGIMES_SUMMARY``
REGIMES_TABLES = {
    name: f"results/paperfigs/{name}_points.csv"
    for name in ("fig3a", "fig3b", "fig4a", "fig5a", "fig6c", "fig6d", "fig7a", "fig7b")
}
REGIMES_SUMMARY = "results/paperfigs/regimes_readings.json"
