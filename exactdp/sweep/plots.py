"""Figures of a sweep (matplotlib object API only, PNG and PDF, no timestamps).

* ``eps_delta``: the Bureau's zCDP curve (ε_BS(δ), δ) against the exact overall privacy
  profile (max over pairs), drawn from both of its parametrisations: (ε_BS, δ_exact(ε_BS))
  and (ε_exact(δ), δ).
* ``tradeoff``: the overall trade-off envelope with the μ-GDP curve Φ(Φ⁻¹(1−α) − μ),
  μ = √(2ρ), in linear axes and in log–log axes.
* ``spread_heatmap``: 1 − δ_pair/δ_max (ppm) over the path × path grid at one target δ.
* ``proxy_sensitivity``: relative gap (percent) between one pair's δ(ε) and the maximum
  over pairs (used by ``scripts/``).
"""

from __future__ import annotations

import functools
import math
import statistics
from pathlib import Path

from matplotlib.figure import Figure

from exactdp.figures import save
from exactdp.numerics.precision import DPS_RESULT

__all__ = ["plot_sweep", "plot_eps_delta", "plot_tradeoff", "plot_spread_heatmap", "plot_proxy_sensitivity", "save"]



def _col(rows, name):
    head = rows[0]
    k = head.index(name)
    return [r[k] for r in rows[1:]]


def _f(values):
    return [float(v) for v in values]


def plot_eps_delta(summary_rows, outdir, stem="eps_delta", rho=None) -> list:
    """Bureau's zCDP ε–δ curve against the exact overall curve (rows of summary.csv)."""
    d = _f(_col(summary_rows, "delta_target"))
    eb = _f(_col(summary_rows, "eps_bureau"))
    dover = _f(_col(summary_rows, "delta_overall_upper"))
    eover = _f(_col(summary_rows, "eps_overall_upper"))
    exact = sorted(list(zip(eb, dover)) + list(zip(eover, d)))
    fig = Figure(figsize=(6.4, 4.6))
    ax = fig.add_subplot(1, 1, 1)
    ax.plot(eb, d, "o-", ms=3, color="tab:red", label="Bureau (zCDP, Bun–Steinke)")
    ax.plot([p[0] for p in exact], [p[1] for p in exact], "s-", ms=3, color="tab:blue",
            label="exact overall (max over pairs)")
    ax.set_yscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("δ")
    title = "Privacy profile: Bureau's conversion vs exact"
    if rho is not None:
        title += f" (ρ = {float(rho):.6g})"
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save(fig, outdir, stem)


@functools.lru_cache(maxsize=4096)
def _probit(text):
    """Φ⁻¹(p) of a decimal string p ∈ (0, 1), at 40 digits (p may be 1 − 1e-20), as a float.

    The float of mpmath's ``sqrt(2)·erfinv(2p − 1)`` under ``workdps(40)``: taken from a
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
    from exactdp.sweep.numtext import mpfr_context, parse_mpfr, prec_of

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


def plot_tradeoff(envelope_rows, outdir, stem="tradeoff", rho=None) -> list:
    """The overall trade-off envelope and the GDP comparison curve (rows of envelope.csv).

    Left: linear axes.  Right: on probit axes the μ-GDP curve is the line
    ``Φ⁻¹(1−β) = μ − Φ⁻¹(1−α)``; the panel shows the exact curve's departure from it
    (positive: the exact curve lies below GDP, i.e. less private at that α).
    """
    a_txt = _col(envelope_rows, "alpha")
    env_txt = _col(envelope_rows, "beta_envelope")
    gdp_txt = _col(envelope_rows, "beta_gdp")
    a, env, gdp = _f(a_txt), _f(env_txt), _f(gdp_txt)
    fig = Figure(figsize=(10, 4.6))
    mu = f"μ = {math.sqrt(2 * float(rho)):.6g}" if rho is not None else "μ = √(2ρ)"
    ax = fig.add_subplot(1, 2, 1)
    ax.plot(a, env, "-", color="tab:blue", label="exact overall (convex envelope of all pairs)")
    ax.plot(a, gdp, "--", color="tab:gray", label=f"GDP Φ(Φ⁻¹(1−α) − μ), {mu}")
    ax.plot([0, 1], [1, 0], ":", color="k", lw=0.6)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_aspect("equal")
    ax.set_xlabel("type I error α")
    ax.set_ylabel("type II error β")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    ax = fig.add_subplot(1, 2, 2)
    x = [-_probit(t) for t in a_txt]  # Φ⁻¹(1−α) = −Φ⁻¹(α)
    gap_txt = _col(envelope_rows, "beta_interp_gap")
    dev = [-_probit(e) + _probit(g) for e, g in zip(env_txt, gdp_txt)]
    import mpmath

    with mpmath.workdps(DPS_RESULT):
        low_txt = [mpmath.nstr(max(mpmath.mpf(e) - mpmath.mpf(g), mpmath.mpf(10) ** -300), 25)
                   for e, g in zip(env_txt, gap_txt)]
    dev_lo = [-_probit(e) + _probit(g) for e, g in zip(low_txt, gdp_txt)]
    # α ≤ 1 − 1e-9 (x ≥ −6): beyond, β < 1e-30 and the envelope's chord to (1, 0) dominates;
    # by symmetry that region mirrors the β → 1 end shown on the right
    keep = [k for k, v in enumerate(x) if v >= -6.0]
    ax.fill_between([x[k] for k in keep], [dev[k] for k in keep], [dev_lo[k] for k in keep], color="tab:blue",
                    alpha=0.35, lw=0, label="exact overall minus GDP (band: between sampled vertices)")
    ax.axhline(0.0, ls="--", color="tab:gray", label=f"GDP ({mu})")
    ax.set_xlabel("Φ⁻¹(1 − α)")
    ax.set_ylabel("Φ⁻¹(1 − β_exact) − Φ⁻¹(1 − β_GDP)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.suptitle("f-DP trade-off curve", fontsize=10)
    fig.tight_layout()
    return save(fig, outdir, stem)


def plot_spread_heatmap(matrix, outdir, delta_label, stem="spread_heatmap") -> list:
    """Heatmap of the per-pair shortfall 1 − δ_pair/δ_max, in parts per million (the
    pairs differ by little, so the ratio itself would be a flat colour); NaN cells are
    pairs not in the sweep."""
    import numpy as np

    m = (1.0 - np.array(matrix, dtype=float)) * 1e6
    fig = Figure(figsize=(6.4, 5.2))
    ax = fig.add_subplot(1, 1, 1)
    im = ax.imshow(np.ma.masked_invalid(m), origin="lower", cmap="viridis",
                   extent=(0.5, m.shape[1] + 0.5, 0.5, m.shape[0] + 0.5))
    ax.set_xlabel("path j")
    ax.set_ylabel("path i")
    ax.set_title(f"1 − δ_pair/δ_max (ppm) at the Bureau's ε for δ = {delta_label}", fontsize=10)
    fig.colorbar(im, ax=ax, label="ppm below the worst pair")
    fig.tight_layout()
    return save(fig, outdir, stem)


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


def plot_sweep(out, summary_rows, envelope_rows, heat_matrix, heat_delta, rho) -> list:
    """All figures of a sweep into ``out/plots``."""
    pdir = Path(out) / "plots"
    paths = plot_eps_delta(summary_rows, pdir, rho=rho)
    paths += plot_tradeoff(envelope_rows, pdir, rho=rho)
    paths += plot_spread_heatmap(heat_matrix, pdir, heat_delta)
    return paths
