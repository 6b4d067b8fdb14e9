"""The report section of the hidden-states stage (rule ``hidden_states_section``): figures across models,
the models table and prose from each model's statistics (``.stats``), and the comparisons with the paper
that rule hidden_states_compare wrote (``.compare``); it only renders."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from depthwidth.integrity import read_json, read_table, write_table
from depthwidth.papers import SMOOTH_BULK_PERCENT
from depthwidth.sections import (
    Figures,
    comparisons_html,
    headline_records,
    plain_log_ticks,
    table_html,
    write_section,
)
from depthwidth.verdicts import read_comparisons

DEG = 180.0 / math.pi
TITLE = "LLM hidden states on FineWeb: most layers are similar (Liu et al. 2026)"


#: the rule that writes each model's statistics (named in the fix when one is damaged)
STATS_RULE = "hidden_states_stats"


def read_model_outputs(layer_csv: str, groups_csv: str, sample_parquet: str, summary_json: str):
    """One model's statistics, each checked against the seal (row count) rule hidden_states_stats wrote."""
    return (
        read_table(layer_csv, STATS_RULE, ("metric", "rel_depth", "mean")),
        read_table(groups_csv, STATS_RULE),
        read_table(sample_parquet, STATS_RULE),
        read_json(summary_json, STATS_RULE, ("n_layers", "n_tokens", "middle_means_rad", "bulk_share")),
    )


def models_table(summaries: dict[str, dict]) -> pd.DataFrame:
    """One row per model: middle-layer angles (degrees), smooth-bulk share, compositional test."""
    rows = []
    for name, s in summaries.items():
        comp = s.get("compositional_loss_last_block", {})
        rows.append(
            {
                "model": name,
                "layers": s["n_layers"],
                "tokens": s["n_tokens"],
                "θ mid (deg)": s["middle_means_rad"].get("theta", float("nan")) * DEG,
                "θ^Δ mid (deg)": s["middle_means_rad"].get("theta_dh", float("nan")) * DEG,
                "smooth bulk (%)": 100 * s["bulk_share"],
                "PC1, PC2 var. (%)": ", ".join(f"{100 * v:.0f}" for v in s["bulk_rule"]["pca_explained"]),
                "median depth of 90 % gain": comp.get("median_depth_90", float("nan")),
                f"tokens done by {comp.get('early', 0.5):g}·L (%)": 100
                * comp.get("share_done_by_early", float("nan")),
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------- figures


def _curves(ax, tables: dict[str, pd.DataFrame], metric: str, scale: float = 1.0, band: bool = True) -> None:
    for i, (name, tab) in enumerate(tables.items()):
        s = tab[tab.metric == metric]
        if s.empty:
            continue
        # one colour per model in every panel, whichever models have this metric
        (line,) = ax.plot(s.rel_depth, s["mean"] * scale, marker="o", ms=3, label=name, color=f"C{i % 10}")
        if band and "q25" in s:
            ax.fill_between(s.rel_depth, s.q25 * scale, s.q75 * scale, color=line.get_color(), alpha=0.15)


def angles_figure(tables: dict[str, pd.DataFrame], mid: list[float]):
    """θ_l and θ^Δ_l against relative depth, one curve per model."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    _curves(axes[0], tables, "theta", DEG)
    _curves(axes[1], tables, "theta_dh", DEG)
    axes[0].set(
        xlabel="relative depth $l/L$",
        ylabel=r"$\theta_l$ = angle($h_l$, $h_{l+1}$) (degrees)",
        title="rotation per layer",
    )
    axes[1].set(
        xlabel="relative depth $l/L$",
        ylabel=r"$\theta^{\Delta}_l$ = angle($\Delta h_l$, $\Delta h_{l+1}$) (degrees)",
        title="angle between consecutive updates",
    )
    axes[1].axhline(90, color="grey", lw=0.8, ls="--")
    for ax in axes:
        ax.axvspan(*mid, color="grey", alpha=0.08)
        ax.legend(fontsize=8)
    return fig


def norm_progress_loss_figure(tables: dict[str, pd.DataFrame]):
    """Norm of h_l, progress along h_L − h_0, and the per-layer losses (last block solid, logit lens dotted)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), constrained_layout=True)
    _curves(axes[0], tables, "norm", band=False)
    axes[0].set_yscale("log")
    lo, hi = axes[0].get_ylim()
    if hi / lo < 10:  # less than a decade: plain numbers, not 4×10⁰
        plain_log_ticks(axes[0], "y")
    axes[0].set(
        xlabel="relative depth $l/L$", ylabel=r"$\|h_l\|$ (model units, log scale)", title="hidden-state norm"
    )
    _curves(axes[1], tables, "progress", band=True)
    axes[1].plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--", label="uniform progress")
    axes[1].set(
        xlabel="relative depth $l/L$",
        ylabel=r"$s_l = \langle h_l - h_0, h_L - h_0 \rangle \,/\, \|h_L - h_0\|^2$",
        title="progress towards $h_L$",
    )
    _curves(axes[2], tables, "loss_last_block", band=False)
    for i, (name, tab) in enumerate(tables.items()):
        s = tab[tab.metric == "loss_logit_lens"]
        if not s.empty:
            axes[2].plot(
                s.rel_depth, s["mean"], ls=":", lw=1, color=f"C{i % 10}", label=f"{name} (logit lens)"
            )
    axes[2].set(xlabel="relative depth $l/L$", ylabel="next-token loss (nats)", title="loss by depth")
    for ax in axes:
        ax.legend(fontsize=7)
    return fig


