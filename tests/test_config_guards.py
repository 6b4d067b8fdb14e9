"""Settings that pass a loose schema but not the job: non-finite numbers, floats
where integers are meant, values that blow up a job, grids too large to plan, names that escape the
working directory. Each is rejected before any job, naming the key."""

from __future__ import annotations

import copy
import time

import pytest
import yaml
from _pipeline import BASE_CONFIGS, merge, merged_config, overlay, run

from _helpers import REPO
from depthwidth.config import ConfigError, deep_merge, validate_config
from depthwidth.plan import check_job_count, check_outputs_inside, check_plan, job_counts


def _set(cfg: dict, path: str, value) -> dict:
    node = cfg
    keys = path.split(".")
    for k in keys[:-1]:
        node = node.setdefault(k, {})  # a section config.yaml leaves to the schema defaults
    node[keys[-1]] = value
    return cfg


def _rejected(path: str, value, *words: str) -> str:
    cfg = _set(merged_config(), path, value)
    with pytest.raises(ConfigError) as e:
        validate_config(cfg)
    msg = str(e.value)
    for w in words:
        assert w in msg, f"{w!r} not in:\n{msg}"
    return msg


NON_FINITE = [
    ("superposition.weight_decays", [float("nan"), 0.3]),
    ("superposition.lr", float("inf")),
    ("superposition.alphas", [1.5, float("-inf")]),
    ("chinchilla.fit.width_scale", float("nan")),
    ("chinchilla.fit.tokens_scale", float("inf")),
    ("chinchilla.shape.n_params", [1.0e8, float("inf")]),
    ("depth_toy.variants.mse.lr", float("nan")),
    ("hidden_states.checkpoint_every_s", float("inf")),
    ("superposition.analysis.tolerance", float("nan")),
]


@pytest.mark.parametrize("path, value", NON_FINITE, ids=[p for p, _ in NON_FINITE])
def test_nan_and_inf_are_rejected_by_name(path, value):
    msg = _rejected(path, value, "finite number")
    assert f"config key '{path}" in msg


def test_yaml_nan_and_inf_spellings_are_rejected(tmp_path):
    """What a user writes: YAML `.nan` / `.inf` (read as float NaN / inf)."""
    cfg = merge(
        merged_config(),
        yaml.safe_load("superposition: {weight_decays: [.nan]}\nchinchilla: {fit: {depth_scale: .inf}}\n"),
    )
    with pytest.raises(ConfigError) as e:
        validate_config(cfg)
    assert "superposition.weight_decays.0" in str(e.value) and "chinchilla.fit.depth_scale" in str(e.value)


FLOAT_INTS = [
    ("depth_toy.variants.mse.depths", [2.0, 4]),
    ("hidden_states.corpus.n_docs", 4.0),
    ("superposition.widths", [4, 8.0]),
    ("superposition.steps", 80.0),
    ("lm_head.loss.n_texts", 2.0),
    ("chinchilla.fit.n_starts", True),
]


@pytest.mark.parametrize("path, value", FLOAT_INTS, ids=[p for p, _ in FLOAT_INTS])
def test_floats_and_bools_where_integers_are_meant(path, value):
    _rejected(path, value, f"config key '{path}", "is not of type 'integer'")


def test_float_integer_error_says_how_to_write_it():
    _rejected("hidden_states.corpus.n_docs", 4.0, "without a decimal point (e.g. 4)")


BLOW_UPS = [
    ("superposition.batch_size", 10**14),
    ("superposition.n_features", 10**20),
    ("depth_toy.batch_size", 10**14),
    ("hidden_states.batch_tokens", 10**14),
    ("hidden_states.max_tokens", 10**9),
    ("lm_head.loss.max_tokens", 10**9),
    ("lm_head.token_frequencies.min_tokens", 10**15),
    ("chinchilla.fit.width_scale", 1.0e308),  # drove the fit to a bound and was written as a result
]


@pytest.mark.parametrize("path, value", BLOW_UPS, ids=[p for p, _ in BLOW_UPS])
def test_values_that_blow_up_a_job_are_rejected(path, value):
    _rejected(path, value, f"config key '{path}", "raise this key's `maximum`")


BAD_NAMES = [
    ("models", "../../../escape"),
    ("models", "a/b"),
    ("models", ".hidden"),
    ("lm_head.loss.corpora", "../up"),
    ("lm_head.token_frequencies.corpora", "x/../../y"),
]


@pytest.mark.parametrize("path, name", BAD_NAMES, ids=[f"{p}:{n}" for p, n in BAD_NAMES])
def test_names_that_become_paths_must_be_plain(path, name):
    cfg = merged_config()
    node = cfg
    for k in path.split("."):
        node = node.setdefault(k, {})  # a section config.yaml leaves to the schema defaults
    node[name] = copy.deepcopy(next(iter(node.values())))
    with pytest.raises(ConfigError) as e:
        validate_config(cfg)
    msg = str(e.value)
    assert f"config key '{path}'" in msg and repr(name) in msg and "becomes a folder" in msg


@pytest.mark.parametrize(
    "key", ["hidden_states.models", "lm_head.models", "lm_head.token_frequencies.tokenizers"]
)
def test_model_name_lists_must_be_plain(key):
    _rejected(key, ["../../../escape"], f"config key '{key}.0'")


