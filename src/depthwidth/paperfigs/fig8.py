"""Fig. 8a of the superposition paper read off its vector PDF: the mean square overlap of the normalised
LM-head rows of each LLM against 1/m, one opaque circle per model, colour = family.

How it is read: the two panels' frames are found from their spines; the tick labels are glyph outlines,
so the major ticks take the values printed beside them in the figure (10^-4, 10^-3 on x; 10^-4 … 10^-1
on y of panel a), matched in order, and every minor tick (2…9 × 10^k) checks the map. A marker is a
filled circle of one of matplotlib's first four colours (C0 opt, C1 Qwen, C2 gpt2, C3 pythia) with its
outline ring; its x maps to 1/m, which identifies the width exactly; the model of that family and width
is then the one with that width (two pairs share a width: Qwen2.5-14B/32B, Pythia-1b/1.4b; which circle
is which cannot be told from the figure, so they are named as a pair).

- ``read_fig8a``: the points as a DataFrame, with the axes' tick residuals.
- ``overlap_fits``: the slope of log overlap on log(1/m), all models and per family, with its OLS error and a
  bootstrap over models.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from depthwidth.laws.loglog import power_law_fit
from depthwidth.laws.resample import resample_indices
from depthwidth.paperfigs.axes import calibrate, find_frames
from depthwidth.paperfigs.marks import find_markers, to_table
from depthwidth.paperfigs.vector import read_page

#: matplotlib's C0…C3 as written in the PDF, by family (the notebook's model_classes order)
FAMILY_COLORS = {
    "opt": (0.121582, 0.466553, 0.705078),
    "Qwen": (1.0, 0.498047, 0.0549011),
    "gpt2": (0.172607, 0.626953, 0.172607),
    "pythia": (0.839844, 0.152832, 0.156982),
}
#: major tick labels of panel a as printed (outlines in the PDF), in increasing position
FIG8A_LABELS = {"x": [1e-4, 1e-3], "y": [1e-4, 1e-3, 1e-2, 1e-1]}
#: panel b (loss model part vs m)
FIG8B_LABELS = {"x": [1e3, 1e4], "y": [1e-1, 1e0]}
N_MODELS = 27


def llm_widths() -> pd.DataFrame:
    """The 27 models with family, m (hidden width) and the LM head's width (llm_widths.yaml)."""
    text = resources.files("depthwidth.paperfigs").joinpath("llm_widths.yaml").read_text(encoding="utf-8")
    df = pd.DataFrame(yaml.safe_load(text)["models"])
    df["lm_head_m"] = df.get("lm_head_m", pd.Series(dtype=float)).fillna(df["m"]).astype(int)
    return df


def read_fig8a(pdf: str | Path) -> tuple[pd.DataFrame, dict]:
    """The overlap points of Fig. 8a and a summary (counts, tick residuals, unmatched models)."""
    shapes = read_page(pdf)
    frames = find_frames(shapes)
    if len(frames) != 2:
        raise ValueError(
            f"{pdf}: expected the two panels of Fig. 8, found {len(frames)} axes frames {frames}"
        )
    frame = min(frames, key=lambda f: f[0])
    xa = calibrate(shapes, frame, "bottom", "log", FIG8A_LABELS["x"])
    ya = calibrate(shapes, frame, "left", "log", FIG8A_LABELS["y"])
    marks = find_markers(shapes, frame, colors=list(FAMILY_COLORS.values()))
    rows = to_table(marks, xa, ya, how="vector circle, label values given, minor ticks checked")
    models = llm_widths()
    out = []
    for r, mk in zip(rows, marks):
        fam = next(
            f for f, c in FAMILY_COLORS.items() if np.max(np.abs(np.subtract(c, mk["fill_color"]))) < 0.02
        )
        inv_m = r["x"]
        cand = models[(models["family"] == fam)]
        width = int(cand["lm_head_m"].iloc[int(np.argmin(np.abs(1 / cand["lm_head_m"] - inv_m)))])
        ids = cand.loc[cand["lm_head_m"] == width, "id"].tolist()
        out.append(
            {
                "family": fam,
                "model": " | ".join(ids),
                "m": width,
                "inv_m": inv_m,
                "inv_m_rel_err": abs(inv_m * width - 1),
                "mean_sq_overlap": r["y"],
                **{
                    k: r[k]
                    for k in ("cx", "cy", "fill_color", "how", "x_tick_residual_pt", "y_tick_residual_pt")
                },
            }
        )
    df = pd.DataFrame(out).sort_values(["family", "m", "mean_sq_overlap"]).reset_index(drop=True)
    # a pair of models of one width: two circles expected at that width
    found_models = set()
    for (fam, m), g in df.groupby(["family", "m"]):
        ids = models[(models["family"] == fam) & (models["lm_head_m"] == m)]["id"].tolist()
        found_models.update(ids[: len(g)])
    missing = [i for i in models["id"] if i not in found_models]
    summary = {
        "expected": N_MODELS,
        "found": len(df),
        "missing": missing,
        "x_axis": {"n_ticks": xa.n_ticks, "residual_pt": xa.residual_pt, "residual_rel": xa.residual_rel},
        "y_axis": {"n_ticks": ya.n_ticks, "residual_pt": ya.residual_pt, "residual_rel": ya.residual_rel},
        "max_inv_m_rel_err": float(df["inv_m_rel_err"].max()),
    }
    return df, summary


def overlap_fits(df: pd.DataFrame, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Slope of log(mean square overlap) on log(1/m), for all models and each family: the OLS slope and
    its standard error (``depthwidth.laws.loglog.power_law_fit``), and for all models a bootstrap over
    models (``depthwidth.laws.resample``: one point per model, so the rows are the models; percentile 95 %
    interval). The paper's claim, overlaps ∝ 1/m, is slope 1."""
    rows = []
    rng = np.random.default_rng(seed)
    for name, g in [("all", df), *df.groupby("family")]:
        fit = power_law_fit(g["m"].to_numpy(float), g["mean_sq_overlap"].to_numpy(float))
        row = {
            "subset": name,
            "n_points": fit["n_points"],
            "n_widths": fit["n_x"],
            "slope": fit["exponent"],
            "slope_se": fit["stderr"],
        }
        if name == "all":
            m, y = g["m"].to_numpy(float), g["mean_sq_overlap"].to_numpy(float)
            boots = []
            for _ in range(n_boot):
                i = resample_indices(len(m), rng)
                if len(np.unique(m[i])) >= 3:
                    boots.append(power_law_fit(m[i], y[i])["exponent"])
            row["boot_lo"], row["boot_hi"] = (float(v) for v in np.percentile(boots, [2.5, 97.5]))
            row["n_boot"] = len(boots)
            row["boot_sd"] = float(np.std(boots, ddof=1))
        rows.append(row)
    # leave one family out
    for fam in sorted(df["family"].unique()):
        g = df[df["family"] != fam]
        fit = power_law_fit(g["m"].to_numpy(float), g["mean_sq_overlap"].to_numpy(float))
        rows.append(
            {
                "subset": f"without {fam}",
                "n_points": fit["n_points"],
                "n_widths": fit["n_x"],
                "slope": fit["exponent"],
                "slope_se": fit["stderr"],
            }
        )
    return pd.DataFrame(rows)
