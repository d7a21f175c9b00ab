"""Figures of a sweep (matplotlib object API only, PNG and PDF, no timestamps).

* ``eps_delta``: the exact overall privacy profile (max over pairs), drawn from both of its
  parametrisations (ε_BS, δ_exact(ε_BS)) and (ε_exact(δ), δ), beside the Bureau's
  ρ-conversions (Bun–Steinke, the optimal CKS conversion) and the μ-GDP reference.
* ``tradeoff``: the overall trade-off envelope with the μ-GDP curve Φ(Φ⁻¹(1−α) − μ),
  μ = √(2ρ), on log–log axes and on probit axes (where the GDP curve is a straight line).
* ``spread_heatmap``: 1 − δ_pair/δ_max (ppm) over the path × path grid at one target δ,
  paths labelled by their number and the levels they spend budget at, with a key.

Each figure has a ``*_figure`` function that builds it (for the report) and a ``plot_*``
function that writes it.
* ``proxy_sensitivity``: relative gap (percent) between one pair's δ(ε) and the maximum
  over pairs (used by ``scripts/``).
"""

from __future__ import annotations

import functools
import math
import statistics
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from exactdp.figures import save
from exactdp.numerics.precision import DPS_RESULT

__all__ = ["plot_sweep", "plot_eps_delta", "plot_tradeoff", "plot_spread_heatmap", "plot_proxy_sensitivity", "save",
           "eps_delta_figure", "tradeoff_figure", "spread_heatmap_figure"]

def _col(rows, name):
    head = rows[0]
    k = head.index(name)
    return [r[k] for r in rows[1:]]


def _f(values):
    return [float(v) for v in values]


@functools.lru_cache(maxsize=4096)
def _probit(text):
    """Φ⁻¹(p) of a decimal string p ∈ (0, 1), at 40 digits (p may be 1 − 1e-20), as a float.

    The float of mpmath's ``sqrt(2)·erfinv(2p − 1)`` under ``workdps(DPS_RESULT)``: taken from a
    160-bit MPFR Newton solution when every number within 2^-70 (relative) of it rounds
    to the same float (mpmath's value is far closer than that: its argument 2p − 1 is
    the same correctly rounded number, its root is accurate to ≲ 1e-26 relative even at
    1 − 2p ≈ 1e-20); else from mpmath itself.
    """
    fast = _probit_mpfr(text)
    return fast if fast is not None else _probit_mpmath(text)


def _probit_mpmath(text):
    import mpmath

    with mpmath.workdps(DPS_RESULT):
        p = mpmath.mpf(text)
        if p <= 0 or p >= 1:
            return math.nan
        return float(mpmath.sqrt(2) * mpmath.erfinv(2 * p - 1))


_NEWTON_STEPS = 2
_NEWTON_PREC = 160
_NORMAL = statistics.NormalDist()


def _probit_mpfr(text):
    """:func:`_probit` by MPFR, or ``None`` when the float is not settled (see there)."""
    from exactdp.runs.numtext import mpfr_context, parse_mpfr, prec_of

    c40 = mpfr_context(prec_of(DPS_RESULT))
    p = parse_mpfr(text, c40)
    if not 0 < p < 1:
        return math.nan if (p <= 0 or p >= 1) else None
    x = c40.sub(c40.mul(p, 2), 1)  # mpmath: 2 * p − 1, each step correctly rounded
    if x == 0:
        return 0.0
    if x == 1 or x == -1:
        return math.copysign(math.inf, x)  # mpmath: erfinv(±1) = ±inf
    c = mpfr_context(_NEWTON_PREC)
    ax = c.abs(x)
    tail = ax >= 0.5  # solve erfc(t) = 1 − |x| (exact here) instead of erf(t) = |x|
    y = c.sub(1, ax)
    yf, af = float(y), float(ax)
    # float start (relative error ~1e-15), then Newton at 160 bits: 1e-30, then 1e-60
    z = -_NORMAL.inv_cdf(yf / 2) if tail else _NORMAL.inv_cdf((1 + af) / 2)
    t = c.div(z, c.sqrt(2))
    two_over_sqrt_pi = c.div(2, c.sqrt(c.const_pi()))
    step = None
    for _ in range(_NEWTON_STEPS):  # quadratic: the last step's size bounds what is left
        deriv = c.mul(two_over_sqrt_pi, c.exp(c.minus(c.square(t))))
        step = c.div(c.sub(c.erfc(t), y), deriv) if tail else c.div(c.sub(ax, c.erf(t)), deriv)
        t = c.add(t, step)
    if not abs(step) <= 1e-25 * abs(t):
        return None  # the float start was too far: not converged
    v = c.mul(c.sqrt(2), t)
    if x < 0:
        v = c.minus(v)
    lo, hi = c.mul(v, 1 - 2.0**-70), c.mul(v, 1 + 2.0**-70)
    d = float(v)
    return d if float(lo) == d == float(hi) else None


