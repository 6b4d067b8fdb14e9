"""Report section of the depth toy (rule depth_toy_section): figures (loss vs depth, α_ℓ vs temperature and
vs training step, hidden-state angles), prose and tables, and the headline rows."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from depthwidth import papers  # noqa: E402
from depthwidth.depth_toy.exponents import (  # noqa: E402
    ALPHA_TOL,
    LOSS_TOL,
    WINDOW,
    local_exponents,
)
from depthwidth.depth_toy.tables import ANGLE_COLUMNS, CURVE_COLUMNS, RUN_COLUMNS, TABLES_RULE  # noqa: E402
from depthwidth.integrity import read_table  # noqa: E402
from depthwidth.sections import Figures, comparisons_html, fmt_pm, table_html, write_section  # noqa: E402
from depthwidth.verdicts import read_comparisons  # noqa: E402

TITLE = "Depth toy: smooth vs random-walk teachers (Liu et al. 2026)"
# colours of the report's palette (sections.THEME)
KIND_STYLE = {"independent": ("C0", "o"), "tied": ("C3", "s")}
PAPER = {"independent": papers.ALPHA_L_TOY_INDEPENDENT, "tied": papers.ALPHA_L_TOY_TIED}
# the columns the section reads from each table (checked with the row counts depth_toy_tables recorded)
TABLE_COLUMNS = {
    "runs": tuple(RUN_COLUMNS),
    "exponents": ("kind", "variant", "temperature", "alpha", "alpha_se"),
    "angles": tuple(ANGLE_COLUMNS),
    "curves": tuple(CURVE_COLUMNS),
    "convergence": ("kind", "variant", "temperature", "steps", "step_from", "loss_change", "converged"),
}


def _loss_vs_depth(runs: pd.DataFrame, ex: pd.DataFrame, variant: str):
    sel = runs[runs["variant"] == variant]
    kinds = [k for k in ("independent", "tied") if k in set(sel["kind"])]
    fig, axes = plt.subplots(1, len(kinds), figsize=(5.2 * len(kinds), 4), squeeze=False, sharey=True)
    temps = sorted(sel["temperature"].dropna().unique())
    cmap = plt.get_cmap("viridis")
    for ax, kind in zip(axes[0], kinds):
        k = sel[sel["kind"] == kind]
        groups = [(t, k[k["temperature"] == t]) for t in temps] if temps else [(None, k)]
        for i, (t, g) in enumerate(groups):
            color = cmap(i / max(len(groups) - 1, 1)) if temps else KIND_STYLE[kind][0]
            mean = g.groupby("depth")["test_loss"].mean()
            ax.plot(g["depth"], g["test_loss"], ".", color=color, alpha=0.5)
            label = "" if t is None else f"T={t:.3g}"
            e = ex[(ex["kind"] == kind) & (ex["variant"] == variant)]
            e = e[e["temperature"].isna()] if t is None else e[np.isclose(e["temperature"], t)]
            if len(e) and np.isfinite(e["alpha"].iloc[0]):
                d = np.array(sorted(mean.index), dtype=float)
                ax.plot(
                    d,
                    np.exp(e["log_c"].iloc[0]) * d ** (-e["alpha"].iloc[0]),
                    "-",
                    color=color,
                    lw=1,
                    label=f"{label} α={e['alpha'].iloc[0]:.2f}".strip(),
                )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("student depth ℓ (blocks)")
        ax.set_title(f"{kind} teacher")
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("test loss (nats per sample)" if temps else "test loss (MSE per coordinate)")
    return fig


def _alpha_vs_t(ex: pd.DataFrame, variant: str):
    fig, ax = plt.subplots(figsize=(5.5, 4))
    for kind, (color, marker) in KIND_STYLE.items():
        e = ex[(ex["kind"] == kind) & (ex["variant"] == variant)].sort_values("temperature")
        if e.empty:
            continue
        ax.errorbar(
            e["temperature"],
            e["alpha"],
            yerr=e["alpha_se"].fillna(0),
            fmt=marker + "-",
            color=color,
            capsize=3,
            label=f"{kind} teacher",
        )
    for kind, paper in PAPER.items():
        ax.axhline(paper.value, color=KIND_STYLE[kind][0], ls=":", lw=1)
    ax.set_xscale("log")
    ax.set_xlabel("temperature T (dimensionless)")
    ax.set_ylabel("depth exponent α_ℓ (dimensionless)")
    ax.legend(fontsize=8)
    return fig


def _angles_fig(angles: pd.DataFrame):
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), layout="constrained")
    for kind, (color, _) in KIND_STYLE.items():
        a = angles[angles["kind"] == kind]
        if a.empty:
            continue
        teachers = a[a["model"] == "teacher"]
        # teachers of different depths (a variant's teacher_depth) are drawn apart: layer l means another depth
        for depth, style in zip(sorted(teachers["depth"].unique(), reverse=True), ("-", "-.", ":")):
            t = teachers[teachers["depth"] == depth].groupby("layer", as_index=False).mean(numeric_only=True)
            label = f"{kind} teacher" + (f" (L={depth})" if teachers["depth"].nunique() > 1 else "")
            axes[0].plot(t["relative_layer"], t["angle_update_deg"], style, color=color, label=label)
            axes[1].plot(t["relative_layer"], t["angle_state_deg"], style, color=color, label=label)
        st = a[a["model"] == "student"]
        if len(st):
            deepest = st["depth"].max()
            s = st[st["depth"] == deepest].groupby("layer", as_index=False).mean(numeric_only=True)
            axes[0].plot(
                s["relative_layer"],
                s["angle_update_deg"],
                "--",
                color=color,
                label=f"student ℓ={deepest}, {kind} teacher",
            )
            axes[1].plot(
                s["relative_layer"],
                s["angle_state_deg"],
                "--",
                color=color,
                label=f"student ℓ={deepest}, {kind} teacher",
            )
    axes[0].axhline(90, color="grey", ls=":", lw=1)
    axes[0].set_ylabel("angle(Δh_l, Δh_l+1) (degrees)")
    axes[1].set_ylabel("angle(h_l, h_l+1) (degrees)")
    axes[1].set_yscale("log")
    for ax in axes:
        ax.set_xlabel("relative layer (l + 0.5) / L")
    axes[0].legend(fontsize=7, loc="center right")
    return fig


def _alpha_vs_step(traj: pd.DataFrame):
    """α_ℓ against training step per variant: the mean over the job's rows and, for KL variants, the band
    from the lowest to the highest temperature's α_ℓ (seaborn draws both from the rows)."""
    import seaborn as sns

    variants = list(dict.fromkeys(traj["variant"]))
    fig, axes = plt.subplots(1, len(variants), figsize=(5.2 * len(variants), 3.8), squeeze=False, sharey=True)
    for ax, variant in zip(axes[0], variants):
        for kind, (color, marker) in KIND_STYLE.items():
            e = traj[(traj["kind"] == kind) & (traj["variant"] == variant)]
            if e.empty:
                continue
            sns.lineplot(
                data=e,
                x="step",
                y="alpha",
                errorbar=("pi", 100) if e["temperature"].notna().any() else None,
                marker=marker,
                color=color,
                label=f"{kind} teacher",
                ax=ax,
            )
            ax.axhline(PAPER[kind].value, color=color, ls=":", lw=1)
        ax.set_xlabel("training step")
        ax.set_title(f"variant {variant}")
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("depth exponent α_ℓ")
    return fig


