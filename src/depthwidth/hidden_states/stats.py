"""Statistics of per-token metrics: per-layer quantiles, middle-layer means, token clusters, and the
compositional-assembly test; :func:`hidden_states_stats` (rule ``hidden_states_stats``) writes them
for one model.

Relative depth of each metric's column ``l`` (``L`` blocks), used on every x axis:

- states (``norm``, ``progress``, ``loss_logit_lens``): ``l / L``;
- transitions ``θ_l`` (``theta``): ``(l + 1/2) / L``, the midpoint of the two states it compares;
- ``θ^Δ_l`` (``theta_dh``): ``(l + 1) / L``, the state between the two updates it compares;
- ``angle_to_last``: ``l / L``;
- ``loss_last_block``: ``(l + 1) / L``: column ``l`` is a model that keeps ``l + 1`` blocks.
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.cluster.vq import kmeans2
from scipy.stats import median_abs_deviation

from depthwidth.integrity import write_json, write_table
from depthwidth.papers import SMOOTH_BULK_PERCENT

from .extract import load_token_metrics

METRICS = ("theta", "theta_dh", "norm", "angle_to_last", "progress", "loss_logit_lens", "loss_last_block")
UNITS = {
    "theta": "rad",
    "theta_dh": "rad",
    "norm": "model units",
    "angle_to_last": "rad",
    "progress": "1",
    "loss_logit_lens": "nats",
    "loss_last_block": "nats",
}


def rel_depth(metric: str, n_cols: int, n_layers: int, layers=None) -> np.ndarray:
    """Relative depth in [0, 1] of each column of ``metric`` (see the module docstring); ``layers``
    gives the layer of each column when not all were computed (losses with a stride)."""
    l = np.arange(n_cols, dtype=float) if layers is None else np.asarray(layers, dtype=float)
    offset = {"theta": 0.5, "theta_dh": 1.0, "loss_last_block": 1.0}.get(metric, 0.0)
    return (l + offset) / n_layers


def column_layers(tensors: dict, metric: str):
    """Layer index of each column of ``metric`` when stored (``<metric>_layers``), else None."""
    key = f"{metric}_layers"
    return np.asarray(tensors[key]).astype(int) if key in tensors else None


def layer_table(
    tensors: dict, n_layers: int, model: str, quantiles: tuple[float, ...] = (0.05, 0.25, 0.5, 0.75, 0.95)
) -> pd.DataFrame:
    """One row per (metric, layer column): n_tokens, mean, std and the quantiles of the metric."""
    rows = []
    for m in METRICS:
        if m not in tensors:
            continue
        x = np.asarray(tensors[m], dtype=np.float64)
        layers = column_layers(tensors, m)
        depth = rel_depth(m, x.shape[1], n_layers, layers)
        qs = (
            np.quantile(x, quantiles, axis=0) if x.shape[0] else np.full((len(quantiles), x.shape[1]), np.nan)
        )
        for l in range(x.shape[1]):
            row = {
                "model": model,
                "metric": m,
                "unit": UNITS[m],
                "layer": int(layers[l]) if layers is not None else l,
                "rel_depth": depth[l],
                "n_tokens": x.shape[0],
                "mean": x[:, l].mean(),
                "std": x[:, l].std(),
            }
            row.update({f"q{round(q * 100):02d}": qs[i, l] for i, q in enumerate(quantiles)})
            rows.append(row)
    return pd.DataFrame(rows)


def middle_mask(depth: np.ndarray, middle: tuple[float, float]) -> np.ndarray:
    return (depth >= middle[0]) & (depth <= middle[1])


def middle_means(
    tensors: dict, n_layers: int, middle: tuple[float, float] = (0.25, 0.75)
) -> dict[str, float]:
    """Mean over tokens and over the columns whose relative depth lies in ``middle`` (inclusive)."""
    out = {}
    for m in ("theta", "theta_dh", "angle_to_last", "norm"):
        if m not in tensors:
            continue
        x = np.asarray(tensors[m], dtype=np.float64)
        sel = middle_mask(rel_depth(m, x.shape[1], n_layers), middle)
        out[m] = float(x[:, sel].mean()) if sel.any() and x.shape[0] else float("nan")
    return out


# ------------------------------------------------------------------------------------- token clusters


@dataclass
class Clusters:
    """PCA of angle profiles and the smooth-bulk rule.

    ``scores``: (N, k) principal-component scores; ``explained``: (k,) variance fractions;
    ``distance``: (N,) robust distance of each token from the bulk's centre in PC space;
    ``bulk``: (N,) bool, True for tokens in the smooth bulk; ``labels``: (N,) cluster ids (0: bulk).
    """

    scores: np.ndarray
    explained: np.ndarray
    components: np.ndarray
    distance: np.ndarray
    bulk: np.ndarray
    labels: np.ndarray


def pca(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PCA of rows of ``x`` (N, D) through the D×D covariance: (scores (N, k), explained (k,), comps (k, D))."""
    xc = x - x.mean(axis=0)
    cov = xc.T @ xc / max(len(x) - 1, 1)
    w, v = np.linalg.eigh(cov)
    order = np.argsort(w)[::-1][:k]
    comps = v[:, order].T
    # Fix the sign so that results do not flip between runs or BLAS builds.
    comps *= np.where(comps.sum(axis=1, keepdims=True) < 0, -1.0, 1.0)
    explained = w[order] / max(w.sum(), 1e-300)
    return xc @ comps.T, explained, comps


