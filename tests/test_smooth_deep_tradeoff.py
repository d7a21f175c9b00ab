"""β(α) of designs with a continuous Gaussian off the tuned regime: α down to 1e-300 and up to
1 − 1e-300, β down to 1e-2386 (issue 35: these were refused below β ≈ 1e-100).

The reference (nothing of exactdp's engine) is the Neyman–Pearson test written out by
conditioning on the discrete part: with finite loss atoms ``(v_i, p_i, q_i)`` (``q_i =
p_i e^{−v_i}``, from the output distributions in ``tests/mixed_brute.py``) and the Gaussians'
loss ``N(ρ, 2ρ)`` under P, ``N(−ρ, 2ρ)`` under Q, the test rejecting ``L ≤ τ`` has

    α(τ) = Σ p_i Φ((τ − v_i − ρ)/s),   β(τ) = Σ q_i Φ((v_i − ρ − τ)/s),   s = √(2ρ)

(sums of positive terms: no cancellation), τ solved for α(τ) = α by bisection and the Illinois method at 120
digits on ``log α(τ)`` (or on ``1 − α(τ) = Σ p_i Φ((v_i + ρ − τ)/s)`` against the exact
``1 − α``).  One Gaussian alone is also checked against ``Φ(Φ⁻¹(1 − α) − μ)``."""

from __future__ import annotations

from fractions import Fraction

import mixed_brute as brute
import mpmath
import pytest

from exactdp import DiscreteLaplace, ExactAccountant, Gaussian, Mixture, RandomizedResponse

DPS = 120
REL = mpmath.mpf("1e-9")
ALPHAS = [Fraction(1, 10**300), Fraction(1, 10**100), Fraction(1, 10**9), Fraction(1, 2),
          1 - Fraction(1, 10**6), 1 - Fraction(1, 10**300)]


def _m(q: Fraction) -> mpmath.mpf:
    return mpmath.mpf(q.numerator) / q.denominator


def _np_beta(atoms: list, rho: Fraction, alpha: Fraction) -> mpmath.mpf:
    """β(α) of the finite atoms ``[(v, p, q)]`` composed with Gaussians of total ρ (module
    docstring), at :data:`DPS` digits."""
    with mpmath.workdps(DPS):
        r, s = _m(rho), mpmath.sqrt(2 * _m(rho))
        low = alpha <= Fraction(1, 2)
        target = mpmath.log(_m(alpha if low else 1 - alpha))

        def side(tau):  # log α(τ) (increasing) or log(1 − α(τ)) (decreasing)
            if low:
                return mpmath.log(mpmath.fsum(p * mpmath.ncdf((tau - v - r) / s) for v, p, _ in atoms))
            return mpmath.log(mpmath.fsum(p * mpmath.ncdf((v + r - tau) / s) for v, p, _ in atoms))

        a, b = mpmath.mpf(-1), mpmath.mpf(1)
        while (side(a) > target) == low:
            a *= 2
        while (side(b) < target) == low:
            b *= 2
        for _ in range(40):  # bisection to 2^−40 of the bracket, then the bracketed Illinois method
            mid = (a + b) / 2
            if (side(mid) < target) == low:
                a = mid
            else:
                b = mid
        tol = mpmath.mpf(10) ** (-2 * DPS + 20)
        tau = mpmath.findroot(lambda t: side(t) - target, (a, b), solver="illinois", tol=tol)
        assert a <= tau <= b and abs(side(tau) - target) <= mpmath.mpf(10) ** (20 - DPS)
        return mpmath.fsum(q * mpmath.ncdf((v - r - tau) / s) for v, _, q in atoms)


def _atoms(groups) -> list:
    d, tail = brute.joint(groups)
    assert tail < mpmath.mpf("1e-390") and all(abs(k) != brute.INF for k in d)
    return [(_m(k), p, q) for k, (p, q) in d.items() if p > 0]


def _check(pt, ref, what):
    """The engine's bracket holds the reference (to its 1e-100 relative accuracy) and is ≤ 1e-9
    relative (absolute below 1e-4000, the engine's floor)."""
    with mpmath.workdps(DPS):
        assert pt.upper >= ref * (1 - mpmath.mpf(10) ** -100), (what, pt, ref)
        assert pt.lower <= ref * (1 + mpmath.mpf(10) ** -100), (what, pt, ref)
        assert pt.upper - pt.lower <= REL * max(ref, mpmath.mpf("1e-4000")), (what, pt, ref)


def test_reference_against_the_single_gaussian_closed_form():
    """The conditioned reference with no discrete part is ``Φ(Φ⁻¹(1 − α) − μ)`` (Dong, Roth & Su)."""
    for sigma2 in (Fraction(1), Fraction(1, 100)):
        mu = 1 / mpmath.sqrt(_m(sigma2))
        for a in (Fraction(1, 10**9), Fraction(1, 2), 1 - Fraction(1, 10**6)):
            with mpmath.workdps(DPS):
                closed = mpmath.ncdf(-mpmath.sqrt(2) * mpmath.erfinv(2 * _m(a) - 1) - mu)
                got = _np_beta([(mpmath.mpf(0), mpmath.mpf(1), mpmath.mpf(1))], 1 / (2 * sigma2), a)
                assert abs(got - closed) <= mpmath.mpf(10) ** -90 * closed, (sigma2, a, got, closed)


@pytest.mark.parametrize("sigma2", ["1", "1/100", "1/3600", "1/10000"])
def test_one_gaussian_deep(sigma2):
    """One Gaussian, shift 1: β from 0.16 down to 6e-2387 (σ² = 1/10000, α = 1 − 1e-6)."""
    s2 = Fraction(sigma2)
    pts = ExactAccountant(Mixture(((Gaussian(s2), 1),))).tradeoff(ALPHAS)
    unit = [(mpmath.mpf(0), mpmath.mpf(1), mpmath.mpf(1))]
    for a, pt in zip(ALPHAS, pts):
        _check(pt, _np_beta(unit, 1 / (2 * s2), a), (sigma2, float(a)))


@pytest.mark.parametrize("groups", [
    ((Gaussian("1/400"), 1), (RandomizedResponse("1/2"), 1)),
    ((Gaussian("1/900", 2), 1), (DiscreteLaplace("5/2"), 2)),
    ((Gaussian("1/50"), 2), (RandomizedResponse(1, 3), 1), (DiscreteLaplace(3), 1)),
], ids=["gauss+rr", "gauss+dlap", "gauss2+rr3+dlap"])
def test_gaussian_beside_discrete_kinds_deep(groups):
    """Continuous Gaussians beside discrete kinds, β down to ~1e-1500."""
    rho = sum((m.rho * c for m, c in groups if isinstance(m, Gaussian)), Fraction(0))
    atoms = _atoms(tuple((m, c) for m, c in groups if not isinstance(m, Gaussian)))
    pts = ExactAccountant(Mixture(groups)).tradeoff(ALPHAS)
    for a, pt in zip(ALPHAS, pts):
        _check(pt, _np_beta(atoms, rho, a), float(a))
