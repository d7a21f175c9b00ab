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

from exactdp import DiscreteLaplace, ExactAccountant, Gaussian, Laplace, Mixture, RandomizedResponse

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


def _np_beta_laplace(atoms: list, mu: Fraction, alpha: Fraction) -> mpmath.mpf:
    """β(α) of the finite atoms ``[(v, p, q)]`` (v exact) composed with one Laplace of
    ``μ = |shift|/b``, by the Neyman–Pearson test on the total loss ``L = v + ℓ``.  The Laplace's
    loss ℓ (``tests/laplace_reference.py``): under P, ``P[ℓ < t] = e^{(t−μ)/2}/2`` on (−μ, μ]
    (the atom at −μ of mass e^{−μ}/2 and the density e^{(l−μ)/2}/4), 0 below, 1 above μ; under
    Q, ``Q[ℓ ≥ t] = e^{(−t−μ)/2}/2`` on (−μ, μ], 1 below, 0 above.  Rejecting ``L < τ``:
    ``α(τ) = Σ p_i P[ℓ < τ − v_i]``, ``β(τ) = Σ q_i Q[ℓ ≥ τ − v_i]`` (positive terms); where α
    falls in a jump of α(τ) at a knot k = v_i ± μ, part of the level L = k is rejected:
    ``β = Σ q_i Q[ℓ > k − v_i] + (α(k⁺) − α)·e^{−k}`` (Q = e^{−L}·P on the level)."""
    with mpmath.workdps(DPS):
        m = _m(mu)

        def p_lt(t, strict=True):  # P[ℓ < t] (strict) or P[ℓ ≤ t], t exact
            if t < -mu or (strict and t == -mu):
                return mpmath.mpf(0)
            if t > mu or (not strict and t == mu):
                return mpmath.mpf(1)
            return mpmath.exp((_m(t) - m) / 2) / 2 if t > -mu else mpmath.exp(-m) / 2

        def q_ge(t, strict=False):  # Q[ℓ ≥ t] or Q[ℓ > t] (strict)
            if t > mu or (strict and t == mu):
                return mpmath.mpf(0)
            if t < -mu or (not strict and t == -mu):
                return mpmath.mpf(1)
            return mpmath.exp((-_m(t) - m) / 2) / 2 if t < mu else mpmath.exp(-m) / 2

        # (α ≤ 1/2: α(k±) as sums; above: 1 − α(k±) = Σ p_i P[ℓ ≥ k − v_i] against the exact 1 − α,
        # positive terms either way — 1 − 1e-300 is 1 at 120 digits)
        sign, c = (1, _m(alpha)) if alpha <= Fraction(1, 2) else (-1, _m(1 - alpha))
        for k in sorted({v + s * mu for v, _, _ in atoms for s in (-1, 1)}):
            if sign > 0:
                lo = mpmath.fsum(p * p_lt(k - v) for v, p, _ in atoms)
                hi = mpmath.fsum(p * p_lt(k - v, strict=False) for v, p, _ in atoms)
            else:
                lo = mpmath.fsum(p * (1 - p_lt(k - v, strict=False)) for v, p, _ in atoms)  # 1 − α(k⁺)
                hi = mpmath.fsum(p * (1 - p_lt(k - v)) for v, p, _ in atoms)  # 1 − α(k⁻)
            if lo <= c <= hi and hi > lo:
                rest = mpmath.fsum(q * q_ge(k - v, strict=True) for v, _, q in atoms)
                return rest + ((hi - c) if sign > 0 else (c - lo)) * mpmath.exp(-_m(k))
        # otherwise α(τ) is continuous and strictly increasing at the answer: solve on log α or log(1 − α)
        low = alpha <= Fraction(1, 2)
        target = mpmath.log(_m(alpha if low else 1 - alpha))

        def side(tau):
            if low:
                return mpmath.log(mpmath.fsum(p * p_lt_real(tau - v, m) for v, p, _ in atoms))
            return mpmath.log(mpmath.fsum(p * (1 - p_lt_real(tau - v, m)) for v, p, _ in atoms))

        ks = sorted(_m(v) + s * m for v, _, _ in atoms for s in (-1, 1))
        lo_t, hi_t = ks[0], ks[-1]
        for _ in range(40):
            mid = (lo_t + hi_t) / 2
            if (side(mid) < target) == low:
                lo_t = mid
            else:
                hi_t = mid
        tau = mpmath.findroot(lambda t: side(t) - target, (lo_t, hi_t), solver="illinois",
                              tol=mpmath.mpf(10) ** (-2 * DPS + 20))
        return mpmath.fsum(q * q_ge_real(tau - v, m) for v, _, q in atoms)


def p_lt_real(t, m):
    """P[ℓ < t] at a real t off the knots (see :func:`_np_beta_laplace`)."""
    return mpmath.mpf(0) if t <= -m else mpmath.mpf(1) if t > m else mpmath.exp((t - m) / 2) / 2


def q_ge_real(t, m):
    """Q[ℓ ≥ t] at a real t off the knots."""
    return mpmath.mpf(1) if t <= -m else mpmath.mpf(0) if t > m else mpmath.exp((-t - m) / 2) / 2


def test_laplace_reference_against_the_single_closed_form():
    """The conditioned reference with no discrete part is the Laplace trade-off function of
    ``tests/laplace_reference.py`` (from the output distributions)."""
    import laplace_reference as lref

    for scale, alpha in (("2", Fraction(1, 10**9)), ("2", Fraction(1, 2)), ("1/3", 1 - Fraction(1, 10**6)),
                         ("1/1000", Fraction(1, 10**300))):
        got = _np_beta_laplace([(Fraction(0), mpmath.mpf(1), mpmath.mpf(1))], 1 / Fraction(scale), alpha)
        closed = lref.single_tradeoff(scale, 1, alpha)
        assert abs(got - closed) <= mpmath.mpf(10) ** -40 * closed, (scale, alpha, got, closed)


@pytest.mark.parametrize("groups", [
    ((Laplace("1/1000"), 1), (RandomizedResponse("1/2"), 1)),
    ((Laplace("1/20"), 1), (DiscreteLaplace("5/2"), 2), (RandomizedResponse(1, 3), 1)),
], ids=["laplace1000+rr", "laplace20+dlap+rr3"])
def test_laplace_beside_discrete_kinds_deep(groups):
    """One continuous Laplace beside discrete kinds, β down to ~1e-735."""
    lap = groups[0][0]
    d, tail = brute.joint(groups[1:])
    assert tail < mpmath.mpf("1e-390") and all(abs(k) != brute.INF for k in d)
    atoms = [(k, p, q) for k, (p, q) in d.items() if p > 0]
    pts = ExactAccountant(Mixture(groups)).tradeoff(ALPHAS)
    for a, pt in zip(ALPHAS, pts):
        _check(pt, _np_beta_laplace(atoms, lap.epsilon, a), float(a))
