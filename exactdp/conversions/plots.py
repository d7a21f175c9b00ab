"""Figures of the cross-checks (matplotlib object API; PNG and PDF).

* :func:`curves_figure`: ε–δ curves of the exact profile and of the conversions
  (Bun–Steinke, CKS, RDP, GDP), δ on a log axis.
* :func:`reduction_figure`: certified variance reduction against δ (all / one level).
* :func:`rate_figure`: |exact − Gaussian| and |exact − Edgeworth| against m (log–log),
  with the fitted slope and reference lines m^{-3/2} and m^{-2}.
"""

from __future__ import annotations

from typing import Any

from exactdp.figures import save as save_figure

__all__ = ["curves_figure", "rate_figure", "reduction_figure", "save"]

_STYLE: dict[str, dict[str, Any]] = {
    "exact": dict(color="black", lw=2.0, ls="-"),
    "bun-steinke": dict(color="tab:red", lw=1.3, ls="--"),
    "cks": dict(color="tab:orange", lw=1.3, ls="-."),
    "rdp": dict(color="tab:green", lw=1.3, ls=":"),
    "gdp": dict(color="tab:cyan", lw=1.4, ls=(0, (4, 3))),
}
_LABEL = {
    "exact": "exact (certified)",
    "bun-steinke": "Bun–Steinke (Bureau)",
    "cks": "CKS zCDP conversion",
    "rdp": "exact RDP + improved conversion",
    "gdp": "continuous Gaussian (GDP, not a bound)",
}


def save(fig, out_dir, stem: str) -> list[str]:
    """Write ``stem.png`` and ``stem.pdf`` into ``out_dir``; return the paths as text."""
    return [str(p) for p in save_figure(fig, out_dir, stem, tight=True)]


def curves_figure(curves: dict, title: str):
    """``curves``: method -> (list of ε floats, list of δ floats)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 4.6))
    ax = fig.add_subplot(1, 1, 1)
    for name in ("bun-steinke", "cks", "rdp", "exact", "gdp"):
        if name in curves:
            xs, ys = curves[name]
            pts = [(x, y) for x, y in zip(xs, ys) if y > 0]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=_LABEL[name], **_STYLE[name])
    ax.set_yscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("δ(ε)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def rate_figure(ms, gaps, residuals, slope: float, title: str):
    """Log–log plot of |exact − Gaussian| (and |exact − Edgeworth|) against m."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.4))
    ax = fig.add_subplot(1, 1, 1)
    ax.loglog(ms, [abs(g) for g in gaps], "o-", color="black", label=f"|exact − Gaussian| (fitted slope {slope:.3f})")
    res = [(m, abs(r)) for m, r in zip(ms, residuals) if r != 0]
    if res:
        ax.loglog([m for m, _ in res], [r for _, r in res], "s--", color="tab:green",
                  label="|exact − Edgeworth+lattice| (floor: exact's accuracy)")
    g0, m0 = abs(gaps[0]), ms[0]
    ax.loglog(ms, [g0 * (m / m0) ** -1.5 for m in ms], ":", color="tab:red", label="m^(−3/2) reference")
    ax.loglog(ms, [g0 * (m / m0) ** -2.0 for m in ms], ":", color="tab:blue", label="m^(−2) reference")
    ax.set_xlabel("m (identical mechanisms, fixed total ρ)")
    ax.set_ylabel("|difference in δ(ε)|")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def reduction_figure(rows, title: str, xlabel: str = "δ (target ε = Bun–Steinke ε(δ))"):
    """Certified variance reduction (%) against δ, one line per scaled group.

    ``rows``: dicts with ``scaled``, ``delta`` and ``variance_reduction`` (decimal strings);
    ``xlabel``: the x-axis label (it says which target ε each δ goes with).
    """
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.4))
    ax = fig.add_subplot(1, 1, 1)
    groups: dict = {}
    for r in rows:
        groups.setdefault(r.get("scaled", "all"), []).append((float(r["delta"]), 100 * float(r["variance_reduction"])))
    for name, pts in groups.items():
        pts.sort()
        style = dict(color="black", lw=2.0) if name == "all" else dict(lw=1.2)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=name, **style)
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("certified variance reduction (%)")
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return fig
