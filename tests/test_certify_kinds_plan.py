"""ε(δ) certificates beside strong continuous Gaussians (the float64 plan of
exactdp.certify.kinds_plan, the window beside Gaussians), against a reference written here: the
discrete part's joint atoms enumerated in mpmath (tests/test_certify_gaussian_cells._joint: the
discrete Gaussians' pmfs summed with |x| ≤ 25σ), δ(x) = Σ p_j Φ̄((x − v_j − μ)/s) − e^x Σ q_j Φ̄((x − v_j + μ)/s)
at 90 digits; the enclosure's ends must straddle the target, δ(lower) ≥ δ ≥ δ(upper), for shallow and
deep δ, and a plan that points to the wrong place must not change the answer."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from test_certify_gaussian_cells import _joint, _mp

from exactdp.certify import kinds_plan
from exactdp.certify.kinds import KindsCertifier
from exactdp.kinds import Gaussian, Mixture
from exactdp.mechanisms import DiscreteGaussian

DISCRETE = ((DiscreteGaussian(Fraction(5, 2), 2), 1), (DiscreteGaussian(Fraction(7, 3), -1), 1))
DESIGN = Mixture(DISCRETE + ((Gaussian(Fraction(1, 50), 2), 1), (Gaussian(Fraction(9, 4), Fraction(1, 2)), 2)))
MU = Fraction(4, 2 * Fraction(1, 50)) + 2 * Fraction(1, 4) / (2 * Fraction(9, 4))  # Σρ = 100 + 1/9


@pytest.fixture(scope="module")
def reference():
    with mpmath.workdps(90):
        atoms = _joint(DISCRETE)
    cache: dict = {}

    def delta(x: Fraction) -> mpmath.mpf:
        if x not in cache:
            with mpmath.workdps(90):
                m, xm = _mp(MU), _mp(x)
                s = mpmath.sqrt(2 * m)
                a = mpmath.fsum(p * mpmath.ncdf(-(xm - v - m) / s) for v, p, _ in atoms)
                b = mpmath.fsum(q * mpmath.ncdf(-(xm - v + m) / s) for v, _, q in atoms)
                cache[x] = a - mpmath.exp(xm) * b
        return cache[x]

    return delta


def _check(enc, dt: Fraction, delta) -> None:
    with mpmath.workdps(90):
        d = _mp(dt)
        assert delta(enc.lower_exact) >= d * (1 - mpmath.mpf(10) ** -40) or enc.lower_exact == 0, enc
        assert delta(enc.upper_exact) <= d * (1 + mpmath.mpf(10) ** -40), enc
    assert enc.relative_width <= 1e-14, enc


@pytest.mark.parametrize("dt", [Fraction(1, 10**3), Fraction(1, 10**10), Fraction(1, 10**60)])
def test_epsilon_beside_a_strong_gaussian_against_the_closed_form(reference, dt, monkeypatch):
    """The plan is used (its bracket is kept) and few Arb sums are needed."""
    calls = {"plan": 0, "sums": 0}
    plan, sums = kinds_plan.bracket, KindsCertifier.delta_ball

    def counted_plan(*a):
        out = plan(*a)
        calls["plan"] += out is not None
        return out

    def counted_sums(self, *a, **k):
        calls["sums"] += 1
        return sums(self, *a, **k)

    monkeypatch.setattr(kinds_plan, "bracket", counted_plan)
    monkeypatch.setattr(KindsCertifier, "delta_ball", counted_sums)
    enc = KindsCertifier(DESIGN).epsilon(dt)
    _check(enc, dt, reference)
    assert calls["plan"] >= 1 and calls["sums"] <= 16, calls


def test_a_wrong_plan_does_not_change_the_answer(reference, monkeypatch):
    """A plan pointing below or above the root (or nowhere) is dropped: the Arb search alone answers."""
    dt = Fraction(1, 10**10)
    want = KindsCertifier(DESIGN).epsilon(dt)
    for wrong in ((Fraction(400), Fraction(401)), None):
        monkeypatch.setattr(kinds_plan, "bracket", lambda *a, w=wrong: w)
        enc = KindsCertifier(DESIGN).epsilon(dt)
        _check(enc, dt, reference)
        assert enc.lower_exact <= want.upper_exact and want.lower_exact <= enc.upper_exact
