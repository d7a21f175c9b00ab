"""Continuous Laplaces of several ``μ = |shift|/scale`` in one design (refused before: "different
|shift|/scale"), on every route that takes Laplaces, against a reference written here, nothing of
exactdp's engine: each group of Laplaces of one μ is split as in ``tests/test_laplace_beside.py``
(each Laplace an atom at ±μ or its continuous piece, the c continuous pieces' tilted Irwin–Hall
density); the groups' choices are enumerated, and where two groups both have continuous pieces
their joint density is integrated as a double ``mpmath.quad`` (the inner integral over the second
group's sum, split at its knots and at the kink; the outer split at the first group's knots and
where the inner crosses the second's), against ``(1 − e^{t−u})₊`` or the continuous Gaussians'
hockey-stick (Φ form).  Error estimates ×100 widen the bracket.  Finite kinds and discrete
Gaussians come from ``tests/mixed_brute.py`` (70-digit enumeration from the pmfs).

Routes: the finite loss's closed form (Laplaces alone, beside randomized responses), the discrete
Gaussians' atoms (too fine for windows, no continuous Gaussian), the Laplace + Gaussian quadrature
(beside continuous Gaussians alone) and the smoothed inversion (beside both Gaussians).  Off the
tuned regime: ε = 0, coinciding knots (μ = 1 and 1/2), μ = 20 beside μ = 1/50, δ near 1e-21,
ε(1e-6), the knots' budget refused with the approx_dp remedy.  Never a wrong side; brackets ≤ 1e-9
relative."""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import mixed_brute as brute
import mpmath
import pytest
from test_laplace_beside import gauss_hockey, laplace_split
from test_laplace_inversion import _f, atoms_delta

from exactdp import DiscreteGaussian, ExactAccountant, Gaussian, InputError, Mixture, RandomizedResponse
from exactdp.kinds.laplace import Laplace

REL = mpmath.mpf("1e-9")
DPS = 20
FINE = ((DiscreteGaussian("1/5"), 1), (DiscreteGaussian("200001/1000000", -1), 1))


def _m(q) -> mpmath.mpf:
    q = Fraction(q)
    return mpmath.mpf(q.numerator) / q.denominator


def kernel(groups, rho_q, t) -> tuple:
    """``(lo, hi)`` of ``E_P[(1 − e^{t − L − N})₊]``: L the Laplaces of ``groups`` (``(μ, count)``
    pairs, at most two groups with continuous pieces at a time), N the continuous Gaussians' loss
    N(ρ, 2ρ) (none for ρ = 0)."""
    with mpmath.workdps(DPS + 60):  # (the thresholds x = t − Σ atoms exact to 80 digits: t may sit 1e-20 below a knot)
        splits = [[(mass, -shift, c, dens, _m(mu_q)) for mass, shift, c, dens in laplace_split(mu_q, n, Fraction(0))]
                  for mu_q, n in groups]
        xs = [(_m(t) - mpmath.fsum(ch[1] for ch in choice), choice) for choice in product(*splits)]
    with mpmath.workdps(DPS):
        if rho_q:
            rho = _m(rho_q)
            hk = gauss_hockey(rho, mpmath.sqrt(2 * rho))
        else:
            def hk(s):
                return -mpmath.expm1(s) if s < 0 else mpmath.mpf(0)
        total = err = mpmath.mpf(0)
        for x, choice in xs:  # (x: the threshold less the atoms' sum)
            mass = mpmath.fprod(ch[0] for ch in choice)
            x = +x
            cont = [(c, dens, mu) for _, _, c, dens, mu in choice if c]
            if not cont:
                total += mass * hk(x)
                continue
            assert len(cont) <= 2
            val, e = _nested(cont, hk, x, not rho_q)
            total += mass * val
            err += mass * abs(e)
        slack = 100 * err + abs(total) * mpmath.mpf(10) ** (8 - DPS)
        return total - slack, total + slack


def _pts(c, mu, lo, hi, extra=()):
    """The knots of a c-fold piece (and ``extra`` points) inside ``[lo, hi]``, with the ends."""
    inner = [-c * mu + 2 * mu * k for k in range(1, c)] + list(extra)
    return [lo] + sorted(p for p in inner if lo < p < hi) + [hi]


def _single(c, dens, mu, hk, x, cut):
    """``∫ dens(u) hk(x − u) du`` over the piece (``cut``: hk vanishes for u ≤ x)."""
    lo = max(x, -c * mu) if cut else -c * mu
    if lo >= c * mu:
        return mpmath.mpf(0), mpmath.mpf(0)
    return mpmath.quad(lambda u: dens(u) * hk(x - u), _pts(c, mu, lo, c * mu, () if cut else (x,)), error=True)


