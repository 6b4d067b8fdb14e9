"""``python -m depthwidth.chinchilla fit RUNS.csv ...``: the ``depthwidth`` command (``depthwidth.cli``)."""

import sys

from depthwidth.cli import main

sys.exit(main())
