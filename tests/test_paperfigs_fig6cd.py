"""Figs. 6c and 6d of the superposition paper read off Fig-6-3.pdf (panel c vector circles, panel d an
embedded raster whose column extremes are read), our cells compared with them, and the raster helpers on
synthetic profiles."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _helpers import SHARED_DATA, needs_shared_data

from depthwidth.paperfigs import fig6cd as F

PDF = SHARED_DATA / "superposition_paper" / "figures" / "Fig-6-3.pdf"


@pytest.fixture(scope="module")
def fig6c():
    return F.read_fig6c(PDF)


@pytest.fixture(scope="module")
def fig6d():
    return F.read_fig6d(PDF)


def _plasma_bar(n: int = 201):
    import matplotlib

    cmap = matplotlib.colormaps["plasma"]
    alpha = np.linspace(0.0, 2.0, n)
    return np.array([cmap(a / 2)[:3] for a in alpha]), alpha


@needs_shared_data
def test_fig6c_reads_one_circle_per_cell(fig6c):
    """102 circles, six per α, every (α, m) once; ticks and colour bar exact to 1e-3 pt; α within one
    colour-bar row of its grid value; painted α by α upwards; the values one sees in the figure."""
    df, s = fig6c
    assert s["found"] == s["expected"] == 102 and s["cells"] == 102 and s["duplicates"] == 0
    assert set(s["per_alpha"].values()) == {6} and len(s["per_alpha"]) == 17
    assert s["x_axis"]["n_ticks"] == 11 and s["y_axis"]["n_ticks"] == 3
    assert s["x_axis"]["residual_pt"] < 1e-3 and s["y_axis"]["residual_pt"] < 1e-3
    assert s["colorbar"]["n_ticks"] == 5 and s["colorbar"]["residual_pt"] < 1e-3
    assert s["max_alpha_color_dist"] < 0.02 and s["max_alpha_snap_dist"] < 1.5 * s["alpha_step"]
    assert s["max_m_snap_rel"] < 0.01
    assert s["paint_order"] == list(F.ALPHAS) and s["paint_order_alpha_ascending"]
    # m = 10: the highest circle is purple at about 0.33, the lowest yellow at about 0.08
    m10 = df[df["m"] == 10]
    top, low = m10.loc[m10["value"].idxmax()], m10.loc[m10["value"].idxmin()]
    assert 0.31 < top["value"] < 0.35 and top["alpha"] in (0.375, 0.5)
    assert 0.07 < low["value"] < 0.09 and low["alpha"] >= 1.75
    assert df.loc[df["m"] == 100, "value"].between(0.85, 0.97).all()
    # the tolerance is the scale of the paper's own α-to-α steps
    sp = s["neighbour_spread"]
    assert sp["p90"] <= F.TOL_PHI <= 2 * sp["p90"] and sp["median"] < 0.03


@needs_shared_data
def test_fig6d_reads_the_column_extremes_off_the_raster(fig6d):
    """Panel d is an 842 × 632 image: ticks on whole pixels (residual about half a pixel), 12 column extremes
    read with a column spread under 1.5 px and m within 0.5 %; the band as the figure shows it (m = 10
    across 10^-1, m = 100 below 10^-2, yellow on top); more circles per (α, m) than one."""
    df, s = fig6d
    assert s["raster"]["width"] == 842 and s["raster"]["height"] == 632
    assert s["x_axis"]["n_ticks"] == 11 and s["y_axis"]["n_ticks"] == 12
    assert s["x_axis"]["residual_px"] < 0.6 and s["y_axis"]["residual_px"] < 0.6
    assert s["colorbar"]["n_ticks"] == 5 and s["colorbar"]["residual_pt"] < 0.15
    assert s["found"] == s["expected_extremes"] == 12 and s["hidden"] == []
    assert s["max_y_spread_px"] < 1.5 and s["max_m_read_rel"] < 0.005
    assert sorted(df["m"].unique()) == list(F.MS)
    band = s["band"]
    widths = np.array([np.log(band[m]["hi"] / band[m]["lo"]) for m in F.MS])
    assert (widths > 0.07).all() and (widths < 0.17).all()
    assert widths.min() < F.TOL_LOG_OVERLAP < widths.max()
    assert band[10]["lo"] < 0.1 < band[10]["hi"] and band[100]["hi"] < 0.01
    assert (df.loc[df["extreme"] == "top", "alpha"] >= 1.5).all()
    assert abs(s["guide"]["slope"] + 0.96) < 0.03 and s["guide"]["n_dashes"] >= 15
    ev = s["drawn_per_cell"]
    assert ev["more_than_one_per_alpha"] and ev["layers"] > ev["max_layers_if_one_per_alpha"] + 3
    assert ev["color_dist"] < F.EVIDENCE_DIST


@needs_shared_data
def test_compare_fig6c_judges_cells_by_the_stated_tolerance(fig6c):
    """A cell at the paper's φ_1 agrees, one 0.1 off does not, an m between the paper's is compared with the
    paper interpolated in log m; γ > 0 and off-grid α are left out; seeds are averaged."""
    pts, s = fig6c
    p = pts[pts["alpha"] == 1.5].set_index("m")["value"]
    interp = float(np.interp(np.log(20), np.log([15, 25]), [p[15], p[25]]))
    rows = []
    for seed, eps in ((0, 0.01), (1, -0.01)):
        rows += [
            (1.5, -1.0, 25, seed, p[25] + eps),
            (1.5, -1.0, 39, seed, p[39] + 0.1),
            (1.5, -1.0, 20, seed, interp),
            (1.5, 0.3, 25, seed, 0.0),
            (1.3, -1.0, 25, seed, 0.0),
        ]
    cells = pd.DataFrame(rows, columns=["alpha", "gamma", "m", "seed", "strong_represented_fraction"])
    cmp = F.compare_fig6cd(cells, pts, "strong_represented_fraction", False).set_index("m")
    assert sorted(cmp.index) == [20, 25, 39] and (cmp["gamma"] == -1.0).all()
    assert bool(cmp.loc[25, "agree"]) and cmp.loc[25, "ours"] == pytest.approx(p[25])
    assert cmp.loc[25, "n_seeds"] == 2 and cmp.loc[25, "ours_se"] == pytest.approx(
        0.01 * np.sqrt(2) / np.sqrt(2)
    )
    assert not bool(cmp.loc[39, "agree"]) and cmp.loc[39, "delta"] == pytest.approx(0.1)
    assert bool(cmp.loc[20, "agree"]) and not bool(cmp.loc[20, "m_on_grid"])
    line = F.fig6cd_line(cmp.reset_index(), s, "c")
    assert line.startswith(
        "Fig. 6c (strong regime, φ_1 vs m): 1 of 2 of our cells (γ = -1) on the paper's grid"
    )
    assert "1 of 1 more by interpolation" in line and "102 of 102 points read" in line


@needs_shared_data
def test_compare_fig6d_against_the_band_and_its_slope(fig6d):
    """A series through the band's middle agrees at every m and in slope; one 1.5 times higher is off the
    band but has the band's slope; one falling as m^-1.5 leaves the band and disagrees in slope."""
    pts, s = fig6d
    band = s["band"]
    mid = {m: float(np.sqrt(band[m]["lo"] * band[m]["hi"])) for m in F.MS}
    rows = []
    for m in F.MS:
        rows += [
            (1.5, -1.0, m, 0, mid[m]),
            (1.25, -1.0, m, 0, 1.5 * mid[m]),
            (1.75, -1.0, m, 0, mid[10] * (m / 10) ** -1.5),
        ]
    cells = pd.DataFrame(rows, columns=["alpha", "gamma", "m", "seed", "strong_mean_sq_overlap"])
    cmp = F.compare_fig6cd(cells, pts, "strong_mean_sq_overlap", False)
    by = cmp.groupby("alpha")
    assert by["agree"].sum().to_dict() == {1.25: 0, 1.5: 6, 1.75: 1}
    sl = cmp.drop_duplicates("alpha").set_index("alpha")
    assert sl.loc[1.5, "slope_ours"] == pytest.approx(sl.loc[1.5, "slope_paper"], abs=1e-9)
    assert sl.loc[1.5, "slope_paper_lo"] < sl.loc[1.5, "slope_paper"] < sl.loc[1.5, "slope_paper_hi"]
    assert sl["slope_agree"].to_dict() == {1.25: True, 1.5: True, 1.75: False}
    assert sl.loc[1.75, "slope_ours"] == pytest.approx(-1.5)
    line = F.fig6cd_line(cmp, s, "d")
    assert line.startswith("Fig. 6d (strong regime, mean square overlap vs m): 7 of 18 of our cells")
    assert "2 of 3 α agree" in line and "12 of 12 column extremes" in line