def robust_distance(scores: np.ndarray) -> np.ndarray:
    """Euclidean norm of robust z-scores (median / normal-consistent MAD per component): (N, k) -> (N,).

    A component with zero MAD (more than half the tokens at one value) is scaled by its standard deviation.
    """
    med = np.median(scores, axis=0)
    mad = median_abs_deviation(scores, axis=0, scale="normal")
    mad = np.where(mad > 0, mad, scores.std(axis=0) + 1e-12)
    return np.sqrt((((scores - med) / mad) ** 2).sum(axis=1))


def kmeans(x: np.ndarray, k: int, seed: int = 0, iters: int = 50) -> np.ndarray:
    """k-means (k-means++ start, ``scipy.cluster.vq.kmeans2``) on rows of ``x`` (N, D); returns labels
    (N,) renumbered by cluster size, largest first."""
    k = min(k, len(x))
    _, labels = kmeans2(x, k, iter=iters, minit="++", seed=np.random.default_rng(seed), missing="warn")
    sizes = np.bincount(labels, minlength=k)
    remap = np.empty(k, dtype=int)
    remap[np.argsort(-sizes, kind="stable")] = np.arange(k)
    return remap[labels]


def token_clusters(
    theta: np.ndarray, n_components: int = 2, max_distance: float = 6.0, n_clusters: int = 3, seed: int = 0
) -> Clusters:
    """Cluster tokens by their angle profile θ_l (N, L) in radians.

    The smooth bulk is every token whose robust distance (:func:`robust_distance`) in the space of
    the first ``n_components`` principal components is at most ``max_distance``; for Gaussian scores
    a distance of 6 in 2 components is exceeded by a fraction exp(-18) ≈ 1.5e-8 of tokens, so the
    tokens outside are outliers of the profile's shape, not the tail of the bulk. Cluster 0 is the
    bulk; k-means on the outliers' scores splits them into ``n_clusters - 1`` groups.
    """
    x = np.asarray(theta, dtype=np.float64)
    k = max(1, min(n_components, x.shape[1], max(len(x) - 1, 1)))
    scores, explained, comps = pca(x, k)
    dist = robust_distance(scores)
    bulk = dist <= max_distance
    # k-means over all tokens would split the huge bulk along its noise; instead the bulk is cluster 0
    # and the outliers are grouped among themselves (clusters 1..n_clusters-1, by size).
    labels = np.zeros(len(x), dtype=int)
    out = ~bulk
    if n_clusters > 1 and out.sum() > 0:
        labels[out] = 1 + kmeans(scores[out], n_clusters - 1, seed=seed)
    return Clusters(scores, explained, comps, dist, bulk, labels)


def bulk_share_bootstrap(
    theta: np.ndarray,
    doc_index: np.ndarray,
    resamples: int,
    n_components: int = 2,
    max_distance: float = 6.0,
    seed: int = 0,
) -> np.ndarray:
    """The smooth-bulk share on ``resamples`` resamples over documents: each draws the documents with
    replacement (a document drawn twice brings its tokens twice) and redoes the whole rule (principal
    components, robust distance, threshold). Tokens of one document share its topic and style, so the
    document, not the token, is the independent unit. ``theta`` (N, L) radians; ``doc_index`` (N,)."""
    from depthwidth.laws.resample import resample_indices

    x = np.asarray(theta, dtype=np.float64)
    rng = np.random.default_rng(seed)
    out = np.full(resamples, np.nan)
    if len(x) < 2:
        return out
    k = max(1, min(n_components, x.shape[1], len(x) - 1))
    for b in range(resamples):
        idx = resample_indices(len(x), rng, doc_index)
        scores, _, _ = pca(x[idx], k)
        out[b] = float((robust_distance(scores) <= max_distance).mean())
    return out


_PUNCT = set(string.punctuation) | set("“”‘’—–…«»")


