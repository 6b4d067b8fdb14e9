"""Config validation: every error names the key and what is allowed; defaults are filled in."""

import copy

import pytest
import yaml

from _helpers import REPO
from depthwidth.config import (
    ConfigError,
    config_hash,
    deep_merge,
    result_params,
    validate_config,
)


@pytest.fixture()
def config():
    return yaml.safe_load((REPO / "config.yaml").read_text())


def test_default_and_overlay_configs_are_valid(config):
    validate_config(config)
    for name in ("test.yaml", "paper.yaml"):
        merged = deep_merge(copy.deepcopy(config), yaml.safe_load((REPO / "config" / name).read_text()))
        validate_config(merged)


def test_null_corpus_entry_drops_the_defaults_entry(config):
    """config/paper.yaml nulls the default's FineWeb corpora: after the merge only the paper's four are left."""
    merged = validate_config(
        deep_merge(copy.deepcopy(config), yaml.safe_load((REPO / "config" / "paper.yaml").read_text()))
    )
    assert sorted(merged["lm_head"]["loss"]["corpora"]) == ["bookcorpus", "c4", "pile-10k", "wikitext"]
    assert sorted(merged["lm_head"]["token_frequencies"]["corpora"]) == [
        "bookcorpus",
        "c4",
        "pile",
        "wikitext",
    ]
    assert "fineweb" in validate_config(config)["lm_head"]["loss"]["corpora"]


def test_deep_merge_merges_dicts_and_replaces_lists():
    base = {"a": {"x": 1, "y": [1, 2]}, "b": 2}
    assert deep_merge(base, {"a": {"y": [3]}, "c": 4}) == {"a": {"x": 1, "y": [3]}, "b": 2, "c": 4}


@pytest.mark.parametrize(
    "path,value,words",
    [
        (
            ("chinchilla", "fit", "drop_highest_loss"),
            "forty",
            ["chinchilla.fit.drop_highest_loss", "integer"],
        ),
        (("chinchilla", "fit", "drop_highest_loss"), -1, ["chinchilla.fit.drop_highest_loss", "minimum=0"]),
        (("chinchilla", "fit", "depth_scale"), 0, ["chinchilla.fit.depth_scale", "exclusiveMinimum=0"]),
        (("stages",), [], ["stages", "minItems=1"]),
        (("stages",), ["chinchila"], ["stages.0", "chinchilla"]),
        # a reversed [low, high] range selects nothing and would write NaN as a result
        (("lm_head", "token_frequencies", "fit_ranks"), [1000, 10], ["fit_ranks", "low < high"]),
        (("hidden_states", "stats", "middle"), [0.75, 0.25], ["hidden_states.stats.middle", "low < high"]),
    ],
)
def test_bad_values_name_the_key(config, path, value, words):
    node = config
    for k in path[:-1]:
        node = node.setdefault(k, {})  # a section config.yaml leaves to the schema defaults
    node[path[-1]] = value
    with pytest.raises(ConfigError) as e:
        validate_config(config)
    for w in words:
        assert w in str(e.value)


def test_unknown_key_lists_allowed_keys(config):
    config["chinchilla"]["fit"]["bootstrap_resample"] = 10  # typo of bootstrap_resamples
    with pytest.raises(ConfigError) as e:
        validate_config(config)
    msg = str(e.value)
    assert "chinchilla.fit" in msg and "bootstrap_resample" in msg and "bootstrap_resamples" in msg


def test_defaults_filled_and_hash_tracks_values(config):
    assert "n_starts" not in config["chinchilla"]["fit"]  # config.yaml leaves it to the schema
    h0 = config_hash(validate_config(config))
    assert config["chinchilla"]["fit"]["n_starts"] == 8  # schema default
    config["chinchilla"]["fit"]["n_starts"] = 9
    assert config_hash(config) != h0


def test_result_params_sorts_keys_and_drops_speed_keys():
    params = result_params(
        {"steps": 10, "batch_tokens": 4096, "lr": 0.1, "checkpoint_every": 5},
        speed_keys=("batch_tokens", "checkpoint_every"),
    )
    assert params == {"lr": 0.1, "steps": 10}
    assert list(params) == ["lr", "steps"]
    assert list(result_params({"b": 1, "a": 2})) == ["a", "b"]


