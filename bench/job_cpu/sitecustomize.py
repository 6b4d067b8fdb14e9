"""CPU seconds of every Python process of a run, for ``bench/job_cpu.py``: put this folder on PYTHONPATH
and name a log file in ``DEPTHWIDTH_JOB_CPU_LOG``; each process appends its own user + system time (from
``getrusage`` at exit), its wall time and its command line. Nothing is written without the variable."""

import atexit
import os
import resource
import sys
import time

_LOG = os.environ.get("DEPTHWIDTH_JOB_CPU_LOG")
_T0 = time.monotonic()


def _record() -> None:
    r = resource.getrusage(resource.RUSAGE_SELF)
    line = (
        f"{r.ru_utime + r.ru_stime:.3f}\t{time.monotonic() - _T0:.3f}\t{os.getpid()}\t{' '.join(sys.argv)}\n"
    )
    try:
        with open(_LOG, "a") as f:
            f.write(line)
    except OSError:
        pass


if _LOG:
    atexit.register(_record)