def token_kind(s: str) -> str:
    """Coarse class of a decoded token string: newline, space, punctuation, digit, word or other."""
    if s == "" or s is None:
        return "other"
    if "\n" in s and s.strip() == "":
        return "newline"
    if s.strip() == "":
        return "space"
    t = s.strip()
    if all(ch in _PUNCT for ch in t):
        return "punctuation"
    if t.isdigit():
        return "digit"
    if any(ch.isalpha() for ch in t):
        return "word"
    return "other"


def describe_groups(
    mask_groups: dict[str, np.ndarray],
    position: np.ndarray,
    token_id: np.ndarray,
    strings: dict[int, str],
    top: int = 8,
) -> pd.DataFrame:
    """What the tokens of each group are: share at position 0, at positions < 4, by token kind, top tokens."""
    kinds_all = (
        np.array([token_kind(strings.get(int(t), "")) for t in token_id]) if len(token_id) else np.array([])
    )
    rows = []
    n_all = max(len(position), 1)
    for name, m in mask_groups.items():
        n = int(m.sum())
        row = {"group": name, "n_tokens": n, "share": n / n_all}
        if n:
            row["share_position_0"] = float((position[m] == 0).mean())
            row["share_position_lt_4"] = float((position[m] < 4).mean())
            for kind in ("word", "punctuation", "space", "newline", "digit", "other"):
                row[f"share_{kind}"] = float((kinds_all[m] == kind).mean())
            ids, counts = np.unique(token_id[m], return_counts=True)
            best = np.argsort(-counts, kind="stable")[:top]
            row["top_tokens"] = ", ".join(f"{strings.get(int(ids[i]), '?')!r}×{counts[i]}" for i in best)
        rows.append(row)
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ compositional-assembly test


def improvement_depth(loss: np.ndarray, depth: np.ndarray, fraction: float = 0.9) -> np.ndarray:
    """Per token, the relative depth from which the loss stays within ``1 - fraction`` of its total
    improvement: the first column ``l`` with ``loss_j - loss_last <= (1 - fraction)(loss_0 - loss_last)``
    for every ``j >= l``. ``loss``: (N, C) nats; ``depth``: (C,). NaN where the loss did not improve.

    If layers built a hierarchy, most tokens would reach their final loss early (small values) and
    stop improving; ensemble averaging predicts gradual improvement up to the last layers (values near 1).
    """
    loss = np.asarray(loss, dtype=np.float64)
    total = loss[:, 0] - loss[:, -1]
    gap = loss - loss[:, -1:]
    ok = gap <= (1.0 - fraction) * total[:, None]
    # stays within from l on: reverse cumulative AND
    stays = np.flip(np.logical_and.accumulate(np.flip(ok, axis=1), axis=1), axis=1)
    first = np.argmax(stays, axis=1)
    out = depth[first].astype(float)
    out[total <= 0] = np.nan
    return out


def compositional_test(
    loss: np.ndarray, depth: np.ndarray, fraction: float = 0.9, early: float = 0.5
) -> dict[str, float]:
    """Summary of :func:`improvement_depth`: median, share of improving tokens done by ``early``,
    and the share of the mean loss improvement made after ``early``."""
    d = improvement_depth(loss, depth, fraction)
    ok = ~np.isnan(d)
    mean_curve = np.asarray(loss, dtype=np.float64).mean(axis=0)
    total = mean_curve[0] - mean_curve[-1]
    at_early = np.interp(early, depth, mean_curve)
    return {
        "n_tokens": len(d),
        "share_improving": float(ok.mean()) if len(d) else float("nan"),
        "median_depth_90": float(np.median(d[ok])) if ok.any() else float("nan"),
        "share_done_by_early": float((d[ok] <= early).mean()) if ok.any() else float("nan"),
        "share_of_mean_gain_after_early": float((at_early - mean_curve[-1]) / total)
        if total > 0
        else float("nan"),
        "fraction": fraction,
        "early": early,
    }


# ------------------------------------------------------------------------- one model's statistics


def _token_sample(
    t: dict, cl: Clusters, strings: dict[int, str], model: str, sample_tokens: int, seed: int
) -> pd.DataFrame:
    """A random sample of tokens with their PC scores, plus every outlier (the point of the scatter plot)."""
    pos = t["position"].numpy()
    tok = t["token_id"].numpy()
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(len(pos), size=min(sample_tokens, len(pos)), replace=False))
    idx = np.union1d(idx, np.flatnonzero(~cl.bulk))
    sample = pd.DataFrame(
        {
            "model": model,
            "doc_index": t["doc_index"].numpy()[idx],
            "position": pos[idx],
            "token": [strings.get(int(i), "") for i in tok[idx]],
            "bulk": cl.bulk[idx],
            "cluster": cl.labels[idx],
            "robust_distance": cl.distance[idx],
        }
    )
    for j in range(cl.scores.shape[1]):
        sample[f"pc{j + 1}"] = cl.scores[idx, j]
    return sample


