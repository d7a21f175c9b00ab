"""The continuous Laplace kind against independent references: the numerical integration of
``tests/laplace_reference.py`` (50-digit quadrature of the output densities), the single
Laplace's closed forms δ(ε) = 1 − e^{(ε−μ)/2} and its trade-off function, and the finite
brute force of ``tests/mixed_brute.py`` for the kinds beside it.  Never a wrong side;
brackets ≤ 1e-9 relative."""

from __future__ import annotations

import math
from fractions import Fraction

import laplace_reference as ref
import mixed_brute as brute
import mpmath
import pytest
from test_laplace_several import kernel as several_kernel

from exactdp import (
    DiscreteGaussian,
    DiscreteLaplace,
    ExactAccountant,
    Gaussian,
    InputError,
    Mixture,
    RandomizedResponse,
)
from exactdp.kinds.laplace import MAX_LAPLACE_COUNT, Laplace

REL = mpmath.mpf("1e-9")


def _f(x: mpmath.mpf) -> Fraction:
    return Fraction(*map(int, x.as_integer_ratio()))


def _inside(pt_lo, pt_hi, lo, hi, what):
    """The engine's bracket [pt_lo, pt_hi] meets the reference's [lo, hi] and is ≤ 1e-9 wide."""
    assert pt_hi >= lo and pt_lo <= hi, (what, pt_lo, pt_hi, lo, hi)
    assert pt_hi - pt_lo <= REL * max(hi, mpmath.mpf("1e-4000")), (what, pt_lo, pt_hi)


def test_reference_agrees_with_the_single_closed_form():
    """The reference's quadrature (from the output density) and the closed form agree: the
    closed form the tests use below is itself checked."""
    for scale, shift in (("2", "1"), ("1/3", "2"), ("5", "-7/2")):
        for e in ("0", "1/10", "1", "5"):
            q = ref.hockey(scale, shift, 1, Fraction(e))
            c = ref.single_closed(scale, shift, e)
            assert abs(q - c) <= mpmath.mpf(10) ** -40 * max(c, 1), (scale, shift, e, q, c)


def _output_space_two(scale, shift, t: Fraction) -> mpmath.mpf:
    """δ-type integral ``E_P[(1 − e^{t−L})_+]`` of two Laplaces straight from the output densities,
    ``∬ p(x1) p(x2) (1 − e^{t − ℓ(x1) − ℓ(x2)})_+ dx2 dx1`` with ``ℓ(x) = (|x − s| − |x|)/b``
    (iterated quad at 20 digits, split where ℓ is linear and where the integrand's kink lies)."""
    with mpmath.workdps(20):
        b, sh = ref._m(scale), abs(ref._m(shift))
        tt = ref._m(t)

        def p(x):
            return mpmath.exp(-abs(x) / b) / (2 * b)

        def loss(x):
            return (abs(x - sh) - abs(x)) / b

        def cut(level):  # the x in (0, s) with ℓ(x) = level (None outside)
            x = (sh - level * b) / 2
            return [x] if 0 < x < sh else []

        def inner(x1):
            rest = tt - loss(x1)
            pts = sorted({mpmath.mpf(0), sh, *cut(rest)})
            f = lambda x2: p(x2) * max(mpmath.mpf(0), 1 - mpmath.exp(rest - loss(x2)))  # noqa: E731
            return mpmath.quad(f, [-mpmath.inf, *pts, mpmath.inf])

        mu = sh / b
        outer = sorted({mpmath.mpf(0), sh, *cut(tt - mu), *cut(tt + mu)})
        return mpmath.quad(lambda x1: p(x1) * inner(x1), [-mpmath.inf, *outer, mpmath.inf])


@pytest.mark.slow
def test_reference_two_laplaces_from_the_output_space():
    """The reference's composed law (atoms, tilted density, Irwin–Hall convolution) against a
    direct double integral over the two outputs."""
    for scale, shift, t in (("2", "1", Fraction(0)), ("2", "1", Fraction(3, 5)), ("1/2", "1", Fraction(-1, 3))):
        direct = _output_space_two(scale, shift, t)
        law = ref.hockey(scale, shift, 2, t)
        assert abs(direct - law) <= mpmath.mpf(10) ** -15 * law, (scale, t, direct, law)


@pytest.mark.parametrize("scale,shift", [("2", "1"), ("1/1000", "1"), ("1000000", "1"), ("3", "-5/2")],
                         ids=["plain", "tiny-scale", "huge-scale", "rational-shift"])