def _nested(cont, hk, x, cut):
    """``∫ f(s) hk(x − s) ds`` with f the density of the pieces' sum: one piece's own, or two
    pieces' convolution ``f(s) = ∫ d1(u) d2(s − u) du`` (both c = 1: ``k1k2e^{s/2}`` times the
    length of ``{u ∈ (−μ1, μ1): s − u ∈ (−μ2, μ2)}``, each density ``k e^{u/2}`` checked at a few
    points; else an inner quad split at the knots), split at every sum of knots and at x."""
    if len(cont) == 1:
        return _single(*cont[0], hk, x, cut)
    (c1, d1, m1), (c2, d2, m2) = cont
    errs = [mpmath.mpf(0)]
    if c1 == c2 == 1:
        k1, k2 = d1(mpmath.mpf(0)), d2(mpmath.mpf(0))
        for d, k, m in ((d1, k1, m1), (d2, k2, m2)):
            for u in (-m / 2, m / 3):
                assert abs(d(u) - k * mpmath.exp(u / 2)) <= mpmath.mpf(10) ** (4 - mpmath.mp.dps) * k

        def dens(s):
            return k1 * k2 * mpmath.exp(s / 2) * max(0, min(m1, s + m2) - max(-m1, s - m2))
    else:
        def dens(s):
            lo, hi = max(-c1 * m1, s - c2 * m2), min(c1 * m1, s + c2 * m2)
            if lo >= hi:
                return mpmath.mpf(0)
            pts = _pts(c1, m1, lo, hi, [s - (-c2 * m2 + 2 * m2 * k) for k in range(c2 + 1)])
            v, e = mpmath.quad(lambda u: d1(u) * d2(s - u), pts, error=True, method="gauss-legendre")
            errs.append(abs(e))
            return v

    top = c1 * m1 + c2 * m2
    knots = {-c1 * m1 + 2 * m1 * i - c2 * m2 + 2 * m2 * j for i in range(c1 + 1) for j in range(c2 + 1)}
    lo = max(x, -top) if cut else -top
    if lo >= top:
        return mpmath.mpf(0), mpmath.mpf(0)
    pts = [lo] + sorted(k for k in knots | ({x} if not cut else set()) if lo < k < top) + [top]
    val, e = mpmath.quad(lambda s: dens(s) * hk(x - s), pts, error=True)
    return val, abs(e) + max(errs) * 2 * top  # (hk ≤ 1 over the support's length)


def _design(laps, rest=()):
    groups: dict = {}
    for lap, n in laps:
        groups[lap.epsilon] = groups.get(lap.epsilon, 0) + n
    return ExactAccountant(Mixture(tuple(laps) + tuple(rest))), sorted(groups.items())


def _inside(pt, lo, hi, what):
    assert pt.upper >= lo and pt.lower <= hi, (what, pt.lower, pt.upper, lo, hi)
    assert pt.upper - pt.lower <= REL * max(hi, mpmath.mpf("1e-4000")), (what, pt.lower, pt.upper)


def test_reference_against_one_group():
    """The double quadrature (two groups of μ = 1/2 split as 1 + 1) equals the single-group
    reference of the same two Laplaces (the reference itself checked)."""
    for t in (Fraction(-1, 3), Fraction(0), Fraction(1, 5)):
        a = kernel([(Fraction(1, 2), 1), (Fraction(1, 2), 1)], 0, t)
        b = kernel([(Fraction(1, 2), 2)], 0, t)
        assert abs(a[0] - b[0]) <= mpmath.mpf("1e-14"), (t, a, b)


LAPS = {
    # μ = 1 and 1/3 (knots ±1/3, ±1, ±5/3)
    "third": ((Laplace(1), 1), (Laplace(3), 2)),
    # μ = 1 and 1/2 (coinciding knots merged)
    "half": ((Laplace(1), 1), (Laplace(2), 1)),
    # μ = 20 beside μ = 1/50: far-apart scales
    "far": ((Laplace("1/20"), 1), (Laplace(50), 1)),
}


@pytest.mark.parametrize("name,eps", [("third", "0"), ("third", "1"), ("third", "3/2"), ("half", "0"),
                                      ("half", "1/3"), ("far", "0"), ("far", "39/2")])
def test_laplaces_alone(name, eps):
    acc, groups = _design(LAPS[name])
    assert "laplace-closed-form" in acc.diagnostics().method
    pt = acc.delta([eps])[0]
    _inside(pt, *kernel(groups, 0, Fraction(eps)), (name, eps))