def test_raster_edge_and_colour_decoding_on_synthetic_pixels():
    """The edge of a flat layer sits as far into its first pixel as that pixel's share of the plateau; a
    masked pixel outside the edge gives no edge; a colour blended with white un-blends to its α and
    opacity; lines of distinct α stack only a few layers before their blend leaves the colour bar."""
    ink = np.array([0, 0, 0, 0.04, 0.1, 0.1, 0.1, 0.25, 0.25, 0.1, 0, 0])
    valid = np.ones(len(ink), bool)
    pos, i0, plateau = F._edge(ink, valid, from_start=True)
    assert i0 == 3 and plateau == pytest.approx(0.1) and pos == pytest.approx(3.6)
    pos, i0, _ = F._edge(ink, valid, from_start=False)
    assert i0 == 9 and pos == pytest.approx(9.4)
    masked = valid.copy()
    masked[2] = False
    assert F._edge(ink, masked, from_start=True) is None
    rgb, alpha = _plasma_bar()
    k = 150  # α = 1.5
    u = 0.3 * (1 - rgb[k])
    a, dist, opacity = F._decode_absorbance(u, rgb, alpha)
    assert a == pytest.approx(1.5) and opacity == pytest.approx(0.3) and dist < 1e-9
    colors = np.array([rgb[int(round(x / 2 * 200))] for x in F.ALPHAS])
    few, more = F._max_layers_one_per_alpha(colors, rgb, 0.02), F._max_layers_one_per_alpha(colors, rgb, 0.1)
    assert 5 <= few <= 10 and few < more <= 17