def test_single_laplace_delta_epsilon_beta(scale, shift):
    mu = abs(Fraction(shift)) / Fraction(scale)
    acc = ExactAccountant(Mixture(((Laplace(scale, shift), 1),)))
    eps = [Fraction(0), mu / 3, mu * Fraction(999, 1000), mu - Fraction(2, 10**300), mu, 10**6]
    for e, pt in zip(eps, acc.delta([str(e) for e in eps])):
        c = ref.single_closed(scale, shift, e)
        _inside(pt.lower, pt.upper, c * (1 - mpmath.mpf(10) ** -40), c * (1 + mpmath.mpf(10) ** -40), e)
    for d, pt in zip(["1e-3", "1e-12", "1e-300"], acc.epsilon(["1e-3", "1e-12", "1e-300"])):
        with mpmath.workdps(60):
            exact = max(mpmath.mpf(0), mpmath.mpf(mu.numerator) / mu.denominator + 2 * mpmath.log1p(-mpmath.mpf(d)))
        assert pt.lower <= exact * (1 + mpmath.mpf(10) ** -40) and pt.upper >= exact * (1 - mpmath.mpf(10) ** -40)
        assert pt.upper - pt.lower <= REL * pt.upper, (d, pt)
    alphas = ["0", "1e-300", "1e-100", "1e-9", "1/10", "1/2", "9/10", "999999/1000000", "1 - 1e-300", "1"]
    alphas[-2] = str(1 - Fraction(1, 10**300))
    for a, pt in zip(alphas, acc.tradeoff(alphas)):  # (β down to 1e-435 at scale 1/1000: certified, not refused)
        b = ref.single_tradeoff(scale, shift, Fraction(a))
        with mpmath.workdps(60):  # (the band at 60 digits: at 53 bits it rounds inside the engine's bracket)
            band = b * (1 - mpmath.mpf(10) ** -40), b * (1 + mpmath.mpf(10) ** -40)
        _inside(pt.lower, pt.upper, *band, a)


DESIGNS = {  # (groups, the α at which β is checked: the reference's β costs a search of quadratures)
    "two-laplaces+rr": (((Laplace("1/2"), 2), (RandomizedResponse("1/2"), 1)), ["1e-6", "1/2", "999999/1000000"]),
    "three-laplaces+dlap": (((Laplace(3, 2), 3), (DiscreteLaplace("5/2"), 2)), ["1/10"]),
    "one-laplace+rr3": (((Laplace(1, "1/3"), 1), (RandomizedResponse(1, 3), 2)), ["1e-6", "9/10"]),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(DESIGNS))
def test_mixed_delta_against_quadrature(name):
    groups, alphas = DESIGNS[name]
    lap = [(m, c) for m, c in groups if isinstance(m, Laplace)][0]
    finite = tuple((m, c) for m, c in groups if not isinstance(m, Laplace))
    atoms = brute.joint(finite)
    acc = ExactAccountant(Mixture(groups))
    top = lap[0].epsilon * lap[1] + max(k for k in atoms[0] if atoms[0][k][0] > 0)
    eps = [Fraction(0), Fraction(1), top / 2, top - Fraction(1, 10**60), top, Fraction(-1, 2)]
    for e, pt in zip(eps, acc.delta([str(e) for e in eps])):
        lo, hi = ref.mixed_delta(atoms, lap[0].scale, lap[0].shift, lap[1], e)
        _inside(pt.lower, pt.upper, lo, hi, e)
    for d, pt in zip(["1e-2", "1e-9"], acc.epsilon(["1e-2", "1e-9"])):
        # δ at the upper end ≤ target ≤ δ at the lower end (the reference's sides)
        assert ref.mixed_delta(atoms, lap[0].scale, lap[0].shift, lap[1], _f(pt.upper))[0] <= mpmath.mpf(d) * \
            (1 + mpmath.mpf(10) ** -30), (d, pt)
        assert ref.mixed_delta(atoms, lap[0].scale, lap[0].shift, lap[1], _f(pt.lower))[1] >= mpmath.mpf(d) * \
            (1 - mpmath.mpf(10) ** -30), (d, pt)
        assert pt.upper - pt.lower <= REL * pt.upper
    for a, pt in zip(alphas, acc.tradeoff(alphas)):
        assert pt.upper - pt.lower <= REL * max(pt.upper, mpmath.mpf("1e-300")), (a, pt)
        lower, upper = _beta_reference(atoms, lap, Fraction(a), pt.lower)
        assert pt.upper >= lower and pt.lower <= upper, (a, pt, lower, upper)


