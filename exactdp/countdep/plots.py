"""Figures: v(n) against the lower bounds (log-log) and the utility curve.

Uses matplotlib's object API only (no pyplot); every figure is written as PNG and PDF.
"""

from __future__ import annotations

import mpmath
import numpy as np

from exactdp.countdep.budget import budget_float
from exactdp.countdep.params import ShiftedLogParams
from exactdp.countdep.report import LowerBoundReport
from exactdp.countdep.utility import UtilityReport
from exactdp.figures import save
from exactdp.numerics.precision import DPS_LOW

__all__ = ["plot_budget", "plot_utility"]


def plot_budget(params: ShiftedLogParams, outdir, report: LowerBoundReport | None = None, max_n: int = 10**6) -> list:
    """v(n), its asymptote 1/(2σ²n²) and (if given) the lower bounds, on log-log axes.

    Returns the written paths (``countdep_budget.png`` and ``.pdf`` in ``outdir``).

    Notes
    -----
    The curve uses the float64 fast path :func:`~exactdp.countdep.budget.budget_float`
    (relative error ≲ 1e-15); the lower bounds come from ``report``.
    """
    from matplotlib.figure import Figure

    ns = np.unique(np.round(np.logspace(0, np.log10(max(max_n, 2)), 200)).astype(np.int64))
    v = budget_float(params, ns)
    sigma = params.sigma_float()
    fig = Figure(figsize=(6.4, 4.4))
    ax = fig.add_subplot(1, 1, 1)
    ax.loglog(ns, v, label="mechanism v(n) (eq. 6)")
    ax.loglog(ns, 1.0 / (2 * sigma**2 * ns.astype(float) ** 2), ":", label="1/(2σ²n²) (eq. 7)")
    nf = ns.astype(float)
    if report is not None and report.two_count_limit is not None:
        ax.loglog(nf, float(report.two_count_limit) / nf**2, "--", lw=0.8, label="asymptote of (14): (15)/n²")
        if report.uniform_asymptotic is not None and report.uniform_asymptotic > 0:
            ua = float(report.uniform_asymptotic) / float(report.r) ** 2
            ax.loglog(nf, ua / nf**2, "-.", lw=0.8, label="asymptote of (23): max_a (24)/(r²n²)")
    if report is not None and report.points:
        pn = np.array([p.n for p in report.points])
        order = np.argsort(pn)
        pn = pn[order]
        pts = [report.points[i] for i in order]
        series = {
            "two-count (14)": [float(p.two_count) for p in pts],
            "uniform prior (23)": [float(p.uniform.value) for p in pts],
            "optimised prior (19)": [p.optimised.value if p.optimised else 0.0 for p in pts],
        }
        for (name, y_list), mk in zip(series.items(), ("s", "^", "o")):
            ys = np.array(y_list)
            keep = ys > 0
            if keep.any():
                ax.loglog(pn[keep], ys[keep], mk, label=f"lower bound: {name}")
    ax.set_xlabel("count n")
    ax.set_ylabel("zCDP budget v(n)")
    ax.set_title(f"r={params.r}, r0={params.r0}, c={params.c}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return save(fig, outdir, "countdep_budget")


def plot_utility(report: UtilityReport, outdir) -> list:
    """Expected error / max(n, 1) against n, with the target r and the bound r0(n+c)/(1+c).

    Returns the written paths (``countdep_utility.png`` and ``.pdf`` in ``outdir``).

    Notes
    -----
    Plots the exact values of ``report`` (closed form, relative error < 10**-dps): the
    relative error against the target r, and (lower panel) the clipping gain as a
    fraction of the pre-clipping error (log scale; gains below 1e-320 are not drawn).
    """
    from matplotlib.figure import Figure

    p = report.params
    ns = np.array([q.n for q in report.points], dtype=float)
    scale = np.maximum(ns, 1.0)
    err = np.array([float(q.error) for q in report.points]) / scale
    pre = np.array([float(q.preclip) for q in report.points]) / scale
    fig = Figure(figsize=(6.4, 6.4))
    ax = fig.add_subplot(2, 1, 1)
    x = np.maximum(ns, 0.5)
    ax.semilogx(x, err, "o-", label="E|x̂ − n| / max(n,1) (clipped, exact)")
    ax.semilogx(x, pre, "--", label="before clipping: r0(n+c)/((1+c)max(n,1))")
    ax.axhline(float(p.r), color="k", lw=0.8, label="target r (eq. 2)")
    ax.set_xlabel("count n (n = 0 drawn at 0.5)")
    ax.set_ylabel("relative expected absolute error")
    ax.set_ylim(0, float(p.r) * 1.1)
    ax.set_title(f"r={p.r}, r0={p.r0}, c={p.c}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    ax2 = fig.add_subplot(2, 1, 2)
    with mpmath.workdps(DPS_LOW):
        lg = np.array([float(mpmath.log10(q.relative_gain)) if q.relative_gain > 0 else -np.inf for q in report.points])
    keep = np.isfinite(lg) & (lg > -320)
    ax2.semilogx(x[keep], lg[keep], "s-", color="C2")
    ax2.set_xlabel("count n (n = 0 drawn at 0.5)")
    ax2.set_ylabel("log10(clipping gain / error before clipping)")
    ax2.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return save(fig, outdir, "countdep_utility")