def test_laplaces_alone_deep_and_epsilon():
    """δ just below the top of the loss (``Σμ − 10^{−20}``: δ ≈ 1e-21) and ε(1e-6) (the reference's δ at the
    bracket's ends straddles the target)."""
    acc, groups = _design(LAPS["third"])
    top = Fraction(5, 3)
    pt = acc.delta([top - Fraction(1, 10**20)])[0]
    lo, hi = kernel(groups, 0, top - Fraction(1, 10**20))
    assert 0 < lo and hi < 1e-20
    _inside(pt, lo, hi, "deep")
    assert acc.delta([top])[0].upper == 0
    pt = acc.epsilon(["1e-6"])[0]
    target = mpmath.mpf("1e-6")
    assert pt.upper - pt.lower <= REL * pt.upper
    assert kernel(groups, 0, _f(pt.lower))[1] >= target
    assert kernel(groups, 0, _f(pt.upper))[0] <= target


def test_beside_randomized_response():
    rr = ((RandomizedResponse(Fraction(1, 2)), 2),)
    acc, groups = _design(LAPS["half"], rr)
    atoms = brute.joint(rr)
    for e, pt in zip(["0", "1"], acc.delta(["0", "1"])):
        _inside(pt, *atoms_delta(atoms, lambda t: kernel(groups, 0, t), e, pt.upper), e)


def test_beside_fine_discrete_gaussians():
    """No continuous Gaussian, discrete Gaussians too fine for windows: the atoms' route."""
    acc, groups = _design(LAPS["half"], FINE)
    assert "dg-atoms-laplace-closed-form" in acc.diagnostics().method
    atoms = brute.joint(FINE)
    pt = acc.delta(["1"])[0]
    _inside(pt, *atoms_delta(atoms, lambda t: kernel(groups, 0, t), "1", pt.upper), "fine")


def test_beside_a_continuous_gaussian():
    """Continuous Gaussians alone: the Laplace + Gaussian quadrature on the merged knots."""
    g = ((Gaussian(4), 1),)
    acc, groups = _design(LAPS["third"], g)
    assert "laplace-gaussian-quadrature" in acc.diagnostics().method
    pt = acc.delta(["2"])[0]
    _inside(pt, *kernel(groups, Fraction(1, 8), Fraction(2)), "gauss")


def test_beside_both_gaussians():
    """Continuous and discrete Gaussians: the smoothed inversion with both groups' factor."""
    rest = ((Gaussian(4), 1), (DiscreteGaussian("1/2"), 2))
    acc, groups = _design(LAPS["half"], rest)
    assert "gaussian-laplace-smoothed-inversion" in acc.diagnostics().method
    atoms = brute.joint(((DiscreteGaussian("1/2"), 2),))
    pt = acc.delta(["2"])[0]
    _inside(pt, *atoms_delta(atoms, lambda t: kernel(groups, Fraction(1, 8), t), "2", pt.upper), "both")


def test_too_many_knots_refused_with_the_remedy():
    laps = tuple((Laplace(Fraction(p, 7)), 6) for p in (2, 3, 5, 11, 13, 17, 19))
    with pytest.raises(InputError, match="approx_dp"):
        ExactAccountant(Mixture(laps)).delta(["1"])


def test_closed_form_kernel_beside_a_gaussian_at_knots_and_tails():
    """The Laplace + Gaussian kernel's closed form (by-parts Φ integrals,
    :meth:`~exactdp.kinds.laplace_gauss.LaplaceGaussLoss._closed_poly`) against the reference at a
    knot exactly (its Φ arguments exactly 0: a ball of 0 raised to a power was nan), past the top
    and far left."""
    from exactdp.kinds.laplace import LaplaceLoss
    from exactdp.kinds.laplace_gauss import LaplaceGaussLoss

    groups = [(Fraction(1, 3), 2), (Fraction(1), 1)]
    loss = LaplaceGaussLoss(LaplaceLoss(groups), Fraction(1, 8))
    for t in (Fraction(-1, 3), Fraction(5, 3) + Fraction(1, 50), Fraction(-2)):
        b = loss._closed_poly(t, 64)
        assert b is not None
        lo, hi = (_m(Fraction(int(m)) * Fraction(2) ** int(e)) for m, e in (b.lower().man_exp(), b.upper().man_exp()))
        r_lo, r_hi = kernel(groups, Fraction(1, 8), t)
        assert hi >= r_lo and lo <= r_hi, (t, lo, hi, r_lo, r_hi)
        assert hi - lo <= mpmath.mpf("1e-12") * hi
