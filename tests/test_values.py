"""The engine's TailValue: a frozen record of seven fields (a tuple underneath), with the
semantics the frozen dataclass it replaced had — field access, equality and hashing by the
field tuple (only with another TailValue), immutability, no ordering, pickling by fields."""

import copy
import math
import pickle

import mpmath
import pytest
from exactdp.kernels.units import EPS64
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp.engine.quadstate import tail_values
from exactdp.engine.tails import TailEngine
from exactdp.engine.values import TailValue, tail_value

NAMES = ("threshold", "log_value", "rel_error", "method", "nodes_kept", "nodes_total", "lam")

fields = st.tuples(st.integers(-10**20, 10**20), st.floats(allow_nan=False, max_value=0.0),
                   st.floats(min_value=0.0, allow_nan=False), st.sampled_from(["tilted-trapezoid", "m+complement"]),
                   st.integers(0, 10**6), st.integers(0, 10**6), st.floats(allow_nan=False, allow_infinity=False))


@settings(derandomize=True, max_examples=100, deadline=None)
@given(fields, fields)
def test_tailvalue_is_its_fields(a, b):
    tv = TailValue(*a)
    assert tuple(getattr(tv, n) for n in NAMES) == a
    assert TailValue(**dict(zip(NAMES, a))) == tv == tail_value(*a)
    assert type(tail_value(*a)) is TailValue
    assert hash(tv) == hash(a)  # the frozen dataclass's hash: of the field tuple
    assert (TailValue(*b) == tv) == (a == b) and (TailValue(*b) != tv) == (a != b)
    assert tv != a and not (tv == a) and a != tv and not (a == tv)  # never equal to a plain tuple (as the dataclass)
    assert tv != list(a) and tv != 0
    for got in (pickle.loads(pickle.dumps(tv, protocol=p)) for p in range(pickle.HIGHEST_PROTOCOL + 1)):
        assert type(got) is TailValue and got == tv
    assert copy.deepcopy(tv) == tv and copy.copy(tv) == tv
    assert repr(tv) == "TailValue(" + ", ".join(f"{n}={v!r}" for n, v in zip(NAMES, a)) + ")"


def test_tailvalue_frozen_unordered_and_mp_log():
    tv = TailValue(3, mpmath.mpf(-2) * 10**5, 1e-9, "tilted-trapezoid", 4, 5, 0.25)
    for n in NAMES:
        with pytest.raises(AttributeError):
            setattr(tv, n, 0)
    with pytest.raises(AttributeError):
        tv.other = 1  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        _ = tv < tv
    assert tv.value == 0.0 and tv.log_mp == mpmath.mpf(-200000)
    assert pickle.loads(pickle.dumps(tv)).log_mp == mpmath.mpf(-200000)
    tf = TailValue(3, math.log(0.25), 0.0, "m", 0, 0, 0.0)
    assert tf.value == pytest.approx(0.25, rel=1e-15) and tf.log_mp == mpmath.mpf(math.log(0.25))


def test_tail_values_and_complement_fields():
    vals = tail_values([1, 2], [-1.0, -2.0], [1e-10, 2e-10], "tilted-trapezoid", 7, 9, 0.5)
    assert vals == [TailValue(1, -1.0, 1e-10, "tilted-trapezoid", 7, 9, 0.5),
                    TailValue(2, -2.0, 2e-10, "tilted-trapezoid", 7, 9, 0.5)]
    # the complement 1 − p of p = e^-1: its fields from the value's, its relative error by hand
    c = TailEngine._complement(vals[0])
    p = math.exp(-1.0)
    assert (c.threshold, c.method, c.nodes_kept, c.nodes_total, c.lam) == (0, "tilted-trapezoid+complement", 7, 9, 0.5)
    assert c.log_value == math.log(-math.expm1(-1.0)) and abs(c.value - (1 - p)) <= 1e-15
    assert c.rel_error == (1e-10 * p + 2 * EPS64) / (-math.expm1(-1.0))