def test_band_slopes_bound_any_series_inside_the_band():
    """A band 0.9/m … 1.1/m: slope −1 through its middle; series zig-zagging between its edges reach the
    bounds and no further."""
    band = {int(m): {"lo": 0.9 / m, "hi": 1.1 / m} for m in F.MS}
    s_mid, s_lo, s_hi = F._band_slopes(band)
    assert s_mid == pytest.approx(-1.0) and s_lo < -1.0 < s_hi and s_hi + s_lo == pytest.approx(-2.0)
    x = np.log(F.MS)
    steep = np.where(x < x.mean(), 1.1, 0.9) / F.MS
    slope = -F.power_law_fit(F.MS, steep)["exponent"]
    assert slope == pytest.approx(s_lo)


def test_plot_and_line_without_the_figure():
    """The plot draws both panels on the paper's axes from any points; the line says when no cell of ours
    is on the paper's grid."""
    import matplotlib.figure

    pc = pd.DataFrame(
        [(a, m, 0.5 + 0.1 * a) for a in (1.0, 2.0) for m in F.MS], columns=["alpha", "m", "value"]
    )
    pd_ = pd.DataFrame(
        [(1.9, m, 1.1 / m, "top") for m in F.MS] + [(0.5, m, 0.9 / m, "bottom") for m in F.MS],
        columns=["alpha", "m", "value", "extreme"],
    )
    cells = pd.DataFrame(
        [(1.5, -1.0, m, 0, 0.6, 1 / m) for m in (10, 25, 100)],
        columns=["alpha", "gamma", "m", "seed", "strong_represented_fraction", "strong_mean_sq_overlap"],
    )
    fig = F.plot_fig6cd(pc, pd_, cells, False)
    assert isinstance(fig, matplotlib.figure.Figure)
    ac, ad = fig.axes[:2]
    assert ac.get_xscale() == ad.get_xscale() == "log" and ad.get_yscale() == "log"
    s = {"found": 102, "expected": 102, "x_axis": {"residual_pt": 1e-4}, "y_axis": {"residual_pt": 1e-4}}
    s["max_alpha_color_dist"] = 0.01
    line = F.fig6cd_line(pd.DataFrame(), s, "c")
    assert line.startswith("Fig. 6c (strong regime, φ_1 vs m): none of our γ < 0 cells")
