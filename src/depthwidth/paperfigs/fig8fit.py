"""The width law L = A / m^α + B_g refitted on Fig. 8b's points (losses = read model part + the notebook's
offsets B_g).

- ``fit_law``: the one call into a fitter (``depthwidth.lm_head.width_fit.fit_width_law``, lmfit least
  squares with standard errors), so the fitting layer can be re-pointed in one place.
- ``notebook_fit``: the paper's procedure as its notebook ran it (torch Adam, 20,000 steps, the same
  learning rates and start: A = 500, B = 1, α = 1), on our points.
- ``stationarity``: per group, the mean of (A/m^α − model part) at the printed α, A; a converged fit has
  every group's mean at 0, so this checks the reading against the printed fit.
- ``refits``: converged fit with SE, a bootstrap over models, per-family fits and leave-one-family-out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from depthwidth.lm_head.width_fit import fit_width_law


def fit_law(m, loss, group) -> dict:
    return fit_width_law(m, loss, group)


def losses(points: pd.DataFrame, offsets: dict) -> pd.DataFrame:
    """Fig. 8b's points with their group and loss L = model part + B_g (the notebook's printed offsets)."""
    out = points.copy()
    out["group"] = out["family"] + " / " + out["dataset"]
    missing = sorted(set(out["group"]) - set(offsets))
    if missing:
        raise ValueError(f"no offset B_g printed for groups {missing}")
    out["loss"] = out["model_part"] + out["group"].map(offsets)
    return out


def notebook_fit(df: pd.DataFrame, groups: list[str], steps: int = 20000) -> dict:
    """The notebook's fit: mean squared error over all points, Adam (lr 1 for A, 1e-3 for B and α)."""
    import torch

    g = torch.tensor([groups.index(x) for x in df["group"]])
    m = torch.tensor(df["m"].to_numpy(), dtype=torch.float32)
    y = torch.tensor(df["loss"].to_numpy(), dtype=torch.float32)
    A = torch.nn.Parameter(torch.tensor([500.0]))
    B = torch.nn.Parameter(torch.ones(len(groups)))
    alpha = torch.nn.Parameter(torch.tensor([1.0]))
    opt = torch.optim.Adam(
        [{"params": A, "lr": 1.0}, {"params": B, "lr": 0.001}, {"params": alpha, "lr": 0.001}]
    )
    for _ in range(steps):
        opt.zero_grad()
        loss = ((A / m.pow(alpha) + B[g] - y) ** 2).mean()
        loss.backward()
        opt.step()
    return {
        "alpha": float(alpha.item()),
        "A": float(A.item()),
        "final_loss": float(loss.item()),
        "B": dict(zip(groups, (float(v) for v in B.detach()))),
    }


def stationarity(df: pd.DataFrame, alpha: float, A: float) -> pd.DataFrame:
    r = df["model_part"] - A / df["m"] ** alpha
    return (
        r.groupby(df["group"])
        .agg(["mean", "count"])
        .rename(columns={"mean": "mean_residual", "count": "n"})
        .reset_index()
    )


def refits(df: pd.DataFrame, n_boot: int = 200, seed: int = 0) -> pd.DataFrame:
    rows = []

    def row(name, sub, **extra):
        f = fit_law(sub["m"], sub["loss"], sub["group"])
        rows.append(
            {
                "subset": name,
                "n_points": len(sub),
                "n_models": sub["model"].nunique(),
                "alpha": f.get("alpha", np.nan),
                "alpha_se": f.get("alpha_err", np.nan),
                "A": f.get("A", np.nan),
                "status": f["status"],
                **extra,
            }
        )
        return f

    row("all", df)
    models = df["model"].unique()
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(n_boot):
        pick = rng.choice(models, len(models))
        sub = pd.concat([df[df["model"] == mdl] for mdl in pick])
        f = fit_law(sub["m"], sub["loss"], sub["group"])
        if f["status"] == "ok":
            boots.append(f["alpha"])
    rows[0].update(
        {
            "boot_lo": float(np.percentile(boots, 2.5)),
            "boot_hi": float(np.percentile(boots, 97.5)),
            "n_boot": len(boots),
        }
    )
    for fam in sorted(df["family"].unique()):
        row(fam, df[df["family"] == fam])
    for fam in sorted(df["family"].unique()):
        row(f"without {fam}", df[df["family"] != fam])
    return pd.DataFrame(rows)
