"""Conversions and bounds to report beside the exact profile: Bun–Steinke, CKS, RDP, GDP.

For a :class:`~exactdp.mechanisms.Composition` of discrete Gaussians with zCDP ρ:

* **Bun–Steinke** (BS16, Prop. 1.3; the Census Bureau's conversion):
  ``ε = ρ + 2 sqrt(ρ ln(1/δ))``, equivalently ``δ(ε) = exp(−(ε−ρ)²/(4ρ))`` for ε ≥ ρ.
* **CKS** (Canonne, Kamath & Steinke 2020, Cor. 13, the optimal zCDP → (ε, δ) conversion):
  ``δ(ε) = inf_{α>1} exp((α−1)(αρ−ε))/(α−1) · (1−1/α)^α``.  The log-objective is convex
  in α with derivative ``(2α−1)ρ − ε + log(1−1/α)``, so α* is its unique root.
* **RDP** (the exact Rényi curve of the discrete composition) converted with the improved
  conversion of Balle et al. (2020, Thm 21) / CKS (Prop. 12):
  ``ε = D_α + log((α−1)/α) − (log δ + log α)/(α−1)``, optimised over α.  For one discrete
  Gaussian with integer shift Δ (Poisson summation, q = e^{−2π²σ²}):
  ``D_α = αΔ²/(2σ²) + log(θ₃(π(1−α)Δ, q)/θ₃(0, q))/(α−1) ≤ αΔ²/(2σ²)``, with equality at
  integer α; the divergence of the composition is the sum.
* **GDP** (Dong, Roth & Su 2022): the continuous-Gaussian counterpart μ² = Σ Δ²/σ² = 2ρ,
  ``δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)``.  This is **not** a bound for discrete noise:
  the exact profile differs from it by the lattice (Euler–Maclaurin) term
  ``−h²B₂(t)/2·f(ε) + …`` (see :mod:`exactdp.conversions.edgeworth`), which has either sign.

The first three are valid upper bounds on the exact δ(ε) (and ε(δ)) of every design; the
tests check this against exact values over a grid of designs.  Every function works in
mpmath at 50 digits inside ``workdps``; any α yields a valid bound, so the optimisation
accuracy only affects tightness, and the returned value is the objective at the returned α
(relative rounding error below 1e-40, stated as ``rel_error``).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath

from exactdp.accounting.accountant import as_real
from exactdp.numerics.exact import InputError, to_fraction
from exactdp.mechanisms import Composition
from exactdp.numerics.precision import to_mpf

__all__ = [
    "BoundPoint",
    "bun_steinke_delta",
    "bun_steinke_eps",
    "cks_delta",
    "cks_epsilon",
    "renyi_divergence",
    "rdp_delta",
    "rdp_epsilon",
    "gdp_mu",
    "gdp_delta",
    "gdp_epsilon",
    "METHODS",
]

_DPS = 50
#: Relative accuracy of the 50-digit evaluations (stated on every BoundPoint).
REL_ERROR = 1e-40
#: The conversions reported beside the exact curve; ``is_bound`` tells which are bounds.
METHODS = ("bun-steinke", "cks", "rdp", "gdp")


@dataclass(frozen=True)
class BoundPoint:
    """One point of a conversion: the (ε, δ) pair and how it was obtained.

    Attributes
    ----------
    method : str
        One of :data:`METHODS`.
    epsilon, delta : mpmath.mpf
        The point.  For a bound, δ ≥ exact δ(ε) and ε ≥ exact ε(δ).
    alpha : mpmath.mpf or None
        The Rényi order used (CKS, RDP).
    is_bound : bool
        True for the valid upper bounds (Bun–Steinke, CKS, RDP); False for GDP.
    rel_error : float
        Relative accuracy of the computed number (rounding / root finding).
    """

    method: str
    epsilon: mpmath.mpf
    delta: mpmath.mpf
    alpha: object
    is_bound: bool
    rel_error: float


# ----------------------------------------------------------------------------- helpers
def _mpf(x, field: str = "value") -> mpmath.mpf:
    """Exact rational / decimal string / callable ``f(dps)`` → mpf at the current dps.

    An :class:`mpmath.mpf` is accepted as an already computed real (e.g. an ε returned by
    another conversion); user parameters should be exact rationals or callables.
    """
    if isinstance(x, mpmath.mpf):
        return +x
    v = as_real(x, field)
    if isinstance(v, Fraction):
        return to_mpf(v)
    return mpmath.mpf(v(mpmath.mp.dps))


def _rho(design) -> Fraction:
    if isinstance(design, Composition):
        return design.rho
    r = to_fraction(design, "rho")
    if r <= 0:
        raise InputError("rho", design, "must be > 0")
    return r


def _delta_in(delta) -> mpmath.mpf:
    d = _mpf(delta, "delta")
    if not 0 < d < 1:
        raise InputError("delta", delta, "must lie in (0, 1)")
    return d


def _bisect_decreasing(fn, target, lo, hi, iters=200):
    """Smallest x in [lo, hi] (to ~1e-45 relative) with fn(x) ≤ target, fn non-increasing."""
    if fn(lo) <= target:
        return lo
    while fn(hi) > target:
        lo, hi = hi, 2 * hi + 1
    for _ in range(iters):
        mid = (lo + hi) / 2
        if fn(mid) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo <= abs(hi) * mpmath.mpf(10) ** (-45):
            break
    return hi


# ----------------------------------------------------------------------------- Bun–Steinke
def bun_steinke_eps(design, delta) -> BoundPoint:
    """The Bureau's conversion ``ε = ρ + 2 sqrt(ρ ln(1/δ))`` (Bun & Steinke 2016, Prop. 1.3).

    Parameters
    ----------
    design : Composition or rational ρ
    delta : rational or callable ``f(dps) -> mpf`` in (0, 1)

    Returns
    -------
    BoundPoint

    Notes
    -----
    Method: closed form at 50 digits.  Error bound: rounding, ``rel_error`` 1e-40.
    Reference: M. Bun and T. Steinke, Concentrated differential privacy (TCC 2016).
    """
    rho = _rho(design)
    with mpmath.workdps(_DPS):
        d = _delta_in(delta)
        r = to_mpf(rho)
        eps = r + 2 * mpmath.sqrt(r * mpmath.log(1 / d))
        return BoundPoint("bun-steinke", +eps, +d, None, True, REL_ERROR)


def bun_steinke_delta(design, eps) -> BoundPoint:
    """δ(ε) = exp(−(ε−ρ)²/(4ρ)) for ε ≥ ρ (1 below), the inverse of :func:`bun_steinke_eps`.

    Notes
    -----
    Method: closed form at 50 digits.  Error bound: rounding, 1e-40 relative.
    Reference: Bun & Steinke (2016), Prop. 1.3.
    """
    rho = _rho(design)
    with mpmath.workdps(_DPS):
        e = _mpf(eps, "epsilon")
        r = to_mpf(rho)
        d = mpmath.mpf(1) if e <= r else mpmath.exp(-((e - r) ** 2) / (4 * r))
        return BoundPoint("bun-steinke", +e, +d, None, True, REL_ERROR)


# ----------------------------------------------------------------------------- CKS
def _cks_log_objective(alpha, r, e):
    return (alpha - 1) * (alpha * r - e) - mpmath.log(alpha - 1) + alpha * mpmath.log(1 - 1 / alpha)


def _cks_alpha(r, e):
    """Root of ``G(α) = (2α−1)ρ − ε + log(1−1/α)`` (increasing, concave): the optimal order.

    Safeguarded Newton (bisection fallback) to 1e-35 relative."""

    def g(a):
        return (2 * a - 1) * r - e + mpmath.log(1 - 1 / a)

    lo = mpmath.mpf(1)
    hi = mpmath.mpf(2)
    while g(hi) < 0:
        lo, hi = hi, 2 * hi
    x = hi
    tol = mpmath.mpf(10) ** (-35)
    for _ in range(300):
        gx = g(x)
        if gx < 0:
            lo = x
        else:
            hi = x
        nx = x - gx / (2 * r + 1 / (x * (x - 1)))
        if not lo < nx < hi:
            nx = (lo + hi) / 2
        if abs(nx - x) <= tol * x or hi - lo <= tol * hi:
            return nx
        x = nx
    return (lo + hi) / 2


def cks_delta(design, eps) -> BoundPoint:
    """The optimal zCDP → (ε, δ) conversion of Canonne, Kamath & Steinke (2020).

    ``δ = inf_{α>1} exp((α−1)(αρ−ε))/(α−1) · (1−1/α)^α`` (capped at 1).

    Notes
    -----
    Method: the log-objective is convex in α (second derivative 2ρ + 1/(α(α−1)) > 0);
    α* is found by bisection on the derivative to 1e-40 and the objective is evaluated
    there (any α gives a valid bound).  Error bound: rounding, 1e-40 relative.
    Reference: C. Canonne, G. Kamath, T. Steinke, The discrete Gaussian for differential
    privacy (NeurIPS 2020), Corollary 13.
    """
    rho = _rho(design)
    with mpmath.workdps(_DPS):
        e = _mpf(eps, "epsilon")
        r = to_mpf(rho)
        a = _cks_alpha(r, e)
        d = min(mpmath.mpf(1), mpmath.exp(_cks_log_objective(a, r, e)))
        return BoundPoint("cks", +e, +d, +a, True, REL_ERROR)


def cks_epsilon(design, delta) -> BoundPoint:
    """Smallest ε with :func:`cks_delta` ≤ δ (the CKS conversion, inverted).

    Notes
    -----
    Method: bisection on the monotone δ_CKS(ε) to 1e-45 relative, returning the upper
    end (so δ_CKS(ε) ≤ δ holds at the returned ε).  Error bound: 1e-40 relative.
    Reference: Canonne, Kamath & Steinke (2020), Corollary 13.
    """
    rho = _rho(design)
    with mpmath.workdps(_DPS):
        d = _delta_in(delta)
        r = to_mpf(rho)

        ld = mpmath.log(d)

        def logdelta(e):
            return _cks_log_objective(_cks_alpha(r, e), r, e)

        # log δ_CKS(ε) is convex decreasing with slope −(α*−1) (envelope theorem):
        # Newton from the left (δ_CKS(0) ≥ δ when ε > 0 is needed) converges monotonically.
        lo, hi = mpmath.mpf(0), r + 2 * mpmath.sqrt(r * mpmath.log(1 / d))  # BS: valid upper
        if logdelta(lo) <= ld:
            e = lo
        else:
            e = lo
            for _ in range(200):
                a = _cks_alpha(r, e)
                f = _cks_log_objective(a, r, e) - ld
                if f > 0:
                    lo = max(lo, e)
                else:
                    hi = min(hi, e)
                ne = e + f / (a - 1)
                if not lo <= ne <= hi:
                    ne = (lo + hi) / 2
                if abs(ne - e) <= mpmath.mpf(10) ** (-40) * (1 + abs(e)):
                    break
                e = ne
            e = hi if logdelta(e) > ld else e
        return BoundPoint("cks", +e, +d, +_cks_alpha(r, e), True, REL_ERROR)


# ----------------------------------------------------------------------------- RDP
def _log_theta_ratio(t, s2):
    """log(θ(t)/θ(0)), θ(t) = Σ_x exp(−(x−t)²/(2σ²)), via Poisson summation.

    θ(t)/θ(0) = (1 + 2Σ q^{k²} cos 2πkt)/(1 + 2Σ q^{k²}), q = e^{−2π²σ²}; the difference is
    computed as −4Σ q^{k²} sin²(πkt) to keep relative accuracy when it is tiny.
    """
    q = mpmath.exp(-2 * mpmath.pi**2 * s2)
    if q == 0:
        return mpmath.mpf(0)
    num = mpmath.mpf(0)
    den = mpmath.mpf(1)
    k = 1
    while True:
        qk = q ** (k * k)
        num += -4 * qk * mpmath.sin(mpmath.pi * k * t) ** 2
        den += 2 * qk
        if qk < mpmath.mpf(10) ** (-(mpmath.mp.dps + 5)) or k > 10**4:
            break
        k += 1
    return mpmath.log1p(num / den)


def renyi_divergence(design: Composition, alpha) -> mpmath.mpf:
    """Exact Rényi divergence D_α(P‖Q) of the discrete composition (α > 1).

    Parameters
    ----------
    design : Composition
    alpha : rational, mpf or callable; must be > 1

    Returns
    -------
    mpmath.mpf
        ``Σ_g m_g [αΔ²/(2σ²) + log(θ(−(α−1)Δ)/θ(0))/(α−1)]`` (≤ αρ).

    Notes
    -----
    Method: completing the square, ``Σ_x p^α q^{1−α} = e^{α(α−1)Δ²/(2σ²)} θ((1−α)Δ)/θ(0)``;
    θ by Poisson summation (series truncated below 1e-55 relative).  Error bound:
    1e-40 relative.  Reference: Canonne, Kamath & Steinke (2020), Prop. 7 (the bound
    D_α ≤ αρ); Mironov (2017) for RDP composition.
    """
    if not isinstance(design, Composition):
        raise InputError("design", design, "expected an exactdp.Composition")
    with mpmath.workdps(_DPS):
        a = _mpf(alpha, "alpha")
        if not a > 1:
            raise InputError("alpha", alpha, "must be > 1")
        return +_renyi(design, a)


def _renyi(design, a):
    total = mpmath.mpf(0)
    for mech, count in design.groups:
        if mech.shift == 0:
            continue
        s2 = to_mpf(mech.sigma2)
        d = mech.shift
        term = a * d * d / (2 * s2) + _log_theta_ratio((1 - a) * d, s2) / (a - 1)
        total += count * term
    return total


def _rdp_log_delta(design, a, e):
    """log δ of the RDP conversion at order α (Balle et al. 2020 / CKS Prop. 12)."""
    return (a - 1) * (_renyi(design, a) - e + mpmath.log(1 - 1 / a)) - mpmath.log(a)


def _golden_min(fn, lo, hi, iters=60):
    gr = (mpmath.sqrt(5) - 1) / 2
    x1, x2 = hi - gr * (hi - lo), lo + gr * (hi - lo)
    f1, f2 = fn(x1), fn(x2)
    for _ in range(iters):
        if f1 < f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - gr * (hi - lo)
            f1 = fn(x1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + gr * (hi - lo)
            f2 = fn(x2)
    return (x1, f1) if f1 < f2 else (x2, f2)


def _rdp_best_alpha(design, e, rho):
    """Order minimising the RDP log-δ: start from the CKS optimum, scan a log grid around
    it, refine by golden section on log(α−1)."""
    a0 = _cks_alpha(rho, e)
    t0 = mpmath.log(a0 - 1)

    def obj(t):
        return _rdp_log_delta(design, 1 + mpmath.exp(t), e)

    grid = [t0 + mpmath.mpf(k) / 4 for k in range(-12, 13)]
    vals = [obj(t) for t in grid]
    i = min(range(len(grid)), key=lambda k: vals[k])
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    t, v = _golden_min(obj, lo, hi)
    if vals[i] < v:
        t, v = grid[i], vals[i]
    return 1 + mpmath.exp(t), v


def rdp_delta(design: Composition, eps) -> BoundPoint:
    """δ(ε) from the exact RDP curve with the improved conversion, optimised over α.

    ``δ = inf_α exp((α−1)(D_α − ε + log(1−1/α)) − log α)``.

    Notes
    -----
    Method: log-grid scan around the CKS optimum then golden section; the value at the
    returned α is a valid bound whatever the optimiser's accuracy.  Error bound: 1e-40
    relative.  Reference: Balle, Barthe, Gaboardi, Hsu & Sato, Hypothesis testing
    interpretations and Rényi DP (AISTATS 2020), Thm 21; CKS (2020), Prop. 12.
    """
    if not isinstance(design, Composition):
        raise InputError("design", design, "expected an exactdp.Composition")
    with mpmath.workdps(_DPS):
        e = _mpf(eps, "epsilon")
        r = to_mpf(design.rho)
        a, logd = _rdp_best_alpha(design, e, r)
        return BoundPoint("rdp", +e, min(mpmath.mpf(1), mpmath.exp(logd)), +a, True, REL_ERROR)


def rdp_epsilon(design: Composition, delta) -> BoundPoint:
    """ε(δ) = min_α D_α + log((α−1)/α) − (log δ + log α)/(α−1) (exact RDP curve).

    Notes
    -----
    Method: golden section on log(α−1) around the CKS optimum after a grid scan.
    Error bound: 1e-40 relative (any α gives a valid bound).  Reference: Balle et al.
    (2020), Thm 21; CKS (2020), Prop. 12.
    """
    if not isinstance(design, Composition):
        raise InputError("design", design, "expected an exactdp.Composition")
    with mpmath.workdps(_DPS):
        d = _delta_in(delta)
        r = to_mpf(design.rho)
        ld = mpmath.log(d)

        def obj(t):
            a = 1 + mpmath.exp(t)
            return _renyi(design, a) + mpmath.log(1 - 1 / a) - (ld + mpmath.log(a)) / (a - 1)

        e_cks = r + 2 * mpmath.sqrt(r * mpmath.log(1 / d))
        t0 = mpmath.log(_cks_alpha(r, e_cks) - 1)
        grid = [t0 + mpmath.mpf(k) / 3 for k in range(-18, 19)]
        vals = [obj(t) for t in grid]
        i = min(range(len(grid)), key=lambda k: vals[k])
        t, v = _golden_min(obj, grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)])
        if vals[i] < v:
            t, v = grid[i], vals[i]
        return BoundPoint("rdp", +v, +d, 1 + mpmath.exp(t), True, REL_ERROR)


# ----------------------------------------------------------------------------- GDP
def gdp_mu(design) -> mpmath.mpf:
    """μ = sqrt(Σ Δ²/σ²) = sqrt(2ρ) of the continuous-Gaussian counterpart (50 digits)."""
    rho = _rho(design)
    with mpmath.workdps(_DPS):
        return mpmath.sqrt(2 * to_mpf(rho))


def _gdp_delta_mp(mu, e):
    return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)


def gdp_delta(design, eps) -> BoundPoint:
    """δ(ε) of μ-GDP, μ² = 2ρ: ``Φ(−ε/μ+μ/2) − e^ε Φ(−ε/μ−μ/2)``.

    Not a bound for discrete noise (``is_bound=False``); see the module notes.

    Notes
    -----
    Method: closed form, evaluated at 50 + ε/2 digits (the two terms cancel by at most
    a factor e^{ε/2}·poly).  Error bound: 1e-40 relative.  Reference: Dong, Roth & Su,
    Gaussian differential privacy (JRSS-B 2022), Cor. 2.13.
    """
    rho = _rho(design)
    with mpmath.workdps(_DPS):
        e = _mpf(eps, "epsilon")
    with mpmath.workdps(_DPS + int(abs(e)) // 2 + 5):
        mu = mpmath.sqrt(2 * to_mpf(rho))
        d = _gdp_delta_mp(mu, mpmath.mpf(e))
    with mpmath.workdps(_DPS):
        return BoundPoint("gdp", +e, +d, None, False, REL_ERROR)


def gdp_epsilon(design, delta) -> BoundPoint:
    """ε(δ) of μ-GDP (μ² = 2ρ) by bisection on the decreasing δ(ε).  Not a bound.

    Notes
    -----
    Method: bisection to 1e-45 relative at 60 + ε/2 digits.  Error bound: 1e-40
    relative.  Reference: Dong, Roth & Su (2022), Cor. 2.13.
    """
    rho = _rho(design)
    with mpmath.workdps(_DPS):
        d = _delta_in(delta)
        r = to_mpf(rho)
        hi0 = r + 2 * mpmath.sqrt(r * mpmath.log(1 / d)) + 1
    with mpmath.workdps(_DPS + int(hi0) // 2 + 10):
        mu = mpmath.sqrt(2 * to_mpf(rho))
        e = _bisect_decreasing(lambda x: _gdp_delta_mp(mu, x), d, mpmath.mpf(-1) * 0, hi0)
    with mpmath.workdps(_DPS):
        return BoundPoint("gdp", +e, +d, None, False, REL_ERROR)
