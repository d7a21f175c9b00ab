"""Edgeworth expansion of the composed privacy loss around its Gaussian limit.

Under P the privacy loss is ``L = c − W`` (c = ρ), ``W = Σ w_i X_i``, X_i ~ N_Z(0, σ_i²),
supported on the lattice ``c + hℤ`` with ``h = 1/scale`` (:mod:`exactdp.engine.lattice`).  Since
``δ(ε) = E_P[(1 − e^{ε−L})₊]``, approximating the lattice pmf by ``h·f(l)`` with the
Edgeworth density f of L (cumulants κ₂, κ₄, κ₆ of the discrete Gaussians; the odd ones
vanish by symmetry) gives

    δ(ε) ≈ ∫_ε^∞ f(l)(1 − e^{ε−l}) dl  −  Σ_{r≥2} h^r B_r(t)/r! · g^{(r−1)}(ε),

the second sum being the Euler–Maclaurin (lattice / continuity) correction of the sum over
lattice points ``ε + (k + t)h``, k ≥ 0, ``t ∈ (0, 1]`` the offset of the first lattice
point above ε, ``g(l) = f(l)(1 − e^{ε−l})`` (g(ε) = 0, so the r = 1 term vanishes) and
``g^{(n)}(ε) = Σ_{j<n} C(n, j) f^{(j)}(ε)(−1)^{n−j+1}``.

What it shows.  The cumulants of N_Z(0, σ²) equal the Gaussian ones up to O(e^{−2π²σ²})
(Poisson summation), so for m identical mechanisms at fixed total ρ (σ² = m/(2ρ) grows) the
cumulant corrections vanish faster than any power of m and the leading difference between the
exact profile and its Gaussian (GDP, μ² = 2ρ) limit is the lattice term
``−h²B₂(t)/2·f(ε)``, h = 2ρ/m: **exact − Gaussian = Θ(m^{-2})**, inside the
O(m^{-3/2}) rate stated by Su, Su & Wang.  Its sign follows B₂(t) = t² − t + 1/6, so the
Gaussian curve is neither an upper nor a lower bound of the discrete one.

Where it is usable: when the lattice pmf is smooth on its span (the characteristic function
of the lattice sum has no secondary peaks — large σ² on the finest-weight groups) and σ² ≳ 1;
not for a few mechanisms with σ² ≲ 1 (the cumulant series is then poor and the pmf is far
from h·f), nor for heterogeneous designs whose coarse groups create secondary peaks (aliased
terms, e.g. the DHC pair (6, 6)), which the expansion does not contain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath

from exactdp.accounting.accountant import ExactAccountant
from exactdp.engine.lattice import lattice_of
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.exact import InputError, as_real, to_fraction
from exactdp.numerics.precision import DPS_ANALYSIS, to_mpf

__all__ = ["dg_cumulants", "loss_cumulants", "EdgeworthPoint", "edgeworth_delta", "RateRow", "rate_table", "fit_slope"]

_DPS = DPS_ANALYSIS


def dg_cumulants(sigma2) -> tuple:
    """Cumulants (κ₂, κ₄, κ₆, κ₈) of N_Z(0, σ²) (odd ones vanish).

    Notes
    -----
    Method: direct moment sums Σ x^{2k} e^{−x²/(2σ²)} over |x| ≤ σ·sqrt(2·130 ln 10) + 2
    (truncated mass < 1e-120) for σ² < 50; above, the Gaussian values (σ², 0, 0, 0), the
    difference being O(σ⁸ e^{−2π²σ²}) < 1e-400 (Poisson summation).  Error bound:
    1e-45 relative at 50 digits.  Reference: Canonne, Kamath & Steinke (2020), §2.
    """
    s2 = to_fraction(sigma2, "sigma2")
    if s2 <= 0:
        raise InputError("sigma2", sigma2, "must be > 0")
    with mpmath.workdps(_DPS):
        v = to_mpf(s2)
        if v >= 50:
            return (v, mpmath.mpf(0), mpmath.mpf(0), mpmath.mpf(0))
        xmax = int(math.sqrt(float(v) * 2 * 130 * math.log(10))) + 2
        z = mpmath.mpf(1)
        mom = [mpmath.mpf(0)] * 5
        for x in range(1, xmax + 1):
            p = 2 * mpmath.exp(-mpmath.mpf(x * x) / (2 * v))
            z += p
            x2 = mpmath.mpf(x * x)
            for k in range(1, 5):
                mom[k] += p * x2**k
        m2, m4, m6, m8 = (mom[k] / z for k in range(1, 5))
        k4 = m4 - 3 * m2**2
        k6 = m6 - 15 * m4 * m2 + 30 * m2**3
        k8 = m8 - 28 * m6 * m2 - 35 * m4**2 + 420 * m4 * m2**2 - 630 * m2**4
        return (m2, k4, k6, k8)


def loss_cumulants(design: Composition) -> dict:
    """Mean and even cumulants of the privacy loss L under P: {1: ρ, 2: κ₂, 4: κ₄, 6: κ₆, 8: κ₈}.

    ``κ_r(L) = Σ_g m_g w_g^r κ_r(X_g)`` (r even), w = Δ/σ².  Error bound as
    :func:`dg_cumulants`.
    """
    if not isinstance(design, Composition):
        raise InputError("design", design, "expected an exactdp.Composition")
    with mpmath.workdps(_DPS):
        out = {1: to_mpf(design.rho)}
        for r in (2, 4, 6, 8):
            out[r] = mpmath.mpf(0)
        for mech, count in design.groups:
            if mech.shift == 0:
                continue
            w = to_mpf(mech.shift / mech.sigma2)
            for r, k in zip((2, 4, 6, 8), dg_cumulants(mech.sigma2)):
                out[r] += count * w**r * k
        return out


def _hermite(n, z):
    """Probabilists' Hermite polynomials He_0..He_n at z."""
    he = [mpmath.mpf(1), +z]
    for k in range(1, n):
        he.append(z * he[k] - k * he[k - 1])
    return he[: n + 1]


