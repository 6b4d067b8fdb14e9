"""The assembled report: figures embedded from their files, declared inputs only, a clear error for a
missing figure; the report rule's inputs from the config."""

import base64
import json
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from _pipeline import planned_jobs, run  # noqa: E402
from depthwidth.report import pipeline  # noqa: E402
from depthwidth.rules import job_params  # noqa: E402
from depthwidth import verdicts as v  # noqa: E402
from depthwidth.sections import Figures, write_section  # noqa: E402
from depthwidth.report.page import FigureError, embed_figures, report  # noqa: E402
from depthwidth.verdicts import COLUMNS  # noqa: E402

CONFIG = {
    "stages": ["chinchilla", "lm_head"],
    "report": {"title": "A <test> report"},
    "chinchilla": {"fit": {}},
    "lm_head": {"models": ["m1", "m2"]},
    "hidden_states": {"models": ["m3"]},
    "models": {"m1": {}, "m2": {}, "m3": {}},
}


class FakeRule:
    """Just what ``upstream_benchmarks`` asks of a Snakemake rule, with ``{name}`` wildcards."""

    def __init__(self, name, outputs, benchmark=None, inputs=lambda wc: []):
        self.name, self.outputs, self.benchmark, self.inputs = name, outputs, benchmark, inputs
        self.wildcard_names = set(re.findall(r"\{(\w+)\}", outputs[0]))

    def _match(self, path):
        for o in self.outputs:
            m = re.fullmatch(re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(o)), path)
            if m:
                return m.groupdict()
        return None

    def is_producer(self, path):
        return self._match(path) is not None

    def get_wildcards(self, path):
        return self._match(path)

    def expand_benchmark(self, wc):
        return self.benchmark.format(**wc)

    def expand_input(self, wc):
        return (self.inputs(wc),)


def _section_rule(stage, inputs):
    outs = [f"results/{stage}/section.html", f"results/{stage}/headline.json", f"results/{stage}/figures"]
    return FakeRule(f"{stage}_section", outs, f"benchmarks/{stage}/section.tsv", lambda wc: inputs)


RULES = [
    _section_rule("chinchilla", ["results/chinchilla/fits/decomposed/squared/fit.json"]),
    FakeRule(
        "chinchilla_fit",
        ["results/chinchilla/fits/decomposed/squared/fit.json"],
        "benchmarks/chinchilla/fits/decomposed/squared/fit.tsv",
        lambda wc: ["data/raw/points.csv"],
    ),
    _section_rule("lm_head", ["results/lm_head/width_fit.json"]),
    FakeRule(
        "lm_head_width_fit",
        ["results/lm_head/width_fit.json"],
        "benchmarks/lm_head/width_fit.tsv",
        lambda wc: ["results/lm_head/geometry/m1.json", "results/lm_head/geometry/m2.json"],
    ),
    FakeRule(
        "lm_head_geometry",
        ["results/lm_head/geometry/{model}.json"],
        "benchmarks/lm_head/geometry_{model}.tsv",
        lambda wc: [f"data/models/{wc['model']}/manifest.json"],
    ),
    FakeRule(
        "model_fetch", ["data/models/{model}/manifest.json"], "benchmarks/models/model_fetch_{model}.tsv"
    ),
    FakeRule("fetch_pinned_chinchilla", ["data/raw/chinchilla/a.csv"]),  # no benchmark
    _section_rule("hidden_states", ["results/hidden_states/stats.csv"]),  # not enabled
]


def test_inputs_name_sections_figures_manifests_and_upstream_benchmarks():
    inputs = pipeline.inputs(CONFIG, RULES)
    assert inputs["chinchilla_figures"] == "results/chinchilla/figures"
    assert inputs["lm_head_html"] == "results/lm_head/section.html"
    assert "hidden_states_html" not in inputs
    assert inputs["synthesis_chinchilla"] == "results/chinchilla/fits/decomposed/squared/fit.json"
    # Models of enabled stages only: hidden_states is not enabled, so m3's manifest is not read.
    assert inputs["manifests"] == ["data/models/m1/manifest.json", "data/models/m2/manifest.json"]
    # Every job upstream of the declared files, once, wildcards filled in from the requested paths.
    assert sorted(inputs["benchmarks"]) == [
        "benchmarks/chinchilla/fits/decomposed/squared/fit.tsv",
        "benchmarks/chinchilla/section.tsv",
        "benchmarks/lm_head/geometry_m1.tsv",
        "benchmarks/lm_head/geometry_m2.tsv",
        "benchmarks/lm_head/section.tsv",
        "benchmarks/lm_head/width_fit.tsv",
        "benchmarks/models/model_fetch_m1.tsv",
        "benchmarks/models/model_fetch_m2.tsv",
    ]
    assert job_params(CONFIG, pipeline, "report", reduced={"chinchilla": True})["title"] == "A <test> report"


