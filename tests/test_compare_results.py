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
    assert (same, compared) == (1, 1) and "ONLY OLD: fits/squared/fit.json" in lines
    same, compared, lines = compare_results.compare(old, new, [("fits/squared/", "fits/decomposed/squared/")])
    assert (same, compared, lines) == (2, 2, [])


def test_the_command_exits_1_on_a_difference_and_names_a_missing_folder(tmp_path):
    old = write_run(tmp_path / "old", 0.36, 1.0)
    new = write_run(tmp_path / "new", 0.37, 1.0)
    p = subprocess.run([sys.executable, str(TOOL), str(old), str(new)], capture_output=True, text=True)
    assert p.returncode == 1 and "0 of 2 shared files the same to 1e-09 relative" in p.stdout
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