def _series(cum):
    """Edgeworth coefficients {k: c_k} of f = φ(z)/s·Σ c_k He_k(z) (through order m^{-2})."""
    s2 = cum[2]
    l4, l6 = cum[4] / s2**2, cum[6] / s2**3
    return {0: mpmath.mpf(1), 4: l4 / 24, 6: l6 / 720, 8: l4**2 / 1152}


@dataclass(frozen=True)
class EdgeworthPoint:
    """Edgeworth approximation of δ(ε), with its parts.

    Attributes
    ----------
    epsilon : mpf
    gaussian : mpf
        The Gaussian-limit (continuous, variance κ₂) value.
    continuous : mpf
        Continuous Edgeworth integral (Gaussian + cumulant terms).
    lattice : mpf
        Euler–Maclaurin lattice correction (orders h² … h^R).
    delta : mpf
        ``continuous + lattice``: the approximation.  It is **not** a bound: its error is
        the next Edgeworth/EM order plus aliasing (module notes), not certified.
    offset : mpf
        t ∈ (0, 1]: position of the first lattice point above ε, in units of h.
    span : mpf
        The lattice span h of L.
    """

    epsilon: mpmath.mpf
    gaussian: mpmath.mpf
    continuous: mpmath.mpf
    lattice: mpmath.mpf
    delta: mpmath.mpf
    offset: mpmath.mpf
    span: mpmath.mpf


def _tail_moment(k, a):
    """∫_a^∞ φ(z) He_k(z) dz."""
    return mpmath.ncdf(-a) if k == 0 else mpmath.npdf(a) * _hermite(k - 1, a)[k - 1]


def _continuous(coef, mu, s, e):
    a = (e - mu) / s
    first = sum(c * _tail_moment(k, a) for k, c in coef.items())
    # ∫_a^∞ e^{−sz} φ(z) He_k(z) dz = e^{s²/2} ∫_{a+s}^∞ φ(y) He_k(y − s) dy (Appell expansion)
    second = mpmath.mpf(0)
    for k, c in coef.items():
        second += c * sum(mpmath.binomial(k, j) * (-s) ** (k - j) * _tail_moment(j, a + s) for j in range(k + 1))
    return first - mpmath.exp(e - mu + s * s / 2) * second


