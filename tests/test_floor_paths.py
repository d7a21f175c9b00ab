"""The sweep's and the tuner's shortcuts (issue 37) against independent references.

* :func:`exactdp.sweep.compose.composition_from_rhos` against ``Composition.from_rhos`` (the
  validated constructor) and ``Composition.rho`` against the term-by-term Fraction sum;
* the lattice route's threshold ``k1`` from the value an ε holds against the exact floor of
  ``(ε − c)·scale`` computed with Fractions (ε a known rational), and a deferral near a
  breakpoint.
"""

from __future__ import annotations

import pickle
from fractions import Fraction as F

import mpmath
import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from exactdp.accounting.lattice_route import _k1_held
from exactdp.engine.lattice import lattice_of
from exactdp.mechanisms import Composition
from exactdp.numerics.errors import InputError
from exactdp.numerics.exact import MemoReal
from exactdp.sweep.compose import composition_from_rhos

RHO = st.builds(F, st.integers(0, 10**6), st.integers(1, 10**7))


def _same(r):
    a, b = Composition.from_rhos(r), composition_from_rhos(r)
    assert a == b and a.groups == b.groups and repr(a) == repr(b) and hash(a) == hash(b)
    assert b.rho == sum((F(1) / (2 * m.sigma2) * c for m, c in b.groups), F(0))
    assert pickle.loads(pickle.dumps(b)) == a


@seed(37)
@settings(max_examples=200, deadline=None)
@given(st.lists(RHO, min_size=1, max_size=40))
def test_composition_from_rhos_is_from_rhos(rhos):
    if not any(rhos):
        with pytest.raises(InputError):
            composition_from_rhos(rhos)
        return
    _same(rhos)
    _same(tuple(reversed(rhos)))


def test_composition_from_rhos_equal_floats_and_refusals():
    e = F(1, 3)
    _same([e, e + F(1, 10**30), e, F(0), F(5, 7)])  # two ρ with the same float
    _same([F(2), F(2), F(1, 10**400), F(1, 10**400) + F(1, 10**800)])
    with pytest.raises(InputError):
        composition_from_rhos([F(1, 2), F(-1, 2)])
    with pytest.raises(InputError):
        composition_from_rhos([])


def _lattice():
    return lattice_of(Composition.from_rhos([F(1, 3), F(1, 3), F(2, 7), F(5, 11)]))


@seed(37)
@settings(max_examples=200, deadline=None)
@given(st.integers(-50, 5000), st.integers(0, 10**6))
def test_k1_held_is_the_exact_floor(k, frac):
    lat = _lattice()
    x = lat.c + (F(k) + F(frac, 10**6 + 1)) / lat.scale  # a rational ε (between breakpoints)
    e = MemoReal(lambda dps: mpmath.mpf(x.numerator) / x.denominator)
    e(30)
    got = _k1_held(e, lat)
    exact = (x - lat.c) * lat.scale
    want = exact.numerator // exact.denominator + 1
    if got is not None:
        assert got == want
    if frac:  # not within 1e-40 of a breakpoint: decided here
        assert got == want


def test_k1_held_defers_at_a_breakpoint_and_without_a_value():
    lat = _lattice()
    for off in (0, 10**-45, -(10**-45)):
        x = lat.c + F(7) / lat.scale
        e = MemoReal(lambda dps, x=x, off=off: mpmath.mpf(x.numerator) / x.denominator + off)
        e(30)
        assert _k1_held(e, lat) is None
    assert _k1_held(MemoReal(lambda dps: mpmath.mpf(1)), lat) is None  # nothing held yet
    assert _k1_held(F(3), lat) is None
