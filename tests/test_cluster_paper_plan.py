"""The paper's run as planned on a SLURM cluster: the command config/paper.yaml documents,
``snakemake --profile profiles/slurm results/report.html --configfile config/paper.yaml``, as a dry run.
It plans the job counts the config implies, every GPU stage (hidden-state extraction, causal tracing)
asks for a GPU on the GPU partition, and every submitted rule has its memory and wall time.

This is the one dry run of that command in the suite (tests/test_documented_commands.py leaves it to
this file): planning ~2000 jobs takes ~30 s."""

from __future__ import annotations

import re

import pytest
import yaml
from _pipeline import REPO, dry_run_as_written, planned_jobs
from test_cluster_slurm import PROFILE, WORKFLOW_SIZED, _local_rules, _set_resources
from test_documented_commands import PLANNED_ELSEWHERE, documented_commands

from depthwidth.config import deep_merge, validate_config

COMMAND = "snakemake --profile profiles/slurm results/report.html --configfile config/paper.yaml"


def _paper_config() -> dict:
    base = yaml.safe_load((REPO / "config.yaml").read_text())
    return validate_config(deep_merge(base, yaml.safe_load((REPO / "config" / "paper.yaml").read_text())))


def expected_jobs(cfg: dict) -> dict[str, int]:
    """Rule -> job count of the paper's report, from the config (Snakemake overlays config/paper.yaml on
    config.yaml: dicts merge, lists replace; config/paper.yaml nulls config.yaml's `fineweb` loss corpus
    and `fineweb-300` token corpus, which drops them)."""
    from depthwidth.depth_toy import pipeline as depth_toy
    from depthwidth.download.fetch import load_manifest, pinned_group
    from depthwidth.models.pipeline import decoders
    from depthwidth.paperfigs import pipeline as paperfigs
    from depthwidth.superposition import pipeline as superposition

    sp, dt, hs, ct, lm = (
        cfg[k] for k in ("superposition", "depth_toy", "hidden_states", "causal_tracing", "lm_head")
    )
    tf = lm["token_frequencies"]
    used_models = set(lm["models"]) | set(hs["models"]) | set(ct["models"]) | set(tf["tokenizers"])
    n_sweeps = len(cfg["chinchilla"]["sweeps"])
    # the FineWeb mirror file is fetched only for a `source: raw` corpus that reads it
    raw_paths = {
        spec.get("path")
        for corpora in (lm["loss"]["corpora"], tf["corpora"])
        for spec in corpora.values()
        if spec["source"] == "raw"
    }
    # the files pinned in src/depthwidth/download/manifest.yaml that a rule reads: the Chinchilla points and
    # table A9, the OpenLM sweeps' run files and configs, the FineWeb mirror (only for a raw corpus), and of
    # the superposition paper's files those the paper-figures stage reads; one fetch job per group of them
    figures = {
        f.removeprefix("data/raw/")
        for f in set(paperfigs.inputs().values())
        | set(paperfigs.toy_inputs().values())
        | set(paperfigs.regimes_inputs().values())
    }
    read = [
        key
        for key in load_manifest()
        if key in figures or pinned_group(key) in ("chinchilla", "openlm_scaling") or key in raw_paths
    ]
    jobs = {
        **{f"fetch_pinned_{g}": 1 for g in {pinned_group(key) for key in read}},
        "fineweb_shards": 1,  # one job writes all hidden_states.corpus shards
        "model_fetch": len(used_models),
        "chinchilla_points": 1,
        "chinchilla_fit": 4,  # one per law and loss of the fit grid
        "chinchilla_drop_scan": 2,
        "chinchilla_leverage": 1,
        "chinchilla_law": 1,
        "chinchilla_sweep_points": n_sweeps,
        "chinchilla_sweep_identify": n_sweeps,
        "chinchilla_compare": 1,
        "chinchilla_section": 1,
        # one cell per (law, γ, m, seed): (17 alphas + 8 distributions) x 10 x 6 x 1
        "superposition_train": len(superposition.distributions(sp))
        * len(sp["weight_decays"])
        * len(sp["widths"])
        * len(sp["seeds"]),
        "superposition_tables": 1,
        "superposition_compare": 1,
        "superposition_section": 1,
        # one job per (teacher kind, replicate) of each variant: 5 variants x 2 kinds x 3 + shared_head 1 x 3
        **{
            f"depth_toy_train_{v}": len(depth_toy.variant_kinds(dt, v)) * dt["replicates"]
            for v in dt["variants"]
        },
        "depth_toy_tables": 1,
        "depth_toy_compare": 1,
        "depth_toy_section": 1,
        "hidden_states_extract": len(hs["models"]),
        "hidden_states_stats": len(hs["models"]),
        "hidden_states_compare": 1,
        "hidden_states_section": 1,
        "causal_tracing_trace": len(ct["models"]),
        "causal_tracing_compare": 1,
        "causal_tracing_section": 1,
        "lm_head_geometry": len(lm["models"]),
        "lm_head_corpus": len(lm["loss"]["corpora"]),
        "lm_head_loss": len(decoders(cfg, lm["models"])) * len(lm["loss"]["corpora"]),
        "lm_head_width_fit": 1,
        "lm_head_token_counts": len(tf["tokenizers"]) * len(tf["corpora"]),
        "lm_head_token_fit": 1,
        "lm_head_compare": 1,
        "lm_head_section": 1,
        # the paper's figures read back (Fig. 8a, 8b; Figs. 1b/1d, 4b, 5b, 6e) and their section
        **{f"paperfigs_{r}": 1 for r in ("fig8", "fig8b", "toy", "regimes", "comparisons", "section")},
        "paperfigs_compare": 11,  # one per compared figure (paperfigs.outputs.COMPARED)
        "report": 1,
    }
    return jobs


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory) -> str:
    """The documented command as a dry run, run from the repo root exactly as written."""
    wd = tmp_path_factory.mktemp("paper_plan")
    p = dry_run_as_written(COMMAND, wd)
    text = p.stdout + p.stderr
    assert p.returncode == 0, f"`{COMMAND}` fails as a dry run:\n{text[-3000:]}"
    return text


