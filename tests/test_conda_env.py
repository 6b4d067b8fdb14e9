"""The conda environment survives Snakemake's copy, and scripts import depthwidth from the workflow's src/.

Under ``--sdm conda`` Snakemake copies ``envs/depthwidth.yaml`` to ``<workdir>/.snakemake/conda/<hash>.yaml``
and runs ``conda env create --file`` on the copy; pip resolves relative paths of the pip section from the
copy's folder. There is no conda here, so the first test resolves each pip entry from that folder as pip
would; the second runs a real script job and checks where its ``import`` comes from.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from _pipeline import REPO, SNAKEMAKE

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

ENV_FILE = REPO / "envs" / "depthwidth.yaml"
# A requirement such as "gguf>=0.10" (a name, optional extras, version constraints), not a path or URL.
_REQUIREMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[^\]]+\])?\s*([<>=!~].*)?$")


def _pip_entries() -> list[str]:
    deps = yaml.safe_load(ENV_FILE.read_text())["dependencies"]
    return [e for d in deps if isinstance(d, dict) for e in d.get("pip", [])]


def _local_target(entry: str) -> str | None:
    """The path a pip entry installs from, or None for a plain requirement."""
    entry = re.sub(r"^(-e|--editable)\s+", "", entry.strip())
    if _REQUIREMENT.match(entry):
        return None
    return entry.removeprefix("file:")


def test_pip_section_resolves_from_the_copied_env_file(tmp_path):
    copy_dir = tmp_path / "work" / ".snakemake" / "conda"  # where Snakemake writes <hash>.yaml
    copy_dir.mkdir(parents=True)
    for entry in _pip_entries():
        target = _local_target(entry)
        if target is None:
            continue
        # A path in the pip section must still name this project when read from the copy's folder.
        resolved = (copy_dir / target).resolve()
        assert (resolved / "pyproject.toml").is_file(), (
            f"pip entry {entry!r} of {ENV_FILE.name} resolves to {resolved} from .snakemake/conda/, "
            "not to the project"
        )


def test_env_lists_every_dependency_of_the_package():
    names = {"torch": "pytorch"}  # conda-forge name where it differs
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    wanted = {
        names.get(n, n) for n in (re.split(r"[<>=!~\[ ]", d)[0].lower().replace("_", "-") for d in deps)
    }
    env = yaml.safe_load(ENV_FILE.read_text())["dependencies"]
    have = {re.split(r"[<>=!~ ]", d)[0].lower().replace("_", "-") for d in env if isinstance(d, str)}
    have |= {re.split(r"[<>=!~ ]", e)[0].lower().replace("_", "-") for e in _pip_entries()}
    assert wanted <= have, f"missing from {ENV_FILE.name}: {sorted(wanted - have)}"


@pytest.mark.workflow
def test_scripts_import_the_package_from_the_workflow_src(tmp_path):
    """As the Snakefile does: it puts <workflow>/src on sys.path (the one place), and Snakemake passes its
    sys.path to each script it runs, so a job needs no installed copy of the package (the conda case)."""
    wf = tmp_path / "wf"
    (wf / "src" / "probe_pkg").mkdir(parents=True)
    (wf / "src" / "probe_pkg" / "__init__.py").write_text("")
    (wf / "scripts").mkdir()
    (wf / "scripts" / "probe.py").write_text(
        "import probe_pkg\nopen(snakemake.output[0], 'w').write(probe_pkg.__file__)\n"
    )
    (wf / "Snakefile").write_text(
        "import sys\nfrom pathlib import Path\n\nsys.path.insert(0, str(Path(workflow.basedir) / 'src'))\n\n\n"
        "rule probe:\n    output:\n        'probe.txt',\n    script:\n        'scripts/probe.py'\n"
    )
    work = tmp_path / "work"
    env = {
        "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        "HOME": str(tmp_path),
    }  # no PYTHONPATH
    p = subprocess.run(
        [SNAKEMAKE, "-s", str(wf / "Snakefile"), "-d", str(work), "--cores", "1", "probe.txt"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert (
        Path((work / "probe.txt").read_text()).resolve()
        == (wf / "src" / "probe_pkg" / "__init__.py").resolve()
    )
