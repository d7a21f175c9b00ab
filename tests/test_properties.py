"""Hypothesis properties of the engine (invariants that must hold for every design),
some against the brute-force references of tests/harness.py."""

from fractions import Fraction

import mpmath
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exactdp.accounting.accountant import ExactAccountant
from exactdp.mechanisms import Composition, DiscreteGaussian

from harness import delta_brute

# Variances on a common grid (quarters), or Census-like values among themselves: arbitrary
# incommensurate rationals make the lattice huge and the run slow (README, "Performance").
quarters = st.integers(min_value=1, max_value=40).map(lambda k: Fraction(k, 4))
census = st.sampled_from([Fraction(10000, 11), Fraction(10000, 430), Fraction(10000, 999), Fraction(10000, 3996)])
shifts = st.sampled_from([1, 1, 1, 2, -1])
designs = st.one_of(
    st.lists(st.builds(DiscreteGaussian, quarters, shifts), min_size=1, max_size=4),
    st.lists(st.builds(DiscreteGaussian, census, st.just(1)), min_size=1, max_size=6),
)
SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(designs, st.lists(st.fractions(min_value=0, max_value=12, max_denominator=8), min_size=2, max_size=5))
def test_delta_non_increasing_and_below_zcdp_bound(mechs, eps):
    comp = Composition.of(mechs)
    acc = ExactAccountant(comp)
    eps = sorted(set(eps))
    pts = acc.delta(eps)
    rho = float(comp.rho)
    for a, b in zip(pts, pts[1:]):
        assert b.lower <= a.value
    for e, p in zip(eps, pts):
        # Bun–Steinke: ρ-zCDP ⇒ δ(ε) ≤ exp(−(ε−ρ)²/(4ρ)) for ε ≥ ρ
        if e >= rho:
            assert p.lower <= mpmath.exp(-((float(e) - rho) ** 2) / (4 * rho)) * (1 + 1e-12)
        assert 0 <= p.lower and p.estimate <= 1


# Small designs whose privacy loss lives on a coarse lattice (σ² ∈ {1/2, 1, 2, 4}): the
# brute-force loss distribution of tests/harness.py stays a few thousand atoms.
small = st.lists(st.builds(DiscreteGaussian, st.sampled_from([Fraction(1, 2), Fraction(1), Fraction(2), Fraction(4)]),
                           st.sampled_from([1, -1, 2])), min_size=1, max_size=4)


@SETTINGS
@given(small, st.randoms(use_true_random=False))
def test_composition_order_is_irrelevant(mechs, rnd):
    # The engine composes a shuffled list; the reference is the brute-force δ of the
    # list in its original order and in the reversed shuffled order (two independent
    # enumerations, convolved in different orders and pruned differently).  A mistake in
    # how a composition is grouped, merged or laid on the lattice shows as a mismatch.
    shuffled = list(mechs)
    rnd.shuffle(shuffled)
    eps = [Fraction(1, 2), Fraction(3)]
    pts = ExactAccountant(Composition.of(shuffled)).delta(eps)
    for e, p in zip(eps, pts):
        ref = delta_brute([(m.sigma2, m.shift) for m in mechs], e)
        ref_rev = delta_brute([(m.sigma2, m.shift) for m in reversed(shuffled)], e)
        assert abs(ref - ref_rev) <= mpmath.mpf(10) ** -60
        assert p.lower - mpmath.mpf(10) ** -60 <= ref <= p.value + mpmath.mpf(10) ** -60


@SETTINGS
@given(designs)
def test_tradeoff_is_convex_decreasing_and_symmetric(mechs):
    acc = ExactAccountant(Composition.of(mechs))
    alphas = [Fraction(k, 20) for k in range(1, 20)]
    betas = [p.estimate for p in acc.tradeoff(alphas)]
    tol = 1e-9
    for b0, b1 in zip(betas, betas[1:]):
        assert b1 <= b0 + tol
    for b0, b1, b2 in zip(betas, betas[1:], betas[2:]):
        assert b0 + b2 - 2 * b1 >= -tol  # convex on the equispaced grid
    # f is symmetric (f = f^{-1}) for symmetric noise: f(f(α)) = α
    for a, b in list(zip(alphas, betas))[::4]:
        if 1e-6 < b < 1 - 1e-6:
            back = acc.tradeoff([Fraction(mpmath.nstr(b, 25))])[0].estimate
            assert abs(back - float(a)) < 1e-8
