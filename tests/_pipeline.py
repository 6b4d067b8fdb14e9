"""Helpers for the tests that run Snakemake in a temporary folder (never in the repo root: Snakemake
locks its working directory). A test that starts Snakemake carries the ``workflow`` marker; ``conftest``
stops an unmarked one at the start of its Snakemake, so ``pytest -m "not workflow"`` stays quick."""

from __future__ import annotations

import copy
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml
from _helpers import REPO

from depthwidth.config import deep_merge

SNAKEFILE = REPO / "Snakefile"
# the snakemake next to the running python (the project's venv), not whatever is first on PATH
SNAKEMAKE = str(Path(sys.executable).with_name("snakemake"))
BASE_CONFIGS = [REPO / "config.yaml", REPO / "config" / "test.yaml"]


def env() -> dict:
    """Environment for a Snakemake child: the checkout's package importable, one thread per BLAS."""
    e = dict(os.environ)
    e["PYTHONPATH"] = str(REPO / "src") + os.pathsep + e.get("PYTHONPATH", "")
    e.setdefault("OMP_NUM_THREADS", "1")
    return e


def dry_run_as_written(command: str, wd) -> subprocess.CompletedProcess:
    """A documented ``snakemake …`` command as a dry run from the repo root, in working directory ``wd``.
    -s/-d/-n go right after the program, so the rest is parsed exactly as written (an argument order that
    swallows a target, e.g. a target after --configfile, fails here as it would for a user)."""
    return subprocess.run(
        [SNAKEMAKE, "-s", str(SNAKEFILE), "-d", str(wd), "-n", *shlex.split(command)[1:]],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=env(),
        timeout=300,
    )


def snakemake_cmd(workdir: Path, *args: str, configs: list[Path] | None = None) -> list[str]:
    """``snakemake -s <repo>/Snakefile -d <workdir> ARGS --configfile config.yaml config/test.yaml ...``.
    ``--configfile`` takes several values, so it comes last: a target after it would be read as a config file."""
    configs = BASE_CONFIGS if configs is None else configs
    return [SNAKEMAKE, "-s", str(SNAKEFILE), "-d", str(workdir), *args, "--configfile", *map(str, configs)]


def copy_stage(done: Path, dest: Path, stage: str) -> Path:
    """The part of the finished run ``done`` that a stage with no inputs from other rules owns (its results,
    logs and benchmarks, and Snakemake's records of every output), copied into ``dest`` with the files'
    times kept: there Snakemake plans nothing for the stage, and a test may change and rerun it."""
    import shutil

    for part in (f"results/{stage}", f"logs/{stage}", f"benchmarks/{stage}", ".snakemake/metadata"):
        if (done / part).exists():
            shutil.copytree(done / part, dest / part, symlinks=True, dirs_exist_ok=True)
    return dest


def start_detached(
    workdir: Path, *args: str, configs: list[Path] | None = None, log=None
) -> subprocess.Popen:
    """Start ``snakemake ARGS`` in ``workdir`` without waiting, in a session of its own, so that killing the
    process group takes Snakemake and every job it started, as losing a terminal or a node would. Output goes
    to the open file ``log``."""
    return subprocess.Popen(
        snakemake_cmd(workdir, *args, configs=configs),
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env(),
        start_new_session=True,
    )


def run(
    workdir: Path,
    *args: str,
    configs: list[Path] | None = None,
    timeout: float = 600,
    check: bool = True,
    extra_env: dict | None = None,
) -> subprocess.CompletedProcess:
    """Run Snakemake to completion; on failure (when ``check``) raise with the log tail."""
    p = subprocess.run(
        snakemake_cmd(workdir, *args, configs=configs),
        check=False,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**env(), **(extra_env or {})},
    )
    if check and p.returncode != 0:
        raise AssertionError(
            f"snakemake {' '.join(args)} failed (rc {p.returncode}):\n" + (p.stdout + p.stderr)[-6000:]
        )
    return p


def merge(base: dict, changes: dict) -> dict:
    """``changes`` laid over ``base`` the way Snakemake overlays config files (dicts merge, lists replace)."""
    return deep_merge(copy.deepcopy(base), copy.deepcopy(changes))


