# Shared helpers: config validation, mirrors, target lists and input functions.
import re
import sys
from pathlib import Path

# The package holds the science; import it from the checkout when it is not installed.
sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from depthwidth.config import validate_config  # noqa: E402
from depthwidth.fetch import load_manifest  # noqa: E402

# Stop before any job starts when a key is wrong; the error names the key and what is allowed.
validate_config(config, Path(workflow.basedir) / "schemas")

MANIFEST = load_manifest()
PROJECT_DIR = str(Path(workflow.basedir).resolve())


wildcard_constraints:
    # Only files pinned in src/depthwidth/manifest.yaml can be fetched.
    raw_path="|".join(re.escape(k) for k in MANIFEST),


def stage_enabled(stage):
    return stage in config["stages"]


def report_sections(wildcards):
    """The section fragment and headline rows of every enabled stage, in report order."""
    out = {}
    for stage in config["stages"]:
        out[f"{stage}_html"] = f"results/{stage}/section.html"
        out[f"{stage}_headline"] = f"results/{stage}/headline.json"
    return out


def pinned_sha256(wildcards):
    """The pinned checksum of a fetched file: a change of pin refetches it."""
    return MANIFEST[wildcards.raw_path]["sha256"]


def chinchilla_fit_params():
    """The fit subtree, with every key spelt out so that editing one reruns only the fit."""
    return dict(config["chinchilla"]["fit"])


def chinchilla_shape_params():
    return dict(config["chinchilla"].get("shape", {}))
