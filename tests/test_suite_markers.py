"""The suite's two speeds: a test that starts Snakemake must carry the ``workflow`` marker (conftest fails
an unmarked one at that moment), so that ``pytest -m "not workflow"`` is the quick loop."""

from __future__ import annotations

import subprocess
import sys

import pytest
from _pipeline import SNAKEMAKE, is_snakemake


@pytest.mark.parametrize(
    "args, starts",
    [
        ([SNAKEMAKE, "-n"], True),
        (["snakemake", "--version"], True),
        ("snakemake --cores 2 results/report.html", True),
        ([sys.executable, "-m", "snakemake", "-n"], True),
        (["bash", "-c", "cd /tmp && snakemake --unlock"], True),
        ([sys.executable, "-c", "pass"], False),
        (["bash", "scripts/cluster/slurm-local.sh"], False),
        (["git", "log", "--grep", "snakemake"], False),
    ],
)
def test_snakemake_command_lines_are_recognised(args, starts):
    assert is_snakemake(args) is starts


def test_unmarked_test_cannot_start_snakemake():
    # the guard stops it before the process starts, with the marker's name and how to set it
    with pytest.raises(pytest.fail.Exception, match=r"@pytest\.mark\.workflow"):
        subprocess.run([SNAKEMAKE, "--version"], capture_output=True, check=False)
    # other programs still run
    assert (
        subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True).stdout
        == "42\n"
    )


@pytest.mark.workflow
def test_marked_test_may_start_snakemake():
    p = subprocess.run([SNAKEMAKE, "--version"], capture_output=True, text=True, check=False)
    assert p.returncode == 0 and p.stdout.split(".")[0].isdigit(), p.stdout + p.stderr
