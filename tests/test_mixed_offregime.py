"""Mixed designs off the tuned regime (issue "Every mechanism a DP library user composes"):
ε(δ) down to δ = 1e-300 and β(α) at α near 0 and 1, for mixes of discrete Laplace (small and
large scales, shifts −6 … 6), randomized response (binary and k-ary, ε small and large) and
pure (ε, 0) blocks, drawn by hypothesis with a fixed seed and checked against the exact
enumeration of ``tests/mixed_brute.py`` (60+ digits, nothing of the engine): the truth in the
certified bracket, the bracket ≤ 1e-9 relative, the reported side the conservative one."""

from __future__ import annotations

from fractions import Fraction

import mixed_brute as brute
import mpmath
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exactdp import ApproxDP, DiscreteLaplace, ExactAccountant, Mixture, RandomizedResponse

REL = mpmath.mpf("1e-9")

KIND = st.one_of(
    st.builds(DiscreteLaplace, st.sampled_from(["1/7", "3/2", "40"]), st.integers(-6, 6)),
    st.builds(RandomizedResponse, st.sampled_from(["1/1000", "1/3", "2", "9"]), st.integers(2, 6)),
    st.builds(ApproxDP, st.sampled_from(["1/100", "1", "4"])),
)
DELTAS = st.sampled_from(["1e-1", "1e-4", "1e-9", "1e-30", "1e-120", "1e-300"])
ALPHAS = st.sampled_from(["0", "1e-300", "1e-12", "1e-3", "1/2", "0.999999", "0.999999999999", "1"])


def _mp(q) -> mpmath.mpf:
    q = Fraction(q)
    return mpmath.mpf(q.numerator) / q.denominator


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(KIND, st.integers(1, 3)), min_size=1, max_size=3),
       st.lists(DELTAS, min_size=1, max_size=2, unique=True), st.lists(ALPHAS, min_size=1, max_size=3, unique=True))
def test_epsilon_and_tradeoff_of_mixes_off_the_tuned_regime(groups, deltas, alphas):
    mix = Mixture(tuple(groups))
    atoms = brute.joint(mix.groups)
    acc = ExactAccountant(mix)
    with mpmath.workdps(80):
        for d, pt in zip(deltas, acc.epsilon(deltas)):
            true = brute.epsilon(atoms, Fraction(d))
            assert pt.reported_side == "upper" and pt.value == pt.upper
            assert pt.lower <= true <= pt.upper, (d, pt.lower, true, pt.upper)
            assert pt.upper - pt.lower <= REL * max(pt.upper, mpmath.mpf(1e-300)), (d, pt.lower, pt.upper)
            # the reported ε is a guarantee: δ at it does not exceed the target
            assert brute.delta(atoms, Fraction(*map(int, pt.upper.as_integer_ratio())))[0] <= \
                _mp(Fraction(d)) * (1 + mpmath.mpf(10) ** -40)
        for a, pt in zip(alphas, acc.tradeoff(alphas)):
            true = brute.beta(atoms, Fraction(a))
            slack = true * mpmath.mpf(10) ** -40 + mpmath.mpf(10) ** -60  # the brute force's own rounding
            assert pt.reported_side == "lower" and pt.value == pt.lower
            assert pt.lower <= true + slack and true <= pt.upper + slack, (a, pt.lower, true, pt.upper)
            assert pt.upper - pt.lower <= REL * max(true, mpmath.mpf("1e-300")) + slack, (a, pt.lower, pt.upper)
