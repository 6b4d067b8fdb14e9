"""Shared test helpers: the repo location and the shared data mirror. Running Snakemake in a temp folder
lives in ``_pipeline``; ``run_snakemake`` and ``planned_jobs`` are re-exported here for the stage tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from _pipeline import REPO, planned_jobs, run

SHARED_DATA = (REPO / ".." / "shared" / "data").resolve()


def have_shared_data() -> bool:
    return (SHARED_DATA / "chinchilla" / "svg_extracted_data.csv").is_file()


needs_shared_data = pytest.mark.skipif(not have_shared_data(), reason=f"no data mirror at {SHARED_DATA}")


def run_snakemake(
    workdir: Path, *args: str, configfiles=("config/test.yaml",), check: bool = True, timeout: float = 900
):
    """``_pipeline.run`` on 2 cores with config.yaml plus ``configfiles`` (relative to the repo unless absolute)."""
    configs = [REPO / "config.yaml", *(Path(c) if os.path.isabs(c) else REPO / c for c in configfiles)]
    return run(workdir, "--cores", "2", *args, configs=configs, check=check, timeout=timeout)


__all__ = ["REPO", "SHARED_DATA", "have_shared_data", "needs_shared_data", "planned_jobs", "run_snakemake"]
