"""Which missing files a finished report was built from: Snakemake's records of the inputs of every output
(``depthwidth.report.holes.recorded_inputs``). A file that no present output was recorded as built from
(a new input after an upgrade) is left to Snakemake, which reruns its consumer."""

from __future__ import annotations

import base64
import json

from depthwidth.report.holes import leftover_message, leftover_outputs, recorded_inputs


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
    assert "results/f10.csv" not in text and "mv results/f00.csv results/f01.csv results/f02.csv …" in text