def _convergence_fig(curves: pd.DataFrame, local: pd.DataFrame, variant: str):
    """Per teacher kind: every depth's test loss against training step (log axes), and the local exponent
    between neighbouring depths against step; dotted: the start of the convergence test's window."""
    sel = curves[curves["variant"] == variant]
    kinds = [k for k in ("independent", "tied") if k in set(sel["kind"])]
    fig, axes = plt.subplots(
        2, len(kinds), figsize=(5.2 * len(kinds), 7), squeeze=False, layout="constrained"
    )
    for col, kind in enumerate(kinds):
        k = sel[sel["kind"] == kind]
        mean = k.groupby(["depth", "step"], as_index=False)["test_loss"].mean()
        cmap = plt.get_cmap("viridis")
        depths = sorted(mean["depth"].unique())
        for i, d in enumerate(depths):
            m = mean[mean["depth"] == d]
            axes[0][col].plot(
                m["step"], m["test_loss"], "-", color=cmap(i / max(len(depths) - 1, 1)), label=f"ℓ={d}"
            )
        loc = local[(local["kind"] == kind) & (local["variant"] == variant)]
        for i, ((lo, hi), g) in enumerate(loc.groupby(["depth_lo", "depth_hi"])):
            axes[1][col].plot(
                g["step"],
                g["alpha_local"],
                "o-",
                ms=3,
                color=cmap(i / max(len(depths) - 2, 1)),
                label=f"{lo}→{hi}",
            )
        axes[1][col].axhline(PAPER[kind].value, color="grey", ls=":", lw=1)
        for ax in axes[:, col]:
            ax.axvline((1 - WINDOW) * k["step"].max(), color="grey", ls="--", lw=0.8)
            ax.set_xscale("log")
            ax.tick_params(axis="x", which="minor", labelbottom=False)  # overlapping 2×10², 3×10², ...
            ax.set_xlabel("training step")
            ax.legend(fontsize=7)
        axes[0][col].set_yscale("log")
        axes[0][col].set_title(f"{kind} teacher")
    axes[0][0].set_ylabel("test loss")
    axes[1][0].set_ylabel("local exponent −Δlog L / Δlog ℓ")
    return fig