def profiles_figure(samples: dict[str, pd.DataFrame], summaries: dict[str, dict]):
    """Per model: PC scores of the θ profiles (top) and mean θ profile of bulk and outliers (bottom)."""
    import matplotlib.pyplot as plt

    n = max(len(summaries), 1)
    fig, axes = plt.subplots(2, n, figsize=(4.2 * n, 7), squeeze=False, constrained_layout=True)
    for j, (name, s) in enumerate(summaries.items()):
        smp, ax = samples[name], axes[0, j]
        if "pc2" in smp:
            b, o = smp[smp.bulk], smp[~smp.bulk]
            ax.scatter(b.pc1, b.pc2, s=2, alpha=0.3, label=f"smooth bulk ({100 * s['bulk_share']:.1f} %)")
            ax.scatter(o.pc1, o.pc2, s=6, color="C3", label="outliers")
            ax.set(
                xlabel=r"PC1 of the $\theta$ profile (rad)",
                ylabel=r"PC2 of the $\theta$ profile (rad)",
                title=name,
            )
            ax.legend(fontsize=7)
        ax = axes[1, j]
        for g, style in (("smooth bulk", "-"), ("outliers", "--")):
            prof = s["group_profiles_rad"].get(g) or []
            if prof:
                ax.plot(s["theta_rel_depth"], np.asarray(prof) * DEG, ls=style, label=g)
        ax.set(
            xlabel="relative depth $l/L$",
            ylabel=r"mean $\theta_l$ (degrees)",
            title=f"{name}: angle profiles",
        )
        ax.legend(fontsize=7)
    return fig


def improvement_figure(summaries: dict[str, dict]):
    """Distribution of the depth reached with 90 % of each token's loss gain (last-block loss); None
    when no model has a loss."""
    import matplotlib.pyplot as plt

    models = [m for m, s in summaries.items() if "improvement_depth_hist_loss_last_block" in s]
    if not models:
        return None
    fig, ax = plt.subplots(figsize=(5.5, 3.6), constrained_layout=True)
    for name in models:
        h = summaries[name]["improvement_depth_hist_loss_last_block"]
        c, e = np.asarray(h["counts"], float), np.asarray(h["edges"])
        color = f"C{list(summaries).index(name) % 10}"  # the model's colour in the other figures
        ax.step(e[1:], c / max(c.sum(), 1), where="pre", label=name, color=color)
    ax.set(
        xlabel="relative depth reached with ≥ 90 % of the token's loss gain",
        ylabel="share of tokens",
        title="compositional-assembly test",
    )
    ax.legend(fontsize=8)
    return fig


# ------------------------------------------------------------------------------------------------ prose


INTRO = (
    "<p>Hidden states h<sub>0</sub>…h<sub>L</sub> of each model on FineWeb documents, reduced on the fly to "
    "per-token, per-layer metrics (raw states are not kept). θ<sub>l</sub> is the angle between consecutive "
    "hidden states, θ<sup>Δ</sup><sub>l</sub> the angle between consecutive updates Δh<sub>l</sub> = "
    "h<sub>l+1</sub> − h<sub>l</sub>. The paper finds small, nearly constant θ and θ<sup>Δ</sup> near 90° in "
    "the middle layers of most tokens: layers make similar, weakly correlated small updates, as an ensemble "
    "would. Tokens count only where they and their successor are real (unpadded) tokens.</p>"
)

