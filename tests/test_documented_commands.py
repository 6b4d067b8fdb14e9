"""Every Snakemake command the docs show works as written: each one runs as a dry run (``-n``) from the
repo root against the repo's Snakefile, in a temporary working directory (``-d``).

Commands come from README.md and the documentation site's pages, docs/**/*.md (indented and fenced code
blocks and inline code), and from the comments of config.yaml, config/*.yaml and profiles/*/config.yaml.
Commands with a placeholder (``<rule>``) are left out.
"""

import re
import shlex
import shutil

import pytest

from _pipeline import REPO, dry_run_as_written

_INLINE = re.compile(r"`((?:\.venv/bin/)?snakemake [^`]+)`")


def _commands_in(text: str, comments_only: bool) -> list[str]:
    found = []
    fenced = False
    for line in text.splitlines():
        if comments_only:
            if not line.lstrip().startswith("#"):
                continue
            line = line.lstrip().lstrip("#")
        elif line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        candidates = _INLINE.findall(line)
        if (
            line.startswith("    ") or fenced or comments_only
        ):  # a code line (or a comment) may chain commands
            candidates += [part.strip() for part in line.split("&&")]
        for c in candidates:
            c = c.strip()
            if re.match(r"^(\.venv/bin/)?snakemake\s", c) and "<" not in c:
                found.append(c.removeprefix(".venv/bin/"))  # the set-up command runs the venv's snakemake
    return found


def documented_commands() -> list[str]:
    cmds = []
    for page in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        cmds += _commands_in(page.read_text(), comments_only=False)
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


_TARGETS_ONLY = re.compile(r"^snakemake --cores \d+( results/\S+)+$")


def dry_runs() -> list[str]:
    """The documented commands to dry-run. Those that only name targets of the default config
    (``snakemake --cores N results/...``) are one dry run with all their targets: one DAG, the same
    check that each target exists and plans."""
    cmds = [c for c in documented_commands() if c not in PLANNED_ELSEWHERE]
    targets = [c for c in cmds if _TARGETS_ONLY.match(c)]
    merged = "snakemake --cores 2 " + " ".join(dict.fromkeys(t for c in targets for t in c.split()[3:]))
    return [c for c in cmds if c not in targets] + ([merged] if targets else [])


def test_targets_only_commands_are_merged_into_one_dry_run():
    runs = dry_runs()
    merged = [c for c in runs if _TARGETS_ONLY.match(c)]
    assert (
        len(merged) == 1
        and "results/report.html" in merged[0]
        and "results/chinchilla/fits/decomposed/squared/fit.json" in merged[0]
    )


@pytest.mark.parametrize("command", dry_runs())
@pytest.mark.workflow
def test_documented_command_dry_runs(command, tmp_path):
    args = shlex.split(command)[1:]
    if "conda" in args and shutil.which("conda") is None:
        pytest.skip(f"`{command}` needs conda, which is not installed here")
    p = dry_run_as_written(command, tmp_path)
    assert p.returncode == 0, f"`{command}` fails as a dry run:\n{(p.stdout + p.stderr)[-3000:]}"
