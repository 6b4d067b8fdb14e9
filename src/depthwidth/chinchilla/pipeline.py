"""Chinchilla stage: config → rule params (its ``RULES`` table) and inputs. The only module
rules/chinchilla.smk imports."""

from __future__ import annotations

import functools
import os

from depthwidth.config import ConfigError
from depthwidth.rules import Call, Keys, Rule

# The fit grid: one cell per (law, loss), results/chinchilla/fits/<law>/<loss>/ (rule chinchilla_fit; the
# decomposed law's cells also get rule chinchilla_drop_scan). Each cell's cut (how many of the
# highest-loss runs it leaves out) is one of its settings.
# - decomposed: Liu et al.'s law. Settings: chinchilla.fit, with chinchilla.<loss> over it where that
#   section exists (chinchilla.huber).
# - chinchilla: L = E + A/N^α + B/D^β. Settings: chinchilla.chinchilla_law's starts, seed, bootstrap and δ,
#   with Besiroglu et al.'s cut (n_excluded); each cell also fits all points (variant keep_all_points).
LAWS = ("decomposed", "chinchilla")
LOSSES = ("squared", "huber")
SCANNED_LAWS = ("decomposed",)

# A cell's units, starts and seed; the dropped-points scan reads these keys of a cell and ``SCAN_KEYS``
# (editing another, such as bootstrap, held-out or variants, does not rerun the scan).
SHARED_KEYS = ("width_scale", "depth_scale", "tokens_scale", "n_starts", "seed")
SCAN_KEYS = (
    *SHARED_KEYS,
    "adam_steps",
    "loss",
    "huber_delta",
    "scan_bootstrap_resamples",
    "cut_bootstrap_resamples",
)
LEVERAGE_KEYS = (*SHARED_KEYS, "drop_highest_loss", "delta_scan")
# Keys only the squared cell's scan reads: it repeats the paper's Adam fit and states the paper's
# least-squares errors.
SQUARED_SCAN_KEYS = ("adam_steps", "paper_stderr_precision")
# Keys of a cell only its scan or the leverage rule reads.
NOT_FIT_KEYS = ("scan_bootstrap_resamples", "cut_bootstrap_resamples", "delta_scan")
# The keys of chinchilla.chinchilla_law a Chinchilla-law cell reads; the replication reads the others.
LAW_CELL_KEYS = ("n_starts", "seed", "bootstrap_resamples")


def cell(config: dict, law: str, loss: str) -> dict:
    """The settings of the grid's cell (``law``, ``loss``), the keys ``law`` and ``loss`` included."""
    if law not in LAWS or loss not in LOSSES:
        raise ValueError(
            f"no fit cell for law {law!r} and loss {loss!r}; the grid has laws {LAWS}, losses {LOSSES}"
        )
    c = config["chinchilla"]
    if law == "chinchilla":
        s = c["chinchilla_law"]
        return {
            **{k: s[k] for k in LAW_CELL_KEYS},
            "drop_highest_loss": s["n_excluded"],
            "huber_delta": s["huber_delta"],
            "variants": ["keep_all_points"],
            "law": law,
            "loss": loss,
        }
    return {**c["fit"], **c.get(loss, {}), "law": law, "loss": loss}


def fit_params(config: dict, wildcards: dict) -> dict:
    """Rule chinchilla_fit's params: the job's cell, less the keys only its scan reads (and ``adam_steps``
    unless the cell runs the ``paper_adam`` variant)."""
    s = cell(config, wildcards["law"], wildcards["loss"])
    drop = NOT_FIT_KEYS + (() if "paper_adam" in s["variants"] else ("adam_steps",))
    return dict(sorted((k, v) for k, v in s.items() if k not in drop))


def drop_scan_params(config: dict, wildcards: dict) -> dict:
    """Rule chinchilla_drop_scan's params: the scan's keys of the job's cell (``SCAN_KEYS``) and
    ``chinchilla.drop_scan``, less ``SQUARED_SCAN_KEYS`` in a cell of another loss; a cell with
    ``cut_bootstrap_resamples`` (the Huber cell) also gets the paper's cut ``paper_cut``
    (``chinchilla.fit.drop_highest_loss``), the k at which it bootstraps that many resamples."""
    s = cell(config, wildcards["law"], wildcards["loss"])
    scan = {**{k: s[k] for k in SCAN_KEYS if k in s}, **config["chinchilla"]["drop_scan"]}
    if "cut_bootstrap_resamples" in scan:
        scan["paper_cut"] = config["chinchilla"]["fit"]["drop_highest_loss"]
    drop = () if s["loss"] == "squared" else SQUARED_SCAN_KEYS
    return dict(sorted((k, v) for k, v in scan.items() if k not in drop))