ANGLES_CAPTION = (
    "θ_l and θ^Δ_l against relative depth, one curve per model (mean over tokens; band: 25–75 % "
    "quantiles; grey span: the middle layers averaged in the table; dashed: 90°, uncorrelated updates)."
)
LOSS_CAPTION = (
    "Left: mean norm of h_l. Middle: progress s_l of h_l along h_L − h_0 (band: 25–75 % quantiles; "
    "dashed: equal steps). "
    "Right: mean next-token loss when decoding after l layers: solid, the paper's variant (h_l through "
    "the last block, final norm and LM head); dotted in the same colour, the plain logit lens (final norm "
    "and LM head only). One colour per model in every panel; encoders have no loss."
)
PROFILES_CAPTION = (
    "Top: each token's θ profile projected on its first two principal components (a random "
    "sample of the bulk, every outlier). Bottom: mean θ_l profile of bulk and outlier tokens."
)
IMPROVEMENT_CAPTION = (
    "Distribution over improving tokens of the relative depth after which the next-token loss "
    "(paper's last-block variant) stays within 10 % of its total improvement. Mass near 1 means "
    "gradual improvement to the end (ensemble averaging); mass at small depths would mean early "
    "completion (hierarchy)."
)


def mask_note(summaries: dict[str, dict]) -> str:
    """Which attention mask the last-block losses were computed with, and why."""
    masks = {s.get("extraction", {}).get("last_block_mask", "causal") for s in summaries.values()}
    if masks == {"padding_only"}:
        return (
            "<p class='note'>The last-block losses shown use the paper's padding-only attention mask "
            "(hidden_states.last_block_mask: padding_only): for l &lt; L−1 the last block then sees later "
            "tokens, the next one included, so these are not the losses of a causal model.</p>"
        )
    return (
        "<p class='note'>The last-block losses shown are causal (each position sees only earlier tokens, as "
        "in a model truncated to blocks 0..l−1 and the last block), because the paper's Pythia script passed "
        "a padding-only mask, which under SDPA attention lets the last block see later tokens, the target "
        "included, for l &lt; L−1 (hidden_states.last_block_mask: padding_only reproduces it; "
        "docs/stages/hidden_states.md gives how much it moves the curve).</p>"
    )


def precision_note(summaries: dict[str, dict]) -> str:
    """How the angles were computed: float32 (ours) or the paper's bf16 cosine (hidden_states.angle_precision)."""
    precs = {s.get("extraction", {}).get("angle_precision", "float32") for s in summaries.values()}
    if "paper_bf16" in precs:
        which = "All" if precs == {"paper_bf16"} else "Some of the"
        return (
            f"<p class='note'>{which} angles shown are computed as in the paper's scripts "
            "(hidden_states.angle_precision: paper_bf16): the cosine in bf16, only the arccos in float32, "
            "so an angle below about 3.6° reads 0 and one between about 3.6° and 6.2° reads 5.07°.</p>"
        )
    return (
        "<p class='note'>Angles are computed in float32 from float32 copies of the states. The paper's scripts "
        "compute the cosine in bf16, so their θ reads 0 below about 3.6° and 5.07° up to about 6.2° "
        "(hidden_states.angle_precision: paper_bf16 reproduces that).</p>"
    )


def models_caption(summaries: dict[str, dict], mid: list[float]) -> str:
    rule = next(iter(summaries.values()))["bulk_rule"] if summaries else {}
    return (
        f"Per model: middle-layer means (relative depth {mid[0]:g}–{mid[1]:g}) of θ and θ^Δ, the share of tokens in "
        f"the smooth bulk (rule: robust distance ≤ {rule.get('max_robust_distance')} in the space of the first "
        f"{rule.get('n_components')} principal components of the token's θ profile; paper: "
        f"{SMOOTH_BULK_PERCENT.text} %), and the compositional-assembly test on the paper's loss variant: the "
        "relative depth from which a token keeps ≥ 90 % of its total loss improvement (median over improving "
        "tokens), and the share of tokens that get there by half depth. A hierarchy of layers would finish most "
        "tokens early; ensemble averaging predicts gradual gains up to the last layers."
    )