def _convergence_parts(figs: Figures, curves: pd.DataFrame, conv: pd.DataFrame) -> list[str]:
    if curves.empty or curves["step"].nunique() <= 1:
        return []
    local = local_exponents(curves)
    parts = [
        figs.html(
            _convergence_fig(curves, local, variant),
            f"convergence_{variant}",
            f"Convergence, variant {variant}: top, each depth's test loss against training step (log axes; "
            "the drop after the dashed line is the learning rate's decay, where the loss falls to its "
            "noise floor); bottom, the local depth exponent between neighbouring depths against step "
            "(dotted: the paper's converged α_ℓ). Dashed: the start of the last "
            f"{100 * WINDOW:.0f} % of training, the convergence test's window.",
        )
        for variant in dict.fromkeys(curves["variant"])
    ]
    show = conv.copy()
    show["test"] = np.where(show["converged"], "converged", "still moving")
    show["loss_change_%"] = (100 * show["loss_change"]).round(1)
    show["alpha_change"] = show["alpha_change"].round(3)
    parts.append(
        table_html(
            show[
                ["kind", "variant", "temperature", "step_from", "steps", "loss_change_%", "depth_moving"]
                + ["alpha_change", "test"]
            ],
            f"Convergence test (results/depth_toy/convergence.csv): over the last {100 * WINDOW:.0f} % of "
            "training, the largest relative change of any depth's test loss (positive: still falling; "
            f"limit ±{100 * LOSS_TOL:g} %) and the change of α_ℓ (limit ±{ALPHA_TOL:g}).",
        )
    )
    return parts


def _intro(note: str) -> str:
    return (
        "<p>A student residual network (width 32) learns a deeper teacher (128 blocks in the paper, 24 in its "
        "exp-9-5); the loss of students of depth ℓ is fitted as L ∝ ℓ^(−α_ℓ). Independent teacher blocks give "
        "random-walk dynamics (students average like an ensemble, α_ℓ ≈ 1 in the paper); tied blocks give "
        f"smooth dynamics that a converged student can discretise (α_ℓ ≈ 3 in the paper). {note}</p>"
    )


def _variant_table(variants: list[dict]) -> str:
    return table_html(
        pd.DataFrame(variants),
        "The variants of this run: setup (learned_head: KL, the student learns a head; shared_head: KL "
        "through one fixed head; mse: MSE on the final normalised states; rk2_mse: mse with a "
        "midpoint-rule student), teacher kinds and depth, student depths, steps, number of "
        "temperatures, learning rate (ℓ: student depth), schedule (flat_then_linear: flat for 80 % "
        "of the steps, then linear to 10 %), and whether each task draws its own teacher.",
    )


def _exponent_figures(figs: Figures, runs: pd.DataFrame, ex: pd.DataFrame) -> list[str]:
    parts = []
    for variant in dict.fromkeys(runs["variant"]):
        parts.append(
            figs.html(
                _loss_vs_depth(runs, ex, variant),
                f"loss_vs_depth_{variant}",
                f"Test loss vs student depth, variant {variant} (log-log; points: replicates, "
                "lines: power-law fits with their exponent α_ℓ).",
            )
        )
        if ex[ex["variant"] == variant]["temperature"].notna().any():
            parts.append(
                figs.html(
                    _alpha_vs_t(ex, variant),
                    f"alpha_vs_temperature_{variant}",
                    f"Depth exponent α_ℓ (± standard error of the fit) against the teacher "
                    f"temperature T, variant {variant}; dotted: the paper's α_ℓ ≈ 1 "
                    "(independent) and ≈ 3 (tied, converged).",
                )
            )
    return parts


