"""Figures of the disclosure-risk package (matplotlib object API, PNG + PDF).

One function per figure of Kazan and Reiter; each takes result objects of this package
and an output directory and returns the written paths.  All curves are exact (no Monte
Carlo), so e.g. the paper's Figure 5 becomes a clean curve.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from exactdp.figures import save

__all__ = [
    "plot_posterior_curve",
    "plot_rho1_sweep",
    "plot_decision_map",
    "plot_decision_curve",
    "plot_rho2_sweep",
    "plot_uniqueness",
]


def _plabel(p) -> str:
    return f"p = {p.numerator}/{p.denominator}" if p.denominator != 1 else f"p = {p}"


def plot_posterior_curve(curves: dict, outdir, *, stem: str = "risk_posterior_vs_xstar") -> list:
    """Posterior and risk ratio vs the released ``x*`` (Figure 1).

    Parameters
    ----------
    curves : dict
        ``{p: tuple of PosteriorPoint}`` from :func:`exactdp.risk.single.posterior_curve`.
    outdir : path-like
    """
    fig = Figure(figsize=(10, 4))
    ax1, ax2 = fig.subplots(1, 2)
    for p, pts in curves.items():
        xs = [pt.x_star for pt in pts]
        ax1.plot(xs, [float(pt.posterior) for pt in pts], marker="o", ms=3, label=_plabel(p))
        ax2.plot(xs, [float(pt.risk) for pt in pts], marker="o", ms=3, label=_plabel(p))
    conv = next(iter(curves.values()))[0]
    ax1.set(xlabel="released x1*", ylabel="P[X1 = x1 | x1*]", title="Posterior")
    ax2.set(xlabel="released x1*", ylabel="R = posterior / prior", title="Risk ratio", yscale="log")
    ax1.legend(fontsize=8)
    fig.suptitle(f"ρ1 = {float(conv.rho):.5g} ({conv.convention} convention), known = {conv.known}")
    return save(fig, outdir, stem, tight=True)


def plot_rho1_sweep(rows, outdir, *, stem: str = "risk_vs_rho1") -> list:
    """Expected posterior, expected risk and decision probability vs ρ1 (Figures 2-3)."""
    by_p: dict = {}
    for r in rows:
        by_p.setdefault(r.p, []).append(r)
    fig = Figure(figsize=(14, 4))
    ax1, ax2, ax3 = fig.subplots(1, 3)
    for p, rs in by_p.items():
        x = [float(r.rho1) for r in rs]
        ax1.plot(x, [float(r.expected_posterior) for r in rs], label=_plabel(p))
        ax2.plot(x, [float(r.expected_risk) for r in rs], label=_plabel(p))
        ax3.plot(x, [float(r.p_correct) for r in rs], label=_plabel(p))
    for ax, yl, t in (
        (ax1, "E[posterior | has c]", "Expected posterior"),
        (ax2, "E[R | has c]", "Expected risk"),
        (ax3, "P[decide has c | has c]", "Correct decision"),
    ):
        ax.set(xlabel="ρ1", ylabel=yl, title=t, xscale="log")
    ax2.set_yscale("log")
    ax1.legend(fontsize=8)
    fig.suptitle(f"Single level, {rows[0].convention} convention (exact sums)")
    return save(fig, outdir, stem, tight=True)


def plot_decision_map(dmap, outdir, *, stem: str = "risk_decision_map") -> list:
    """Decisions over (x2*, y1*) for each x1* of the map (Figure 4).

    Colours: decision "has c" vs "lacks c"; hatched where the hierarchy changes the
    single-level decision.
    """
    n = len(dmap.x1_stars)
    fig = Figure(figsize=(5 * n, 4))
    axes = np.atleast_1d(fig.subplots(1, n))
    y = np.array(dmap.y1_stars)
    x2 = np.array(dmap.x2_stars)
    for i, ax in enumerate(axes):
        dec = dmap.decide_has[i].astype(float)
        ax.pcolormesh(y, x2, dec, shading="nearest", cmap="coolwarm", vmin=0, vmax=1)
        changed = dmap.decide_has[i] != dmap.single_decide_has[i]
        yy, xx = np.meshgrid(y, x2)
        ax.scatter(yy[changed], xx[changed], marker="x", s=8, c="k", linewidths=0.6)
        ax.set(xlabel="y1*", ylabel="x2*", title=f"x1* = {dmap.x1_stars[i]} (red: decide has c; x: changed)")
    s = dmap.setup
    fig.suptitle(
        f"ρ1 = {float(s.rho1):.4g}, ρ2 = {float(s.rho2):.4g}, d = {s.d}, p = {s.p}, "
        f"Y1* noise: {s.y_noise}, model: {s.model}"
    )
    return save(fig, outdir, stem, tight=True)


def plot_decision_curve(curve, outdir, *, stem: str = "risk_decision_vs_x2") -> list:
    """Probability of a correct decision vs the true block-group count (Figure 5)."""
    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    x = [c.truth[1] for c in curve]
    ax.plot(x, [c.estimate for c in curve], marker="o", label="with hierarchy (exact)")
    ax.axhline(float(curve[0].single_level), color="k", ls="--", lw=0.8, label="block count only")
    ax.set(xlabel="true x2", ylabel="P[correct decision]")
    ax.legend(fontsize=8)
    s = curve[0].setup
    worst = max(c.error_bound for c in curve)
    ax.set_title(f"model: {s.model}, Y1*: {s.y_noise}, d = {s.d}; error ≤ {worst:.1e}", fontsize=9)
    return save(fig, outdir, stem, tight=True)


def plot_rho2_sweep(rows, outdir, *, stem: str = "risk_decision_vs_rho2") -> list:
    """Probability of a correct decision vs ρ2 for a few x2 (Figure 6)."""
    by_x2: dict = {}
    for r in rows:
        by_x2.setdefault(r.x2, []).append(r)
    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    for x2, rs in by_x2.items():
        ax.plot([float(r.rho2) for r in rs], [r.estimate for r in rs], marker="o", ms=3, label=f"x2 = {x2}")
    ax.axhline(float(rows[0].single_level), color="k", ls="--", lw=0.8, label="block count only")
    ax.set(xlabel="ρ2", ylabel="P[correct decision]", xscale="log")
    ax.legend(fontsize=8)
    return save(fig, outdir, stem, tight=True)


def plot_uniqueness(results, outdir, *, stem: str = "risk_uniqueness_vs_ell") -> list:
    """Expected posterior and risk vs ℓ for the ℓ-level uniqueness attack (Figure 7)."""
    by_p: dict = {}
    for r in results:
        by_p.setdefault(r.p, []).append(r)
    fig = Figure(figsize=(10, 4))
    ax1, ax2 = fig.subplots(1, 2)
    for p, rs in by_p.items():
        ells = [r.ell for r in rs]
        ax1.plot(ells, [r.expected_posterior for r in rs], marker="o", label=_plabel(p))
        ax2.plot(ells, [r.expected_risk for r in rs], marker="o", label=_plabel(p))
    ax1.set(xlabel="ℓ (levels where the target is unique)", ylabel="E[posterior | has c_e]", yscale="log")
    ax2.set(xlabel="ℓ", ylabel="E[R | has c_e]")
    ax1.legend(fontsize=8)
    return save(fig, outdir, stem, tight=True)