# ----------------------------------------------------------------------------- ε–δ
def _conversion_curves(rho, eps_lo: float, eps_hi: float, n: int = 60) -> dict:
    """δ(ε) of the zCDP conversions of ``rho`` (Bun–Steinke, CKS) and of μ-GDP, μ = √(2ρ),
    on ``n`` points of [eps_lo, eps_hi] (plotted values: 20 digits, as floats)."""
    from fractions import Fraction

    from exactdp.conversions import bounds

    grid = [Fraction(eps_lo) + (Fraction(eps_hi) - Fraction(eps_lo)) * k / (n - 1) for k in range(n)]
    out = {}
    for name, fn in (("bun-steinke", bounds.bun_steinke_delta), ("cks", bounds.cks_delta), ("gdp", bounds.gdp_delta)):
        out[name] = ([float(e) for e in grid], [float(fn(rho, e, dps=_PLOT_DPS).delta) for e in grid])
    return out


#: digits of the conversion curves drawn beside the exact one (a figure shows ~3)
_PLOT_DPS = 20


def eps_delta_figure(summary_rows, rho=None) -> Figure:
    """The exact overall ε–δ curve beside the Bureau's ρ-conversions (rows of summary.csv).

    Curves: the exact overall profile (max over pairs; certified upper bounds, from both
    of its parametrisations (ε_BS, δ_exact(ε_BS)) and (ε_exact(δ), δ)); the Bureau's
    Bun–Steinke conversion of the total ρ; the optimal zCDP conversion of Canonne, Kamath &
    Steinke (CKS) of the same ρ; the continuous Gaussian (μ-GDP, μ = √(2ρ)), a reference
    that is not a bound for discrete noise.  δ on a log axis.
    """
    d = _f(_col(summary_rows, "delta_target"))
    eb = _f(_col(summary_rows, "eps_bureau"))
    dover = _f(_col(summary_rows, "delta_overall_upper"))
    eover = _f(_col(summary_rows, "eps_overall_upper"))
    exact = sorted(list(zip(eb, dover)) + list(zip(eover, d)))
    fig = Figure(figsize=(7.2, 4.8))
    ax = fig.add_subplot(1, 1, 1)
    conv = _conversion_curves(rho, min(p[0] for p in exact), max(eb)) if rho is not None else {}

    def draw(name, style, label):
        if name in conv:
            pts = [(x, y) for x, y in zip(*conv[name]) if 0 < y < 1]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=label, **style)

    draw("cks", dict(color="tab:orange", ls="-.", lw=1.3), "CKS optimal zCDP conversion of ρ")
    ax.plot(eb, d, "o-", ms=3, color="tab:red", lw=1.3, label="Bureau: Bun–Steinke ε = ρ + 2√(ρ ln 1/δ)")
    ax.plot([p[0] for p in exact], [p[1] for p in exact], "s-", ms=2.5, color="tab:blue", lw=2,
            label="exact overall (max over pairs, certified upper bound)")
    draw("gdp", dict(color="k", ls=":", lw=1.1), "continuous Gaussian μ-GDP (reference, not a bound)")
    ax.set_yscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("δ(ε)")
    title = "Privacy profile: exact vs the Bureau's ρ-conversions"
    if rho is not None:
        title += f" (ρ = {float(rho):.6g})"
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    return fig


def plot_eps_delta(summary_rows, outdir, stem="eps_delta", rho=None) -> list:
    """:func:`eps_delta_figure` written as ``stem.png`` and ``stem.pdf`` into ``outdir``."""
    return save(eps_delta_figure(summary_rows, rho), outdir, stem)


