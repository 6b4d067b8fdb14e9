# Shared helpers: config validation, the rules' params table, target lists and input functions used by
# several stages. The Snakefile put the checkout's src/ on sys.path.
import os
import re
import sys
from functools import partial
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.logging import logger

from depthwidth.config import deep_merge, validate_config
from depthwidth.download import pipeline as download_pipeline
from depthwidth.plan import check_plan, shared_cpu_env, usable_cpus
from depthwidth.codeprint import script_fingerprint
from depthwidth.report import pipeline as report_pipeline
from depthwidth.report.holes import (
    leftover_message,
    leftover_outputs,
    missing_message,
    missing_upstream,
    write_leftover_script,
)
from depthwidth.rules import RuleTable

# Stop before any job starts when a key is wrong; the error names the key and what is allowed.
validate_config(config, Path(workflow.basedir) / "schemas")
# Then count the jobs the grids imply (stop above max_jobs, naming the keys that multiply up) and check
# that every folder made from a config name stays in the working directory, before the DAG is built.
check_plan(config, ".")
# More cores than CPUs (--cores 8 on a laptop): the local jobs' OpenMP threads sleep instead of spinning
# while they wait, so jobs that share a CPU do not burn each other's time (changes no number).
try:
    _cores = workflow.cores  # a WorkflowError where no --cores is given (--unlock, cluster executors)
except WorkflowError:
    _cores = None
os.environ.update(
    shared_cpu_env(_cores, usable_cpus(), workflow.local_exec and not workflow.remote_exec, os.environ)
)


# Every rule's params, threads and resources (depthwidth.rules): each rules file adds its stage's table.
def code_fingerprint(rule):
    """The fingerprint of scripts/<rule>.py and the package code it runs (depthwidth.codeprint), as the
    `code` params entry of the rule: a plain run reruns the jobs whose code changed, and says so; the
    workflow profile leaves out Snakemake's script-mtime `code` trigger, so a fresh clone reruns nothing."""
    return script_fingerprint(Path(workflow.basedir) / "scripts" / f"{rule}.py")


def code_params(rule):
    """The params entry that every rule in a RULES table gets, its code fingerprint."""
    return {"code": code_fingerprint(rule)}


# Every rule's params, from its stage's RULES table; every rule also gets its code fingerprint.
RULES = RuleTable(
    config,
    sources=partial(download_pipeline.sources, config, workflow.basedir),
    every_rule=code_params,
)


def reduced_stages():
    """Stage -> True where this run's section differs from config.yaml overlaid with config/paper.yaml."""
    import yaml

    base = Path(workflow.basedir)
    paper = deep_merge(
        yaml.safe_load((base / "config.yaml").read_text()),
        yaml.safe_load((base / "config" / "paper.yaml").read_text()),
    )
    validate_config(paper, base / "schemas")
    return {s: config.get(s) != paper.get(s) for s in config["stages"]}


def stage_enabled(stage):
    return stage in config["stages"]


def report_sections(wildcards):
    """Every file the report reads: sections, figures, synthesis fits, model manifests, benchmarks."""
    return report_pipeline.inputs(config, workflow.rules)


def paperfigs_compare_inputs(wildcards):
    """Rule paperfigs_compare's inputs for one figure: its readings and the tables of ours it needs."""
    from depthwidth.paperfigs import pipeline as paperfigs_pipeline

    return paperfigs_pipeline.compare_inputs(config, wildcards)


def fineweb_shard_paths():
    """The FineWeb shards (rule fineweb_shards), read by the hidden-states and LM-head stages."""
    return download_pipeline.fineweb_shard_paths(config)


# Snakemake options after which missing files are remade (--forceall) or not needed: the others do not
# build (unlock, clean-up, listings, graphs).
_NO_HOLE_CHECK = re.compile(
    r"^(-F|--forceall|--unlock|--cleanup-metadata|--cm|--touch|-t|--delete-all-output|"
    r"--delete-temp-output|--list.*|--summary|-S|--detailed-summary|-D|--lint|--dag|--rulegraph|"
    r"--filegraph|--d3dag|--containerize|--archive|--generate-unit-tests)$"
)


def stop_on_missing():
    """Where results/report.html exists and a file it was built from is missing (depthwidth.report.holes:
    the outputs of a failed job, which a plain run would not remake): stop before any job, naming the
    files and the command that remakes them; a command that names them, or the rules that make them
    (--forcerun), goes on."""
    argv = sys.argv[1:]
    if not workflow.is_main_process or any(_NO_HOLE_CHECK.match(a) for a in argv):
        return
    stop_on_report_without_results(argv)
    if not os.path.exists("results/report.html"):
        return
    holes = missing_upstream(
        [f for v in report_sections(None).values() for f in ([v] if isinstance(v, str) else v)],
        ["results/report.html", "results/headline.csv"],
        workflow.rules,
    )
    holes = [h for h, rule in holes.items() if h not in argv and rule not in argv]
    if holes:
        raise WorkflowError(missing_message("results/report.html", holes))


def stop_on_report_without_results(argv):
    """`snakemake --report` (Snakemake's own report of a finished run) where the files it shows do not exist
    yet (an empty folder, a run not finished): stop naming them and the command to run first, instead of
    Snakemake's "marked for report but does not exist"."""
    from snakemake.io import is_flagged

    if not any(a == "--report" or a.startswith("--report=") for a in argv):
        return
    marked = sorted(
        str(f) for r in workflow.rules for f in r.output if is_flagged(f, "report") and not r.wildcard_names
    )
    absent = [f for f in ["results/report.html", *marked] if not os.path.exists(f)]
    # a folder where nothing has run (a partial run's --report gathers what its jobs made)
    if len(absent) == 1 + len(marked):
        raise WorkflowError(
            f"--report gathers the results of a finished run, and none of them exist in "
            f"{os.getcwd()}: {', '.join(absent[:5])}{' …' if len(absent) > 5 else ''}. Nothing was run. Fix: "
            "run the workflow first (snakemake --cores all results/report.html, with the same --configfile), "
            "then the same --report command; results/report.html is this workflow's own report."
        )


def warn_on_leftovers():
    """A warning at the start of a run naming the files that an earlier version's jobs made and that this
    workflow makes no more (depthwidth.report.holes.leftover_outputs), their seals, and the script that
    moves them all out of the way (written into .snakemake/); nothing is deleted."""
    if not workflow.is_main_process:
        return
    leftovers = leftover_outputs(workflow.rules)
    if leftovers:
        logger.warning(leftover_message(leftovers, script=write_leftover_script(leftovers)))