def _beta_reference(atoms, lap, alpha: Fraction, near) -> tuple:
    """``(lower, upper)`` of β(α) = sup_ε G, ``G = 1 − δ(ε) − e^ε α``, concave in x = e^ε: a
    golden-section search of the maximiser on 15-digit values, moved to the nearest kink of δ
    (an atom's loss plus ``(2j − m)μ``) when within 1e-6 of one; then 50-digit values at three
    points x0 < x1 < x2 around it.  Concavity: with chord slopes ``s_l ≥ 0 ≥ s_r`` the maximum lies
    in [x0, x2] and exceeds the largest value by at most ``(s_l − s_r)(x2 − x0)`` (upper);
    the value at x1 is the lower end."""
    mu, m = lap[0].epsilon, lap[1]
    a_mp = mpmath.mpf(alpha.numerator) / alpha.denominator

    def g(e: Fraction, dps: int) -> mpmath.mpf:
        with mpmath.workdps(dps):
            a = mpmath.mpf(alpha.numerator) / alpha.denominator
            lo, hi = ref.mixed_delta(atoms, lap[0].scale, lap[0].shift, m, abs(e), dps)
            d = (lo + hi) / 2  # (within 1e-35 relative at 50 digits: the slack below)
            if e >= 0:
                return 1 - d - mpmath.exp(mpmath.mpf(e.numerator) / e.denominator) * a
            return mpmath.exp(mpmath.mpf(e.numerator) / e.denominator) * (1 - a - d)  # (symmetry, for ε < 0)

    top = max(abs(k) for k in atoms[0] if abs(k) != math.inf) + m * mu + 1
    lo_e, hi_e = -top, top
    phi = Fraction((5**0.5 - 1) / 2)
    c, d = Fraction(float(hi_e - phi * (hi_e - lo_e))), Fraction(float(lo_e + phi * (hi_e - lo_e)))
    gc, gd = g(c, 15), g(d, 15)
    while hi_e - lo_e > Fraction(1, 10**7):  # (one new 15-digit value per step)
        if gc >= gd:
            hi_e, d, gd = d, c, gc
            c = Fraction(float(hi_e - phi * (hi_e - lo_e)))
            gc = g(c, 15)
        else:
            lo_e, c, gc = c, d, gd
            d = Fraction(float(lo_e + phi * (hi_e - lo_e)))
            gd = g(d, 15)
    centre = (lo_e + hi_e) / 2
    kinks = sorted({k + (2 * j - m) * mu for k in atoms[0] if abs(k) != math.inf for j in range(m + 1)}
                   | {-(k + (2 * j - m) * mu) for k in atoms[0] if abs(k) != math.inf for j in range(m + 1)})
    near_kink = min(kinks, key=lambda k: abs(k - centre))
    at_kink = abs(near_kink - centre) < Fraction(1, 10**6)
    if at_kink:
        centre = near_kink
    best = (mpmath.mpf(0), mpmath.mpf(1))
    for h in ((Fraction(1, 10**20),) if at_kink else ()) + (Fraction(1, 10**7), Fraction(1, 10**5)):
        es = (centre - h, centre, centre + h)
        with mpmath.workdps(ref.DPS):
            xs = [mpmath.exp(mpmath.mpf(e.numerator) / e.denominator) for e in es]
            gs = [g(e, ref.DPS) for e in es]
            s_l, s_r = (gs[1] - gs[0]) / (xs[1] - xs[0]), (gs[2] - gs[1]) / (xs[2] - xs[1])
            if s_l >= 0 >= s_r:
                slack = mpmath.mpf(10) ** -30 * (1 + max(abs(s_l), abs(s_r)))  # (the 50-digit values' error)
                upper = max(gs) + (s_l - s_r) * (xs[2] - xs[0]) + slack
                lower = max(gs[1] - slack, mpmath.mpf(0))
                if upper - lower < best[1] - best[0]:
                    best = (lower, upper)
    del near, a_mp
    return best


@pytest.mark.slow
def test_laplace_beside_discrete_gaussian_windows():
    """A discrete Gaussian (as exact windows) beside two Laplaces: δ against the brute force's
    atoms of the discrete Gaussian and the quadrature."""
    groups = ((Laplace(2), 2), (DiscreteGaussian(3), 1))
    atoms = brute.joint(((DiscreteGaussian(3), 1),))
    acc = ExactAccountant(Mixture(groups))
    for e, pt in zip(["0", "1", "5/2"], acc.delta(["0", "1", "5/2"])):
        lo, hi = ref.mixed_delta(atoms, 2, 1, 2, Fraction(e))
        _inside(pt.lower, pt.upper, lo, hi, e)


