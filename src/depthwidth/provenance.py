"""What produced a report: config and its hash, the code fingerprint of each result it reads (from the
results' seals) with a warning where one differs from this checkout's code, package versions, checksums
of the report's declared inputs, machine, and job times from the declared benchmark files."""

from __future__ import annotations

import html
import json
import os
import platform
from importlib import metadata
from pathlib import Path

import pandas as pd
import yaml

from depthwidth.codeprint import fingerprint_of
from depthwidth.config import config_hash
from depthwidth.download.fetch import sha256_file
from depthwidth.sections import table_html

PACKAGES = (
    "depthwidth",
    "snakemake",
    "torch",
    "transformers",
    "datasets",
    "numpy",
    "scipy",
    "pandas",
    "lmfit",
    "matplotlib",
    "seaborn",
    "gguf",
    "accelerate",
)


def package_versions() -> dict:
    out = {}
    for p in PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = "not installed"
    return out


def machine() -> dict:
    info = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
    }
    try:
        import torch

        info["cuda"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    except Exception:  # noqa: BLE001 - torch is optional for the provenance block
        info["cuda"] = "unknown"
    return info


def _expand(paths: list[str | Path]) -> list[Path]:
    """Files of ``paths``, each folder replaced by the files under it (sorted; hidden files and everything
    under hidden folders skipped, such as a killed conversion's ``.hf.partial-<pid>/``)."""
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(
                f
                for f in sorted(p.rglob("*"))
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts)
            )
        else:
            out.append(p)
    return out


def input_checksums(paths: list[str | Path]) -> pd.DataFrame:
    """SHA-256 of every declared input of the report (folders expanded to their files)."""
    rows = [
        {"file": f.as_posix(), "bytes": f.stat().st_size, "sha256": sha256_file(f)} for f in _expand(paths)
    ]
    return pd.DataFrame(rows, columns=["file", "bytes", "sha256"])


def rule_times(paths: list[str | Path]) -> pd.DataFrame:
    """Wall time of the jobs whose Snakemake ``benchmark:`` files are ``paths``
    (``benchmarks/<stage>/<job>.tsv``; the stage is the folder below ``benchmarks/``)."""
    rows = []
    for path in map(Path, paths):
        b = pd.read_csv(path, sep="\t")
        rel = path.relative_to("benchmarks") if path.parts[0] == "benchmarks" else path
        rows.append(
            {
                "stage": rel.parts[0] if len(rel.parts) > 1 else rel.stem,
                "job": rel.with_suffix("").as_posix(),
                "wall_s": float(b["s"].iloc[0]),
                "max_rss_mb": float(b["max_rss"].iloc[0]) if "max_rss" in b else float("nan"),
            }
        )
    return pd.DataFrame(rows, columns=["stage", "job", "wall_s", "max_rss_mb"])


def result_code(paths: list[str | Path]) -> pd.DataFrame:
    """Per script (rule) whose results are among ``paths`` (folders expanded): how many of them carry a
    seal, the code fingerprints their seals recorded, the fingerprint of the same modules in the code
    running now, and a status: ``current``, ``other code`` (made by code that differs from this checkout's,
    or by several versions) or ``not recorded`` (no code in the seal: written outside Snakemake or by a
    version that did not record it)."""
    rows: dict[str, dict] = {}
    for f in _expand(paths):
        sp = f.with_name(f".{f.name}.seal.json")
        if not sp.is_file():
            continue
        try:
            code = json.loads(sp.read_text()).get("code")
        except (OSError, ValueError, AttributeError):
            code = None
        script = code.get("script", "?") if isinstance(code, dict) else "?"
        row = rows.setdefault(script, {"script": script, "files": 0, "recorded": set(), "now": set()})
        row["files"] += 1
        if isinstance(code, dict) and code.get("fingerprint"):
            row["recorded"].add(code["fingerprint"])
            row["now"].add(fingerprint_of(tuple(code.get("modules", ()))))
        else:
            row["recorded"].add("")
    out = []
    for script, row in sorted(rows.items()):
        recorded, now = row["recorded"], row["now"]
        status = (
            "not recorded"
            if "" in recorded
            else "current"
            if recorded == now and len(now) == 1
            else "other code"
        )
        out.append(
            {
                "script": script,
                "files": row["files"],
                "code fingerprint (recorded)": ", ".join(
                    sorted(r.removeprefix("depthwidth code ") or "–" for r in recorded)
                ),
                "this checkout": ", ".join(sorted(n.removeprefix("depthwidth code ") for n in now)) or "–",
                "status": status,
            }
        )
    return pd.DataFrame(
        out, columns=["script", "files", "code fingerprint (recorded)", "this checkout", "status"]
    )


