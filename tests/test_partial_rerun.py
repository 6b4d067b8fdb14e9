"""Partial reruns: editing one config key plans only the jobs that use it, then the report.

One run of the whole test config (shared with the other end-to-end modules through
the ``completed_run`` fixture); then, for one key of each stage, a dry run with that key edited must plan
exactly the stage's affected rules plus the report, and the jobs planned because their params changed
must be exactly those of the rules whose params hold that key. Dry runs write nothing, so the shared folder
stays complete.
"""

from __future__ import annotations

import re

import pytest
from _pipeline import BASE_CONFIGS, dry_run, merged_config, overlay, planned_jobs, run

from depthwidth.config import validate_config

pytestmark = pytest.mark.workflow

# the report and the default target follow every change
REPORT = {"report": 1, "all": 1}


def _test_config() -> dict:
    return merged_config()


def _edits() -> list[tuple[str, dict, dict, set[str]]]:
    """(name, config change, rule -> planned job count, files whose params changed) for one key per stage.

    Values are derived from the test config so that each edit really changes the value."""
    # the config as the run sees it: the schemas' defaults filled in
    cfg = full = validate_config(_test_config())
    hs_models = cfg["hidden_states"]["models"]
    lm_models = cfg["lm_head"]["models"]
    n_lm_corpora = len(cfg["lm_head"]["loss"]["corpora"])
    sup = cfg["superposition"]
    dt = cfg["depth_toy"]
    n_sup_cells_per_width = (
        (len(sup.get("alphas", [])) + len(sup.get("distributions", [])))
        * len(sup["weight_decays"])
        * len(sup["seeds"])
    )
    edits = [
        # a fit setting: only the fit, the Chinchilla section and the report
        (
            "chinchilla_fit_setting",
            {
                "chinchilla": {
                    "fit": {"bootstrap_resamples": cfg["chinchilla"]["fit"]["bootstrap_resamples"] + 1}
                }
            },
            {"chinchilla_fit": 1, "chinchilla_compare": 1, "chinchilla_section": 1, **REPORT},
            {
                "results/chinchilla/fits/decomposed/squared/fit.json",
                "results/chinchilla/fits/decomposed/squared/bootstrap.csv",
            },
        ),
        # a key of the Huber cell's scan: only that cell's scan of the fit grid, not its fit or the squared
        # cell
        (
            "chinchilla_huber_scan_setting",
            {
                "chinchilla": {
                    "huber": {
                        "scan_bootstrap_resamples": cfg["chinchilla"]["huber"]["scan_bootstrap_resamples"] + 1
                    }
                }
            },
            {"chinchilla_drop_scan": 1, "chinchilla_compare": 1, "chinchilla_section": 1, **REPORT},
            {"results/chinchilla/fits/decomposed/huber/drop_scan.csv"},
        ),
        # a key only the squared cell's scan reads (the paper's least-squares errors): not the Huber scan
        (
            "chinchilla_paper_stderr_precision",
            {"chinchilla": {"drop_scan": {"paper_stderr_precision": "float32"}}},
            {"chinchilla_drop_scan": 1, "chinchilla_compare": 1, "chinchilla_section": 1, **REPORT},
            {"results/chinchilla/fits/decomposed/squared/drop_scan.csv"},
        ),
        # a key both cells share: both cells' fits and scans, and the leverage (it reads the Huber cell's
        # starts, but Snakemake names its new input, the Huber cell's fit.json, as the reason)
        (
            "chinchilla_shared_setting",
            {"chinchilla": {"fit": {"n_starts": cfg["chinchilla"]["fit"]["n_starts"] + 1}}},
            {
                "chinchilla_fit": 2,
                "chinchilla_drop_scan": 2,
                "chinchilla_leverage": 1,
                "chinchilla_compare": 1,
                "chinchilla_section": 1,
                **REPORT,
            },
            {
                f"results/chinchilla/{f}"
                for f in (
                    "fits/decomposed/squared/fit.json",
                    "fits/decomposed/squared/bootstrap.csv",
                    "fits/decomposed/squared/drop_scan.csv",
                    "fits/decomposed/huber/fit.json",
                    "fits/decomposed/huber/bootstrap.csv",
                    "fits/decomposed/huber/drop_scan.csv",
                )
            },
        ),
        # a key only the chinchilla cells read (the core's bootstrap of the Chinchilla law): both chinchilla
        # cells, not the replication's 100 starts nor the decomposed cells
        (
            "chinchilla_law_cell_setting",
            {
                "chinchilla": {
                    "chinchilla_law": {
                        "bootstrap_resamples": cfg["chinchilla"]["chinchilla_law"]["bootstrap_resamples"] + 1
                    }
                }
            },
            {"chinchilla_fit": 2, "chinchilla_section": 1, **REPORT},
            {
                f"results/chinchilla/fits/chinchilla/{loss}/{f}"
                for loss in ("squared", "huber")
                for f in ("fit.json", "bootstrap.csv")
            },
        ),
        # a report option: only the report
        (
            "report_title",
            {"report": {"title": "edited title"}},
            dict(REPORT),
            {"results/report.html", "results/headline.csv", "results/your_sweeps.csv"},
        ),
        # a statistics setting of the hidden states: per-model stats, not the (expensive) extraction
        (
            "hidden_states_stats",
            {
                "hidden_states": {
                    "stats": {"sample_tokens": cfg["hidden_states"]["stats"]["sample_tokens"] + 10}
                }
            },
            {
                "hidden_states_stats": len(hs_models),
                "hidden_states_compare": 1,
                "hidden_states_section": 1,
                **REPORT,
            },
            {
                f"results/hidden_states/{m}/{f}"
                for m in hs_models
                for f in ("layer_stats.csv", "token_groups.csv", "token_sample.parquet", "summary.json")
            },
        ),
        # the number of tokens per text of the LM-head losses: the loss jobs and what reads them
        (
            "lm_head_loss_tokens",
            {"lm_head": {"loss": {"max_tokens": cfg["lm_head"]["loss"]["max_tokens"] + 8}}},
            {
                "lm_head_loss": len(lm_models) * n_lm_corpora,
                "lm_head_width_fit": 1,
                "lm_head_compare": 1,
                "lm_head_section": 1,
                **REPORT,
            },
            {
                f"results/lm_head/loss/{c}/{m}.{ext}"
                for c in cfg["lm_head"]["loss"]["corpora"]
                for m in lm_models
                for ext in ("csv", "json")
            },
        ),
        # a toy grid value added: only the new cells train (one per distribution x decay x seed)
        (
            "superposition_new_width",
            {
                "superposition": {
                    "widths": [*cfg["superposition"]["widths"], 2 * max(cfg["superposition"]["widths"])]
                }
            },
            {
                "superposition_train": n_sup_cells_per_width,
                "superposition_tables": 1,
                "superposition_compare": 1,
                "superposition_section": 1,
                # every figure compared with our cells or exponents (all but Figs. 8a and 8b), gathered
                "paperfigs_compare": 9,
                "paperfigs_comparisons": 1,
                "paperfigs_section": 1,
                **REPORT,
            },
            set(),
        ),
        # the depth toy: a new replicate adds its training jobs (one per teacher kind and variant) and
        # retrains nothing
        (
            "depth_toy_new_replicate",
            {"depth_toy": {"replicates": dt["replicates"] + 1}},
            {
                **{
                    f"depth_toy_train_{v}": len(spec.get("kinds", dt["kinds"]))
                    for v, spec in dt["variants"].items()
                },
                "depth_toy_tables": 1,
                "depth_toy_compare": 1,
                "depth_toy_section": 1,
                **REPORT,
            },
            set(),
        ),
        # every stage's speed-only settings at once (their RULES entries' Speed): no job of any stage
        # reruns; only the report, whose provenance block records the whole config
        (
            "speed_settings_of_every_stage",
            {
                "superposition": {"checkpoint_every": full["superposition"]["checkpoint_every"] + 1},
                "depth_toy": {"checkpoint_every": full["depth_toy"]["checkpoint_every"] + 1},
                "hidden_states": {"batch_tokens": full["hidden_states"]["batch_tokens"] + 16},
                "causal_tracing": {"batch_rows": full["causal_tracing"]["batch_rows"] + 1},
                "lm_head": {"loss": {"checkpoint_every": full["lm_head"]["loss"]["checkpoint_every"] + 1}},
            },
            dict(REPORT),
            {"results/report.html", "results/headline.csv", "results/your_sweeps.csv"},
        ),
    ]
    return edits