@pytest.mark.workflow
def test_report_rule_declares_the_benchmark_of_every_upstream_job(tmp_path):
    """In the real workflow (test config): one benchmark input per job the report waits for, except the
    download jobs, which have no benchmark."""
    p = run(tmp_path, "-n", "-p", "--cores", "1", "results/report.html")
    text = p.stdout + p.stderr
    report_inputs = re.search(r"rule report:\n\s+input: ([^\n]+)", text).group(1).split(", ")
    benchmarks = [f for f in report_inputs if f.startswith("benchmarks/")]
    jobs = planned_jobs(text)
    expected = sum(n for r, n in jobs.items() if r != "report" and not r.startswith("fetch_pinned_"))
    assert len(benchmarks) == len(set(benchmarks)) == expected
    assert "benchmarks/chinchilla/fits/decomposed/squared/fit.tsv" in benchmarks


def _section(stage: str, n_figures: int = 1) -> None:
    figs = Figures(f"results/{stage}/figures")
    body = ""
    for i in range(n_figures):
        fig, ax = plt.subplots(figsize=(2, 2))
        ax.plot([0, 1], [0, i + 1])
        body += figs.html(fig, f"line{i}", f"Line {i}. A caption.")
    row = v.compare(
        stage,
        "q",
        "depth",
        "a claim",
        f"{stage} quantity",
        v.difference_test(1.05, v.Error(0.02, v.COVARIANCE, unit="runs", resamples=200), 1.0, 0.1),
        value=1.05,
        paper_value=1.0,
        paper_err=0.1,
    ).row()
    write_section(
        f"results/{stage}/section.html", f"results/{stage}/headline.json", stage, stage, body, [row]
    )


def _inputs() -> dict:
    inputs = pipeline.inputs(CONFIG, RULES)
    del inputs["synthesis_chinchilla"], inputs["synthesis_width"]
    return inputs


@pytest.fixture()
def run_folder(tmp_path, monkeypatch):
    """A working directory with two sections, their figures, two manifests and the benchmark files."""
    monkeypatch.chdir(tmp_path)
    _section("chinchilla", 2)
    _section("lm_head", 1)
    inputs = _inputs()
    for i, m in enumerate(inputs["manifests"]):
        (tmp_path / m).parent.mkdir(parents=True)
        (tmp_path / m).write_text(json.dumps({"source": "pypi", "n": i}))
    for b in inputs["benchmarks"]:
        (tmp_path / b).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / b).write_text("s\th:m:s\tmax_rss\n1.5\t0:00:01\t100\n")
    (tmp_path / "data" / "undeclared.bin").write_bytes(b"x")  # must not be hashed
    (tmp_path / "benchmarks" / "other.tsv").write_text("s\n99\n")  # must not be counted
    return tmp_path


def test_report_embeds_figure_files_and_hashes_only_declared_inputs(run_folder):
    report(
        "A <test> report",
        CONFIG["stages"],
        {"chinchilla": False, "lm_head": True},
        CONFIG,
        _inputs(),
        "results/report.html",
        "results/headline.csv",
    )
    page = (run_folder / "results" / "report.html").read_text()
    assert "<title>A &lt;test&gt; report</title>" in page
    srcs = re.findall(r'<img[^>]*src="([^"]+)"', page)
    assert len(srcs) == 3 and all(s.startswith("data:image/png;base64,") for s in srcs)
    png = (run_folder / "results/chinchilla/figures/line1.png").read_bytes()
    assert base64.b64encode(png).decode() in page
    assert 'id="chinchilla"' in page and 'id="lm_head"' in page and "id='headline'" in page
    assert "table.tbl" in page  # the stylesheet is included
    # Provenance: every declared file with its checksum, nothing else.
    for f in (
        "results/chinchilla/figures/line0.png",
        "results/lm_head/headline.json",
        "data/models/m2/manifest.json",
        "benchmarks/lm_head/geometry_m1.tsv",
    ):
        assert f in page
    assert "undeclared.bin" not in page and "other.tsv" not in page
    assert "Model source and revision: data/models/m1/manifest.json" in page
    rows = pd.read_csv(run_folder / "results" / "headline.csv")
    assert list(rows["stage"]) == ["chinchilla", "lm_head"]
    assert tuple(rows.columns) == COLUMNS and list(rows["verdict"]) == ["yes", "yes"]


def test_missing_figure_is_an_error_naming_the_file(run_folder):
    (run_folder / "results/lm_head/figures/line0.png").unlink()
    with pytest.raises(
        FigureError,
        match=r"section lm_head shows results/lm_head/figures/line0\.png, but that file is missing",
    ):
        report("t", CONFIG["stages"], {}, CONFIG, _inputs(), "results/report.html", "results/headline.csv")
    assert not (run_folder / "results" / "report.html").exists()


def test_figure_outside_declared_folders_is_an_error():
    frag = '<figure><img src="results/other/figures/a.png" alt="a"></figure>'
    with pytest.raises(
        FigureError, match="results/other/figures/a.png, which is not in a declared figure folder"
    ):
        embed_figures(frag, ["results/chinchilla/figures"])


