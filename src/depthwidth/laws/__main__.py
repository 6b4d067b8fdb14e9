"""``python -m depthwidth.laws fit RUNS.csv ...``: the ``depthwidth`` command (``depthwidth.cli``), which
fits the fitting layer's laws to a CSV of runs."""

import sys

from depthwidth.cli import main

sys.exit(main())
