"""The SLURM profile on a real (single-node) SLURM cluster.

The end-to-end test needs a running cluster: `.ci/run` starts one with
`bash scripts/cluster/slurm-local.sh`; where SLURM cannot start, the test is skipped with the reason.
The static checks of profiles/slurm (per-rule resources, GPU routing, attempt scaling) always run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from _helpers import REPO
from _pipeline import run

from depthwidth.download.pipeline import groups

PROFILE = REPO / "profiles" / "slurm" / "config.yaml"
# rules whose memory and wall time the workflow computes per job (the profile keeps those estimates),
# besides the depth toy's depth_toy_train_<variant>
WORKFLOW_SIZED = {"superposition_train", "hidden_states_extract", "causal_tracing_trace"}
LOCAL_OVERLAY = REPO / "profiles" / "slurm-local" / "config.yaml"


def _slurm_unavailable() -> str | None:
    """Why the SLURM test cannot run here, or None when it can."""
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        return "snakemake-executor-plugin-slurm is not installed (pip install '.[slurm]')"
    for tool in ("sbatch", "squeue", "scontrol"):
        if shutil.which(tool) is None:
            return f"no '{tool}' on PATH: start a test cluster with `bash scripts/cluster/slurm-local.sh`"
    try:
        ping = subprocess.run(
            ["scontrol", "ping"], check=False, capture_output=True, text=True, timeout=10
        ).stdout
    except subprocess.TimeoutExpired:
        return "scontrol ping timed out: slurmctld does not answer"
    if "UP" not in ping:
        return (
            f"slurmctld is not up ({ping.strip() or 'no answer'}): run `bash scripts/cluster/slurm-local.sh`"
        )
    parts = subprocess.run(
        ["sinfo", "-h", "-o", "%P %t"], check=False, capture_output=True, text=True, timeout=10
    ).stdout
    if not re.search(r"^cpu\*? (idle|mix)", parts, re.MULTILINE) or not re.search(
        r"^gpu (idle|mix)", parts, re.MULTILINE
    ):
        return (
            f"this cluster lacks idle partitions 'cpu' and 'gpu' of slurm-local.sh (sinfo: {parts.strip()!r})"
        )
    return None


def _set_resources() -> dict:
    return yaml.safe_load(PROFILE.read_text())["set-resources"]


def _workflow_rules() -> set[str]:
    """Names of all rules of the workflow (default config)."""
    with tempfile.TemporaryDirectory() as wd:
        p = run(Path(wd), "--list-rules", configs=[REPO / "config.yaml"], timeout=120)
    return {line.strip() for line in p.stdout.splitlines() if re.fullmatch(r"\s*\w+\s*", line)}


@pytest.mark.workflow
def test_profile_names_only_existing_rules_and_scales_with_attempt():
    """Every rule named in set-resources exists (a renamed rule would silently lose its resources), and
    memory and wall time grow with the attempt: attempt 2 asks for twice attempt 1, attempt 3 thrice."""
    rules = _workflow_rules()
    res = _set_resources()
    unknown = sorted(set(res) - rules)
    assert not unknown, f"profiles/slurm/config.yaml sets resources of rules that do not exist: {unknown}"
    for rule, spec in res.items():
        keys = ("mem_mb", "runtime") if rule not in WORKFLOW_SIZED else ()
        for key in keys:
            assert key in spec, f"{rule}: no attempt-scaled {key} in profiles/slurm set-resources"
            values = [eval(str(spec[key]), {"attempt": a}) for a in (1, 2, 3)]
            assert values[0] > 0 and values[1] == 2 * values[0] and values[2] == 3 * values[0], (
                rule,
                key,
                values,
            )
        # the plugin rejects --gres/--gpus in slurm_extra: GPUs are asked for with the gpu resource
        assert not re.search(r"--(gres|gpus)", str(spec.get("slurm_extra", ""))), rule


def _local_rules() -> set[str]:
    """Rule names listed under `localrules:` directives in rules/*.smk, and those of the rules made in a
    loop over the pinned files' groups that say `localrule: True` (the downloads)."""
    names: set[str] = set()
    for smk in (REPO / "rules").glob("*.smk"):
        text = smk.read_text()
        for block in re.findall(r"^localrules:\n((?:[ \t]+\w+,?\n)+)", text, re.MULTILINE):
            names |= set(re.findall(r"\w+", block))
        for block in re.split(r"\n(?=[ \t]*rule\b)", text)[1:]:
            if re.search(r"^\s*localrule:\s*True", block, re.MULTILINE):
                prefix = re.search(r'name:\s*f"(\w+?)_\{', block).group(1)
                names |= {f"{prefix}_{g}" for g in groups()}
    return names


@pytest.mark.workflow
def test_profile_sends_gpu_rules_to_gpu_partition_and_downloads_stay_local(tmp_path):
    """A dry run of the default config through the profile: every job that asks for a GPU goes to
    partition 'gpu'; downloads are local rules, never submitted; every other rule has its own
    resources in the profile (none falls back to the defaults unnoticed)."""
    local = _local_rules()
    downloads = {f"fetch_pinned_{g}" for g in groups()} | {"fineweb_shards", "model_fetch"}
    assert downloads <= local, f"download rules that would run on compute nodes: {downloads - local}"
    p = run(tmp_path, "-n", "--profile", str(PROFILE.parent), configs=[REPO / "config.yaml"])
    text = p.stdout + p.stderr
    jobs = re.findall(r"\n(?:local)?rule (\w+):\n(.*?)(?=\n\n|\Z)", text, re.DOTALL)
    assert jobs, text[-3000:]
    res = _set_resources()
    gpu_jobs = 0
    for rule, body in jobs:
        m = re.search(r"resources: (.*)", body)
        resources = m.group(1) if m else ""
        if rule not in local | WORKFLOW_SIZED | {"all"} and not rule.startswith("depth_toy_train_"):
            assert rule in res, f"{rule} is submitted but has no set-resources entry in profiles/slurm"
        if re.search(r"\bgpu=[1-9]", resources):
            gpu_jobs += 1
            assert "slurm_partition=gpu" in resources, (
                f"{rule} asks for a GPU but not partition gpu: {resources}"
            )
    # hidden_states_extract (one per model) asks for hidden_states.gpu.gpus = 1 by default; lm_head_loss
    # is given a GPU by the profile
    assert gpu_jobs >= 2, f"the default config plans {gpu_jobs} GPU jobs"


SLURM_LOCAL = REPO / "scripts" / "cluster" / "slurm-local.sh"
STATE = Path(os.environ.get("SLURM_LOCAL_DIR", "/tmp/depthwidth-slurm"))


def _recorded() -> dict[str, tuple[int, int]]:
    """Daemon name -> (pid, start time in clock ticks) of the PIDs the script recorded. The start time
    tells a restarted daemon from the old one even when the PID number comes round again
    (pid_max is 32768 on small machines)."""
    out = {}
    for f in (STATE / "pids").glob("*.pid"):
        pid = int(f.read_text())
        out[f.stem] = (pid, _stat(pid)[19] if _stat(pid) else -1)
    return out


def _stat(pid: int) -> list[str]:
    """Fields 3.. of /proc/PID/stat (state first), [] if the process is gone."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return []


def _dead(pid: int) -> bool:
    st = _stat(pid)
    return not st or st[0] in ("Z", "X")  # a zombie is dead; it only waits to be reaped


ours = pytest.mark.skipif(
    _slurm_unavailable() is not None or not (STATE / "pids" / "slurmctld.pid").exists(),
    reason=f"no cluster started by scripts/cluster/slurm-local.sh (state {STATE}): {_slurm_unavailable()}",
)


@ours
@pytest.mark.workflow
def test_slurm_local_is_idempotent_and_recovers_from_a_hard_kill():
    """Running the start script on a live cluster keeps its daemons (same PIDs); after SIGKILL of
    slurmctld and slurmd it starts them again and jobs run (srun in the smoke test passes)."""
    before = _recorded()
    assert set(before) >= {"munged", "slurmctld", "slurmd"}, before
    p = subprocess.run(["bash", str(SLURM_LOCAL)], check=False, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert _recorded() == before, "a second start replaced running daemons"
    for name in ("slurmd", "slurmctld"):
        os.kill(before[name][0], signal.SIGKILL)
    for _ in range(50):
        if _dead(before["slurmd"][0]) and _dead(before["slurmctld"][0]):
            break
        time.sleep(0.1)
    p = subprocess.run(["bash", str(SLURM_LOCAL)], check=False, capture_output=True, text=True, timeout=180)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    after = _recorded()
    assert after["munged"] == before["munged"]
    for name in ("slurmctld", "slurmd"):
        assert after[name] != before[name] and not _dead(after[name][0]), (name, before[name], after[name])
    # the smoke test inside the script ran srun on both partitions after the restart
    assert "cluster ready" in p.stdout


@pytest.mark.skipif(_slurm_unavailable() is not None, reason=str(_slurm_unavailable()))
@pytest.mark.workflow
def test_chinchilla_stage_runs_through_sbatch(tmp_path, completed_run):
    """The Chinchilla stage (points, fit, section) through `--profile profiles/slurm`: every non-local
    job is a SLURM job (sbatch id in the log, COMPLETED in squeue with the rule as comment), downloads
    ran locally, and the fit gives the paper's depth exponent and the same numbers as a local run."""
    wd = tmp_path / "slurm"
    wd.mkdir()
    p = run(
        wd,
        "--profile",
        str(PROFILE.parent),
        "--profile",
        str(LOCAL_OVERLAY.parent),
        "--slurm-keep-successful-logs",
        "results/chinchilla/section.html",
        timeout=420,
    )
    text = p.stdout + p.stderr
    # a wildcard job's log sits in a folder of its wildcards (the fit grid's cells: <law>_<loss>)
    submitted = {
        (rule, cell): int(jid)
        for jid, rule, cell in re.findall(
            r"submitted with SLURM jobid (\d+) \(log: \S+/rule_(\w+)/(?:([^/\s]+)/)?\d+\.log\)", text
        )
    }
    assert set(submitted) == {
        ("chinchilla_points", ""),
        *(
            (rule, f"{law}_{loss}")
            for rule, laws in (
                ("chinchilla_fit", ("decomposed", "chinchilla")),
                ("chinchilla_drop_scan", ("decomposed",)),
            )
            for law in laws
            for loss in ("squared", "huber")
        ),
        ("chinchilla_leverage", ""),
        ("chinchilla_compare", ""),
        ("chinchilla_law", ""),
        ("chinchilla_section", ""),
    }, text[-4000:]
    # SLURM itself saw them: squeue (finished jobs stay visible for MinJobAge) lists each as COMPLETED
    sq = subprocess.run(
        ["squeue", "-h", "-t", "all", "-o", "%i|%k|%T|%P"],
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
    ).stdout
    states = {int(i): (c, s, part) for i, c, s, part in (ln.split("|") for ln in sq.split())}
    for (rule, cell), jid in submitted.items():
        comment = f"rule_{rule}" + (f"_wildcards_{cell}" if cell else "")
        assert states[jid] == (comment, "COMPLETED", "cpu"), (rule, cell, jid, states.get(jid))
        log = wd / ".snakemake" / "slurm_logs" / f"rule_{rule}" / cell / f"{jid}.log"
        # the job's own log: the snakemake job step ran inside the allocation and finished
        assert "1 of 1 steps (100%) done" in log.read_text(), log.read_text()[-2000:]
    # downloads are local rules: no SLURM log folder for them
    assert not list((wd / ".snakemake" / "slurm_logs").glob("rule_fetch*"))
    fit = json.loads((wd / "results/chinchilla/fits/decomposed/squared/fit.json").read_text())["params"]
    # the paper's decomposed fit of Chinchilla: alpha_l = 1.2 +- 0.3, alpha_m close to 1
    assert 0.9 <= fit["alpha_l"]["value"] <= 1.5, fit["alpha_l"]
    assert 0.8 <= fit["alpha_m"]["value"] <= 1.1, fit["alpha_m"]
    # the same config and seeds run locally (the whole test config, shared with test_partial_rerun):
    # the same numbers
    local = completed_run
    ref = json.loads((local / "results/chinchilla/fits/decomposed/squared/fit.json").read_text())["params"]
    for k in ("alpha_l", "alpha_m", "alpha_D", "L0"):
        assert fit[k]["value"] == pytest.approx(ref[k]["value"], rel=1e-9), k
