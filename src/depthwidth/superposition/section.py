"""Report section of the superposition stage (rule superposition_section): figures, prose, tables and
headline rows, each from its own function."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MaxNLocator, NullFormatter

from depthwidth import papers
from depthwidth.integrity import read_json, read_table
from depthwidth.sections import Figures, comparisons_html, table_html, write_section
from depthwidth.verdicts import read_comparisons
from depthwidth.superposition.grid import parse_cell_path
from depthwidth.superposition.tables import (
    CELL_COLUMNS,
    EXPONENT_COLUMNS,
    TABLES_RULE,
    TRAIN_RULE,
    load_cell,
)

SOURCE = "Liu, Liu & Gore 2025 (arXiv 2505.10465), Fig. 2–3"
TITLE = "Superposition toy model: width scaling in two regimes (Liu, Liu & Gore 2025)"
CMAP = plt.get_cmap("coolwarm")


def weak_theory_loss(dist: str, n: int, widths) -> np.ndarray:
    """Loss if exactly the m most frequent features are stored perfectly and every other feature i is
    replaced by its best constant b_i = E[x_i] = p_i: L(m) = (1/n) Σ_{i>m} (4p_i/3 − p_i²), since
    E[x_i²] = 4p_i/3 for x_i = Bernoulli(p_i)·U(0, 2)."""
    from depthwidth.superposition.data import feature_probabilities

    p = feature_probabilities(dist, n).numpy()
    var = 4 * p / 3 - p**2
    tail = np.cumsum(var[::-1])[::-1]  # tail[k] = Σ_{i ≥ k} (0-based)
    return np.array([tail[m] / n if m < n else 0.0 for m in widths])


def _width_ticks(ax, widths) -> None:
    """Label the log x axis at the trained widths (matplotlib's 2×10¹-style minor labels collide)."""
    ax.set_xticks(list(widths), [str(w) for w in widths])
    ax.xaxis.set_minor_formatter(NullFormatter())


def _gamma_color(g: float, gammas: list[float]):
    return CMAP((g - min(gammas)) / max(max(gammas) - min(gammas), 1e-9))


# ---------------------------------------------------------------------------------------------
# Headline rows and the comparisons


def headline(records: pd.DataFrame) -> list[dict]:
    """The records of comparisons.csv marked for the headline, as dicts (rule superposition_compare made
    them; nothing is compared here)."""
    if records.empty:
        return []
    return [
        {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()}
        for r in records[records["headline"]].to_dict("records")
    ]


def comparisons_part(records: pd.DataFrame) -> str:
    """The comparisons with the paper, one table per regime."""
    if records.empty:
        return ""
    parts = ["<h3>Our exponents against the paper</h3>"]
    for claim, g in records.groupby("claim", sort=False):
        parts.append(
            comparisons_html(
                g,
                f"{claim}: per α, against the value the paper states and the value it draws at that cell "
                "(the paper-figures comparison of the same cell, copied). Our error: the bootstrap over "
                "seeds (resampled whole), or the OLS error where within 1.25× of it.",
            )
        )
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------------
# Prose and tables


def intro_html(cells: pd.DataFrame, infos: list[dict], analysis: dict) -> str:
    """What the toy model is, what the paper predicts, and the settings of this run."""
    n, steps = int(cells.n.iloc[0]), int(cells.steps.max())
    dists = list(dict.fromkeys(cells.distribution))
    gammas, ms = sorted(cells.gamma.unique()), sorted(cells.m.unique())
    secs = sum(i["train_seconds"] for i in infos)
    mean_ms = np.mean([i["ms_per_step"] for i in infos]) if infos else float("nan")
    return (
        "<p>The toy model of Liu, Liu &amp; Gore: n features x_i = Bernoulli(p_i)·U(0,2) are squeezed through "
        "a width-m linear map and read out as y = ReLU(x W Wᵀ + b). Weight decay γ &lt; 0 pulls every row norm "
        "‖W_i‖ to 1, so all features are stored, overlapping (strong superposition); γ &gt; 0 keeps only the "
        "most frequent ones (weak superposition). The paper predicts loss ∝ m^-(α−1) in the weak regime for "
        "p_i ∝ i^-α and loss ∝ 1/m in the strong regime, whatever α.</p>"
        f"<p class='note'>This run: n = {n}, {len(dists)} frequency laws, γ ∈ {{{', '.join(f'{g:g}' for g in gammas)}}}, "
        f"m ∈ {{{', '.join(map(str, ms))}}}, {steps} steps per cell, {len(cells)} cells trained in "
        f"{secs / 60:.1f} CPU-minutes ({mean_ms:.1f} ms per step on average). Final loss = mean training loss over "
        f"the last {analysis['final_window']} steps (fresh data every step). A feature counts as represented when "
        f"‖W_i‖ &gt; {analysis['norm_threshold']:g}.</p>"
    )


def tables_html(cells: pd.DataFrame, exps: pd.DataFrame, analysis: dict) -> str:
    """The exponents table, the ETF table of strong superposition, and where the full tables are."""
    show = {
        "distribution": "Frequency law",
        "gamma": "γ",
        "regime": "Regime",
        "exponent": "α_m",
        "boot_sd": "Bootstrap sd (seeds)",
        "wboot_sd": "Bootstrap sd (widths)",
        "stderr": "OLS error",
        "lof_p": "Lack of fit p",
        "theory": "Theory",
        "mean_represented_fraction": "Represented fraction",
    }
    parts = [
        table_html(
            exps[[c for c in show if c in exps]].rename(columns=show),
            "exponents.csv: loss-vs-width fits per (law, γ), seeds pooled, over the widths of each fit: the "
            "exponent, its bootstraps over seeds and over widths (the comparisons state the larger), the OLS "
            "error of the pooled line, the lack-of-fit F-test of "
            "that line against the width means, and the theory value (1 for γ < 0; α − 1 for γ > 0 and a "
            "power law; blank otherwise).",
        )
    ]
    etf = (
        cells[cells.gamma < 0]
        .groupby(["distribution", "gamma", "m"])
        .agg(
            k=("etf_k", "first"),
            coherence_ratio=("etf_coherence_ratio", "mean"),
            frame_ratio=("etf_frame_ratio", "mean"),
            mean_sq_overlap_times_m=("mean_sq_overlap", "mean"),
        )
        .reset_index()
    )
    if len(etf):
        etf["mean_sq_overlap_times_m"] *= etf.m
        etf = etf.rename(
            columns={
                "distribution": "Frequency law",
                "gamma": "γ",
                "m": "Width m",
                "k": "Top k features",
                "coherence_ratio": "Coherence / Welch bound",
                "frame_ratio": "Frame ratio",
                "mean_sq_overlap_times_m": "Mean square overlap × m",
            }
        )
        parts.append(
            table_html(
                etf,
                "ETF closeness in strong superposition: for the top k = "
                f"{analysis['etf_factor']:g}·m features, the coherence = max |Ŵ_i·Ŵ_j| over the "
                "Welch bound (1 for an equiangular tight frame) and the frame ratio = mean squared "
                "overlap over its tight-frame value (1 for any tight frame); last column: mean "
                "squared overlap of all represented features × m (1 for random directions).",
            )
        )
    parts.append(
        "<p class='note'>Full tables: results/superposition/cells.csv (one row per cell) and "
        "results/superposition/exponents.csv. Cell files: results/superposition/cells/&lt;law&gt;/n&lt;n&gt;/"
        "gamma&lt;γ&gt;/m&lt;m&gt;/seed&lt;s&gt;/model.safetensors (W, b, loss_curve).</p>"
    )
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------------
# Figures


def loss_vs_width_figure(figs: Figures, cells: pd.DataFrame, exps: pd.DataFrame) -> str:
    """Final loss against m per law (up to four panels) and γ, with the spread over seeds, the fits and
    the weak ideal. seaborn draws the mean over seeds and their range from the per-cell rows."""
    import seaborn as sns

    n = int(cells.n.iloc[0])
    show = list(dict.fromkeys(cells.distribution))[:4]
    gammas, ms = sorted(cells.gamma.unique()), sorted(cells.m.unique())
    labels = {g: f"γ = {g:g}" for g in gammas}
    fig, axes = plt.subplots(1, len(show), figsize=(4.8 * len(show), 3.8), squeeze=False)
    for ax, d in zip(axes[0], show):
        sns.lineplot(
            data=cells[cells.distribution == d].assign(γ=lambda c: c.gamma.map(labels)),
            x="m",
            y="final_loss",
            hue="γ",
            hue_order=list(labels.values()),
            palette={labels[g]: _gamma_color(g, gammas) for g in gammas},
            marker="o",
            markersize=5,
            errorbar=("pi", 100),
            ax=ax,
        )
        for g in gammas:
            fit = exps[(exps.distribution == d) & (exps.gamma == g)]
            if len(fit) and np.isfinite(fit.exponent.iloc[0]):
                mm = np.array([fit.m_min.iloc[0], fit.m_max.iloc[0]])
                ax.plot(
                    mm,
                    np.exp(fit.intercept.iloc[0]) * mm ** -fit.exponent.iloc[0],
                    ":",
                    color=_gamma_color(g, gammas),
                    lw=1,
                )
        ax.plot(np.array(ms), weak_theory_loss(d, n, ms), "k--", lw=1, label="top-m features perfect")
        ax.set(xscale="log", yscale="log", title=d)
        ax.set_xlabel("width m (hidden dimensions)")
        ax.set_ylabel("final loss (MSE per feature)")
        _width_ticks(ax, ms)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return figs.html(
        fig,
        "loss_vs_width",
        "Final loss against width m, log-log, per frequency law (panels) and "
        "weight decay γ (colours: blue = negative, strong superposition; red = positive, weak): mean "
        "over seeds, band from the lowest to the highest seed. "
        "Dotted: the power-law fits of exponents.csv. Dashed: the weak-superposition ideal, the m "
        "most frequent features stored perfectly and the rest replaced by their mean, "
        "L = (1/n) Σ_{i>m} (4p_i/3 − p_i²).",
    )


def exponent_figure(figs: Figures, pw: pd.DataFrame, gammas: list[float]) -> str:
    """Fitted α_m against α − 1 per γ, with both theory lines."""
    fig, ax = plt.subplots(figsize=(5.2, 4))
    for g in gammas:
        s = pw[pw.gamma == g]
        ax.errorbar(
            s.alpha - 1,
            s.exponent,
            yerr=s[[c for c in ("boot_sd", "wboot_sd") if c in s] or ["stderr"]].max(axis=1).fillna(0),
            fmt="o-",
            color=_gamma_color(g, gammas),
            ms=4,
            capsize=2,
            label=f"γ = {g:g}",
        )
    a = np.linspace(min(0, (pw.alpha - 1).min()), max(1.2, (pw.alpha - 1).max()), 50)
    ax.plot(a, a, "k--", lw=1, label=r"weak theory $\alpha_m = \alpha - 1$")
    ax.axhline(papers.ALPHA_M_STRONG.value, color="k", ls=":", lw=1, label=r"strong theory $\alpha_m = 1$")
    ax.set_xlabel(r"$\alpha - 1$ (frequency law $p_i \propto i^{-\alpha}$)")
    ax.set_ylabel(r"width exponent $\alpha_m$ (loss $\propto m^{-\alpha_m}$)")
    ax.legend(fontsize=7)
    return figs.html(
        fig,
        "exponent_vs_alpha",
        "The two regimes: fitted width exponent α_m against α − 1 (error "
        "bars: one standard deviation, the larger of the bootstraps over seeds and over widths). Weak superposition follows the dashed line α − 1, "
        "strong superposition stays near 1 (dotted).",
    )


def phase_figure(figs: Figures, pw: pd.DataFrame) -> str:
    """α_m over the (γ, α) grid as a seaborn heat map with the values written in (text colour set
    against each cell's shade), γ growing upwards."""
    import seaborn as sns

    piv = pw.pivot_table(index="gamma", columns="alpha", values="exponent").sort_index(ascending=False)
    fig, ax = plt.subplots(figsize=(5.2, 3.8))
    sns.heatmap(
        piv,
        annot=True,
        fmt=".2f",
        annot_kws={"fontsize": 7},
        cmap="viridis",
        linewidths=0.5,
        xticklabels=[f"{a:g}" for a in piv.columns],
        yticklabels=[f"{g:g}" for g in piv.index],
        cbar_kws={"label": r"$\alpha_m$ (dimensionless)"},
        ax=ax,
    )
    ax.set_xlabel("α (frequency exponent)")
    ax.set_ylabel("weight decay γ")
    ax.tick_params(axis="y", labelrotation=0)
    return figs.html(
        fig,
        "phase",
        "Phase picture: width exponent α_m over (γ, α). Rows with γ < 0 sit near 1; "
        "rows with γ > 0 grow with α as α − 1.",
    )


def geometry_figure(figs: Figures, cells: pd.DataFrame, analysis: dict) -> str:
    """Represented fraction and mean squared overlap against m, per γ."""
    gammas, ms = sorted(cells.gamma.unique()), sorted(cells.m.unique())
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.6))
    agg = (
        cells.groupby(["gamma", "m"])
        .agg(rep=("represented_fraction", "mean"), ov=("mean_sq_overlap", "mean"))
        .reset_index()
    )
    for g in gammas:
        s = agg[agg.gamma == g]
        axes[0].semilogx(s.m, s.rep, "o-", color=_gamma_color(g, gammas), ms=4, label=f"γ = {g:g}")
        axes[1].loglog(s.m, s.ov, "o-", color=_gamma_color(g, gammas), ms=4, label=f"γ = {g:g}")
    mm = np.array(ms, float)
    axes[1].loglog(mm, 1 / mm, "k--", lw=1, label="1/m")
    axes[0].set_ylabel(f"fraction of features with $\\|W_i\\|$ > {analysis['norm_threshold']:g}")
    axes[1].set_ylabel(r"mean squared overlap $(\hat W_i \cdot \hat W_j)^2$")
    for ax in axes:
        _width_ticks(ax, ms)
        ax.set_xlabel("width m")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return figs.html(
        fig,
        "geometry",
        "Left: fraction of represented features (means over laws and seeds). Right: "
        "mean squared overlap between normalised represented rows, against 1/m (dashed), the value "
        "for random directions; the paper finds strong superposition tracks 1/m.",
    )


