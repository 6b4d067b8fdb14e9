"""The documentation: README.md fits one screen and answers "did it reproduce the papers?", the MkDocs
site builds strictly (a broken link or anchor, or a page missing from the nav, fails), and neither the
docs nor the code narrate history (tracker numbers, "the former default")."""

import re
import shutil
import subprocess

import pytest

from _helpers import REPO

README = (REPO / "README.md").read_text()


def test_readme_is_one_screen_with_setup_first_and_results_at_a_glance():
    lines = README.splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; move detail into docs/"
    setup = next(i for i, line in enumerate(lines) if "pip install" in line)
    assert setup < 20, "the set-up commands come right after the first paragraph"
    assert "## Results at a glance" in README
    # every stage's page is linked, and every page the README links exists
    for target in re.findall(r"\]\(((?:docs/|CONTRIBUTING|LICENSE|CITATION)[^)#]*)", README):
        assert (REPO / target).exists(), f"README.md links to {target}, which does not exist"
    for stage in ("chinchilla", "superposition", "depth_toy", "lm_head", "hidden_states", "causal_tracing"):
        assert f"docs/stages/{stage}.md" in README


def test_results_table_has_a_verdict_for_every_headline_claim():
    table = README.split("## Results at a glance", 1)[1].split("\n## ", 1)[0]
    lines = table.splitlines()
    header = next(r for r in lines if r.startswith("| claim |"))
    col = [c.strip() for c in header.strip("|").split("|")].index("verdict (default run)")
    rows = [r for r in lines if r.startswith("| ") and not r.startswith("| claim |")]
    assert len(rows) >= 15
    for r in rows:
        verdict = [c.strip() for c in r.strip("|").split("|")][col]
        assert re.match(r"^(yes|no|reproduced exactly|cannot tell .+|not tested: .+|–)", verdict), (
            f"row without a verdict: {r}"
        )
    # a verdict line per paper above the tables
    assert table.count("- **The depth paper**") == 1 and table.count("- **The superposition paper**") == 1


def test_contributing_page_is_contributing_md():
    assert (REPO / "docs" / "contributing.md").resolve() == (REPO / "CONTRIBUTING.md").resolve()


def test_license_and_citation():
    assert "MIT License" in (REPO / "LICENSE").read_text()
    import yaml

    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    ids = {i["value"] for ref in cff["references"] for i in ref["identifiers"]}
    assert ids == {"arXiv:2505.10465", "arXiv:2602.05970", "arXiv:2404.10102"}
    assert cff["license"] == "MIT"


# Tracker numbers, commit hashes and accounts of earlier states have no place in the text.
HISTORY = re.compile(
    r"\bissues? #?\d+|(?<![\w&])#\d{1,4}\b|\bthe former\b|\bformer default|\bthat day\b|\bon an earlier day\b"
    r"|\(was [^)]*\)|\bcommit [0-9a-f]{7,12}\b",
    re.IGNORECASE,
)


def test_no_history_narration():
    files = [REPO / "README.md", REPO / "CONTRIBUTING.md", *(REPO / "docs").rglob("*.md")]
    for folder, pattern in (
        ("src", "*.py"),
        ("tests", "*.py"),
        ("rules", "*.smk"),
        ("config", "*.yaml"),
        ("schemas", "*.yaml"),
        ("bench", "*"),
    ):
        files += [p for p in (REPO / folder).rglob(pattern) if p.is_file() and p.suffix != ".pyc"]
    found = []
    for path in files:
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if path.name == "test_docs.py":
                continue
            m = HISTORY.search(line)
            if m:
                found.append(f"{path.relative_to(REPO)}:{n}: {m.group(0)!r}")
    assert not found, "history narration (state how things are):\n" + "\n".join(found)


@pytest.mark.skipif(
    shutil.which("mkdocs", path=str(REPO / ".venv" / "bin")) is None and shutil.which("mkdocs") is None,
    reason="mkdocs is not installed (pip install -e '.[docs]')",
)
def test_site_builds_strictly(tmp_path):
    exe = shutil.which("mkdocs", path=str(REPO / ".venv" / "bin")) or shutil.which("mkdocs")
    p = subprocess.run(
        [exe, "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, f"mkdocs build --strict fails:\n{(p.stdout + p.stderr)[-3000:]}"
    assert (tmp_path / "site" / "configuration" / "index.html").is_file()


def test_site_results_page_has_the_readme_table():
    def table(text: str) -> list[str]:
        return [line.replace("](docs/", "](") for line in text.splitlines() if line.startswith("| ")]

    readme = table(README.split("## Results at a glance", 1)[1].split("\n## ", 1)[0])
    assert readme == table((REPO / "docs" / "results.md").read_text())
