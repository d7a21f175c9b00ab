"""Continuous Laplaces beside continuous Gaussians (and finite kinds, discrete-Gaussian windows)
against a reference written here, nothing of exactdp's engine: each Laplace is an atom at μ,
an atom at −μ or its continuous piece (masses ½, e^{−μ}/2, density e^{(l−μ)/2}/4 on (−μ, μ),
read off the output densities in ``tests/laplace_reference.py``); the choices are enumerated,
the c continuous pieces' sum has the tilted Irwin–Hall density, and each is integrated against
the Gaussian's hockey-stick ``δ_N(s) = Φ((ρ − s)/√(2ρ)) − e^s Φ((−ρ − s)/√(2ρ))`` by
``mpmath.quad`` on many pieces, its error estimate (times 100) widening the bracket; the finite
kinds' atoms come from ``tests/mixed_brute.py``.  ε(δ) is judged by the reference's δ at the
bracket's ends, β(α) against the reference's dual ``sup_ε 1 − δ(ε) − e^ε α`` (a golden search).
Never a wrong side; brackets ≤ 1e-9 relative."""

from __future__ import annotations

import math
from fractions import Fraction

import mixed_brute as brute
import mpmath
import pytest

from exactdp import DiscreteGaussian, ExactAccountant, Gaussian, InputError, Mixture, RandomizedResponse
from exactdp.kinds import ApproxDP
from exactdp.kinds.laplace import Laplace
from exactdp.kinds.laplace_gauss import MAX_COUNT_BESIDE_GAUSS

DPS = 25
REL = mpmath.mpf("1e-9")


def _m(q) -> mpmath.mpf:
    q = Fraction(q)
    return mpmath.mpf(q.numerator) / q.denominator


def _irwin_hall(y, c: int):
    if not 0 < y < c:
        return mpmath.mpf(0)
    y = min(y, c - y)
    return mpmath.fsum((-1) ** k * mpmath.binomial(c, k) * (y - k) ** (c - 1)
                       for k in range(int(mpmath.floor(y)) + 1)) / mpmath.factorial(c - 1)


def laplace_split(mu_q: Fraction, count: int, t: Fraction):
    """The ``count`` Laplaces of ``μ`` split by which of them sit at their atoms: ``a`` at +μ
    (P-mass 1/2 each), ``b`` at −μ (e^{−μ}/2 each), ``c`` continuous, whose sum has the density
    ``K^c e^{u/2} (2μ)^{c−1} IH_c((u + cμ)/(2μ))`` (K = e^{−μ/2}/4, IH_c Irwin–Hall).  Yields
    ``(mass, t − (a − b)μ, c, density)`` (density None for c = 0), at the caller's precision."""
    mu = _m(mu_q)
    k1 = mpmath.exp(-mu / 2) / 4
    for a in range(count + 1):
        for b in range(count + 1 - a):
            c = count - a - b
            mult = mpmath.factorial(count) / (mpmath.factorial(a) * mpmath.factorial(b) * mpmath.factorial(c))
            mass = mult * mpmath.mpf(2) ** -a * (mpmath.exp(-mu) / 2) ** b

            def dens(u, c=c):
                return k1**c * mpmath.exp(u / 2) * (2 * mu) ** (c - 1) * _irwin_hall((u + c * mu) / (2 * mu), c)

            yield mass, _m(t - (a - b) * mu_q), c, (dens if c else None)


def gauss_hockey(rho, sd):
    """``s ↦ E[(1 − e^{s − N})_+]`` for N ~ N(ρ, 2ρ) (``sd`` = √(2ρ)), in Φ form."""
    return lambda s: mpmath.ncdf((rho - s) / sd) - mpmath.exp(s) * mpmath.ncdf((-rho - s) / sd)


def ref_kernel(mu_q: Fraction, count: int, rho_q: Fraction, t: Fraction, dps: int = DPS, pieces: int = 3) -> tuple:
    """``(lo, hi)`` of ``E_P[(1 − e^{t − L})_+]`` for ``count`` Laplaces of ``μ`` and Gaussians of ρ
    (``pieces`` quadratures per knot interval, at ``dps`` digits)."""
    with mpmath.workdps(dps):
        mu, rho = _m(mu_q), _m(rho_q)
        d_n = gauss_hockey(rho, mpmath.sqrt(2 * rho))
        total, err = mpmath.mpf(0), mpmath.mpf(0)
        for mass, tt, c, dens in laplace_split(mu_q, count, t):
            if c == 0:
                total += mass * d_n(tt)
                continue
            pts = [-c * mu + 2 * mu * mpmath.mpf(k) / pieces for k in range(pieces * c + 1)]
            val, e = mpmath.quad(lambda u, tt=tt, dens=dens: dens(u) * d_n(tt - u), pts, error=True)
            total += mass * val
            err += mass * abs(e)
        slack = 100 * err + abs(total) * mpmath.mpf(10) ** (10 - dps)
        return total - slack, total + slack


