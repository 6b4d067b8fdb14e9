"""The results comparison that refactors are checked with (``bench/compare_results.py``): it reports a
number that moved beyond the tolerance, ignores timing fields and checksums, follows a moved output and
exits 1 on a difference.

    PYTHONPATH=src .venv/bin/python -m pytest tests/test_compare_results.py -q
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOOL = REPO / "bench" / "compare_results.py"
spec = importlib.util.spec_from_file_location("compare_results", TOOL)
compare_results = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_results)


def write_run(root: Path, alpha: float, seconds: float, fit_dir: str = "fits/squared") -> Path:
    (root / "results" / fit_dir).mkdir(parents=True)
    fit = {"params": {"alpha": {"value": alpha, "stderr": 0.01}}, "n_points": 240, "elapsed_seconds": seconds}
    (root / "results" / fit_dir / "fit.json").write_text(json.dumps(fit))
    (root / "results" / fit_dir / ".fit.json.seal.json").write_text(json.dumps({"sha256": str(seconds)}))
    (root / "results" / "headline.csv").write_text(f"row,value\nalpha,{alpha}\n")
    return root


def test_a_number_beyond_the_tolerance_is_a_difference(tmp_path):
    old = write_run(tmp_path / "old", 0.36025279815, 10.0)
    new = write_run(tmp_path / "new", 0.36025279815 * (1 + 1e-6), 99.0)
    same, compared, lines = compare_results.compare(old, new, [])
    assert (same, compared) == (0, 2)
    assert "DIFF fits/squared/fit.json (1):" in lines
    assert any(".params.alpha.value: 0.36025279815 ->" in line for line in lines)
    assert not any("elapsed" in line or "seal" in line for line in lines)


def test_within_the_tolerance_timing_apart_the_runs_are_the_same(tmp_path):
    old = write_run(tmp_path / "old", 0.36025279815, 10.0)
    new = write_run(tmp_path / "new", 0.36025279815 * (1 + 1e-12), 99.0, fit_dir="fits/decomposed/squared")
    same, compared, lines = compare_results.compare(old, new, [])
    assert (same, compared) == (1, 2)  # the fit is missing where the old run had it: a difference
    assert any(line.startswith("ONLY OLD: fits/squared/fit.json (missing from ") for line in lines)
    same, compared, lines = compare_results.compare(old, new, [("fits/squared/", "fits/decomposed/squared/")])
    assert (same, compared, lines) == (2, 2, [])


def test_the_command_exits_1_on_a_difference_and_names_a_missing_folder(tmp_path):
    old = write_run(tmp_path / "old", 0.36, 1.0)
    new = write_run(tmp_path / "new", 0.37, 1.0)
    p = subprocess.run([sys.executable, str(TOOL), str(old), str(new)], capture_output=True, text=True)
    assert p.returncode == 1 and "0 of 2 files of the earlier run the same to 1e-09 relative" in p.stdout
    p = subprocess.run(
        [sys.executable, str(TOOL), str(old), str(tmp_path / "nowhere")], capture_output=True, text=True
    )
    assert p.returncode == 1 and "nowhere/results is not a folder" in p.stderr


def test_science_keys_that_contain_a_timing_word_are_compared(tmp_path):
    """Timing fields are matched by whole words: ``m_times_mean_sq_overlap`` (the LM head's 1/m law) and
    ``angle_update_deg`` are numbers, ``train_seconds`` and ``ms_per_step`` are not."""
    for name, overlap, angle, secs in (("old", 0.91, 12.5, 1.0), ("new", 0.95, 13.5, 2.0)):
        (tmp_path / name / "results").mkdir(parents=True)
        row = {
            "m_times_mean_sq_overlap": overlap,
            "angle_update_deg": angle,
            "train_seconds": secs,
            "ms_per_step": secs,
        }
        (tmp_path / name / "results" / "geometry.json").write_text(json.dumps(row))
    same, compared, lines = compare_results.compare(tmp_path / "old", tmp_path / "new", [])
    assert (same, compared) == (0, 1)
    assert lines == [
        "DIFF geometry.json (2):",
        "    .m_times_mean_sq_overlap: 0.91 -> 0.95",
        "    .angle_update_deg: 12.5 -> 13.5",
    ]


def _tool(old: Path, new: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TOOL), str(old), str(new)], capture_output=True, text=True)


def test_a_file_missing_from_the_new_run_fails_the_comparison_naming_it(tmp_path):
    old = write_run(tmp_path / "old", 0.36, 1.0)
    new = write_run(tmp_path / "new", 0.36, 1.0)
    (new / "results" / "headline.csv").unlink()
    p = _tool(old, new)
    assert p.returncode == 1, p.stdout
    assert "ONLY OLD: headline.csv (missing from " in p.stdout
    assert "1 of 2 files of the earlier run the same" in p.stdout
    # a file only the new run has is listed, and is not a difference
    (new / "results" / "headline.csv").write_text("row,value\nalpha,0.36\n")
    (new / "results" / "added.json").write_text("{}")
    p = _tool(old, new)
    assert p.returncode == 0 and "ONLY NEW: added.json" in p.stdout and "2 of 2 files" in p.stdout


def test_empty_and_header_only_csvs_compare(tmp_path):
    """Two identical runs of the test config hold a 1-byte sweeps.csv (a newline) and header-only tables."""
    for name in ("old", "new"):
        (tmp_path / name / "results").mkdir(parents=True)
        (tmp_path / name / "results" / "sweeps.csv").write_text("\n")
        (tmp_path / name / "results" / "empty.csv").write_text("")
        (tmp_path / name / "results" / "header.csv").write_text("sweep,alpha_l\n")
    p = _tool(tmp_path / "old", tmp_path / "new")
    assert p.returncode == 0 and "3 of 3 files of the earlier run the same" in p.stdout, p.stdout + p.stderr
    # a header-only table against one with a row differs
    (tmp_path / "new" / "results" / "header.csv").write_text("sweep,alpha_l\nmine,1.2\n")
    p = _tool(tmp_path / "old", tmp_path / "new")
    assert p.returncode == 1 and "DIFF header.csv (2):" in p.stdout and ".alpha_l: length 0 -> 1" in p.stdout


def test_an_unreadable_file_is_a_difference_naming_the_file(tmp_path):
    old = write_run(tmp_path / "old", 0.36, 1.0)
    new = write_run(tmp_path / "new", 0.36, 1.0)
    (new / "results" / "fits" / "squared" / "fit.json").write_text('{"params": ')  # cut short
    (new / "results" / "headline.csv").write_bytes(b'row,value\n"alpha,0.36\n')  # an unclosed quote
    p = _tool(old, new)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    bad = [line for line in p.stdout.splitlines() if line.startswith("UNREADABLE")]
    assert len(bad) == 2, p.stdout
    assert "fits/squared/fit.json" in bad[0] and "JSONDecodeError" in bad[0]
    assert str(new / "results" / "headline.csv") in bad[1] and "ParserError" in bad[1]
    assert "0 of 2 files of the earlier run the same" in p.stdout
