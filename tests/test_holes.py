"""Which missing files a finished report was built from: Snakemake's records of the inputs of every output
(``depthwidth.report.holes.recorded_inputs``). A file that no present output was recorded as built from
(a new input after an upgrade) is left to Snakemake, which reruns its consumer."""

from __future__ import annotations

import base64
import json

from depthwidth.report.holes import recorded_inputs


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