EDITS = _edits()


@pytest.fixture(scope="module")
def done(completed_run):
    return completed_run


def params_changed_outputs(text: str) -> set[str]:
    """Outputs of the jobs that a dry run plans because their params changed ("reason: Params have
    changed since last execution"). Snakemake 9.27's `--list-changes params` cannot be used for
    this: it lists every output that has recorded params, changed or not."""
    out: set[str] = set()
    for block in re.split(r"\n(?=(?:local)?rule \w+:\n)", text):
        if "reason: Params have changed" in block:
            m = re.search(r"^\s+output: (.*)$", block, re.MULTILINE)
            out |= set(m.group(1).split(", ")) if m else set()
    return out


@pytest.mark.parametrize("name, change, planned, changed_files", EDITS, ids=[e[0] for e in EDITS])
def test_one_key_reruns_only_its_jobs(done, tmp_path, name, change, planned, changed_files):
    """The edit plans exactly the expected jobs (so also: nothing else was out of date), and exactly
    the rules whose params hold the key are planned because of a params change (the rest follow
    from updated inputs)."""
    configs = [*BASE_CONFIGS, overlay(tmp_path, name, change)]
    p = run(done, "-n", "--cores", "1", configs=configs, timeout=300)
    text = p.stdout + p.stderr
    got = planned_jobs(text)
    assert got == planned, f"editing {change} plans {got}, expected {planned}"
    assert params_changed_outputs(text) == changed_files


def test_new_model_in_one_stage_plans_only_its_cells(done, tmp_path):
    """A model list entry: adding a model to hidden_states.models fetches that model and runs its
    extraction and stats, then the section and report; no other stage, and no job of the models
    that are already done."""
    cfg = _test_config()
    have = set(cfg["hidden_states"]["models"])
    new = next(m for m in ("minilm-l6", "smollm2-135m") if m not in have)
    change = {"hidden_states": {"models": [*cfg["hidden_states"]["models"], new]}}
    got = dry_run(done, configs=[*BASE_CONFIGS, overlay(tmp_path, "new_model", change)])
    expected = {
        "hidden_states_extract": 1,
        "hidden_states_stats": 1,
        "hidden_states_compare": 1,
        "hidden_states_section": 1,
        **REPORT,
    }
    if not (done / "data" / "models" / new / "manifest.json").exists():
        expected["model_fetch"] = 1
    assert got == expected, f"adding model {new} plans {got}"