def ref_delta(atoms: tuple, mu_q, count, rho_q, eps, **kw) -> tuple:
    """``(lo, hi)`` of δ(ε) of the finite atoms (``mixed_brute.joint``) beside the kernel."""
    d, tail = atoms
    lo = hi = mpmath.mpf(0)
    for k, (p, _) in d.items():
        if k == math.inf:
            lo, hi = lo + p, hi + p
        elif k != -math.inf and p:
            a, b = ref_kernel(mu_q, count, rho_q, Fraction(eps) - k, **kw)
            lo, hi = lo + p * a, hi + p * b
    return max(lo, mpmath.mpf(0)), hi + tail


def _inside(pt_lo, pt_hi, lo, hi, what):
    assert pt_hi >= lo and pt_lo <= hi, (what, pt_lo, pt_hi, lo, hi)
    assert pt_hi - pt_lo <= REL * max(hi, mpmath.mpf("1e-4000")), (what, pt_lo, pt_hi)


def _mu_rho(lap: Laplace, count: int, gaussians) -> tuple:
    return lap.epsilon, sum((g.rho * c for g, c in gaussians), Fraction(0))


def test_reference_single_laplace_closed_form_limit():
    """The reference's kernel with a negligible Gaussian (ρ = 1e-12) is the single Laplace's
    closed form ``1 − e^{(t−μ)/2}`` (the reference itself checked)."""
    mu, t = Fraction(2, 5), Fraction(1, 10)
    lo, hi = ref_kernel(mu, 1, Fraction(1, 10**12), t)
    with mpmath.workdps(DPS):
        closed = -mpmath.expm1((_m(t) - _m(mu)) / 2)
    assert abs((lo + hi) / 2 - closed) < 1e-5


DESIGNS = {
    # the audit's kind of design: one Laplace beside continuous Gaussians
    "lap+gauss": ((Laplace("5/2"), 1), ((Gaussian("9/4", "1/2"), 3),), ()),
    # two Laplaces, a tiny-variance Gaussian (ρ = 50), a randomized response
    "lap2+tiny-gauss+rr": ((Laplace("1/2"), 2), ((Gaussian("1/100"), 1),), ((RandomizedResponse("1/2"), 1),)),
    # large shifts; an (ε, δ) block (an atom at +∞)
    "big-shift+approx": ((Laplace("1/2", 7), 1), ((Gaussian(40, 8), 2),), ((ApproxDP(1, "1e-12"), 1),)),
    # a near-deterministic discrete Gaussian (σ² = 1/200) as exact windows beside both
    "lap+gauss+dg-tiny": ((Laplace(3, 2), 1), ((Gaussian(2), 1),), ((DiscreteGaussian("1/200"), 1),)),
}
#: the ε and the δ targets asked of each design (the reference's quadratures set the test's time)
QUERIES = {
    "lap+gauss": (["0", "1", "7/2", "15"], ["1e-3", "1e-10", "1e-300"]),
    "lap2+tiny-gauss+rr": (["0", "15"], ["1e-10", "1e-300"]),
    "big-shift+approx": (["0", "1", "7/2", "15"], ["1e-3", "1e-10"]),
    "lap+gauss+dg-tiny": (["0", "110"], ["1e-10"]),
}


