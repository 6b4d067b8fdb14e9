"""CPU seconds per rule of a run, from the log that ``bench/job_cpu/sitecustomize.py`` writes: exact per
process (``getrusage`` at exit), where Snakemake's ``benchmark:`` files sample every 30 s and miss the end
of each job. Run the workflow with the hook, then summarise:

    DEPTHWIDTH_JOB_CPU_LOG=/tmp/cpu.tsv PYTHONPATH=$PWD/src:$PWD/bench/job_cpu \\
        .venv/bin/snakemake --cores 8 results/report.html
    .venv/bin/python bench/job_cpu.py /tmp/cpu.tsv

A job's script runs as ``.snakemake/scripts/tmp<random>.<rule script>.py``; other processes (Snakemake
itself, pip) are listed by their command line.
"""

from __future__ import annotations

import argparse
import collections
import re


def summarise(lines: list[str]) -> list[tuple[str, int, float, float]]:
    """(what, processes, CPU-s, wall-s) per rule script or command, most CPU first."""
    agg: dict[str, list] = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for line in lines:
        cpu, wall, _pid, argv = line.rstrip("\n").split("\t", 3)
        m = re.search(r"\.snakemake/scripts/tmp\w+\.(\w+)\.py", argv)
        key = m.group(1) if m else argv[:70]
        agg[key][0] += 1
        agg[key][1] += float(cpu)
        agg[key][2] += float(wall)
    return sorted(((k, n, c, w) for k, (n, c, w) in agg.items()), key=lambda r: -r[2])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", help="the file named in DEPTHWIDTH_JOB_CPU_LOG")
    with open(ap.parse_args().log) as f:
        rows = summarise(f.readlines())
    for what, n, cpu, wall in rows:
        print(f"{cpu:8.1f} CPU-s {n:4d} processes {wall:8.1f} wall-s  {what}")
    print(f"{sum(r[2] for r in rows):8.1f} CPU-s in all")


if __name__ == "__main__":
    main()
