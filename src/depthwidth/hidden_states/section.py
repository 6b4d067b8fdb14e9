"""Per-model statistics files, figures across models, and the report section of the hidden-states stage."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from .extract import load_token_metrics
from .stats import (
    column_layers,
    compositional_test,
    describe_groups,
    improvement_depth,
    layer_table,
    middle_means,
    rel_depth,
    token_clusters,
)

PAPER_BULK_PERCENT = 99.6
_P0 = PAPER_BULK_PERCENT / 100


def model_statistics(metrics_path: str | Path, model: str, *, middle: tuple[float, float] = (0.25, 0.75),
                     quantiles: tuple[float, ...] = (0.05, 0.25, 0.5, 0.75, 0.95), n_components: int = 2,
                     max_distance: float = 6.0, n_clusters: int = 3, improvement_fraction: float = 0.9,
                     early_depth: float = 0.5, sample_tokens: int = 20000, seed: int = 0,
                     ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """Everything the report needs about one model, from its per-token file.

    Returns (layer table, token groups table, token sample with PC scores, summary dict).
    """
    t, summary, strings = load_token_metrics(metrics_path)
    L = int(summary["n_layers"])
    table = layer_table(t, L, model, quantiles)
    mids = middle_means(t, L, middle)
    theta = t["theta"].double().numpy()
    cl = token_clusters(theta, n_components=n_components, max_distance=max_distance, n_clusters=n_clusters,
                        seed=seed)
    pos = t["position"].numpy()
    tok = t["token_id"].numpy()
    groups = {"all": np.ones(len(pos), bool), "smooth bulk": cl.bulk, "outliers": ~cl.bulk}
    for j in range(int(cl.labels.max()) + 1 if len(cl.labels) else 0):
        if j > 0:  # cluster 0 is the bulk, already a group
            groups[f"outlier cluster {j}"] = cl.labels == j
    gtab = describe_groups(groups, pos, tok, strings)
    gtab.insert(0, "model", model)
    # Mean angle profile of each group, to show how the outliers' profiles differ.
    profiles = {name: theta[m].mean(axis=0).tolist() if m.any() else [] for name, m in groups.items()}
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(len(pos), size=min(sample_tokens, len(pos)), replace=False))
    # Keep every outlier in the sample: they are the point of the scatter plot.
    idx = np.union1d(idx, np.flatnonzero(~cl.bulk))
    sample = pd.DataFrame({"model": model, "doc_index": t["doc_index"].numpy()[idx], "position": pos[idx],
                           "token": [strings.get(int(i), "") for i in tok[idx]], "bulk": cl.bulk[idx],
                           "cluster": cl.labels[idx], "robust_distance": cl.distance[idx]})
    for j in range(cl.scores.shape[1]):
        sample[f"pc{j + 1}"] = cl.scores[idx, j]
    n = len(pos)
    share = float(cl.bulk.mean()) if n else float("nan")
    out = {
        "model": model, "extraction": summary, "n_tokens": n, "n_layers": L, "middle": list(middle),
        "middle_means_rad": mids, "bulk_share": share,
        # Binomial standard error; the paper's share sets a floor so that 0 outliers in a small sample
        # (variance p(1-p) = 0) does not claim infinite precision.
        "bulk_share_err": math.sqrt(max(share * (1 - share), _P0 * (1 - _P0)) / n) if n else float("nan"),
        "bulk_rule": {"n_components": n_components, "max_robust_distance": max_distance,
                      "pca_explained": cl.explained.tolist()},
        "group_profiles_rad": profiles,
        "theta_rel_depth": rel_depth("theta", theta.shape[1], L).tolist(),
    }
    for key in ("loss_last_block", "loss_logit_lens"):
        if key in t:
            loss = t[key].double().numpy()
            depth = rel_depth(key, loss.shape[1], L, column_layers(t, key))
            out[f"compositional_{key}"] = compositional_test(loss, depth, improvement_fraction, early_depth)
            d = improvement_depth(loss, depth, improvement_fraction)
            hist, edges = np.histogram(d[~np.isnan(d)], bins=np.linspace(0, 1, 21))
            out[f"improvement_depth_hist_{key}"] = {"counts": hist.tolist(), "edges": edges.tolist()}
    return table, gtab, sample, out


def models_table(summaries: dict[str, dict]) -> pd.DataFrame:
    """One row per model: middle-layer angles (degrees), smooth-bulk share, compositional test."""
    deg = 180.0 / math.pi
    rows = []
    for name, s in summaries.items():
        comp = s.get("compositional_loss_last_block", {})
        rows.append({"model": name, "layers": s["n_layers"], "tokens": s["n_tokens"],
                     "θ mid (deg)": s["middle_means_rad"].get("theta", float("nan")) * deg,
                     "θ^Δ mid (deg)": s["middle_means_rad"].get("theta_dh", float("nan")) * deg,
                     "smooth bulk (%)": 100 * s["bulk_share"],
                     "PC1, PC2 var. (%)": ", ".join(f"{100 * v:.0f}" for v in s["bulk_rule"]["pca_explained"]),
                     "median depth of 90 % gain": comp.get("median_depth_90", float("nan")),
                     f"tokens done by {comp.get('early', 0.5):g}·L (%)": 100 * comp.get("share_done_by_early",
                                                                                        float("nan"))})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------- figures


def _curves(ax, tables: dict[str, pd.DataFrame], metric: str, scale: float = 1.0, band: bool = True) -> None:
    for name, tab in tables.items():
        s = tab[tab.metric == metric]
        if s.empty:
            continue
        (line,) = ax.plot(s.rel_depth, s["mean"] * scale, marker="o", ms=3, label=name)
        if band and "q25" in s:
            ax.fill_between(s.rel_depth, s.q25 * scale, s.q75 * scale, color=line.get_color(), alpha=0.15)


def render(tables: dict[str, pd.DataFrame], groups: dict[str, pd.DataFrame], samples: dict[str, pd.DataFrame],
           summaries: dict[str, dict]) -> tuple[str, list[dict]]:
    """HTML body and headline rows of the section, from each model's statistics."""
    import matplotlib.pyplot as plt

    from depthwidth.report import figure_html, headline_row, table_html

    deg = 180.0 / math.pi
    parts: list[str] = []
    models = list(tables)
    mid = summaries[models[0]]["middle"] if models else [0.25, 0.75]
    parts.append(
        "<p>Hidden states h<sub>0</sub>…h<sub>L</sub> of each model on FineWeb documents, reduced on the fly to "
        "per-token, per-layer metrics (raw states are not kept). θ<sub>l</sub> is the angle between consecutive "
        "hidden states, θ<sup>Δ</sup><sub>l</sub> the angle between consecutive updates Δh<sub>l</sub> = "
        "h<sub>l+1</sub> − h<sub>l</sub>. The paper finds small, nearly constant θ and θ<sup>Δ</sup> near 90° in "
        "the middle layers of most tokens: layers make similar, weakly correlated small updates, as an ensemble "
        "would. Tokens count only where they and their successor are real (unpadded) tokens.</p>")

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), constrained_layout=True)
    _curves(axes[0], tables, "theta", deg)
    _curves(axes[1], tables, "theta_dh", deg)
    axes[0].set(xlabel="relative depth l/L", ylabel="θ_l = angle(h_l, h_{l+1}) (degrees)", title="rotation per layer")
    axes[1].set(xlabel="relative depth l/L", ylabel="θ^Δ_l = angle(Δh_l, Δh_{l+1}) (degrees)",
                title="angle between consecutive updates")
    axes[1].axhline(90, color="grey", lw=0.8, ls="--")
    for ax in axes:
        ax.axvspan(*mid, color="grey", alpha=0.08)
        ax.legend(fontsize=8)
    parts.append(figure_html(fig, "θ_l and θ^Δ_l against relative depth, one curve per model (mean over tokens; "
                                  "band: 25–75 % quantiles; grey span: the middle layers averaged in the table; "
                                  "dashed: 90°, uncorrelated updates)."))

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6), constrained_layout=True)
    _curves(axes[0], tables, "norm", band=False)
    axes[0].set_yscale("log")
    axes[0].set(xlabel="relative depth l/L", ylabel="‖h_l‖ (model units, log scale)", title="hidden-state norm")
    _curves(axes[1], tables, "progress", band=True)
    axes[1].plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--", label="uniform progress")
    axes[1].set(xlabel="relative depth l/L", ylabel="s_l = ⟨h_l−h_0, h_L−h_0⟩/‖h_L−h_0‖² (1)",
                title="progress towards h_L")
    _curves(axes[2], tables, "loss_last_block", band=False)
    for name, tab in tables.items():
        s = tab[tab.metric == "loss_logit_lens"]
        if not s.empty:
            axes[2].plot(s.rel_depth, s["mean"], ls=":", lw=1, label=f"{name} (logit lens)")
    axes[2].set(xlabel="relative depth l/L", ylabel="next-token loss (nats)", title="loss by depth")
    for ax in axes:
        ax.legend(fontsize=7)
    parts.append(figure_html(fig, "Left: mean norm of h_l. Middle: progress s_l of h_l along h_L − h_0 (dashed: "
                                  "equal steps). Right: mean next-token loss when decoding after l layers: solid, "
                                  "the paper's variant (h_l through the last block, final norm and LM head); dotted, "
                                  "the plain logit lens (final norm and LM head only). Encoders have no loss."))

    rows = models_table(summaries)
    rule = summaries[models[0]]["bulk_rule"] if models else {}
    parts.append(table_html(rows, (
        f"Per model: middle-layer means (relative depth {mid[0]:g}–{mid[1]:g}) of θ and θ^Δ, the share of tokens in "
        f"the smooth bulk (rule: robust distance ≤ {rule.get('max_robust_distance')} in the space of the first "
        f"{rule.get('n_components')} principal components of the token's θ profile; paper: {PAPER_BULK_PERCENT} %), "
        "and the compositional-assembly test on the paper's loss variant: the relative depth from which a token "
        "keeps ≥ 90 % of its total loss improvement (median over improving tokens), and the share of tokens "
        "that get there by half depth. A hierarchy of layers would finish most tokens early; ensemble "
        "averaging predicts gradual gains up to the last layers.")))

    n = len(models)
    fig, axes = plt.subplots(2, max(n, 1), figsize=(4.2 * max(n, 1), 7), squeeze=False,
                             constrained_layout=True)
    for j, name in enumerate(models):
        smp = samples[name]
        ax = axes[0, j]
        if "pc2" in smp:
            b = smp[smp.bulk]
            o = smp[~smp.bulk]
            ax.scatter(b.pc1, b.pc2, s=2, alpha=0.3, label=f"smooth bulk ({100 * summaries[name]['bulk_share']:.1f} %)")
            ax.scatter(o.pc1, o.pc2, s=6, color="C3", label="outliers")
            ax.set(xlabel="PC1 of θ profile (rad)", ylabel="PC2 of θ profile (rad)", title=name)
            ax.legend(fontsize=7)
        ax = axes[1, j]
        s = summaries[name]
        x = s["theta_rel_depth"]
        for g, style in (("smooth bulk", "-"), ("outliers", "--")):
            prof = s["group_profiles_rad"].get(g) or []
            if prof:
                ax.plot(x, np.asarray(prof) * deg, ls=style, label=g)
        ax.set(xlabel="relative depth l/L", ylabel="mean θ_l (degrees)", title=f"{name}: angle profiles")
        ax.legend(fontsize=7)
    parts.append(figure_html(fig, "Top: each token's θ profile projected on its first two principal components "
                                  "(a random sample of the bulk, every outlier). Bottom: mean θ_l profile of "
                                  "bulk and outlier tokens."))
    if groups:
        g = pd.concat(groups.values(), ignore_index=True)
        keep = [c for c in ("model", "group", "n_tokens", "share", "share_position_0", "share_position_lt_4",
                            "share_word", "share_punctuation", "share_space", "share_newline", "share_digit",
                            "top_tokens") if c in g]
        parts.append(table_html(g[keep], "What the tokens of each group are: share at the first position, at "
                                         "positions < 4, by kind of token, and the most frequent tokens."))

    hist_models = [m for m in models if "improvement_depth_hist_loss_last_block" in summaries[m]]
    if hist_models:
        fig, ax = plt.subplots(figsize=(5.5, 3.6), constrained_layout=True)
        for name in hist_models:
            h = summaries[name]["improvement_depth_hist_loss_last_block"]
            c = np.asarray(h["counts"], float)
            e = np.asarray(h["edges"])
            ax.step(e[1:], c / max(c.sum(), 1), where="pre", label=name)
        ax.set(xlabel="relative depth reached with ≥ 90 % of the token's loss gain", ylabel="share of tokens",
               title="compositional-assembly test")
        ax.legend(fontsize=8)
        parts.append(figure_html(fig, "Distribution over improving tokens of the relative depth after which the "
                                      "next-token loss (paper's last-block variant) stays within 10 % of its total "
                                      "improvement. Mass near 1 means gradual improvement to the end (ensemble "
                                      "averaging); mass at small depths would mean early completion (hierarchy)."))

    headline = []
    for name in models:
        s = summaries[name]
        ext = s.get("extraction", {})
        share = 100 * s["bulk_share"]
        err = 100 * s["bulk_share_err"]
        from depthwidth.report import agree_within

        headline.append(headline_row(
            f"tokens in the smooth bulk, {name} (%)", f"{PAPER_BULK_PERCENT} % (Pythia, FineWeb)", share, err,
            agree_within(share, err, PAPER_BULK_PERCENT, 0.0), "hidden_states",
            f"{s['n_tokens']} tokens of {ext.get('n_docs')} documents ≤ {ext.get('max_tokens')} tokens (the paper: "
            f"1024, so first positions weigh less there); rule: robust PC distance ≤ "
            f"{s['bulk_rule']['max_robust_distance']}"))
        headline.append(headline_row(
            f"middle-layer mean θ, {name} (deg)", "small and nearly constant in the middle layers",
            s["middle_means_rad"].get("theta", float("nan")) * deg, None, None, "hidden_states",
            f"relative depth {mid[0]:g}–{mid[1]:g}; qualitative statement, not compared"))
        headline.append(headline_row(
            f"middle-layer mean θ^Δ, {name} (deg)", "near 90° (weakly correlated updates)",
            s["middle_means_rad"].get("theta_dh", float("nan")) * deg, None, None, "hidden_states",
            "qualitative statement, not compared"))
        comp = s.get("compositional_loss_last_block")
        if comp:
            headline.append(headline_row(
                f"tokens whose loss gain is done by half depth, {name} (%)",
                "few: gradual improvement (ensemble averaging)", 100 * comp["share_done_by_early"], None, None,
                "hidden_states", f"median depth of 90 % gain {comp['median_depth_90']:.2f}·L"))
    return "\n".join(parts), headline


def read_model_outputs(layer_csv: str, groups_csv: str, sample_parquet: str, summary_json: str):
    return (pd.read_csv(layer_csv), pd.read_csv(groups_csv), pd.read_parquet(sample_parquet),
            json.loads(Path(summary_json).read_text()))
