"""Config validation: JSON Schema composed from ``schemas/*.schema.yaml``.

``schemas/config.schema.yaml`` holds the common keys; every other ``schemas/<stage>.schema.yaml`` is
plugged in as the property ``<stage>``. Errors name the key path, what was given and what is allowed.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import importlib
import json
import math
from pathlib import Path

import jsonschema
import yaml

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "schemas"


class ConfigError(ValueError):
    """The config is invalid; the message names every offending key and the fix."""


def load_schema(schema_dir: str | Path = SCHEMA_DIR) -> dict:
    schema_dir = Path(schema_dir)
    main = yaml.safe_load((schema_dir / "config.schema.yaml").read_text())
    main.setdefault("properties", {})
    for path in sorted(schema_dir.glob("*.schema.yaml")):
        stage = path.name.removesuffix(".schema.yaml")
        if stage != "config":
            main["properties"][stage] = yaml.safe_load(path.read_text())
    return main


def _key_path(err: jsonschema.ValidationError) -> str:
    parts = [str(p) for p in err.absolute_path]
    return ".".join(parts) if parts else "(top level)"


def _allowed(err: jsonschema.ValidationError) -> str:
    s = err.schema if isinstance(err.schema, dict) else {}
    if err.validator == "check" and len(err.absolute_path) >= 2:  # an entry of a list: describe its key
        key = s.get("properties", {}).get(str(err.absolute_path[-2]), {})
        s = {**key.get("items", {}), "description": key.get("description")}
    bits = []
    if err.validator == "additionalProperties":
        allowed = sorted(s.get("properties", {}))
        bits.append("allowed keys: " + ", ".join(allowed))
        unknown = sorted(set(err.instance) - set(allowed)) if isinstance(err.instance, dict) else []
        for key in unknown:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            if close:
                bits.append(f"did you mean '{close[0]}' for '{key}'?")
    for k in (
        "type",
        "enum",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minItems",
        "maxItems",
        "pattern",
    ):
        if k in s:
            bits.append(f"{k}={s[k]}")
    if s.get("description"):
        bits.append(f"({s['description']})")
    numeric = any(t in str(s.get("type")) for t in ("number", "integer"))
    if isinstance(err.instance, float) and not math.isfinite(err.instance) and numeric:
        bits.insert(0, "a finite number (NaN and infinity are not allowed; YAML reads .nan and .inf as them)")
    elif err.validator == "type" and isinstance(err.instance, float) and "integer" in str(s.get("type")):
        bits.insert(
            0,
            f"a whole number written without a decimal point (e.g. {int(err.instance)})"
            if err.instance.is_integer() and abs(err.instance) < 1e15
            else "a whole number",
        )
    if err.validator == "maximum":
        bits.append(
            "the maximum guards against a value that would blow up a job; if you really need more, "
            "raise this key's `maximum` in its schemas/<stage>.schema.yaml"
        )
    return "; ".join(bits)


def _with_defaults(cls):
    """A validator that also fills in each property's ``default`` (the jsonschema FAQ recipe)."""
    validate_props = cls.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for prop, sub in properties.items():
                if isinstance(sub, dict) and "default" in sub:
                    instance.setdefault(prop, copy.deepcopy(sub["default"]))
        yield from validate_props(validator, properties, instance, schema)

    return jsonschema.validators.extend(cls, {"properties": set_defaults})


def _is_integer(checker, instance) -> bool:
    """Strictly an int: not a bool and not a float, even 2.0 (draft 2020-12 would accept it), so that a
    depth or a count written as ``2.0`` is caught instead of reaching ``range()`` or a path as '2.0'."""
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_number(checker, instance) -> bool:
    """A finite int or float (not a bool): NaN and ±inf (YAML ``.nan``, ``.inf``) are not numbers here."""
    if isinstance(instance, bool) or not isinstance(instance, (int, float)):
        return False
    return not isinstance(instance, float) or math.isfinite(instance)


_TYPES = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many(
    {"integer": _is_integer, "number": _is_number}
)


def _stage_check(validator, target, instance, schema):
    """Keyword ``check`` (on a stage's section): the ``module:function`` that the stage's own schema names,
    called with the section, returns (key path, message) for each value a schema cannot judge (such as a
    parameter inside a name); each becomes an error at that key. The validator itself knows no stage."""
    if not isinstance(instance, dict):
        return
    module, _, name = target.partition(":")
    for path, msg in getattr(importlib.import_module(module), name)(instance):
        value = instance
        for k in path:
            value = value[k]
        yield jsonschema.ValidationError(msg, path=list(path), validator="check", instance=value)


def _increasing(validator, enabled, instance, schema):
    """Keyword ``increasing`` (on a [low, high] pair such as ``fit_ranks``): low must be below high; a
    reversed range would select nothing and write NaN as a result."""
    if (
        enabled
        and isinstance(instance, list)
        and len(instance) == 2
        and all(_is_number(None, v) for v in instance)
        and not instance[0] < instance[1]
    ):
        yield jsonschema.ValidationError(
            f"{instance} is not a range [low, high] with low < high (reversed or empty). Fix: give the lower "
            "end first",
            validator="increasing",
            instance=instance,
        )