def _jobs(text: str) -> list[tuple[str, dict[str, str]]]:
    """(rule, resources) of every planned job."""
    out = []
    for rule, body in re.findall(r"\n(?:local)?rule (\w+):\n(.*?)(?=\n\n|\Z)", text, re.DOTALL):
        m = re.search(r"resources: (.*)", body)
        res = dict(kv.split("=", 1) for kv in m.group(1).split(", ")) if m else {}
        out.append((rule, res))
    return out


def test_the_command_is_the_documented_one():
    assert COMMAND in documented_commands() and COMMAND in PLANNED_ELSEWHERE


@pytest.mark.workflow
def test_paper_config_plans_the_jobs_it_implies(dry_run):
    planned = planned_jobs(dry_run)
    want = expected_jobs(_paper_config())
    assert planned == want
    # 1810 = 1500 superposition cells + 108 LM-head losses (27 models x the paper's 4 corpora; the
    # default's FineWeb entries are nulled in config/paper.yaml) + 2 downloads (the Chinchilla files and
    # the 110 OpenLM files) + 33 depth-toy trainings + 27 model fetches + 27 geometries + 16 token counts
    # (4 x 4) + 18 + 18 hidden-state extractions and statistics + 6 traces (6 models, one fact) + 4 corpora
    # + 6 chinchilla sweep jobs + 21 other jobs (chinchilla 10: points, the fit grid's 4 fits and 2 scans,
    # leverage, law, section; superposition 2, depth toy 2, fineweb shards, hidden states, causal tracing,
    # LM head 3, report) + the download of the paper's figure files and the paper-figures stage's 5 jobs
    # + 18 comparison jobs (one per stage: chinchilla, superposition, depth toy, hidden states, LM head,
    # causal tracing; one per compared paper figure, 11, and the job that gathers them).
    assert sum(planned.values()) == 1810


@pytest.mark.workflow
def test_gpu_stages_ask_for_a_gpu_and_every_rule_for_memory_and_time(dry_run):
    jobs = _jobs(dry_run)
    assert len(jobs) == sum(planned_jobs(dry_run).values())
    local = _local_rules()
    profile = _set_resources()
    counts = {"hidden_states_extract": 0, "causal_tracing_trace": 0}
    for rule, res in jobs:
        if rule in counts:
            counts[rule] += 1
            assert int(res.get("gpu", 0)) >= 1, f"{rule} asks for no GPU: {res}"
        if int(res.get("gpu", 0)) >= 1:
            assert res.get("slurm_partition") == "gpu", f"{rule} asks for a GPU but not partition gpu: {res}"
        if rule in local:
            continue  # runs on the login node, outside SLURM
        assert int(res["mem_mb"]) > 0 and int(res["runtime"]) > 0, (rule, res)
        # a submitted rule's memory and time are its own: the profile's entry, or the workflow's estimate
        if rule not in WORKFLOW_SIZED and not rule.startswith("depth_toy_train_"):
            assert {"mem_mb", "runtime"} <= set(profile.get(rule, {})), (
                f"{rule} has no mem_mb/runtime in {PROFILE.relative_to(REPO)}: it gets the default-resources"
            )
    cfg = _paper_config()
    assert counts == {
        "hidden_states_extract": len(cfg["hidden_states"]["models"]),
        "causal_tracing_trace": len(cfg["causal_tracing"]["models"]),
    }