def code_html(paths: list[str | Path]) -> str:
    """The table of ``result_code`` and, where a result was made by other code or records none, a warning
    naming the rules and the command that remakes their results."""
    table = result_code(paths)
    if not len(table):
        return ""
    stale = table[table["status"] != "current"]
    out = ""
    if len(stale):
        rules = " ".join(s for s in stale["script"] if s != "?")
        fix = f" --forcerun {rules}" if rules else " --forceall"
        out += (
            '<p class="warning" style="border-left:4px solid #c00;padding-left:.5em"><strong>Warning: results from different code.</strong> '
            f"{len(stale)} of the {len(table)} kinds of result this report reads were made by code other than "
            "this checkout's, or record no code ("
            + ", ".join(f"{s}: {st}" for s, st in zip(stale["script"], stale["status"]))
            + "), so this page may mix versions. Remake them with "
            f"<code>snakemake --cores all results/report.html{html.escape(fix)}</code>.</p>"
        )
    return out + table_html(
        table,
        "Code that made each result this report reads: per script (rule), the fingerprint of the package "
        "modules it ran, recorded in each result's seal, and the fingerprint of the same modules now.",
    )


def provenance_html(
    config: dict,
    inputs: list[str | Path],
    benchmarks: list[str | Path] = (),
    manifests: list[str | Path] = (),
) -> str:
    """Config hash, the code of each sealed input (``code_html``), wall time per stage (from ``benchmarks``),
    machine, package versions, SHA-256 of
    ``inputs`` (the report rule's declared inputs, nothing else), each model manifest, the config."""
    times = rule_times(benchmarks)
    per_stage = (
        times.groupby("stage", as_index=False)["wall_s"].agg(["sum", "count"]).reset_index()
        if len(times)
        else pd.DataFrame()
    )
    parts = [f"<p>Config hash (SHA-256 of the validated config): <code>{config_hash(config)}</code></p>"]
    parts.append(code_html(inputs))
    if len(per_stage):
        per_stage = per_stage.rename(columns={"sum": "wall_s_total", "count": "jobs"})
        parts.append(
            table_html(
                per_stage[["stage", "jobs", "wall_s_total"]],
                "Wall time per stage (sum over its jobs, from Snakemake benchmark files), seconds.",
            )
        )
    parts.append(table_html(pd.DataFrame([machine()]), "Machine."))
    parts.append(
        table_html(
            pd.DataFrame([package_versions()])
            .T.reset_index()
            .rename(columns={"index": "package", 0: "version"}),
            "Package versions.",
        )
    )
    parts.append(table_html(input_checksums(inputs), "The report's declared inputs with their SHA-256."))
    # Model sources and revisions: each used model's manifest (hub id and revision, wheel, file checksums).
    for path in manifests:
        data = json.loads(Path(path).read_text())
        parts.append(
            f"<details><summary>Model source and revision: {html.escape(str(path))}</summary><pre>"
            f"{html.escape(json.dumps(data, indent=1, default=str))}</pre></details>"
        )
    if len(times):
        parts.append(
            f"<details><summary>Wall time per job ({len(times)} jobs)</summary>"
            + table_html(times.sort_values("job"))
            + "</details>"
        )
    parts.append(
        "<details><summary>Config used</summary><pre>"
        + html.escape(yaml.safe_dump(config, sort_keys=False))
        + "</pre></details>"
    )
    return "\n".join(parts)
