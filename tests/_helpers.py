"""Paths and markers that tests of every kind share: the repo, the read-only data mirror and the skip for
tests that need it. Helpers that run Snakemake live in ``_pipeline``; fixtures and hooks in ``conftest``."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = (REPO / ".." / "shared" / "data").resolve()


def have_shared_data() -> bool:
    return (SHARED_DATA / "chinchilla" / "svg_extracted_data.csv").is_file()


needs_shared_data = pytest.mark.skipif(not have_shared_data(), reason=f"no data mirror at {SHARED_DATA}")