def leverage_params(config: dict, wildcards: dict | None = None) -> dict:
    """Rule chinchilla_leverage's params: the decomposed law's Huber cell's points, starts, units and δ list
    (``LEVERAGE_KEYS``), and the paper's cut (``chinchilla.fit.drop_highest_loss``)."""
    s = cell(config, "decomposed", "huber")
    paper_cut = config["chinchilla"]["fit"]["drop_highest_loss"]
    return dict(sorted({**{k: s[k] for k in LEVERAGE_KEYS}, "paper_cut": paper_cut}.items()))


def fit_target(law: str, loss: str, name: str = "fit.json") -> str:
    """A file of the grid's cell (``law``, ``loss``)."""
    return f"results/chinchilla/fits/{law}/{loss}/{name}"


def law_targets(law: str, name: str = "fit.json") -> list[str]:
    """The file ``name`` of each cell of ``law``, one per loss."""
    return [fit_target(law, loss, name) for loss in LOSSES]


# ---------------------------------------------------------------- sweeps (chinchilla.sweeps)
# Where a built-in loader reads when the sweep gives no path.
LOADER_PATHS = {
    "chinchilla": "results/chinchilla/points.csv",
    "openlm_grid": "data/raw/openlm_scaling",
    "openlm_main": "data/raw/openlm_scaling",
}
# Keys of a sweep entry that shape or check its runs.csv (``fixed`` decides how many distinct widths,
# depths and token counts the check asks for); the rest only change the identify rule.
LOAD_KEYS = (
    "name",
    "loader",
    "path",
    "columns",
    "options",
    "n_exponents",
    "drop_highest",
    "fixed",
    "duplicates",
)
# Keys of LOAD_KEYS the identify rule reads too.
IDENTIFY_LOAD_KEYS = ("name", "n_exponents", "fixed")


def sweep_names(config: dict) -> list[str]:
    names = [s["name"] for s in config["chinchilla"]["sweeps"]]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(
            f"chinchilla.sweeps: name(s) {twice} used more than once; each sweep needs its own name"
        )
    return names


def sweep(config: dict, name: str) -> dict:
    """The ``sweeps:`` entry called ``name``, its path filled in from the loader's default."""
    for s in config["chinchilla"]["sweeps"]:
        if s["name"] == name:
            return {**s, "path": s.get("path") or LOADER_PATHS[s["loader"]]}
    raise KeyError(f"no sweep '{name}' in chinchilla.sweeps (have {sweep_names(config)})")


def sweep_inputs(config: dict, name: str, openlm_files: list[str]) -> list[str]:
    """The files a sweep's runs.csv is made from: the OpenLM files pinned in the manifest (fetched by
    rule fetch_pinned_openlm_scaling) for the OpenLM loaders, else the sweep's path."""
    s = sweep(config, name)
    if s.get("loader") in ("openlm_grid", "openlm_main") and s["path"] == LOADER_PATHS[s["loader"]]:
        return [f"data/raw/{f}" for f in openlm_files]
    return [s["path"]]


def sweep_load_params(config: dict, wildcards: dict) -> dict:
    """Rule chinchilla_sweep_points's params: the keys of the job's sweep that shape its runs.csv."""
    s = sweep(config, wildcards["sweep"])
    return dict(sorted({k: s[k] for k in LOAD_KEYS if k in s}.items()))


def sweep_identify_params(config: dict, wildcards: dict) -> dict:
    """Rule chinchilla_sweep_identify's params: the job's sweep less the keys only its runs.csv uses."""
    s = sweep(config, wildcards["sweep"])
    return dict(sorted({k: v for k, v in s.items() if k not in LOAD_KEYS or k in IDENTIFY_LOAD_KEYS}.items()))


def user_sweeps(config: dict) -> list[tuple[int, dict]]:
    """(index in chinchilla.sweeps, entry) of every sweep read from a user's file (no ``loader``)."""
    return [(i, s) for i, s in enumerate(config["chinchilla"]["sweeps"]) if not s.get("loader")]


# The files of a fit-grid cell, and of the cells of the scanned laws (rule chinchilla_drop_scan).
CELL_FILES = ("fit.json", "bootstrap.csv")
SCAN_FILES = ("drop_scan.csv",)