_Validator = _with_defaults(
    jsonschema.validators.extend(
        jsonschema.Draft202012Validator,
        {"check": _stage_check, "increasing": _increasing},
        type_checker=_TYPES,
    )
)


def checked_yaml(path: str | Path) -> str:
    """``path`` if it parses as YAML; else ``ConfigError`` naming the file, the line and the column and what
    is wrong there (Snakemake's own message names neither). For the Snakefile's ``configfile:``: overlays given
    with ``--configfile`` are read by Snakemake while it builds its settings, before the Snakefile runs, so
    their syntax errors keep Snakemake's message."""
    try:
        with open(path, encoding="utf-8") as f:
            yaml.safe_load(f)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e)
        start = getattr(e, "context_mark", None)
        if start and mark and start.line != mark.line:  # e.g. an unclosed [ opened on an earlier line
            problem += f", {e.context} that starts at line {start.line + 1}"
        raise ConfigError(
            f"{path}{where}: not valid YAML ({problem}). Nothing was run. Fix: correct that line (a YAML "
            "mapping is 'key: value', nested keys are indented with spaces, never tabs)."
        ) from None
    return str(path)


def validate_config(config: dict, schema_dir: str | Path = SCHEMA_DIR) -> dict:
    """Validate ``config`` in place against the composed schema, filling in defaults; raise
    ``ConfigError`` listing every error."""
    schema = load_schema(schema_dir)
    drop_nulled_entries(config, schema)
    validator = _Validator(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        lines = []
        for e in errors:
            lines.append(
                f"  - config key '{_key_path(e)}': {e.message}. Allowed: {_allowed(e) or 'see schema'}"
            )
        raise ConfigError(
            "Invalid configuration (nothing was run):\n"
            + "\n".join(lines)
            + f"\nFix these keys in config.yaml or the --configfile you passed; the schemas are in {schema_dir}."
        )
    return config


def drop_nulled_entries(config, schema: dict) -> None:
    """In every map whose schema says ``nullableEntries: true`` (named entries that a --configfile merges
    into the default's by key), remove the entries set to null: an overlay's ``name: null`` removes the
    default's entry of that name (config/paper.yaml drops the laptop's FineWeb corpora)."""
    if not isinstance(config, dict) or not isinstance(schema, dict):
        return
    if schema.get("nullableEntries"):
        for name in [n for n, v in config.items() if v is None]:
            del config[name]
    for key, sub in (schema.get("properties") or {}).items():
        if key in config:
            drop_nulled_entries(config[key], sub)


def deep_merge(base: dict, overlay: dict) -> dict:
    """``overlay`` laid over ``base`` in place, as Snakemake merges --configfile files: dicts merge,
    everything else (lists included) is replaced."""
    for k, v in overlay.items():
        if isinstance(v, dict) and isinstance(base.get(k), dict):
            deep_merge(base[k], v)
        else:
            base[k] = v
    return base


def config_hash(config: dict) -> str:
    """SHA-256 of the config as canonical JSON: the same values give the same hash."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()


def result_params(subtree: dict, speed_keys=()) -> dict:
    """The settings of ``subtree`` that change results, as rule params: keys sorted, ``speed_keys``
    (checkpoint interval, batch sizes and other speed knobs) left out, so editing one of those reruns
    nothing; they reach the job as its ``speed`` params (``depthwidth.rules.Speed``). The one place
    where a rule's params drop settings that do not change results."""
    speed = set(speed_keys)
    return {k: subtree[k] for k in sorted(subtree) if k not in speed}


def main(argv: list[str] | None = None) -> int:
    """``python -m depthwidth.config FILE...``: check config files as ``--configfile`` would read them,
    in order: each must parse as YAML (a syntax error names the file, line and column, which Snakemake's
    own message for an overlay does not), then config.yaml beside this checkout's schemas (where it
    exists and is not listed) with the files laid over it must pass the schemas."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(
        prog="python -m depthwidth.config",
        description="Check config files as --configfile reads them: each parses as YAML, and config.yaml "
        "with the files laid over it, in order, passes the schemas.",
    )
    ap.add_argument("files", nargs="+", metavar="FILE", help="the files you pass to --configfile, in order")
    files = ap.parse_args(argv).files
    base = SCHEMA_DIR.parent / "config.yaml"
    paths = [str(base)] if base.is_file() and all(Path(f).resolve() != base.resolve() for f in files) else []
    merged: dict = {}
    try:
        for path in paths + files:
            with open(checked_yaml(path), encoding="utf-8") as f:
                layer = yaml.safe_load(f) or {}
            if not isinstance(layer, dict):
                raise ConfigError(f"{path}: not a mapping of config keys (it holds a {type(layer).__name__})")
            merged = deep_merge(merged, layer)
        validate_config(merged)
    except (ConfigError, OSError) as e:
        print(e, file=sys.stderr)
        return 1
    print(f"ok: {', '.join(paths + files)} parse and, merged in this order, pass the schemas")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
