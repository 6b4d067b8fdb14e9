"""Statistics of per-token metrics: per-layer quantiles, middle-layer means, token clusters, and the
compositional-assembly test.

Relative depth of each metric's column ``l`` (``L`` blocks), used on every x axis:

- states (``norm``, ``progress``, ``loss_logit_lens``): ``l / L``;
- transitions ``θ_l`` (``theta``): ``(l + 1/2) / L``, the midpoint of the two states it compares;
- ``θ^Δ_l`` (``theta_dh``): ``(l + 1) / L``, the state between the two updates it compares;
- ``angle_to_last``: ``l / L``;
- ``loss_last_block``: ``(l + 1) / L``: column ``l`` is a model that keeps ``l + 1`` blocks.
"""

from __future__ import annotations

import string
from dataclasses import dataclass

import numpy as np
import pandas as pd

METRICS = ("theta", "theta_dh", "norm", "angle_to_last", "progress", "loss_logit_lens", "loss_last_block")
UNITS = {"theta": "rad", "theta_dh": "rad", "norm": "model units", "angle_to_last": "rad", "progress": "1",
         "loss_logit_lens": "nats", "loss_last_block": "nats"}


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


def layer_table(tensors: dict, n_layers: int, model: str,
                quantiles: tuple[float, ...] = (0.05, 0.25, 0.5, 0.75, 0.95)) -> pd.DataFrame:
    """One row per (metric, layer column): n_tokens, mean, std and the quantiles of the metric."""
    rows = []
    for m in METRICS:
        if m not in tensors:
            continue
        x = np.asarray(tensors[m], dtype=np.float64)
        layers = column_layers(tensors, m)
        depth = rel_depth(m, x.shape[1], n_layers, layers)
        qs = np.quantile(x, quantiles, axis=0) if x.shape[0] else np.full((len(quantiles), x.shape[1]), np.nan)
        for l in range(x.shape[1]):
            row = {"model": model, "metric": m, "unit": UNITS[m],
                   "layer": int(layers[l]) if layers is not None else l, "rel_depth": depth[l],
                   "n_tokens": x.shape[0], "mean": x[:, l].mean(), "std": x[:, l].std()}
            row.update({f"q{round(q * 100):02d}": qs[i, l] for i, q in enumerate(quantiles)})
            rows.append(row)
    return pd.DataFrame(rows)


def middle_mask(depth: np.ndarray, middle: tuple[float, float]) -> np.ndarray:
    return (depth >= middle[0]) & (depth <= middle[1])


def middle_means(tensors: dict, n_layers: int, middle: tuple[float, float] = (0.25, 0.75)) -> dict[str, float]:
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
    """Euclidean norm of robust z-scores (median / 1.4826·MAD per component): (N, k) -> (N,)."""
    med = np.median(scores, axis=0)
    mad = 1.4826 * np.median(np.abs(scores - med), axis=0)
    mad = np.where(mad > 0, mad, scores.std(axis=0) + 1e-12)
    return np.sqrt((((scores - med) / mad) ** 2).sum(axis=1))


def kmeans(x: np.ndarray, k: int, seed: int = 0, iters: int = 50) -> np.ndarray:
    """Plain k-means (k-means++ start) on rows of ``x``; returns labels (N,) ordered by cluster size."""
    rng = np.random.default_rng(seed)
    n = len(x)
    k = min(k, n)
    centres = [x[rng.integers(n)]]
    for _ in range(1, k):
        d2 = np.min(((x[:, None, :] - np.array(centres)[None]) ** 2).sum(-1), axis=1)
        p = d2 / d2.sum() if d2.sum() > 0 else None
        centres.append(x[rng.choice(n, p=p)])
    c = np.array(centres)
    labels = np.zeros(n, dtype=int)
    for _ in range(iters):
        labels_new = np.argmin(((x[:, None, :] - c[None]) ** 2).sum(-1), axis=1)
        if (labels_new == labels).all() and _ > 0:
            break
        labels = labels_new
        for j in range(k):
            if (labels == j).any():
                c[j] = x[labels == j].mean(axis=0)
    sizes = np.bincount(labels, minlength=k)
    remap = np.empty(k, dtype=int)
    remap[np.argsort(-sizes, kind="stable")] = np.arange(k)
    return remap[labels]


def token_clusters(theta: np.ndarray, n_components: int = 2, max_distance: float = 6.0, n_clusters: int = 3,
                   seed: int = 0) -> Clusters:
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


def describe_groups(mask_groups: dict[str, np.ndarray], position: np.ndarray, token_id: np.ndarray,
                    strings: dict[int, str], top: int = 8) -> pd.DataFrame:
    """What the tokens of each group are: share at position 0, at positions < 4, by token kind, top tokens."""
    kinds_all = np.array([token_kind(strings.get(int(t), "")) for t in token_id]) if len(token_id) else np.array([])
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


def compositional_test(loss: np.ndarray, depth: np.ndarray, fraction: float = 0.9,
                       early: float = 0.5) -> dict[str, float]:
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
        "share_of_mean_gain_after_early": float((at_early - mean_curve[-1]) / total) if total > 0 else float("nan"),
        "fraction": fraction,
        "early": early,
    }
