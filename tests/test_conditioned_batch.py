"""The conditioned quadrature (coarse atoms enumerated, the fine rest by a sub-engine) against
the independent exact reference :class:`harness.BruteDesign` (and :func:`harness.tradeoff_brute`):
its batched sub-values, float far-left hockey-stick sums and float truncation bounds must keep
every bracket around the truth."""

from fractions import Fraction

import mpmath
import pytest

from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon
from exactdp.engine import conditioning
from exactdp.mechanisms import Composition, DiscreteGaussian

from harness import BruteDesign, tradeoff_brute

#: (σ², shift, count): a few small variances beside large ones with counts (the route of
#: these is the lattice's conditioned quadrature)
DESIGNS = {
    "generic": [("10000/11", 1, 20), ("2.5025", 1, 1)],
    "small-fine": [("1000/11", 1, 4), ("2.5025", 1, 1)],
    "two-coarse": [("400/7", 1, 3), ("0.37", 1, 1), ("1.0", -1, 1)],
}


def _comp(spec):
    return Composition(tuple((DiscreteGaussian(s, d), m) for s, d, m in spec))


def _bs(rho, k: int) -> Fraction:
    """The Bureau's ε at δ = 10^−k, as an exact decimal of 20 digits."""
    return Fraction(mpmath.nstr(bun_steinke_epsilon(rho, Fraction(1, 10**k))(30), 20))


def _mechs(spec):
    return [(Fraction(s), d, m) for s, d, m in spec]


@pytest.fixture(scope="module")
def far_left_calls():
    """Counts the float far-left hockey-stick sums :class:`ConditionedTails` certifies."""
    calls = {"n": 0}
    real = conditioning.ConditionedTails._far_left

    def spy(self, q, tl):
        tv = real(self, q, tl)
        calls["n"] += tv is not None
        return tv

    conditioning.ConditionedTails._far_left = spy
    yield calls
    conditioning.ConditionedTails._far_left = real


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_delta_against_brute_force(name, far_left_calls):
    spec = DESIGNS[name]
    acc = ExactAccountant(_comp(spec))
    assert acc.diagnostics().method == "conditioned-quadrature"
    ref = BruteDesign(_mechs(spec))
    before = far_left_calls["n"]
    eps = [Fraction(0), Fraction(1, 2), _bs(acc.rho, 6), _bs(acc.rho, 20)]
    for e, pt in zip(eps, acc.delta(eps)):
        val, err = ref.delta(e)
        with mpmath.workdps(40):
            assert pt.lower - err <= val <= pt.upper + err, (name, e)
            assert pt.upper - pt.lower <= 1e-9 * val
    assert far_left_calls["n"] > before  # the float far-left sums took part


def test_epsilon_against_brute_force():
    spec = DESIGNS["small-fine"]
    acc = ExactAccountant(_comp(spec))
    ref = BruteDesign(_mechs(spec))
    for d, pt in zip(("1e-2", "1e-6", "1e-10"), acc.epsilon(["1e-2", "1e-6", "1e-10"])):
        target = mpmath.mpf(d)
        lo, lo_err = ref.delta(Fraction(mpmath.nstr(pt.lower, 30)))
        hi, hi_err = ref.delta(Fraction(mpmath.nstr(pt.upper, 30)))
        with mpmath.workdps(40):
            # δ decreases in ε: the true ε(δ) is inside [lower, upper] (the decimal ends
            # rounded to 30 digits move δ by far less than the bracket's margin)
            assert lo + lo_err >= target * (1 - 1e-20) and hi - hi_err <= target * (1 + 1e-20), d
            assert (pt.upper - pt.lower) <= 1e-9 * pt.upper


def test_tradeoff_against_brute_force():
    spec = [("40", 1, 2), ("0.37", 1, 1)]
    acc = ExactAccountant(_comp(spec))
    assert acc.diagnostics().method == "conditioned-quadrature"
    mechs = [(Fraction(s), d) for s, d, m in spec for _ in range(m)]
    for a, pt in zip(("0.01", "0.5", "0.9"), acc.tradeoff(["0.01", "0.5", "0.9"])):
        ref = tradeoff_brute(mechs, Fraction(a))
        with mpmath.workdps(40):
            assert pt.lower - mpmath.mpf(10) ** -40 <= ref <= pt.upper + mpmath.mpf(10) ** -40, a
            assert pt.upper - pt.lower <= 1e-9 * ref


def test_cached_values_do_not_depend_on_the_batch():
    """The same δ asked alone, in a batch, and again (from the kept fine values) is the same
    bracket, bit for bit."""
    spec = DESIGNS["generic"]
    rho = ExactAccountant(_comp(spec)).rho
    eps = [_bs(rho, k) for k in (3, 9)]
    a = ExactAccountant(_comp(spec))
    one = [a.delta([e])[0] for e in eps]
    again = a.delta(eps)
    b = ExactAccountant(_comp(spec)).delta(eps)
    for p, q, r in zip(one, again, b):
        assert (p.lower, p.upper) == (q.lower, q.upper) == (r.lower, r.upper)