def edgeworth_delta(design: Composition, epsilons, *, em_order: int = 10) -> tuple:
    """Edgeworth + lattice approximation of δ(ε) for each ε (rational or callable).

    Parameters
    ----------
    design : Composition
    epsilons : iterable
    em_order : int
        Highest Euler–Maclaurin order R (h^R); default 10.

    Returns
    -------
    tuple of EdgeworthPoint

    Notes
    -----
    Method: module notes (closed-form Gaussian–Hermite integrals at 50 digits).  Error:
    an asymptotic approximation, not a bound — the neglected terms are O(m^{-3}) cumulant
    terms, O(h^{R+1}) lattice terms and the aliasing of secondary characteristic-function
    peaks.  Reference: Petrov, Sums of independent random variables (1975), ch. VI
    (Edgeworth / lattice expansions); Su, Su & Wang (the O(m^{-3/2}) rate).
    """
    cum = loss_cumulants(design)
    lat = lattice_of(design)
    out = []
    with mpmath.workdps(_DPS):
        mu, s = cum[1], mpmath.sqrt(cum[2])
        h = to_mpf(1 / lat.scale)
        coef = _series(cum)
        for eps in epsilons:
            e_real = as_real(eps, "epsilon")
            e = to_mpf(e_real) if isinstance(e_real, Fraction) else e_real(_DPS)
            k1 = lat.threshold_above(e_real - lat.c if isinstance(e_real, Fraction) else
                                     (lambda dps, f=e_real: f(dps) - to_mpf(lat.c)))
            t = (to_mpf(lat.c) + k1 * h - e) / h
            gauss = _continuous({0: mpmath.mpf(1)}, mu, s, e)
            cont = _continuous(coef, mu, s, e)
            z = (e - mu) / s
            he = _hermite(max(coef) + em_order, z)
            fder = [mpmath.npdf(z) / s * (-1 / s) ** j * sum(c * he[k + j] for k, c in coef.items())
                    for j in range(em_order)]
            corr = mpmath.mpf(0)
            for r in range(2, em_order + 1):
                n = r - 1
                g = sum(mpmath.binomial(n, j) * fder[j] * (-1) ** (n - j + 1) for j in range(n))
                corr -= h**r * mpmath.bernpoly(r, t) / mpmath.factorial(r) * g
            out.append(EdgeworthPoint(e, gauss, cont, corr, cont + corr, t, h))
    return tuple(out)


# ----------------------------------------------------------------------------- rate study
@dataclass(frozen=True)
class RateRow:
    """One row of the rate study: m identical mechanisms at fixed total ρ.

    ``exact`` is certified to ``exact_error``; ``gaussian`` is the GDP value (μ² = 2ρ);
    ``edgeworth`` the approximation of :func:`edgeworth_delta`.
    """

    m: int
    sigma2: Fraction
    epsilon: Fraction
    exact: mpmath.mpf
    exact_error: mpmath.mpf
    gaussian: mpmath.mpf
    edgeworth: mpmath.mpf

    @property
    def gap(self) -> mpmath.mpf:
        """exact − Gaussian."""
        return self.exact - self.gaussian

    @property
    def residual(self) -> mpmath.mpf:
        """exact − Edgeworth."""
        return self.exact - self.edgeworth


def rate_table(rho="1/2", ms=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024), epsilons=("1/2", "3/2")) -> list:
    """Exact vs Gaussian vs Edgeworth δ(ε) for m identical unit-shift discrete Gaussians
    with σ² = m/(2ρ) (total zCDP ρ fixed).

    Notes
    -----
    Method: exact values from :class:`ExactAccountant` (certified), GDP closed form,
    :func:`edgeworth_delta`.  Reference: Su, Su & Wang (Edgeworth explanation of the
    discrete/continuous gap).
    """
    from exactdp.conversions.bounds import gdp_delta

    rho = to_fraction(rho, "rho")
    eps = [to_fraction(e, "epsilon") for e in epsilons]
    rows = []
    for m in ms:
        s2 = Fraction(m) / (2 * rho)
        comp = Composition(((DiscreteGaussian(s2), int(m)),))
        exact = ExactAccountant(comp).delta(eps)
        ew = edgeworth_delta(comp, eps)
        for e, ex, w in zip(eps, exact, ew):
            rows.append(RateRow(int(m), s2, e, ex.estimate, ex.error_bound, gdp_delta(rho, e).delta, w.delta))
    return rows


def fit_slope(ms, values, m_min: int = 8) -> float:
    """Least-squares slope of log|value| against log m over m ≥ m_min."""
    pts = [(math.log(m), math.log(abs(float(v)))) for m, v in zip(ms, values) if m >= m_min and v != 0]
    if len(pts) < 2:
        raise ValueError("need at least two points with m >= m_min")
    n = len(pts)
    mx = sum(p[0] for p in pts) / n
    my = sum(p[1] for p in pts) / n
    return sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