GROUP_HEADERS = {
    "model": "Model",
    "group": "Group",
    "n_tokens": "Tokens",
    "share": "Share",
    "share_position_0": "At position 0",
    "share_position_lt_4": "At positions < 4",
    "share_word": "Words",
    "share_punctuation": "Punctuation",
    "share_space": "Spaces",
    "share_newline": "Newlines",
    "share_digit": "Digits",
}


def groups_html(groups: dict[str, pd.DataFrame]) -> str:
    """Two tables that each fit the page: what kind of tokens each group holds (shares), and its most
    frequent tokens."""
    if not groups:
        return ""
    g = pd.concat(groups.values(), ignore_index=True)
    kinds = g[[c for c in GROUP_HEADERS if c in g]].rename(columns=GROUP_HEADERS)
    parts = [
        table_html(
            kinds,
            "What the tokens of each group are: the group's share of all tokens, and within the group the "
            "share at the first position, at positions < 4 and by kind of token.",
            float_format="{:.3g}",
        )
    ]
    if "top_tokens" in g:
        top = g.loc[g["top_tokens"].notna(), ["model", "group", "top_tokens"]]
        top = top.rename(
            columns={"model": "Model", "group": "Group", "top_tokens": "Most frequent tokens (×count)"}
        )
        table = table_html(top, "The most frequent tokens of each group.")
        parts.append(table.replace("<td>", "<td style='text-align:left'>"))  # prose, not numbers
    return "\n".join(parts)


COMPARISONS_CAPTION = (
    "Every comparison of this section with the paper (comparisons.csv, rule hidden_states_compare): the "
    "paper's statement, this run's value and how its error was made, the test and the verdict."
)


# ----------------------------------------------------------------------------------------------- render


def render(
    tables: dict[str, pd.DataFrame],
    groups: dict[str, pd.DataFrame],
    samples: dict[str, pd.DataFrame],
    summaries: dict[str, dict],
    comparisons: pd.DataFrame,
    figures: Figures,
) -> tuple[str, list[dict]]:
    """HTML body and headline rows (the comparison records marked headline) of the section; the figures
    are written through ``figures``."""
    mid = next(iter(summaries.values()))["middle"] if summaries else [0.25, 0.75]
    parts = [
        INTRO,
        figures.html(angles_figure(tables, mid), "angles", ANGLES_CAPTION),
        figures.html(norm_progress_loss_figure(tables), "norm_progress_loss", LOSS_CAPTION),
        mask_note(summaries),
        precision_note(summaries),
        table_html(
            models_table(summaries).rename(columns=lambda c: c[0].upper() + c[1:] if c[0].isascii() else c),
            models_caption(summaries, mid),
        ),
        figures.html(profiles_figure(samples, summaries), "angle_profiles", PROFILES_CAPTION),
        groups_html(groups),
    ]
    fig = improvement_figure(summaries)
    if fig is not None:
        parts.append(figures.html(fig, "improvement_depth", IMPROVEMENT_CAPTION))
    parts.append("<h3>Comparisons with the paper</h3>" + comparisons_html(comparisons, COMPARISONS_CAPTION))
    return "\n".join(p for p in parts if p), headline_records(comparisons)


def hidden_states_section(
    inputs: dict[str, str],
    models: list[str],
    *,
    html: str | Path,
    headline: str | Path,
    layers: str | Path,
    models_csv: str | Path,
    figures: str | Path,
) -> None:
    """Rule ``hidden_states_section``: read each model's statistics (``inputs["<kind>_<model>"]``), write the
    joined layer table and the models table (CSV), the figures (PNG + caption) and the section."""
    tables, groups, samples, summaries = {}, {}, {}, {}
    for m in models:
        tables[m], groups[m], samples[m], summaries[m] = read_model_outputs(
            inputs[f"layers_{m}"], inputs[f"groups_{m}"], inputs[f"sample_{m}"], inputs[f"summary_{m}"]
        )
    write_table(pd.concat(tables.values(), ignore_index=True), layers)
    write_table(models_table(summaries), models_csv)
    comparisons = read_comparisons(inputs["comparisons"], "hidden_states_compare")
    body, rows = render(tables, groups, samples, summaries, comparisons, Figures(figures))
    write_section(html, headline, "hidden_states", TITLE, body, rows)