def curves_figure(figs: Figures, cells: pd.DataFrame, models: dict, analysis: dict) -> str:
    """Loss curves and row-norm histograms of the extreme cells (γ, m) of the first law (seaborn's step
    histograms: overlapping distributions stay readable)."""
    import seaborn as sns

    d0 = cells.distribution.iloc[0]
    norms = []
    gammas, ms = sorted(cells.gamma.unique()), sorted(cells.m.unique())
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.6))
    for g in (min(gammas), max(gammas)):
        for m in (min(ms), max(ms)):
            key = (d0, g, m, int(cells.seed.min()))
            if key not in models:
                continue
            curve = np.asarray(models[key]["loss_curve"], float)
            k = max(len(curve) // 200, 1)
            sm = curve[: len(curve) // k * k].reshape(-1, k).mean(1)
            axes[0].loglog(np.arange(1, len(sm) + 1) * k, sm, label=f"γ = {g:g}, m = {m}")
            if m == max(ms):
                nrm = np.linalg.norm(np.asarray(models[key]["W"], float), axis=1)
                norms.append(pd.DataFrame({"norm": nrm, "cell": f"γ = {g:g}, m = {m}"}))
    if norms:
        sns.histplot(pd.concat(norms), x="norm", hue="cell", bins=40, element="step", ax=axes[1])
    threshold = axes[1].axvline(analysis["norm_threshold"], color="k", ls="--", lw=1)
    hist = axes[1].get_legend()  # seaborn's legend of the cells; the threshold line joins it
    handles = list(hist.legend_handles) if hist else []
    texts = [t.get_text() for t in hist.texts] if hist else []
    axes[1].legend([*handles, threshold], [*texts, "threshold"], fontsize=7)
    axes[0].set_xlabel("training step")
    axes[0].set_ylabel("training loss (MSE, block means)")
    axes[1].set_xlabel(r"row norm $\|W_i\|$")
    axes[1].set_ylabel("number of features")
    axes[1].yaxis.set_major_locator(MaxNLocator(integer=True))  # a count
    axes[0].legend(fontsize=7)
    return figs.html(
        fig,
        "curves",
        f"{d0}: loss curves (left, log-log) and the distribution of row norms at the "
        "largest width (right) for the most negative and most positive γ. Strong superposition puts "
        "every norm near 1; weak superposition splits them into ≈ 1 (kept) and ≈ 0 (dropped).",
    )


# ---------------------------------------------------------------------------------------------
# The section


def render(
    cells: pd.DataFrame,
    exps: pd.DataFrame,
    models: dict,
    infos: list[dict],
    analysis: dict,
    figs: Figures,
    records: pd.DataFrame,
) -> tuple[str, list[dict]]:
    """Body HTML and headline rows. ``models`` maps (dist, gamma, m, seed) to {'W', 'b', 'loss_curve'}."""
    gammas = sorted(cells.gamma.unique())
    parts = [intro_html(cells, infos, analysis), loss_vs_width_figure(figs, cells, exps)]
    pw = exps[exps.alpha.notna()].sort_values("alpha")
    if len(pw):
        parts.append(exponent_figure(figs, pw, gammas))
        if pw.gamma.nunique() >= 2 and pw.alpha.nunique() >= 2:
            parts.append(phase_figure(figs, pw))
    parts += [
        geometry_figure(figs, cells, analysis),
        curves_figure(figs, cells, models, analysis),
        comparisons_part(records),
        tables_html(cells, exps, analysis),
    ]
    return "\n".join(parts), headline(records)


def extreme_models(cells: pd.DataFrame, model_paths: list[str]) -> dict:
    """The cells the curves figure draws, loaded: (dist, gamma, m, seed) → {'W', 'b', 'loss_curve'}."""
    want = {
        (cells.distribution.iloc[0], g, m, int(cells.seed.min()))
        for g in (cells.gamma.min(), cells.gamma.max())
        for m in (cells.m.min(), cells.m.max())
    }
    models = {}
    for p in model_paths:
        c = parse_cell_path(p)
        key = (c["dist"], c["gamma"], c["m"], c["seed"])
        if key in want:
            models[key] = load_cell(p)
    return models


def superposition_section(
    comparisons_csv: str,
    cells_csv: str,
    exponents_csv: str,
    model_paths: list[str],
    info_paths: list[str],
    analysis: dict,
    html_path: str,
    headline_path: str,
    figures_dir: str,
) -> None:
    """Write the section fragment, its headline rows and its figures (``figures_dir``/*.png)."""
    cells = read_table(cells_csv, TABLES_RULE, CELL_COLUMNS)
    exps = read_table(exponents_csv, TABLES_RULE, EXPONENT_COLUMNS)
    infos = [read_json(p, TRAIN_RULE) for p in info_paths]
    records = read_comparisons(comparisons_csv, "superposition_compare")
    body, rows = render(
        cells, exps, extreme_models(cells, model_paths), infos, analysis, Figures(figures_dir), records
    )
    write_section(html_path, headline_path, "superposition", TITLE, body, rows)