def test_large_count_is_consistent_and_pure():
    """128 Laplaces: δ at the top is 0, δ below it is positive and decreasing, and δ(ε) agrees
    with the ε-DP bound (δ(Σμ) = 0) and with its symmetric form at ε < 0."""
    mu = Fraction(1, 10)
    acc = ExactAccountant(Mixture(((Laplace(10), 128),)))
    pts = acc.delta(["0", "1", "6", "12", "64/5", "13"])
    vals = [p.upper for p in pts]
    assert all(a > b for a, b in zip(vals[:4], vals[1:5])) and vals[4] == 0 and vals[5] == 0
    assert mu * 128 == Fraction(64, 5)
    for p in pts[:4]:
        assert p.upper - p.lower <= REL * p.upper


def test_refusals():
    # several μ are composed (tests/test_laplace_several.py); beyond the closed form's budget refused
    pt = ExactAccountant(Mixture(((Laplace(2), 1), (Laplace(3), 1)))).delta(["1/2"])[0]
    lo, hi = several_kernel([(Fraction(1, 3), 1), (Fraction(1, 2), 1)], 0, Fraction(1, 2))
    assert pt.upper >= lo and pt.lower <= hi and pt.upper - pt.lower <= REL * hi
    with pytest.raises(InputError, match="approx_dp"):
        ExactAccountant(Mixture(tuple((Laplace(Fraction(p, 7)), 6) for p in (2, 3, 5, 11, 13, 17, 19)))).delta(["1"])
    with pytest.raises(InputError, match="at most"):
        ExactAccountant(Mixture(((Laplace(2), MAX_LAPLACE_COUNT + 1),))).delta(["1"])
    with pytest.raises(InputError, match="beside continuous Gaussians"):  # (fewer: tests/test_laplace_beside.py)
        ExactAccountant(Mixture(((Laplace(2), 49), (Gaussian(4), 1)))).delta(["1"])
    with pytest.raises(InputError, match="scale"):
        Laplace(0)
    # same μ = |shift|/scale from different parameters: one group of the closed form
    acc = ExactAccountant(Mixture(((Laplace(2), 1), (Laplace(4, 2), 1))))
    same = ExactAccountant(Mixture(((Laplace(2), 2),)))
    a, b = acc.delta(["1/2"])[0], same.delta(["1/2"])[0]
    assert a.lower <= b.upper and b.lower <= a.upper
    assert Mixture(((Laplace(2), 3), (DiscreteLaplace(2), 1))).pure_epsilon == Fraction(2)


def test_dp_accounting_laplace_event():
    """dp_accounting's ``LaplaceDpEvent(noise_multiplier)`` is the continuous Laplace of that scale at
    sensitivity 1, composed exactly (δ against the quadrature; a second scale is refused)."""
    dpa = pytest.importorskip("dp_accounting")
    from exactdp.interop.dp_accounting import ExactDiscreteGaussianAccountant

    acc = ExactDiscreteGaussianAccountant().compose(dpa.LaplaceDpEvent(2.0), 3)
    acc.compose(dpa.NoOpDpEvent())
    assert acc.composition == Mixture(((Laplace(2), 3),))
    lo, hi = ref.mixed_delta(brute.joint(()), 2, 1, 3, Fraction(1, 2))
    got = acc.get_delta(0.5)
    assert lo <= got <= hi * (1 + REL)
    # two scales: composed exactly (tests/test_laplace_several.py's reference)
    got = ExactDiscreteGaussianAccountant().compose(dpa.LaplaceDpEvent(2.0)).compose(dpa.LaplaceDpEvent(3.0)) \
        .get_delta(0.5)
    lo, hi = several_kernel([(Fraction(1, 3), 1), (Fraction(1, 2), 1)], 0, Fraction(1, 2))
    assert lo <= got <= hi * (1 + REL)


def test_many_laplaces_agree_with_dp_accounting_pld():
    """128 Laplaces (beyond the quadrature's reach) beside dp_accounting's PLD: its pessimistic
    estimate is not a certified bound (its float FFT moves it by ~1e-9 relative between
    discretisations, and at 3 Laplaces it falls 4e-13 below the quadrature-verified value) and its
    discretisation adds ~2e-7 relative at ε = 6: a consistency check at 1e-6 relative, not a side
    check."""
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pld

    eps = [0.5, 1.0, 3.0, 6.0]
    comp = pld.from_laplace_mechanism(10.0, sensitivity=1.0, value_discretization_interval=1e-5,
                                      use_connect_dots=True).self_compose(128)
    pts = ExactAccountant(Mixture(((Laplace(10), 128),))).delta([Fraction(e) for e in eps])
    for e, pt in zip(eps, pts):
        other = comp.get_delta_for_epsilon(e)
        assert abs(pt.value - other) <= 1e-6 * other, (e, pt, other)
