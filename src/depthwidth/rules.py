"""Config → every rule's params, threads and resources: one idiom for every stage.

A stage's pipeline module declares what each of its rules takes from the validated config, as a table
``RULES = {rule name: Rule(...)}``. ``rules/common.smk`` holds one :class:`RuleTable`; each rules file
adds its stage's table (``RULES.add(<stage>_pipeline)``), and a rule reads its entry by name:

    threads: RULES.threads("superposition_train")
    resources:
        **RULES.resources("superposition_train"),
    params:
        **RULES.params("superposition_train"),

Each value is read when Snakemake plans a job (a function of the job's wildcards), so the section of a
stage that is not configured is never read, and a config path may hold a wildcard (``"models.{model}"``).
Params are rerun triggers, except ``speed`` (:class:`Speed`) and ``sources`` (where inputs are fetched
from), which are functions of ``output``: Snakemake counts those as derived from the job's files and
leaves them out of the params it compares (``--rerun-triggers params``). Light to import (no torch).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

from depthwidth.config import ConfigError, result_params

# The partition that profiles/slurm names for GPU jobs.
GPU_PARTITION = "gpu"


@dataclass(frozen=True)
class Key:
    """The value at ``path`` (dotted), as it is."""

    path: str


@dataclass(frozen=True)
class Keys:
    """The subtree at ``path`` as a dict, keys sorted (``config.result_params``): ``only`` these keys (all
    when empty), less ``drop`` (speed keys, and keys that are not this rule's settings)."""

    path: str
    only: tuple = ()
    drop: tuple = ()


@dataclass(frozen=True)
class Speed:
    """The speed-only ``keys`` of ``path`` (editing them reruns nothing): the rule's ``speed`` entry."""

    path: str
    keys: tuple


@dataclass(frozen=True)
class Call:
    """``fn(config, wildcards, **kw)``: a value that is more than keys of the config (a rerun trigger)."""

    fn: Callable


@dataclass(frozen=True)
class Device:
    """GPUs from a device key: one unless the device is ``cpu``."""

    path: str


@dataclass(frozen=True)
class Rule:
    """What one rule takes from the config. ``params``: name -> Key | Keys | Call. ``threads``, ``mem_mb``
    and ``runtime`` (minutes): a number as it is, or a config path or ``fn(config, wildcards, **kw)``, which
    grow on each retry (× attempt). ``gpus``: a number, a config path or a :class:`Device` (see
    :func:`gpu_resources`). ``sources``: the mirrors and network settings of rules that fetch."""

    params: dict = field(default_factory=dict)
    speed: Speed | None = None
    sources: bool = False
    threads: int | str | Callable | None = None
    mem_mb: int | str | Callable | None = None
    runtime: int | str | Callable | None = None
    gpus: int | str | Device | None = None


def lookup(config: dict, path: str, fields: dict | None = None):
    """``config`` at the dotted ``path``, each part formatted with ``fields`` (a job's wildcards)."""
    value = config
    for part in path.split("."):
        key = part.format(**fields) if fields else part
        if not isinstance(value, dict) or key not in value:
            raise ConfigError(f"config key '{path}' ({key!r}) is missing (validate the config first)")
        value = value[key]
    return value


def gpu_resources(gpus: int) -> dict:
    """The one way a rule asks for GPUs: ``gpu`` (the SLURM plugin turns it into ``--gpus``) and, when it
    asks for any, the GPU partition."""
    return {"gpu": gpus, "slurm_partition": GPU_PARTITION} if gpus else {"gpu": 0}


class RuleTable:
    """The ``RULES`` tables of the stages, bound to the validated config (see the module docstring)."""

    def __init__(self, config: dict, *pipelines, sources: Callable | None = None, every_rule=None):
        """``sources()``: the ``sources`` entry; ``every_rule(rule)``: params every rule gets (its name given)."""
        self.config, self.sources, self.every_rule = config, sources, every_rule or (lambda rule: {})
        self.rules, self.stage = {}, {}
        for pipeline in pipelines:
            self.add(pipeline)

    def add(self, pipeline) -> None:
        """Add the ``RULES`` table of a stage's pipeline module (``depthwidth.<stage>.pipeline``)."""
        for name, rule in pipeline.RULES.items():
            self.rules[name], self.stage[name] = rule, pipeline.__name__.split(".")[1]

    def _rule(self, name: str) -> Rule:
        if name not in self.rules:
            raise KeyError(
                f"rule {name!r} has no entry in its stage's RULES table (depthwidth.<stage>.pipeline)"
            )
        return self.rules[name]

    def params(self, name: str, **kw) -> dict:
        """The rule's ``params:`` (names -> functions of the job); ``kw`` go to its ``Call`` functions."""
        rule, config = self._rule(name), self.config
        out = {k: _param(config, v, kw) for k, v in rule.params.items()} | self.every_rule(name)
        if rule.speed:
            path, keys = rule.speed.path, sorted(rule.speed.keys)
            out["speed"] = _derived(lambda: {k: lookup(config, f"{path}.{k}") for k in keys})
        if rule.sources:
            out["sources"] = _derived(self.sources)
        return out

    def threads(self, name: str, **kw):
        rule = self._rule(name)
        return 1 if rule.threads is None else _value(self.config, rule.threads, kw, grow=False)

    def resources(self, name: str, **kw) -> dict:
        rule, out = self._rule(name), {}
        for key in ("mem_mb", "runtime"):
            if getattr(rule, key) is not None:
                out[key] = _value(self.config, getattr(rule, key), kw, grow=True)
        if rule.gpus is not None:
            out.update(gpu_resources(_gpus(self.config, rule.gpus)))
        return out


def _param(config: dict, spec, kw: dict):
    """A params entry as a function of the job's wildcards (so Snakemake keeps it as a rerun trigger)."""
    if isinstance(spec, Key):
        return _per_job(lambda w: lookup(config, spec.path, {**kw, **w}))
    if isinstance(spec, Keys):
        pick = lambda sub: {k: sub[k] for k in spec.only} if spec.only else sub  # noqa: E731
        return _per_job(lambda w: result_params(pick(lookup(config, spec.path, {**kw, **w})), spec.drop))
    if isinstance(spec, Call):
        return _per_job(lambda w: spec.fn(config, w, **kw))
    raise TypeError(f"params entry {spec!r}: use Key, Keys or Call")


def _per_job(fn):
    def param(wildcards):
        return fn(dict(wildcards.items()))

    return param


def _derived(fn):
    """A params function of ``output``: Snakemake leaves it out of the params it compares."""

    def param(wildcards, output):
        return fn()

    return param


def _value(config: dict, spec, kw: dict, grow: bool):
    """A number as it is; a config path or an estimate ``fn(config, wildcards, **kw)`` per job (× attempt
    for resources, as the profile's set-resources do; with ``input`` once the job's input exists)."""
    if isinstance(spec, (int, float)):
        return spec

    def base(wildcards, **more):
        w = dict(wildcards.items())
        return lookup(config, spec, {**kw, **w}) if isinstance(spec, str) else spec(config, w, **kw, **more)

    if not grow:
        return lambda wildcards: int(base(wildcards))
    if not isinstance(spec, str) and "input" in inspect.signature(spec).parameters:
        return lambda wildcards, input, attempt: int(base(wildcards, input=input) * attempt)
    return lambda wildcards, attempt: int(base(wildcards) * attempt)


def _gpus(config: dict, spec) -> int:
    """GPUs of a rule, read when the workflow is parsed (they decide the partition); 0 for a stage that is
    not configured."""
    if isinstance(spec, int):
        return spec
    path = spec.path if isinstance(spec, Device) else spec
    if path.split(".")[0] not in config:
        return 0
    value = lookup(config, path)
    return int(value != "cpu") if isinstance(spec, Device) else int(value)


def job_params(config: dict, pipeline, name: str, wildcards: dict | None = None, **kw) -> dict:
    """The params one job of rule ``name`` gets, evaluated as Snakemake evaluates them (speed entries
    included), from the ``RULES`` table of ``pipeline``: for tests and tools outside a workflow."""
    table, w = RuleTable(config, pipeline, sources=dict), dict(wildcards or {})
    return {
        k: f(w, []) if "output" in inspect.signature(f).parameters else f(w)
        for k, f in table.params(name, **kw).items()
    }