def fit_target_errors(targets) -> list[str]:
    """A target under results/chinchilla/fits/ (given on the command line) that names no cell of the grid:
    the law, the loss and the file there are, and the nearest target (instead of Snakemake's "No rule to
    produce")."""
    import difflib

    errors = []
    for t in targets:
        parts = str(t).split("/")
        if parts[:3] != ["results", "chinchilla", "fits"] or str(t).startswith("-"):
            continue
        law, loss, name = (parts[3:] + ["", "", ""])[:3]
        files = CELL_FILES + (SCAN_FILES if law in SCANNED_LAWS else ())
        if law in LAWS and loss in LOSSES and name in files and len(parts) == 6:
            continue

        def near(x, options):
            return (difflib.get_close_matches(x, options, n=1, cutoff=0) or [options[0]])[0]

        guess_law = law if law in LAWS else near(law, LAWS)
        names = CELL_FILES + (SCAN_FILES if guess_law in SCANNED_LAWS else ())
        guess = fit_target(
            guess_law,
            loss if loss in LOSSES else near(loss, LOSSES),
            name if name in names else near(name, names),
        )
        errors.append(
            f"target {t} is no file of the Chinchilla fit grid: results/chinchilla/fits/<law>/<loss>/<file> "
            f"with law one of {', '.join(LAWS)}, loss one of {', '.join(LOSSES)}, file one of "
            f"{', '.join(CELL_FILES)} ({', '.join(SCAN_FILES)} too for law {', '.join(SCANNED_LAWS)}). "
            f"Did you mean {guess}? Fix: snakemake --cores all {guess}"
        )
    return errors


def check(config: dict, targets=()) -> None:
    """A user's sweep file that is missing, empty, a folder or binary stops the workflow while it is parsed,
    naming the sweep, the file, its config key and the fix (instead of Snakemake's MissingInputException
    or a reader's bare error in the job); so does a command-line target of the fit grid that names no cell
    (``fit_target_errors``)."""
    from depthwidth.chinchilla.sweeps import sweep_file_problem, sweep_key

    errors = fit_target_errors(targets)
    for i, s in user_sweeps(config):
        problem = sweep_file_problem(s["path"])
        if problem:
            errors.append(
                f"sweep '{s['name']}': config key {sweep_key(s['name'], i)}: {problem}. Fix: point it at "
                "your CSV (or .parquet) file of runs, one row per run, or remove the entry."
            )
    if errors:
        raise ConfigError("Invalid configuration (nothing was run):\n  - " + "\n  - ".join(errors))


@functools.lru_cache(maxsize=64)
def _file_id(path: str, stamp: tuple) -> dict:
    from depthwidth.files import sha256_file

    return {"size": stamp[1], "sha256": sha256_file(path)}


def sweep_file_params(config: dict, wildcards: dict) -> dict | None:
    """Rule chinchilla_sweep_points's ``file`` params: size and SHA-256 of a user's sweep file, so that a
    file changed in place (or replaced by another with the same name) reruns its sweep whatever its
    modification time; None for a built-in loader (its files are pinned or made by the workflow)."""
    s = sweep(config, wildcards["sweep"])
    if s.get("loader"):
        return None
    st = os.stat(s["path"])
    return _file_id(s["path"], (st.st_mtime_ns, st.st_size))


def sweep_targets(config: dict, name: str = "identify.json") -> list[str]:
    """The file ``name`` of each sweep (identify.json, or runs.csv), in config order."""
    return [f"results/chinchilla/sweeps/{n}/{name}" for n in sweep_names(config)]


def sweep_input_function(config: dict):
    """Rule chinchilla_sweep_points's input: a sweep's files (:func:`sweep_inputs`) from its wildcard."""
    files = openlm_files()

    def inputs(wildcards) -> list[str]:
        return sweep_inputs(config, wildcards.sweep, files)

    return inputs


def openlm_files() -> list[str]:
    """The pinned OpenLM files (paths under data/raw/) that the built-in OpenLM sweeps read."""
    from depthwidth.chinchilla.sweeps import openlm_files as files
    from depthwidth.download.fetch import load_manifest

    return files(load_manifest())


# Every rule's params and resources (depthwidth.rules). One thread each; rules that read pinned files get
# their mirrors (``sources``), which are not a rerun trigger. A whole config section is a ``Keys`` entry
# (every key, sorted: editing one reruns only that rule); params drawn from several sections are a ``Call``.
RULES = {
    "chinchilla_points": Rule(sources=True, mem_mb=500, runtime=5),
    "chinchilla_fit": Rule(params={"fit": Call(fit_params)}, mem_mb=1000, runtime=60),
    "chinchilla_drop_scan": Rule(params={"scan": Call(drop_scan_params)}, mem_mb=1000, runtime=30),
    "chinchilla_leverage": Rule(params={"cfg": Call(leverage_params)}, mem_mb=1000, runtime=10),
    "chinchilla_law": Rule(
        params={"cfg": Keys("chinchilla.chinchilla_law", drop=LAW_CELL_KEYS)}, mem_mb=1000, runtime=30
    ),
    "chinchilla_sweep_points": Rule(
        params={"spec": Call(sweep_load_params), "file": Call(sweep_file_params)},
        sources=True,
        mem_mb=1000,
        runtime=5,
    ),
    "chinchilla_sweep_identify": Rule(params={"cfg": Call(sweep_identify_params)}, mem_mb=1000, runtime=30),
    "chinchilla_compare": Rule(params={"shape": Keys("chinchilla.shape")}, mem_mb=1000, runtime=10),
    "chinchilla_section": Rule(mem_mb=1000, runtime=10),
}