def _design(name):
    (lap, count), gaussians, finite = DESIGNS[name]
    acc = ExactAccountant(Mixture(((lap, count),) + gaussians + finite))
    atoms = brute.joint(finite)
    mu, rho = _mu_rho(lap, count, gaussians)
    return acc, atoms, mu, count, rho


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_delta_and_epsilon(name):
    acc, atoms, mu, count, rho = _design(name)
    assert "laplace-gaussian-quadrature" in acc.diagnostics().method
    es, targets = QUERIES[name]
    for e, pt in zip(es, acc.delta(es)):
        lo, hi = ref_delta(atoms, mu, count, rho, e)
        _inside(pt.lower, pt.upper, lo, hi, (name, e))
    for target in targets:
        try:
            pt = acc.epsilon([target])[0]
        except InputError:  # (below the floor of the (ε, δ) block)
            assert name == "big-shift+approx" and target != "1e-3"
            continue
        tq = _m(Fraction(target))
        assert pt.upper - pt.lower <= REL * max(pt.upper, 1), (name, target, pt)
        lo_f = Fraction(*map(int, mpmath.mpf(pt.lower).as_integer_ratio()))
        hi_f = Fraction(*map(int, mpmath.mpf(pt.upper).as_integer_ratio()))
        if lo_f > 0:  # δ(ε_lower) ≥ target ≥ δ(ε_upper): the true ε inside
            assert ref_delta(atoms, mu, count, rho, lo_f)[1] >= tq, (name, target, "lower")
        assert ref_delta(atoms, mu, count, rho, hi_f)[0] <= tq, (name, target, "upper")


def _ref_beta(atoms, mu, count, rho, alpha: Fraction) -> tuple:
    """``(lo, hi)`` around ``β = sup_ε 1 − δ(ε) − e^ε α``: a golden search for the maximiser ε* on
    a coarse reference (20 digits), then the reference at ε* (every ε gives a lower bound; the
    maximum is flat, so ε* off by 1e-6 leaves β below by ~1e-12 of its scale: the ``hi`` slack 1e-11)."""
    a = _m(alpha)

    def g(e, **kw):  # (ε < 0: G = e^ε(1 − α − δ(−ε)), every part symmetric: no cancellation near α = 1)
        ef = Fraction(*map(int, mpmath.mpf(e).as_integer_ratio()))
        lo, hi = ref_delta(atoms, mu, count, rho, abs(ef), **kw)
        x = mpmath.exp(_m(ef))
        if ef >= 0:
            return ef, 1 - hi - x * a, 1 - lo - x * a
        return ef, x * (_m(1 - alpha) - hi), x * (_m(1 - alpha) - lo)

    with mpmath.workdps(20):
        x0, x1 = mpmath.mpf(-40), mpmath.mpf(60)
        r = (mpmath.sqrt(5) - 1) / 2
        c, d = x1 - r * (x1 - x0), x0 + r * (x1 - x0)
        gc, gd = g(c, dps=20, pieces=2)[1], g(d, dps=20, pieces=2)[1]
        while x1 - x0 > 1e-6:
            if gc > gd:
                x1, d, gd = d, c, gc
                c = x1 - r * (x1 - x0)
                gc = g(c, dps=20, pieces=2)[1]
            else:
                x0, c, gc = c, d, gd
                d = x0 + r * (x1 - x0)
                gd = g(d, dps=20, pieces=2)[1]
    _, lo, hi = g((x0 + x1) / 2)
    return lo, hi + abs(hi) * mpmath.mpf("1e-11")


@pytest.mark.parametrize("name", ["lap+gauss"])
def test_tradeoff(name):
    acc, atoms, mu, count, rho = _design(name)
    for alpha in (Fraction(1, 10**9), Fraction(1, 2), 1 - Fraction(1, 10**9)):
        pt = acc.tradeoff([alpha])[0]
        lo, hi = pt.lower, pt.upper
        ref_lo, ref_hi = _ref_beta(atoms, mu, count, rho, alpha)
        assert lo <= ref_hi and hi >= ref_lo, (name, alpha, lo, hi, ref_lo, ref_hi)
        assert hi - lo <= REL * max(hi, mpmath.mpf("1e-4000")), (name, alpha, lo, hi)


def test_deep_delta_and_count_limit():
    """δ near 1e-300 stays ≤ 1e-9 relative and inside the reference; more than
    MAX_COUNT_BESIDE_GAUSS Laplaces beside a Gaussian are refused by name."""
    acc, atoms, mu, count, rho = _design("lap+gauss")
    pt = acc.delta(["21"])[0]
    lo, hi = ref_delta(atoms, mu, count, rho, "21")
    assert hi < 1e-250
    _inside(pt.lower, pt.upper, lo, hi, "deep")
    with pytest.raises(InputError, match="laplace count"):
        ExactAccountant(Mixture(((Laplace(2), MAX_COUNT_BESIDE_GAUSS + 1), (Gaussian(4), 1)))).delta(["1"])
