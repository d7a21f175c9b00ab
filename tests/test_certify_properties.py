"""Property test: on random small designs the Arb enclosure contains the brute-force truth
(tests/harness.py) and the float64 fast path's value is on its conservative side.

Designs: one or two distinct mechanisms (σ² in quarters up to 5/2, shifts 1, 2 or −1),
three mechanisms at most, so that the 60-digit brute-force reference stays cheap; the
tail method is drawn too, so that each of the three enclosures is exercised.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exactdp.accounting.accountant import ExactAccountant
from exactdp.certify import Certifier, on_conservative_side
from exactdp.certify.tails import METHODS
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.errors import UncertifiedError

from harness import BRUTE_ABS_ERROR, delta_brute, epsilon_brute, tradeoff_brute

quarters = st.integers(min_value=1, max_value=10).map(lambda k: Fraction(k, 4))
groups = st.lists(st.tuples(quarters, st.sampled_from([1, 1, 2, -1]), st.integers(1, 2)),
                  min_size=1, max_size=2, unique_by=lambda g: (g[0], abs(g[1])))
designs = groups.filter(lambda gs: sum(c for _, _, c in gs) <= 3).map(
    lambda gs: [(s2, d) for s2, d, c in gs for _ in range(c)])
methods = st.sampled_from((None,) + METHODS)
SETTINGS = settings(max_examples=14, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _certifier(mechs, method):
    comp = Composition.of(DiscreteGaussian(s, d) for s, d in mechs)
    cert = Certifier(comp, method=method)
    try:
        _ = cert.tail_method  # planned on first access
    except ValueError:  # e.g. nothing to condition on
        cert = Certifier(comp)
    return comp, cert


def encloses(enc, ref, tol=BRUTE_ABS_ERROR):
    with mpmath.workdps(80):
        return enc.lower - tol <= ref <= enc.upper + tol


@SETTINGS
@given(designs, st.fractions(min_value=0, max_value=8, max_denominator=16), methods)
def test_delta(mechs, eps, method):
    comp, cert = _certifier(mechs, method)
    enc = cert.delta(eps)
    ref = delta_brute(mechs, eps)
    assert encloses(enc, ref), (mechs, eps, enc.method, enc.decimal(25), mpmath.nstr(ref, 25))
    if ref > mpmath.mpf(10) ** -50:
        assert enc.relative_width <= 1e-15
        fast = ExactAccountant(comp).delta([eps])[0]
        assert on_conservative_side("delta", fast.value, enc)


@SETTINGS
@given(designs, st.integers(min_value=1, max_value=25), methods)
def test_epsilon(mechs, k, method):
    comp, cert = _certifier(mechs, method)
    d = Fraction(1, 10**k)
    try:
        ref = epsilon_brute(mechs, d)
    except ValueError:
        return  # δ below what the truncated reference resolves
    enc = cert.epsilon(d)
    assert encloses(enc, ref, mpmath.mpf(10) ** -64 / d), (mechs, d, enc.decimal(25), mpmath.nstr(ref, 25))
    assert enc.relative_width <= 1e-15 or abs(ref) < 1e-10
    try:
        fast = ExactAccountant(comp).epsilon([d])[0]
    except UncertifiedError:
        return
    assert on_conservative_side("epsilon", fast.value, enc)


@SETTINGS
@given(designs, st.fractions(min_value=Fraction(1, 10**6), max_value=Fraction(999999, 10**6),
                             max_denominator=10**6), methods)
def test_tradeoff(mechs, alpha, method):
    comp, cert = _certifier(mechs, method)
    enc = cert.tradeoff(alpha)
    ref = tradeoff_brute(mechs, alpha)
    assert encloses(enc, ref, mpmath.mpf(10) ** -50), (mechs, alpha, enc.decimal(25), mpmath.nstr(ref, 25))
    fast = ExactAccountant(comp).tradeoff([alpha])[0]
    assert on_conservative_side("tradeoff", fast.value, enc)