def test_speed_entry_is_a_derived_params_function_snakemake_does_not_compare():
    """The speed keys reach a job as the ``speed`` entry of its params, a params function of ``output``:
    Snakemake's own test of a derived params function (the ones it leaves out of the params rerun
    trigger) says yes, the result params say no, and the two together hold every key exactly once."""
    from types import SimpleNamespace

    from snakemake.rules import Rule as SnakemakeRule

    from depthwidth.rules import Keys, Rule, RuleTable, Speed, job_params

    keys = ("checkpoint_every", "batch_tokens")
    config = {"stage": {"steps": 10, "batch_tokens": 4096, "lr": 0.1, "checkpoint_every": 5}}
    rule = Rule(params={"run": Keys("stage", drop=keys)}, speed=Speed("stage", keys))
    stage = SimpleNamespace(__name__="depthwidth.stage.pipeline", RULES={"stage_run": rule})
    params = RuleTable(config, stage).params("stage_run")
    assert SnakemakeRule._is_deriving_function(params["speed"])
    assert not SnakemakeRule._is_deriving_function(params["run"])
    job = job_params(config, stage, "stage_run")
    assert list(job["speed"]) == ["batch_tokens", "checkpoint_every"] and job["speed"]["batch_tokens"] == 4096
    assert {**job["run"], **job["speed"]} == config["stage"] and list(job["run"]) == ["lr", "steps"]
    job["speed"]["batch_tokens"] = 1  # a job editing its copy changes nothing for the next job
    assert job_params(config, stage, "stage_run")["speed"]["batch_tokens"] == 4096
    with pytest.raises(ConfigError, match=r"'stage\.batch_tokens'.* is missing"):
        job_params({"stage": {"steps": 10}}, stage, "stage_run")
    # a param every rule gets (a fingerprint of the stage's code, say) is one argument, and a rerun trigger
    table = RuleTable(config, stage, every_rule=lambda name: {"code": f"{name}-v1"})
    assert table.params("stage_run")["code"] == "stage_run-v1" and "code" not in params


def test_every_speed_key_of_every_rule_is_a_schema_key_left_out_of_its_params(config):
    """For every rule with speed keys in a stage's RULES table: they are keys of its config section (so a
    renamed key fails here), reach the job as ``speed``, a params function Snakemake does not compare, and
    none of them is in the job's other, rerun-triggering params."""
    from snakemake.rules import Rule

    from depthwidth.causal_tracing import pipeline as ct
    from depthwidth.depth_toy import pipeline as dt
    from depthwidth.hidden_states import pipeline as hs
    from depthwidth.lm_head import pipeline as lm
    from depthwidth.rules import RuleTable, job_params
    from depthwidth.superposition import pipeline as sp

    cfg = validate_config(config)
    job = {
        "variant": next(iter(cfg["depth_toy"]["variants"])),
        "fact": cfg["causal_tracing"]["facts"][0]["name"],
    }
    checked = []
    for pipeline in (sp, dt, hs, ct, lm):
        for name, rule in pipeline.RULES.items():
            if rule.speed is None:
                continue
            kw = {"variant": job["variant"]} if pipeline is dt else {}
            params = job_params(cfg, pipeline, name, {"fact": job["fact"]}, **kw)
            speed, keys = params.pop("speed"), rule.speed.keys
            assert Rule._is_deriving_function(RuleTable(cfg, pipeline).params(name, **kw)["speed"])
            assert sorted(speed) == sorted(keys), (name, keys)
            named = set(params) | {k for p in params.values() if isinstance(p, dict) for k in p}
            assert not set(keys) & named, (name, keys)
            checked.append(name)
    assert len(checked) == 5, checked


def test_misspelt_key_gets_did_you_mean(config):
    config["lm_head"]["geometri"] = {}
    with pytest.raises(ConfigError, match=r"did you mean 'geometry' for 'geometri'\?"):
        validate_config(config)


def test_report_title_default_filled(config):
    assert "report" not in config  # config.yaml leaves the section to the schema
    assert validate_config(config)["report"]["title"].startswith("depthwidth")


@pytest.mark.parametrize(
    "n,laws,words",
    [
        # α = 10 is the largest exponent; with n = 100000 even that gives p_n/p_1 = e^-115 < 2^-149
        (10240, ["power-a10"], None),
        (100000, ["power-a10"], ["superposition.distributions.0", "α ≤ 8.97 for n_features=100000"]),
        (300, ["linear", "power-a10.5"], ["superposition.distributions.1", "outside [0, 10]"]),
        # an exponential law too steep for n: e^-(n-1)/k underflows float32 for k < (n-1)/103.3
        (1000, ["exponential-k9.5"], ["superposition.distributions.0", "k ≥ 9.67 for n_features=1000"]),
        (1000, ["exponential-k10-s0.5"], None),
    ],
)
def test_frequency_law_parameters_are_bounded(config, n, laws, words):
    config["superposition"].update(n_features=n, distributions=laws)
    if words is None:
        validate_config(config)
        return
    with pytest.raises(ConfigError) as e:
        validate_config(config)
    msg = str(e.value)
    assert msg.count("config key '") == 1 and "Fix:" in msg
    for w in words:
        assert w in msg, msg