def test_headline_verdicts_grouped_by_paper_and_the_configuration_stated_once():
    """Comparison records in one table, grouped by paper then claim; the verdict words are the records';
    the configuration is said once, above; a fit at a bound prints no error; the paper's printed digits
    are kept (1.2014)."""
    from depthwidth.report.page import headline_table_html
    from depthwidth.report.rows import normalise

    err = v.Error(0.02, v.COVARIANCE, unit="runs", resamples=200)
    made = [
        ("chinchilla", "a", "depth", v.difference_test(1.05, err, 1.0, 0.1), 1.05, "1 ± 0.1"),
        ("superposition", "b", "superposition", v.difference_test(2.0, err, 1.0, 0.1), 2.0, "1 ± 0.1"),
        ("lm_head", "c", "superposition", v.not_tested("one width"), 0.5, "≈ 1"),
        ("chinchilla", "d", "depth", v.no_paper_number(), 0.3, None),
    ]
    rows = [
        normalise(
            v.compare(stage, key, paper, f"claim {key}", key, verdict, value=value, paper_text=text).row(),
            stage,
        )
        for stage, key, paper, verdict, value, text in made
    ]
    assert [r["verdict_text"] for r in rows] == [
        "yes",
        "no: Δ = +1, beyond 0.2",
        "not tested: one width",
        "–",
    ]
    adam = v.compare(
        "chinchilla",
        "adam",
        "depth",
        "α_ℓ from the Chinchilla runs",
        "α_ℓ, the paper's Adam procedure",
        v.procedure_test(1.201390266, 1.2014),
        value=1.201390266,
        paper_value=1.2014,
        paper_text="1.2014",
    ).row()
    bound = v.compare(
        "chinchilla",
        "main",
        "depth",
        "α_ℓ on public sweeps",
        "α_ℓ (openlm_main)",
        v.not_tested("at its bound"),
        value=9.9999,
        err=v.Error(4.9e6, v.COVARIANCE, unit="runs", resamples=200),
        paper_text="≈ 1",
        bound_params=["alpha_l"],
    ).row()
    rows += [normalise(adam, "chinchilla"), normalise(bound, "chinchilla")]
    table = headline_table_html(rows, {"chinchilla": False, "lm_head": True})
    assert table.count("reduced settings in") == 1 and table.index("reduced settings") < table.index("<table")
    assert "<b>lm_head</b>" in table and "the papers' settings in chinchilla" in table
    # one heading per paper, the depth paper first although a superposition row comes second
    depth, sup = v.PAPERS["depth"], v.PAPERS["superposition"]
    assert table.count(depth) == 1 and table.count(sup) == 1 and table.index(depth) < table.index(sup)
    assert table.index(">b <a") > table.index(sup) > table.index(">d <a")
    assert "1.2014</td>" in table and "reproduced exactly" in table
    assert ">10</td>" in table and "4.9e+06" not in table and "at a bound: alpha_l" in table


def test_a_users_sweep_gets_its_own_table_and_file_and_leaves_headline_csv_as_it_was(run_folder):
    """The papers' headline.csv is the same bytes with or without a user's sweep; the sweep's row is in
    its own table below the papers' and in results/your_sweeps.csv; the verdict line per paper is first."""
    from depthwidth import verdicts as v

    args = ("t", CONFIG["stages"], {}, CONFIG, _inputs(), "results/report.html", "results/headline.csv")
    report(*args, sweeps_path="results/your_sweeps.csv")
    before = (run_folder / "results/headline.csv").read_bytes()
    assert len(pd.read_csv(run_folder / "results/your_sweeps.csv")) == 0
    rows = json.loads((run_folder / "results/chinchilla/headline.json").read_text())
    mine = v.compare(
        "chinchilla",
        "sweep_mine",
        "depth",
        v.sweep_claim("mine"),
        "α_ℓ (sweep mine)",
        v.not_tested("95 % profile interval open above"),
        value=0.0708,
        paper_text="≈ 1",
    ).row()
    write_section(
        "results/chinchilla/section.html",
        "results/chinchilla/headline.json",
        "chinchilla",
        "chinchilla",
        (run_folder / "results/chinchilla/section.html").read_text(),
        rows + [mine],
    )
    report(*args, sweeps_path="results/your_sweeps.csv")
    assert (run_folder / "results/headline.csv").read_bytes() == before
    sweeps = pd.read_csv(run_folder / "results/your_sweeps.csv")
    assert list(sweeps["claim"]) == ["sweep: mine"] and tuple(sweeps.columns) == COLUMNS
    page = (run_folder / "results/report.html").read_text()
    head = page.index("id='headline'")
    assert (
        page.index("id='verdicts'") < head < page.index("<h2>Sweeps of runs</h2>") < page.index("id='sweeps'")
    )
    assert "α_ℓ (sweep mine)" not in page[head : page.index("<h2>Sweeps of runs</h2>")]
    assert "The depth paper" in page[:head] and "reproduced" in page[:head]
