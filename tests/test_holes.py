"""Which missing files a finished report was built from: Snakemake's records of the inputs of every output
(``depthwidth.report.holes.recorded_inputs``). A file that no present output was recorded as built from
(a new input after an upgrade) is left to Snakemake, which reruns its consumer."""

from __future__ import annotations

import base64
import json
import shlex
import shutil
import subprocess
from pathlib import Path

from depthwidth.report.holes import (
    leftover_message,
    leftover_outputs,
    missing_message,
    missing_upstream,
    recorded_inputs,
    write_leftover_script,
)


def _record(root, output: str, inputs: list[str]) -> None:
    name = base64.urlsafe_b64encode(output.encode()).decode()
    # Snakemake splits a name longer than a file name may be into folders of 255 characters
    parts = [name[i : i + 255] for i in range(0, len(name), 255)]
    path = root.joinpath(*parts)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"input": inputs, "rule": "r"}))


def test_recorded_inputs_of_present_outputs_only(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    meta = tmp_path / ".snakemake" / "metadata"
    assert recorded_inputs(meta) is None  # no records: nothing is known, the caller flags every hole
    long_dir = "results/" + "d" * 200 + "/" + "e" * 200
    (tmp_path / long_dir).mkdir(parents=True)
    for out in ("results/a.csv", f"{long_dir}/b.csv"):
        (tmp_path / out).write_text("x")
    _record(meta, "results/a.csv", ["data/1.csv", "data/2.csv"])
    _record(meta, f"{long_dir}/b.csv", ["data/3.csv"])
    _record(meta, "results/gone.csv", ["data/4.csv"])  # its output was deleted: not built from anything now
    (meta / "not-base64!").write_text("{}")
    assert recorded_inputs(meta) == {"data/1.csv", "data/2.csv", "data/3.csv"}
    assert len(f"{long_dir}/b.csv") > 255 // 4 * 3  # the long record really was split into folders
    assert any(p.is_dir() for p in meta.iterdir())


class _Rule:
    """A rule that makes the paths of one exact set (what Snakemake's ``Rule.is_producer`` answers)."""

    wildcard_names = ()

    def __init__(self, *paths):
        self.paths = set(paths)

    def is_producer(self, path):
        return path in self.paths


def test_leftover_outputs_are_present_recorded_outputs_no_rule_makes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    meta = tmp_path / ".snakemake" / "metadata"
    (tmp_path / "results").mkdir()
    for out in ("results/made.csv", "results/old.csv", "results/unrecorded.csv"):
        (tmp_path / out).write_text("x")
    _record(meta, "results/made.csv", [])
    _record(meta, "results/old.csv", [])  # an earlier version's output: no rule makes it now
    _record(meta, "results/deleted.csv", [])  # moved away already: not named
    rules = [_Rule("results/made.csv"), _Rule("results/unrecorded.csv")]
    left = leftover_outputs(rules, meta)
    assert left == {"results/old.csv": "r"}
    text = leftover_message({f"results/f{i:02d}.csv": "r" for i in range(12)})
    assert text.startswith("12 file(s)") and "results/f09.csv (rule r)" in text and "… and 2 more" in text
    assert "results/f10.csv" not in text and "…" not in text.split("sh ")[1]  # the command is whole
    assert "sh .snakemake/move_leftover_outputs.sh ../old_results" in text


def test_the_printed_leftover_command_moves_every_file_and_its_seal(tmp_path, monkeypatch):
    """Twelve leftovers (more than the notice lists), in two folders, ten of them with seals: the printed
    command, run as printed in the working folder, moves all twelve and their ten seals, paths kept."""
    monkeypatch.chdir(tmp_path)
    leftovers = {}
    for i in range(12):
        f = Path("results") / ("a b" if i % 2 else "old") / f"f{i:02d}.csv"  # a space in a folder name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(str(i))
        if i < 10:
            f.with_name(f".{f.name}.seal.json").write_text("{}")
        leftovers[str(f)] = "old_rule"
    script = write_leftover_script(leftovers)
    text = leftover_message(leftovers, script=script)
    assert "(rule old_rule; seal results/old/.f00.csv.seal.json)" in text
    assert "results/old/f10.csv" not in text and "… and 2 more" in text  # listed only up to ten
    command = text.split("\n  sh ")[1].splitlines()[0]
    done = subprocess.run(["sh", *shlex.split(command)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    moved = sorted(
        p.relative_to(tmp_path / "../old_results") for p in (tmp_path / "../old_results").rglob("*.*")
    )
    assert len(moved) == 22  # 12 files and 10 seals
    assert not list((tmp_path / "results").rglob("*.csv")) and not list((tmp_path / "results").rglob(".*"))
    assert (tmp_path / "../old_results/results/a b/f11.csv").read_text() == "11"
    # three files or fewer: the lines the script runs are printed too, each a working command
    few = {f"results/old/g{i}.csv": "r" for i in range(2)}
    for f in few:
        Path(f).write_text("x")
    text = leftover_message(few, script=write_leftover_script(few))
    assert 'which runs:\n  mkdir -p "../old_results"/results/old && mv -- results/old/g0.csv ' in text


class _GridRule:
    """A rule with one wildcard, ``results/{cell}/<out>`` from ``<inputs>`` (what walk_upstream calls)."""

    wildcard_names = ("cell",)

    def __init__(self, name, outputs, inputs, log):
        self.name, self.outputs, self.inputs, self.log = name, outputs, inputs, log

    def is_producer(self, path):
        return any(self.get_wildcards(path, o) is not None for o in self.outputs)

    def get_wildcards(self, path, pattern=None):
        for o in [pattern] if pattern else self.outputs:
            head, tail = o.split("{cell}")
            if path.startswith(head) and path.endswith(tail) and "/" not in path[len(head) : -len(tail)]:
                return {"cell": path[len(head) : -len(tail)]}
        return None

    def expand_output(self, w):
        return [o.format(**w) for o in self.outputs], None

    def expand_input(self, w):
        return [i.format(**w) for i in self.inputs], None

    def expand_log(self, w):
        return [self.log.format(**w)]


class _Section(_GridRule):
    wildcard_names = ()

    def get_wildcards(self, path, pattern=None):
        return {} if path in self.outputs else None


def test_a_missing_file_whose_job_left_no_log_is_a_hole_from_snakemakes_records(tmp_path, monkeypatch):
    """A fit cell's fit.json and bootstrap.csv removed with its log (a job killed before its script opened
    the log; Snakemake deletes the old log when the job starts): the section made from them is present,
    so the check names both files from Snakemake's record of the section's inputs; a cell just added to
    the grid (in no record) is left to Snakemake; without any record the log stands in."""
    monkeypatch.chdir(tmp_path)
    fit = _GridRule("fit", ["results/{cell}/fit.json", "results/{cell}/bootstrap.csv"], [], "logs/{cell}.log")
    cells = ["results/a/fit.json", "results/a/bootstrap.csv", "results/b/fit.json", "results/b/bootstrap.csv"]
    section = _Section("section", ["results/section.html"], [], "logs/section.log")
    section.inputs = cells + ["results/new/fit.json"]  # the cell "new" was just added to the grid
    for f in cells + ["results/section.html", "results/report.html", "logs/a.log", "logs/b.log"]:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("x")
    meta = tmp_path / ".snakemake" / "metadata"
    _record(meta, "results/section.html", cells)  # the section was built from cells a and b
    rules = [fit, section]
    report = (["results/section.html"], ["results/report.html"])
    assert missing_upstream(*report, rules, meta) == {}
    for f in ("results/b/fit.json", "results/b/bootstrap.csv", "logs/b.log"):
        (tmp_path / f).unlink()
    holes = missing_upstream(*report, rules, meta)
    assert holes == {"results/b/fit.json": "fit", "results/b/bootstrap.csv": "fit"}
    text = missing_message("results/report.html", list(holes))
    assert text.startswith("2 file(s) that results/report.html was built from are missing")
    assert text.endswith(
        "snakemake --cores all results/report.html results/b/fit.json results/b/bootstrap.csv"
    )
    # no record of any present output (a folder copied without .snakemake/): the logs stand in
    shutil.rmtree(tmp_path / ".snakemake")
    assert missing_upstream(*report, rules, meta) == {}
    (tmp_path / "logs" / "b.log").write_text("a failed job's log")
    assert set(missing_upstream(*report, rules, meta)) == {"results/b/fit.json", "results/b/bootstrap.csv"}