def merged_config(extra: list[dict] | None = None) -> dict:
    """config.yaml, then config/test.yaml, then each dict of ``extra``: the config a test run sees
    (before the schema's defaults are filled in)."""
    cfg: dict = {}
    for f in BASE_CONFIGS:
        cfg = merge(cfg, yaml.safe_load(f.read_text()))
    for e in extra or []:
        cfg = merge(cfg, e)
    return cfg


def overlay(tmp: Path, name: str, changes: dict) -> Path:
    """Write ``changes`` (a nested dict) as a config file to overlay on the base configs."""
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(changes, sort_keys=False))
    return path


def planned_jobs(output: str | subprocess.CompletedProcess) -> dict[str, int]:
    """Rule -> job count from the 'Job stats' table that ``snakemake -n`` prints ({} if nothing to do);
    ``output`` is the printed text or the finished process."""
    text = output if isinstance(output, str) else (output.stdout or "") + (output.stderr or "")
    out: dict[str, int] = {}
    m = re.search(r"Job stats:\n.*?\n-+\s+-+\n(.*?)\n\s*total\s+\d+", text, re.DOTALL)
    if not m:
        return out
    for line in m.group(1).splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            out[parts[0]] = int(parts[1])
    return out


def dry_run(
    workdir: Path, *args: str, configs: list[Path] | None = None, timeout: float = 300
) -> dict[str, int]:
    """Jobs that a run would execute now: rule -> count."""
    p = run(workdir, "-n", "--cores", "1", *args, configs=configs, timeout=timeout)
    return planned_jobs(p.stdout + p.stderr)


def copy_work_folder(done: Path, dest: Path) -> Path:
    """A copy of a finished work folder that a test may change: ``data/`` hard-linked (large, and never
    rewritten in place: every writer renames a new file over the old one), everything else copied with its
    modification times, Snakemake's records in ``.snakemake/`` included."""
    import shutil

    dest.mkdir(parents=True)
    for src in done.iterdir():
        if src.name == "data":
            shutil.copytree(src, dest / "data", copy_function=os.link, symlinks=True)
        elif src.is_dir():
            shutil.copytree(src, dest / src.name, symlinks=True)
        else:
            shutil.copy2(src, dest / src.name)
    return dest


def mtimes(workdir: Path, under: str = "results") -> dict[str, int]:
    """Relative path -> mtime (ns) of every file under ``workdir/under``."""
    root = workdir / under
    return {str(p.relative_to(workdir)): p.stat().st_mtime_ns for p in root.rglob("*") if p.is_file()}


def run_snakemake(
    workdir: Path, *args: str, configfiles=("config/test.yaml",), check: bool = True, timeout: float = 900
):
    """``run`` on 2 cores with config.yaml plus ``configfiles`` (relative to the repo unless absolute)."""
    configs = [REPO / "config.yaml", *(Path(c) if os.path.isabs(c) else REPO / c for c in configfiles)]
    return run(workdir, "--cores", "2", *args, configs=configs, check=check, timeout=timeout)


def is_snakemake(args) -> bool:
    """Whether a command line (as given to ``subprocess.Popen``: a list, or one string) starts Snakemake:
    the program ``snakemake`` by any path, ``python -m snakemake``, or a ``sh``/``bash -c`` script that
    calls it."""
    if isinstance(args, bytes):
        args = args.decode(errors="replace")
    if isinstance(args, (str, os.PathLike)):
        args = _split(os.fspath(args))
    argv = [os.fsdecode(a) for a in args]
    if not argv:
        return False
    if Path(argv[0]).name == "snakemake" or any(
        a == "-m" and b == "snakemake" for a, b in zip(argv, argv[1:])
    ):
        return True
    if Path(argv[0]).name in ("sh", "bash") and "-c" in argv[:-1]:
        script = argv[argv.index("-c") + 1]
        return any(Path(t).name == "snakemake" for t in _split(script))
    return False


def _split(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:  # unbalanced quotes: words are enough to find a program name
        return command.split()
