"""Every Snakemake command the docs show works as written: each one runs as a dry run (``-n``) from the
repo root against the repo's Snakefile, in a temporary working directory (``-d``).

Commands come from README.md (code blocks and inline code) and from the comments of config.yaml,
config/*.yaml and profiles/*/config.yaml. Commands with a placeholder (``<rule>``) are left out.
"""

import re
import shlex
import shutil

import pytest

from _pipeline import REPO, dry_run_as_written

_INLINE = re.compile(r"`((?:\.venv/bin/)?snakemake [^`]+)`")


def _commands_in(text: str, comments_only: bool) -> list[str]:
    found = []
    for line in text.splitlines():
        if comments_only:
            if not line.lstrip().startswith("#"):
                continue
            line = line.lstrip().lstrip("#")
        candidates = _INLINE.findall(line)
        if line.startswith("    ") or comments_only:  # a code block line (or a comment) may chain commands
            candidates += [part.strip() for part in line.split("&&")]
        for c in candidates:
            c = c.strip()
            if re.match(r"^(\.venv/bin/)?snakemake\s", c) and "<" not in c:
                found.append(c.removeprefix(".venv/bin/"))  # the set-up command runs the venv's snakemake
    return found


def documented_commands() -> list[str]:
    cmds = _commands_in((REPO / "README.md").read_text(), comments_only=False)
    for path in [
        REPO / "config.yaml",
        *sorted((REPO / "config").glob("*.yaml")),
        *sorted((REPO / "profiles").glob("*/config.yaml")),
    ]:
        cmds += _commands_in(path.read_text(), comments_only=True)
    return list(dict.fromkeys(cmds))


def test_the_docs_show_commands():
    cmds = documented_commands()
    assert "snakemake --cores 8 results/report.html --configfile config/paper.yaml" in cmds
    assert "snakemake --cores 8 results/report.html" in cmds
    assert len(cmds) >= 8


# dry-run by tests/test_cluster_paper_plan.py, which also checks the jobs it plans (one ~30 s plan, not two)
PLANNED_ELSEWHERE = {"snakemake --profile profiles/slurm results/report.html --configfile config/paper.yaml"}


@pytest.mark.parametrize("command", [c for c in documented_commands() if c not in PLANNED_ELSEWHERE])
@pytest.mark.workflow
def test_documented_command_dry_runs(command, tmp_path):
    args = shlex.split(command)[1:]
    if "conda" in args and shutil.which("conda") is None:
        pytest.skip(f"`{command}` needs conda, which is not installed here")
    p = dry_run_as_written(command, tmp_path)
    assert p.returncode == 0, f"`{command}` fails as a dry run:\n{(p.stdout + p.stderr)[-3000:]}"
