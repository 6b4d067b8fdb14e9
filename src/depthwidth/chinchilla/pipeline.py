"""Chinchilla stage: config → rule params (its ``RULES`` table) and inputs. The only module
rules/chinchilla.smk imports."""

from __future__ import annotations

from depthwidth.rules import Call, Keys, Rule

# Keys of chinchilla.fit the dropped-points scan uses: editing another fit key (bootstrap, held-out,
# variants) does not rerun the scan.
SCAN_FIT_KEYS = (
    "width_scale",
    "depth_scale",
    "tokens_scale",
    "n_starts",
    "seed",
    "adam_steps",
    "loss",
    "huber_delta",
)


# Keys of chinchilla.fit the Huber fit uses (chinchilla.huber sets the rest).
HUBER_FIT_KEYS = (
    "width_scale",
    "depth_scale",
    "tokens_scale",
    "n_starts",
    "seed",
    "huber_delta",
    "heldout_fraction",
)


def huber_params(config: dict, wildcards: dict | None = None) -> dict:
    """The Huber fit's settings: the fit keys it shares (``HUBER_FIT_KEYS``), ``chinchilla.huber``, loss
    huber, no variants, and the scan's k list and precision of the paper's errors."""
    c = config["chinchilla"]
    return dict(
        sorted(
            {
                **{k: c["fit"][k] for k in HUBER_FIT_KEYS},
                **c["huber"],
                "loss": "huber",
                "variants": [],
                "drop_highest": c["drop_scan"]["drop_highest"],
                "paper_cut": c["fit"]["drop_highest_loss"],
                "paper_stderr_precision": c["drop_scan"]["paper_stderr_precision"],
            }.items()
        )
    )


def drop_scan_params(config: dict, wildcards: dict | None = None) -> dict:
    """The scan's k list and the fit settings it shares with the main fit."""
    fit = config["chinchilla"]["fit"]
    return dict(sorted({**{k: fit[k] for k in SCAN_FIT_KEYS}, **config["chinchilla"]["drop_scan"]}.items()))


# ---------------------------------------------------------------- sweeps (chinchilla.sweeps)
# Where a built-in loader reads when the sweep gives no path.
LOADER_PATHS = {
    "chinchilla": "results/chinchilla/points.csv",
    "openlm_grid": "data/raw/openlm_scaling",
    "openlm_main": "data/raw/openlm_scaling",
}
# Keys of a sweep entry that shape its runs.csv; the rest only change the identify rule.
LOAD_KEYS = ("name", "loader", "path", "columns", "options", "n_exponents", "drop_highest")


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
    return dict(
        sorted({k: v for k, v in s.items() if k not in LOAD_KEYS or k in ("name", "n_exponents")}.items())
    )


def sweep_targets(config: dict) -> list[str]:
    return [f"results/chinchilla/sweeps/{n}/identify.json" for n in sweep_names(config)]


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
    "chinchilla_fit": Rule(params={"fit": Keys("chinchilla.fit")}, mem_mb=1000, runtime=60),
    "chinchilla_drop_scan": Rule(params={"scan": Call(drop_scan_params)}, mem_mb=1000, runtime=30),
    "chinchilla_huber": Rule(params={"fit": Call(huber_params)}, mem_mb=1000, runtime=30),
    "chinchilla_law": Rule(params={"cfg": Keys("chinchilla.chinchilla_law")}, mem_mb=1000, runtime=30),
    "chinchilla_sweep_points": Rule(
        params={"spec": Call(sweep_load_params)}, sources=True, mem_mb=1000, runtime=5
    ),
    "chinchilla_sweep_identify": Rule(params={"cfg": Call(sweep_identify_params)}, mem_mb=1000, runtime=30),
    "chinchilla_section": Rule(params={"shape": Keys("chinchilla.shape")}, mem_mb=1000, runtime=10),
}
