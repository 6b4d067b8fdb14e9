"""Logging for Snakemake scripts: lines to the rule's log file, periodic progress for long loops."""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

log = logging.getLogger("depthwidth")


def setup_logging(path: str | Path | None = None, level: int = logging.INFO) -> logging.Logger:
    """Send depthwidth's log lines to ``path`` (a rule's ``log:`` file) and to stderr."""
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(path, mode="a"))
    logging.basicConfig(
        level=level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )
    sys.excepthook = _log_uncaught
    return log


def _log_uncaught(exc_type, exc, tb) -> None:
    """An exception that ends the script goes to the rule's log with its traceback (and to stderr, once,
    through the same handlers), so a failed job's log says what failed, where, and (in the exception's
    message: the file and the fix) what to do."""
    if issubclass(exc_type, KeyboardInterrupt):
        sys.__excepthook__(exc_type, exc, tb)
        return
    log.critical("the job failed: %s: %s", exc_type.__name__, exc, exc_info=(exc_type, exc, tb))


class Progress:
    """Progress lines for a loop of ``total`` steps: one line at most every ``every_s`` seconds.

    Logs lines rather than a tqdm bar because Snakemake logs are files, not terminals.
    """

    def __init__(self, total: int, what: str, every_s: float = 10.0, logger: logging.Logger | None = None):
        self.total, self.what, self.every_s = total, what, every_s
        self.logger = logger or log
        self.t0 = self.t_last = time.monotonic()
        self.done = 0

    def update(self, n: int = 1, **extra) -> None:
        self.done += n
        now = time.monotonic()
        if now - self.t_last >= self.every_s or self.done >= self.total:
            self.t_last = now
            elapsed = now - self.t0
            rate = self.done / elapsed if elapsed > 0 else float("nan")
            eta = (self.total - self.done) / rate if rate > 0 else float("nan")
            tail = " ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in extra.items())
            self.logger.info(
                "%s: %d/%d (%.0f%%) %.1fs elapsed, eta %.1fs %s",
                self.what,
                self.done,
                self.total,
                100 * self.done / max(self.total, 1),
                elapsed,
                eta,
                tail,
            )
