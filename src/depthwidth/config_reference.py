"""The configuration reference and the one-home-of-defaults check, both read from ``schemas/``.

- ``reference_markdown()`` writes the configuration reference (every key of every schema: type, default,
  bounds, description, and the value the default run uses where ``config.yaml`` sets it). The docs page
  ``docs/configuration.md`` is this text; ``python -m depthwidth.config_reference docs/configuration.md``
  rewrites it, and a test fails when the committed page differs.
- ``config_file_issues(text)`` checks a config file such as ``config.yaml`` against the schema defaults:
  a key whose value equals its schema default restates it; a setting whose value differs from its schema
  default needs a comment (on its line or directly above) saying why. Values inside named entries (a
  variant, a sweep, a fact) are the entry's own content and need no comment, but may not restate a default
  either. Keys without a schema default (the ones a config must give) are free.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml

from depthwidth.config import SCHEMA_DIR, load_schema, validate_config

REPO = Path(__file__).resolve().parents[2]
BOUND_KEYS = (
    ("minimum", "≥"),
    ("exclusiveMinimum", ">"),
    ("maximum", "≤"),
    ("exclusiveMaximum", "<"),
    ("minItems", "items ≥"),
    ("maxItems", "items ≤"),
    ("minLength", "length ≥"),
)


# ---------------------------------------------------------------------------------------------------------
# config file check


def _has_comment(lines: list[str], line: int) -> bool:
    """A comment on ``line`` (0-based) after its content, or a comment line directly above it."""
    text = lines[line]
    if "#" in text.split(":", 1)[-1] or text.lstrip().startswith("#"):
        return True
    return line > 0 and lines[line - 1].lstrip().startswith("#")


def _entry_schema(sub: dict) -> dict | None:
    ap = sub.get("additionalProperties")
    return ap if isinstance(ap, dict) else None


def config_file_issues(text: str, schema: dict | None = None) -> list[str]:
    """Every key of the config ``text`` that restates its schema default, or differs from it without a
    comment saying why; empty when the file states only what it must and what it changes."""
    schema = load_schema() if schema is None else schema
    lines = text.splitlines()
    issues: list[str] = []

    def walk(node, sch: dict, path: str, in_entry: bool) -> None:
        if isinstance(node, yaml.MappingNode):
            props = sch.get("properties", {})
            entry = _entry_schema(sch)
            for key_node, value_node in node.value:
                key = key_node.value
                sub = props.get(key)
                child_in_entry = in_entry
                if sub is None and entry is not None:
                    sub, child_in_entry = entry, True
                if sub is None:
                    continue  # an unknown key: validate_config names it
                p = f"{path}.{key}" if path else key
                if "default" in sub and not isinstance(value_node, yaml.MappingNode):
                    value = yaml.safe_load(yaml.serialize(value_node))
                    if value == sub["default"]:
                        issues.append(f"{p}: {value!r} restates the schema default; delete the line")
                    elif not child_in_entry and not _has_comment(lines, key_node.start_mark.line):
                        issues.append(
                            f"{p}: {value!r} differs from the schema default {sub['default']!r} without a "
                            "comment saying why; add one on its line or directly above"
                        )
                walk(value_node, sub, p, child_in_entry)
        elif isinstance(node, yaml.SequenceNode) and isinstance(sch.get("items"), dict):
            for i, item in enumerate(node.value):
                walk(item, sch["items"], f"{path}[{i}]", True)

    walk(yaml.compose(text), schema, "", False)
    return issues


# ---------------------------------------------------------------------------------------------------------
# reference page


def _type(sub: dict) -> str:
    t = sub.get("type")
    if "enum" in sub:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in sub["enum"])
    if isinstance(t, list):
        t = " or ".join(t)
    if t == "array" and isinstance(sub.get("items"), dict):
        item = sub["items"]
        inner = _type(item) if ("type" in item or "enum" in item) else "entry"
        return f"list of {inner}"
    if t == "object" and _entry_schema(sub) is not None:
        return "map of name → entry"
    return t or ("entry" if "anyOf" in sub else "any")


def _bounds(sub: dict) -> str:
    parts = [f"{sym} {sub[k]}" for k, sym in BOUND_KEYS if k in sub]
    if isinstance(sub.get("items"), dict):
        inner = [f"{sym} {sub['items'][k]}" for k, sym in BOUND_KEYS if k in sub["items"]]
        if inner:
            parts.append("each " + ", ".join(inner))
    if sub.get("uniqueItems"):
        parts.append("unique")
    return ", ".join(parts)


def _value(v) -> str:
    if v is None:
        return "`null`"
    text = json.dumps(v, ensure_ascii=False)
    if len(text) > 80:
        return f"`{text[:77]}…`"
    return f"`{text}`"


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _rows(sch: dict, path: str, required: set, effective, rows: list, depth: int = 0) -> None:
    props = sch.get("properties", {})
    for key, sub in props.items():
        if not isinstance(sub, dict):
            continue
        p = f"{path}.{key}" if path else key
        runs = effective.get(key, "—") if isinstance(effective, dict) else "—"
        if "default" in sub:
            default = _value(sub["default"])
        elif key in required:
            default = "required"
        else:
            default = "—"
        nested = sub.get("type") == "object" and "properties" in sub
        runs_text = "" if nested else ("—" if runs == "—" else _value(runs))
        if not nested and runs_text == default:
            runs_text = ""
        rows.append((p, _type(sub), default, runs_text, _bounds(sub), _cell(sub.get("description", ""))))
        if nested:
            _rows(sub, p, set(sub.get("required", [])), runs if isinstance(runs, dict) else {}, rows)
        entry = _entry_schema(sub)
        if entry is not None and "properties" in entry:
            _rows(entry, f"{p}.<name>", set(entry.get("required", [])), {}, rows)
        items = sub.get("items")
        if isinstance(items, dict) and "properties" in items:
            _rows(items, f"{p}[]", set(items.get("required", [])), {}, rows)


def _default_run() -> dict:
    return validate_config(yaml.safe_load((REPO / "config.yaml").read_text()))


def reference_markdown(schema_dir: str | Path = SCHEMA_DIR) -> str:
    """The configuration reference page: one table per schema file, generated; do not edit by hand."""
    schema = load_schema(schema_dir)
    effective = _default_run()
    out = [
        "# Configuration reference",
        "",
        "<!-- Generated by `python -m depthwidth.config_reference docs/configuration.md` from",
        "     schemas/*.schema.yaml; tests/test_docs.py fails when this page is stale. Do not edit. -->",
        "",
        "Every key the workflow reads, from `schemas/*.schema.yaml` (JSON Schema written in YAML). The",
        "schemas are the one home of defaults: `validate_config` fills them in before any job starts, and",
        "`config.yaml` states only the keys a config must give (marked *required*) and values that differ",
        "from a default, each with its reason. **Default** is the schema's default; **default run** is the",
        "value a run without `--configfile` overlays uses (`config.yaml` validated), where it is not the",
        "schema default. A `.<name>` in a key is any entry of a named map, `[]` any item of a list.",
        "",
        "A wrong type, an unknown key or a value out of bounds stops the run before any job starts, naming",
        "the key and what is allowed. Numbers must be finite, integers written as integers (`2`, not",
        "`2.0`), and floats in exponent form need a sign (`1.0e+8`). Maximums on sizes catch typos: raise",
        "them in the schema if you mean more.",
        "",
    ]
    sections = [("config", "Common keys", schema)] + [
        (name, f"`{name}`", schema["properties"][name])
        for name in sorted(
            p.name.removesuffix(".schema.yaml") for p in Path(schema_dir).glob("*.schema.yaml")
        )
        if name != "config"
    ]
    for name, title, sch in sections:
        out += [f"## {title}", "", f"Schema: `schemas/{name}.schema.yaml`.", ""]
        if sch.get("description") and name != "config":
            out += [_cell(sch["description"]), ""]
        rows: list = []
        if name == "config":
            common = {
                k: v
                for k, v in sch["properties"].items()
                if not (REPO / "schemas").joinpath(f"{k}.schema.yaml").is_file()
            }
            _rows({"properties": common}, "", set(sch.get("required", [])), effective, rows)
        else:
            stage_effective = effective.get(name, {})
            required = set(schema.get("required", []))
            if name in required:
                out += ["The section is required.", ""]
            entry = _entry_schema(sch)
            if entry is not None and "properties" in entry:
                _rows(entry, f"{name}.<name>", set(entry.get("required", [])), {}, rows)
            else:
                _rows(sch, name, set(sch.get("required", [])), stage_effective, rows)
        out += ["| key | type | default | default run | bounds | description |", "|---|---|---|---|---|---|"]
        for r in rows:
            out.append("| `" + r[0] + "` | " + " | ".join(_cell(x) for x in r[1:]) + " |")
        out.append("")
    return "\n".join(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("output", type=Path, help="the page to write, e.g. docs/configuration.md")
    args = ap.parse_args(argv)
    args.output.write_text(reference_markdown())


if __name__ == "__main__":
    main()
