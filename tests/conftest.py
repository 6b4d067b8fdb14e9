"""Shared test helpers: the repo location, the shared data mirror, and running Snakemake in a temp folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = (REPO / ".." / "shared" / "data").resolve()
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def have_shared_data() -> bool:
    return (SHARED_DATA / "chinchilla" / "svg_extracted_data.csv").is_file()


needs_shared_data = pytest.mark.skipif(not have_shared_data(), reason=f"no data mirror at {SHARED_DATA}")


def run_snakemake(workdir: Path, *args: str, configfiles=("config/test.yaml",), check: bool = True,
                  timeout: float = 900) -> subprocess.CompletedProcess:
    """Run the workflow of this repo in ``workdir`` with the test config (and extra args)."""
    cmd = [*SNAKEMAKE, "-s", str(REPO / "Snakefile"), "-d", str(workdir), "--cores", "2", *args]
    # --configfile takes several values, so it comes last (after targets and --config).
    if configfiles:
        cmd += ["--configfile", *(str(REPO / c) if not os.path.isabs(c) else c for c in configfiles)]
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=timeout, env=env)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake failed ({proc.returncode}):\n{proc.stdout[-4000:]}\n{proc.stderr[-6000:]}")
    return proc


def planned_jobs(proc: subprocess.CompletedProcess) -> dict[str, int]:
    """Rule -> job count from the 'Job stats' table of a dry run (``-n``); {} when nothing is planned."""
    text = proc.stdout + proc.stderr
    m = re.search(r"Job stats:\n(.*?)\n\n", text, re.S)
    if not m:
        return {}
    out = {}
    for line in m.group(1).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit() and parts[0] not in ("job", "total"):
            out[parts[0]] = int(parts[1])
    return out