def test_outputs_inside_guard_names_the_key(tmp_path):
    """The second fence, behind the schema: a name that would resolve outside the working directory."""
    cfg = validate_config(merged_config())
    check_outputs_inside(cfg, tmp_path)
    cfg["models"]["../../../escape"] = cfg["models"].pop(next(iter(cfg["models"])))  # as if unvalidated
    with pytest.raises(ConfigError) as e:
        check_outputs_inside(cfg, tmp_path)
    assert "models.../../../escape" in str(e.value) and "outside" in str(e.value)


def _paper() -> dict:
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    return validate_config(deep_merge(cfg, yaml.safe_load((REPO / "config" / "paper.yaml").read_text())))


def test_paper_config_plans_under_the_default_limit():
    cfg = _paper()
    counts = check_plan(cfg, REPO)
    total = sum(c.count for c in counts)
    assert 1500 < total < cfg["max_jobs"]
    assert any(c.stage == "superposition" and c.count == 1500 for c in counts)


def test_huge_grid_stops_naming_the_keys_and_the_limit():
    cfg = validate_config(
        merge(
            merged_config(),
            {
                "superposition": {
                    "n_features": 20000,
                    "widths": list(range(1, 101)),
                    "weight_decays": [i / 10 for i in range(-5, 5)],
                    "alphas": [1 + i / 100 for i in range(50)],
                    "seeds": list(range(20)),
                }
            },
        )
    )
    t0 = time.monotonic()
    with pytest.raises(ConfigError) as e:
        check_job_count(cfg)
    assert time.monotonic() - t0 < 2
    msg = str(e.value)
    for w in (
        "1,000,000 training jobs",
        "superposition.widths (100)",
        "superposition.seeds (20)",
        "superposition.weight_decays (10)",
        "max_jobs = 20,000",
        "raise the top-level key max_jobs",
    ):
        assert w in msg, msg
    cfg["max_jobs"] = 2_000_000  # the user means it
    assert sum(c.count for c in check_job_count(cfg)) > 1_000_000


def test_job_counts_cover_every_stage():
    stages = {c.stage for c in job_counts(validate_config(merged_config()))}
    assert stages == {"models", "superposition", "depth_toy", "hidden_states", "lm_head"}


@pytest.mark.workflow
def test_snakemake_stops_on_a_huge_grid_before_planning(tmp_path):
    """The whole path: Snakemake parses, validates, counts and stops in seconds with the keys named."""
    cfg = overlay(
        tmp_path,
        "huge",
        {
            "superposition": {
                "n_features": 20000,
                "widths": list(range(1, 101)),
                "seeds": list(range(100)),
                "weight_decays": [i / 10 for i in range(-5, 5)],
                "alphas": [1 + i / 100 for i in range(10)],
            }
        },
    )
    wd = tmp_path / "wd"
    t0 = time.monotonic()
    p = run(wd, "-n", "--cores", "1", configs=[*BASE_CONFIGS, cfg], check=False, timeout=120)
    text = p.stdout + p.stderr
    assert p.returncode != 0 and "1,000,000 training jobs" in text and "max_jobs" in text, text[-3000:]
    assert time.monotonic() - t0 < 60
    assert not (wd / "results").exists()


@pytest.mark.workflow
def test_snakemake_rejects_an_escaping_model_name(tmp_path):
    cfg = overlay(
        tmp_path,
        "escape",
        {"models": {"../../../escape": {"source": "local", "path": "/nonexistent", "family": "llama"}}},
    )
    wd = tmp_path / "wd"
    p = run(wd, "-n", "--cores", "1", configs=[*BASE_CONFIGS, cfg], check=False, timeout=120)
    text = p.stdout + p.stderr
    assert p.returncode != 0 and "config key 'models'" in text and "../../../escape" in text, text[-3000:]
    assert not (tmp_path.parent / "escape").exists()


def test_messages_fit_the_key_type():
    """The finite-number hint only for numeric keys; no 30-digit example for a huge float."""
    msg = _rejected("report.title", float("nan"), "config key 'report.title'", "not of type 'string'")
    assert "finite number" not in msg
    msg = _rejected("superposition.seeds", [1.0e30], "config key 'superposition.seeds.0'", "a whole number")
    assert "e.g." not in msg


def test_reversed_fit_ranks_are_an_error_not_a_nan_alpha():
    """The schema's `increasing` keyword: a reversed rank range stops validation, naming the key."""
    with pytest.raises(ConfigError) as e:
        validate_config(merge(merged_config(), {"lm_head": {"token_frequencies": {"fit_ranks": [1000, 10]}}}))
    assert "lm_head.token_frequencies.fit_ranks" in str(e.value) and "Fix:" in str(e.value)


def test_jobs_sharing_cpus_sleep_while_waiting():
    """--cores above the machine's CPUs (the documented --cores 8 on a laptop) sets OMP_WAIT_POLICY=PASSIVE
    for the local jobs; cores that fit, cluster jobs and a user's own setting are left alone."""
    from depthwidth.plan import shared_cpu_env

    assert shared_cpu_env(8, 2, True, {}) == {"OMP_WAIT_POLICY": "PASSIVE"}
    assert shared_cpu_env(2, 2, True, {}) == {}
    assert shared_cpu_env(8, 2, False, {}) == {}
    assert shared_cpu_env(None, 2, True, {}) == {}
    assert shared_cpu_env(8, 2, True, {"OMP_WAIT_POLICY": "ACTIVE"}) == {}