def _loss_summaries(t: dict, n_layers: int, improvement_fraction: float, early_depth: float) -> dict:
    """Compositional test and the histogram of improvement depths, for each stored per-layer loss."""
    out = {}
    for key in ("loss_last_block", "loss_logit_lens"):
        if key in t:
            loss = t[key].double().numpy()
            depth = rel_depth(key, loss.shape[1], n_layers, column_layers(t, key))
            out[f"compositional_{key}"] = compositional_test(loss, depth, improvement_fraction, early_depth)
            d = improvement_depth(loss, depth, improvement_fraction)
            hist, edges = np.histogram(d[~np.isnan(d)], bins=np.linspace(0, 1, 21))
            out[f"improvement_depth_hist_{key}"] = {"counts": hist.tolist(), "edges": edges.tolist()}
    return out


def model_statistics(
    metrics_path: str | Path,
    model: str,
    params: dict,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """Everything the report needs about one model, from its per-token file.

    ``params``: the ``hidden_states.stats`` settings (middle, quantiles, n_components, max_robust_distance,
    n_clusters, improvement_fraction, early_depth, sample_tokens, seed, bootstrap_resamples). Returns (layer table, token
    groups table, token sample with PC scores, summary dict).
    """
    t, summary, strings = load_token_metrics(metrics_path)
    L = int(summary["n_layers"])
    middle = tuple(params["middle"])
    table = layer_table(t, L, model, tuple(params["quantiles"]))
    theta = t["theta"].double().numpy()
    cl = token_clusters(
        theta,
        n_components=params["n_components"],
        max_distance=params["max_robust_distance"],
        n_clusters=params["n_clusters"],
        seed=params["seed"],
    )
    pos = t["position"].numpy()
    groups = {"all": np.ones(len(pos), bool), "smooth bulk": cl.bulk, "outliers": ~cl.bulk}
    for j in range(1, int(cl.labels.max()) + 1 if len(cl.labels) else 0):  # cluster 0 is the bulk
        groups[f"outlier cluster {j}"] = cl.labels == j
    gtab = describe_groups(groups, pos, t["token_id"].numpy(), strings)
    gtab.insert(0, "model", model)
    sample = _token_sample(t, cl, strings, model, params["sample_tokens"], params["seed"])
    n = len(pos)
    share = float(cl.bulk.mean()) if n else float("nan")
    boot = bulk_share_bootstrap(
        theta,
        t["doc_index"].numpy(),
        params["bootstrap_resamples"],
        params["n_components"],
        params["max_robust_distance"],
        params["seed"],
    )
    p0 = SMOOTH_BULK_PERCENT.value / 100
    out = {
        "model": model,
        "extraction": summary,
        "n_tokens": n,
        "n_layers": L,
        "middle": list(middle),
        "middle_means_rad": middle_means(t, L, middle),
        "bulk_share": share,
        # Binomial standard error; the paper's share sets a floor so that 0 outliers in a small sample
        # (variance p(1-p) = 0) does not claim infinite precision.
        "bulk_share_err": math.sqrt(max(share * (1 - share), p0 * (1 - p0)) / n) if n else float("nan"),
        # The share on resamples over documents (rule hidden_states_compare reads its error from them):
        # the binomial error above treats tokens as independent, which tokens of one document are not.
        "bulk_share_bootstrap": {
            "unit": "documents",
            "n_docs": int(len(np.unique(t["doc_index"].numpy()))),
            "shares": boot.tolist(),
        },
        "bulk_rule": {
            "n_components": params["n_components"],
            "max_robust_distance": params["max_robust_distance"],
            "pca_explained": cl.explained.tolist(),
        },
        # Mean angle profile of each group, to show how the outliers' profiles differ.
        "group_profiles_rad": {
            name: theta[m].mean(axis=0).tolist() if m.any() else [] for name, m in groups.items()
        },
        "theta_rel_depth": rel_depth("theta", theta.shape[1], L).tolist(),
    }
    out.update(_loss_summaries(t, L, params["improvement_fraction"], params["early_depth"]))
    return table, gtab, sample, out


def hidden_states_stats(
    metrics_path: str | Path,
    model: str,
    params: dict,
    *,
    layers: str | Path,
    groups: str | Path,
    sample: str | Path,
    summary: str | Path,
) -> dict:
    """Rule ``hidden_states_stats``: :func:`model_statistics` of one model, written atomically to the
    layer table (CSV), token groups (CSV), token sample (parquet) and summary (JSON), each sealed. Returns the summary."""
    table, gtab, smp, out = model_statistics(metrics_path, model, params)
    # sealed with their row counts: rule hidden_states_section checks them before use
    write_table(table, layers)
    write_table(gtab, groups)
    write_table(smp, sample)
    write_json(summary, out, default=float)
    return out