def _trajectory_figure(figs: Figures, trajectory: pd.DataFrame) -> list[str]:
    if not len(trajectory) or trajectory["step"].nunique() <= 1:
        return []
    return [
        figs.html(
            _alpha_vs_step(trajectory),
            "alpha_vs_step",
            "Depth exponent α_ℓ fitted to the test losses at each evaluation during training "
            "(results/depth_toy/exponent_vs_step.csv; mean over temperatures, band: their "
            "range); dotted: the paper's converged values. An exponent still rising at the "
            "last step means the students have not converged.",
        )
    ]


def _exponent_table(ex: pd.DataFrame) -> str:
    show = ex.copy()
    show["alpha_ℓ"] = [fmt_pm(a, s) for a, s in zip(show["alpha"], show["alpha_se"])]
    return table_html(
        show[["kind", "variant", "temperature", "replicates", "n_depths", "alpha_ℓ"]],
        "Depth exponents per teacher kind, variant and temperature (results/depth_toy/exponents.csv).",
    )


def _angle_parts(
    figs: Figures, angles: pd.DataFrame, teacher_angles: pd.DataFrame, n_inputs: int
) -> list[str]:
    if not len(angles):
        return []
    return [
        figs.html(
            _angles_fig(angles),
            "angles",
            f"Hidden-state geometry per layer ({n_inputs} fresh inputs): left, angle between successive "
            "updates (random walk: near 90°; smooth dynamics: small); right, angle between "
            "successive hidden states (log scale). Solid: teachers; dashed: the deepest students.",
        ),
        table_html(
            teacher_angles,
            "Teacher angles averaged over layers (degrees; results/depth_toy/teacher_angles.csv).",
        ),
    ]


def render(
    figs: Figures,
    runs: pd.DataFrame,
    ex: pd.DataFrame,
    angles: pd.DataFrame,
    teacher_angles: pd.DataFrame,
    trajectory: pd.DataFrame,
    comparisons: pd.DataFrame,
    note: str,
    n_inputs: int,
    variants_settings: list[dict],
    curves: pd.DataFrame | None = None,
    conv: pd.DataFrame | None = None,
) -> str:
    """The section's HTML body (figures saved into ``figs``); ``comparisons``: the stage's records
    (rule depth_toy_compare), rendered as they are."""
    parts = [
        _intro(note),
        "<h3>Comparisons with the paper</h3>"
        + comparisons_html(comparisons, "The toy's depth exponents against the paper's statements."),
        _variant_table(variants_settings),
        *_exponent_figures(figs, runs, ex),
        *_trajectory_figure(figs, trajectory),
        *(_convergence_parts(figs, curves, conv) if curves is not None and conv is not None else []),
        _exponent_table(ex),
        *_angle_parts(figs, angles, teacher_angles, n_inputs),
    ]
    return "\n".join(parts)


def depth_toy_section(
    tables: dict[str, str],
    comparisons: str,
    html_out: str,
    headline_out: str,
    figures_dir: str,
    note: str,
    angle_samples: int,
    variants: list[dict],
) -> None:
    """Rule depth_toy_section: read the stage's tables (``tables``: runs, exponents, angles, trajectory,
    teacher_angles -> CSV path), write the section fragment, its headline rows and its figures.
    ``variants``: one row of settings per variant (``pipeline.variant_table``)."""
    t = {k: read_table(v, TABLES_RULE, TABLE_COLUMNS.get(k, ())) for k, v in tables.items()}
    records = read_comparisons(comparisons, "depth_toy_compare")
    body = render(
        Figures(figures_dir),
        t["runs"],
        t["exponents"],
        t["angles"],
        t["teacher_angles"],
        t["trajectory"],
        records,
        note,
        angle_samples,
        variants,
        t.get("curves"),
        t.get("convergence"),
    )
    rows = [r for r in records.to_dict("records") if r["headline"]]
    write_section(html_out, headline_out, "depth_toy", TITLE, body, rows)
