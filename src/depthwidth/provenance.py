"""What produced a report: config and its hash, package versions, input checksums, machine, rule times."""

from __future__ import annotations

import glob
import html
import json
import os
import platform
from importlib import metadata
from pathlib import Path

import pandas as pd
import yaml

from depthwidth.config import config_hash
from depthwidth.download.fetch import sha256_file
from depthwidth.report import table_html

PACKAGES = ("depthwidth", "snakemake", "torch", "transformers", "datasets", "numpy", "scipy", "pandas", "lmfit",
            "matplotlib", "seaborn", "gguf", "accelerate")


def package_versions() -> dict:
    out = {}
    for p in PACKAGES:
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = "not installed"
    return out


def machine() -> dict:
    info = {"platform": platform.platform(), "python": platform.python_version(),
            "cpu": platform.processor() or platform.machine(), "cpu_count": os.cpu_count()}
    try:
        import torch

        info["cuda"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    except Exception:  # noqa: BLE001 - torch is optional for the provenance block
        info["cuda"] = "unknown"
    return info


def input_checksums(root: str | Path = "data") -> pd.DataFrame:
    """SHA-256 of every file the pipeline fetched or unpacked under ``data/`` (mirror folder excluded)."""
    rows = []
    for path in sorted(Path(root).rglob("*")):
        if path.is_file() and "mirror" not in path.parts and not path.name.startswith("."):
            rows.append({"file": str(path), "bytes": path.stat().st_size, "sha256": sha256_file(path)})
    return pd.DataFrame(rows, columns=["file", "bytes", "sha256"])


def rule_times(root: str | Path = "benchmarks") -> pd.DataFrame:
    """Wall time of every job from Snakemake ``benchmark:`` files, summed per rule (top folder/file stem)."""
    rows = []
    for path in glob.glob(str(Path(root) / "**" / "*.tsv"), recursive=True):
        try:
            b = pd.read_csv(path, sep="\t")
        except Exception:  # noqa: BLE001 - a half-written benchmark file is skipped, not fatal
            continue
        rel = Path(path).relative_to(root)
        rows.append({"stage": rel.parts[0] if len(rel.parts) > 1 else rel.stem, "job": str(rel.with_suffix("")),
                     "wall_s": float(b["s"].iloc[0]), "max_rss_mb": float(b.get("max_rss", pd.Series([float("nan")])).iloc[0])})
    return pd.DataFrame(rows, columns=["stage", "job", "wall_s", "max_rss_mb"])


def provenance_html(config: dict, extra: list[dict] | None = None) -> str:
    times = rule_times()
    per_stage = times.groupby("stage", as_index=False)["wall_s"].agg(["sum", "count"]).reset_index() \
        if len(times) else pd.DataFrame()
    parts = [f"<p>Config hash (SHA-256 of the validated config): <code>{config_hash(config)}</code></p>"]
    if len(per_stage):
        per_stage = per_stage.rename(columns={"sum": "wall_s_total", "count": "jobs"})
        parts.append(table_html(per_stage[["stage", "jobs", "wall_s_total"]],
                                "Wall time per stage (sum over its jobs, from Snakemake benchmark files), seconds."))
    parts.append(table_html(pd.DataFrame([machine()]), "Machine."))
    parts.append(table_html(pd.DataFrame([package_versions()]).T.reset_index().rename(
        columns={"index": "package", 0: "version"}), "Package versions."))
    parts.append(table_html(input_checksums(), "Inputs under data/ with their SHA-256."))
    for e in extra or []:
        parts.append(f"<details><summary>{html.escape(e['title'])}</summary><pre>"
                     f"{html.escape(json.dumps(e['data'], indent=1, default=str))}</pre></details>")
    if len(times):
        parts.append(f"<details><summary>Wall time per job ({len(times)} jobs)</summary>"
                     + table_html(times.sort_values("job")) + "</details>")
    parts.append("<details><summary>Config used</summary><pre>"
                 + html.escape(yaml.safe_dump(config, sort_keys=False)) + "</pre></details>")
    return "\n".join(parts)