# ----------------------------------------------------------------------------- trade-off
#: type-I / type-II errors marked on the probit axes (each side: p and 1 − p)
_PROBIT_TICKS = (20, 10, 3)


def _probit_ticks():
    """(positions, labels) of the probit axis: 10^-k, 1/2 and 1 − 10^-k."""
    pos, lab = [], []
    for k in _PROBIT_TICKS:
        pos.append(_probit(f"1e-{k}"))
        lab.append(f"10$^{{-{k}}}$")
    pos.append(0.0)
    lab.append("1/2")
    for k in reversed(_PROBIT_TICKS):
        pos.append(-_probit(f"1e-{k}"))
        lab.append(f"1−10$^{{-{k}}}$")
    return pos, lab


def _one_minus(text) -> float:
    """1 − p for a decimal text p, subtracted exactly (p may be 1 − 1e-20) then rounded."""
    from decimal import Decimal, localcontext

    with localcontext() as ctx:
        ctx.prec = 60
        return float(Decimal(1) - Decimal(text))


def tradeoff_figure(envelope_rows, rho=None) -> Figure:
    """The overall trade-off envelope and the μ-GDP reference (rows of envelope.csv).

    Left: the power 1 − β of the optimal test against its type I error α, on log–log
    axes: at small α, where the privacy question lives, the gap between the two curves is
    how much better a test of the real noise does than one of Gaussian noise (the
    diagonal: a test that learns nothing).  Right: probit axes (Φ⁻¹(α), Φ⁻¹(β)), ticks
    labelled in probabilities: the μ-GDP curve β = Φ(Φ⁻¹(1−α) − μ) is the straight line
    Φ⁻¹(β) = −Φ⁻¹(α) − μ, and both ends of the curve are visible.  The exact curve is the
    lower convex envelope over pairs on the common α grid (envelope.csv).
    """
    a_txt = _col(envelope_rows, "alpha")
    env_txt = _col(envelope_rows, "beta_envelope")
    gdp_txt = _col(envelope_rows, "beta_gdp")
    mu = f"μ = {math.sqrt(2 * float(rho)):.6g}" if rho is not None else "μ = √(2ρ)"
    fig = Figure(figsize=(10.5, 5.0))
    ax = fig.add_subplot(1, 2, 1)
    a = [float(t) for t in a_txt]
    curves: list[tuple[list, dict[str, Any], str]] = [
        (gdp_txt, dict(color="tab:gray", ls="--", lw=1.3), f"μ-GDP reference ({mu})"),
        (env_txt, dict(color="tab:blue", ls="-", lw=2), "exact overall (envelope of all pairs)")]
    for txt, style, label in curves:
        pts = [(x, _one_minus(t)) for x, t in zip(a, txt)]
        pts = [p for p in pts if p[1] > 0]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], label=label, **style)
    ax.plot([min(a), 1], [min(a), 1], ":", color="k", lw=0.8, label="a test that learns nothing (1 − β = α)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("type I error α (log scale)")
    ax.set_ylabel("power 1 − β of the optimal test (log scale)")
    ax.set_title("power at small α (log–log)", fontsize=9)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    ax = fig.add_subplot(1, 2, 2)
    rows = [(_probit(x), _probit(e), _probit(g)) for x, e, g in zip(a_txt, env_txt, gdp_txt)]
    rows = [r for r in rows if all(math.isfinite(v) for v in r)]
    ax.plot([r[0] for r in rows], [r[2] for r in rows], "--", color="tab:gray", lw=1.3,
            label=f"μ-GDP: the line Φ⁻¹(β) = −Φ⁻¹(α) − μ ({mu})")
    ax.plot([r[0] for r in rows], [r[1] for r in rows], "-", color="tab:blue", lw=2,
            label="exact overall (envelope of all pairs)")
    pos, lab = _probit_ticks()
    ax.set_xticks(pos, lab, fontsize=7, rotation=30)
    ax.set_yticks(pos, lab, fontsize=7)
    lim = (min(pos) - 0.5, max(pos) + 0.5)
    ax.set_xlim(*lim)
    ax.set_ylim(*lim)
    ax.set_aspect("equal")
    ax.set_xlabel("type I error α (probit scale)")
    ax.set_ylabel("type II error β (probit scale)")
    ax.set_title("probit axes: Gaussian trade-offs are straight lines", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper right")
    fig.suptitle("f-DP trade-off curve: the optimal test between neighbouring datasets", fontsize=10)
    fig.tight_layout()
    return fig


def plot_tradeoff(envelope_rows, outdir, stem="tradeoff", rho=None) -> list:
    """:func:`tradeoff_figure` written as ``stem.png`` and ``stem.pdf`` into ``outdir``."""
    return save(tradeoff_figure(envelope_rows, rho), outdir, stem)


# ----------------------------------------------------------------------------- heat map
def spread_heatmap_figure(matrix, delta_label, paths=None) -> Figure:
    """Heat map of the per-pair shortfall 1 − δ_pair/δ_max in parts per million (the
    pairs differ by little, so the ratio itself would be a flat colour); blank cells are
    pairs not in the sweep.

    ``paths``: ``(labels, key)`` from :func:`exactdp.sweep.pathkey.path_key` — one tick
    label per path (its number and the levels it spends budget at) and the key of the
    level letters, printed under the map; without it the ticks are path numbers.
    """
    import numpy as np

    m = (1.0 - np.array(matrix, dtype=float)) * 1e6
    n = m.shape[0]
    labels, key = paths if paths is not None else ([str(k) for k in range(1, n + 1)], "")
    fig = Figure(figsize=(9.5, 9.0) if n > 12 else (6.8, 6.0))
    ax = fig.add_subplot(1, 1, 1)
    im = ax.imshow(np.ma.masked_invalid(m), origin="lower", cmap="viridis", interpolation="nearest",
                   extent=(0.5, n + 0.5, 0.5, n + 0.5))
    size = 5.5 if n > 24 else 8
    ticks = list(range(1, n + 1))
    ax.set_xticks(ticks, labels, rotation=90, fontsize=size, family="monospace")
    ax.set_yticks(ticks, labels, fontsize=size, family="monospace")
    ax.set_xlabel("path j of the neighbouring record (number, levels with budget)")
    ax.set_ylabel("path i of the record (number, levels with budget)")
    ax.set_title(f"1 − δ_pair/δ_max in ppm at the Bureau's ε for δ = {delta_label}\n"
                 "(0 = the worst pair; blank = pair not computed)", fontsize=10)
    fig.colorbar(im, ax=ax, label="ppm below the worst pair", shrink=0.8)
    if key:
        fig.text(0.02, 0.01, key.replace("; ", "\n"), fontsize=7, family="monospace", va="bottom")
    fig.tight_layout(rect=(0, 0.05 if key else 0, 1, 1))
    return fig


def plot_spread_heatmap(matrix, outdir, delta_label, stem="spread_heatmap", paths=None) -> list:
    """:func:`spread_heatmap_figure` written as ``stem.png`` and ``stem.pdf`` into ``outdir``."""
    return save(spread_heatmap_figure(matrix, delta_label, paths), outdir, stem)


def plot_proxy_sensitivity(deltas, gaps_percent, outdir, label, stem="proxy_sensitivity") -> list:
    """Relative gap (percent) of one pair's δ(ε) below the maximum over pairs, per δ."""
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(deltas, gaps_percent, "o-", ms=3)
    ax.set_xscale("log")
    ax.set_xlabel("target δ (Bureau's ε = ε_BS(δ))")
    ax.set_ylabel("(δ_max − δ_proxy)/δ_max  [%]")
    ax.set_title(f"Proxy {label} vs overall (max over pairs)", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return save(fig, outdir, stem)


def plot_sweep(out, summary_rows, envelope_rows, heat_matrix, heat_delta, rho, paths=None) -> list:
    """All figures of a sweep into ``out/plots``."""
    pdir = Path(out) / "plots"
    paths_ = plot_eps_delta(summary_rows, pdir, rho=rho)
    paths_ += plot_tradeoff(envelope_rows, pdir, rho=rho)
    paths_ += plot_spread_heatmap(heat_matrix, pdir, heat_delta, paths=paths)
    return paths_
