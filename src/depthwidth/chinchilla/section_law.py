"""The Chinchilla section's Chinchilla-law part: Besiroglu et al.'s replication against its targets and the
fitting core's fits of the same law (chinchilla_law.json, the grid's chinchilla cells). Nothing is fitted
here."""

from __future__ import annotations

import pandas as pd

from depthwidth.papers import HOFFMANN_FIT
from depthwidth.sections import table_html


def core_law_fits(cells: list[dict]) -> dict[str, dict]:
    """The fitting core's fits of the Chinchilla law in the grid's chinchilla cells, each cell's main fit
    and its variants, named from each fit's own record (loss and number of points)."""
    fits = {}
    for c in cells:
        for f in (c, *c.get("variants", {}).values()):
            fits[f"{f['loss']}, {f['n_points']} points"] = f
    return fits


def optimiser_check(rep: dict, cells: list[dict]) -> dict | None:
    """The fitting core's Huber objective beside L-BFGS-B's (the replication's) on the same points: the
    chinchilla cell with the replication's loss, δ and point count; None when the grid has no such cell."""
    for c in cells:
        if (c["loss"], c.get("huber_delta"), c["n_points"]) == ("huber", rep["huber_delta"], rep["n_points"]):
            core, theirs = c["objective"], rep["objective_huber"]
            return {
                "objective_lbfgsb": theirs,
                "objective_lmfit": core,
                "lower": "lmfit" if core < theirs else "L-BFGS-B",
                "relative_difference": (core - theirs) / theirs,
            }
    return None


TABLE1_HEADERS = {"huber_density_ml": "Huber-density ML", "lad": "Least absolute deviations"}


def chinchilla_law_html(law: dict, cells: list[dict]) -> str:
    """Besiroglu et al.'s replication against its three true targets (their notebook's δ = 1e-3 optimum,
    their bootstrap errors repeated their way, Table 1 by the estimator that made it), and the fitting
    core's fits of the same law (the grid's chinchilla ``cells``)."""
    return replication_html(law) + core_fits_html(law["replication"], cells)


def replication_html(law: dict) -> str:
    rep, nb = law["replication"], law["notebook"]
    opt = pd.DataFrame(
        [{"Quantity": k, **v} for k, v in nb["optimum"].items()],
        columns=["Quantity", "ours", "notebook", "relative_difference"],
    ).rename(columns={"ours": "Ours", "notebook": "Notebook", "relative_difference": "Relative difference"})
    t1 = pd.DataFrame([{"parameter": k, **v} for k, v in nb["table1"].items()])
    t1.columns = [TABLE1_HEADERS.get(c, str(c).replace("_", " ").capitalize()) for c in t1.columns]
    parts = [
        "<h3>The Chinchilla law L = E + A/N^α + B/D^β</h3>",
        f"<p>Besiroglu et al.'s procedure (their {rep['n_points']} points, Huber δ = {rep['huber_delta']:g}, "
        f"L-BFGS-B from {rep['starts_run']} of their {rep['starts_grid']} grid starts) against the "
        'δ = 1e-3 optimum their notebook prints ("Replicate exactly"), its true target:</p>',
        table_html(opt, "Our replication against the notebook's δ = 1e-3 Huber optimum."),
        table_html(
            t1,
            "Table 1 by the estimator that made it: the notebook's Huber-density maximum likelihood with "
            f"free scale (here: ends at ln s = {nb['huber_density_ml']['log_scale']:.2f}, success "
            f"{nb['huber_density_ml']['success']}) and least absolute deviations, against the notebook's "
            "digits and the published table (E printed as 1.82).",
        ),
    ]
    if "bootstrap" in nb:
        bt = nb["bootstrap"]
        parts.append(
            table_html(
                pd.DataFrame(
                    {
                        "Parameter": list(bt["stderr"]),
                        "Ours (their procedure)": list(bt["stderr"].values()),
                        "Notebook": list(bt["notebook_stderr"].values()),
                        "Published": list(bt["published_stderr"].values()),
                    }
                ),
                f"Their bootstrap repeated their way (seed {bt['seed']}, {bt['n_resamples']} resamples, BFGS "
                "refits from Hoffmann et al.'s estimates); theirs has 4000 resamples.",
            )
        )
    return "".join(parts)


def core_fits_html(rep: dict, cells: list[dict]) -> str:
    """The core's fits of the law with their bootstrap sd over runs (resamples and Monte Carlo error
    stated), beside Hoffmann et al.'s estimates."""
    fits = core_law_fits(cells)
    if not fits:
        return ""
    rows = []
    for k in ("A", "B", "E", "alpha", "beta"):
        row = {"Parameter": k}
        for name, f in fits.items():
            p = f["params"][k]
            sd = p.get("bootstrap_std")
            row[name.capitalize()] = f"{p['value']:.4g}" + (f" ± {sd:.2g}" if sd is not None else "")
        rows.append({**row, "Hoffmann et al.": HOFFMANN_FIT[k].text})
    n = max((c.get("bootstrap_resamples", 0) for c in cells), default=0)
    mc = f", Monte Carlo error of the sd ± {100 / (2 * (n - 1)) ** 0.5:.0f} %" if n > 1 else ""
    chk = optimiser_check(rep, cells)
    head = (
        f"<p>On the same objective the fitting core (lmfit) reaches {chk['objective_lmfit']:.10g} against "
        f"L-BFGS-B's {chk['objective_lbfgsb']:.10g} (lower: {chk['lower']}). "
        if chk
        else "<p>"
    )
    return (
        head
        + f"The core's fits of the law (the fit grid's chinchilla cells), with the bootstrap sd over runs ({n} "
        f"resamples{mc}; no verdict reads it):</p>"
        + table_html(
            pd.DataFrame(rows), "The Chinchilla law fitted by the core: value ± bootstrap sd, per fit."
        )
    )
