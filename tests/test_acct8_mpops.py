"""Session 8 (acct8): the MPFR arithmetic of the profiles gives the bits of libmp.

``accounting.mpops.mpfr_ops`` replaces libmp's +, −, ×, ÷ (all correctly rounded) by
MPFR's at the same precision and rounding mode.  The references are libmp's own calls
(``mpf_add`` ... on raw tuples) and the frozen mpf-object ``_assemble`` of
``tests/test_rawmp.py``; inputs include the directed roundings, mantissas wider than the
precision, exponents far beyond float64 (and beyond MPFR's range, where the chain must
refuse so that the caller falls back to libmp), zeros, and profiles at ε up to 1e30 whose
e^ε is outside MPFR's exponent range.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath
import pytest
from mpmath.libmp import fnan, finf, fzero, from_man_exp, mpf_add, mpf_div, mpf_gt, mpf_lt, mpf_mul, mpf_sub

from exactdp.accounting.accountant import ExactAccountant
from exactdp.accounting.curve import _DPS
from exactdp.accounting.mpops import MPFR_FAIL, libmp_ops, mpfr_ops
from exactdp.accounting.screen import ProfileValues
from exactdp.engine.tails import TailValue
from exactdp.numerics.precision import workdps
from test_rawmp import _Engine, _assemble_ref, _record  # the frozen mpf-object reference (e2cac23)


def _operand(rng, wide: bool = False):
    """A random raw mpf: mantissas up to 300 bits, exponents from −10^6 to 10^6 (some
    near each other, so that additions cancel), sometimes zero."""
    u = rng.random()
    if u < 0.04:
        return fzero
    bits = rng.randint(1, 300 if wide else 120)
    man = rng.getrandbits(bits) | 1
    exp = rng.randint(-40, 40) if u < 0.6 else rng.randint(-10**6, 10**6)
    return from_man_exp(-man if rng.random() < 0.5 else man, exp)


@pytest.mark.parametrize("rnd", ["n", "f", "c", "d", "u"])
def test_operations_are_libmps_bits(rnd):
    rng = random.Random(20261202 + ord(rnd))
    for _ in range(1500):
        prec = rng.choice([53, 64, 136, 170, 333])
        F = mpfr_ops(prec, rnd)
        a, b = _operand(rng, wide=True), _operand(rng, wide=True)
        x, y = F.of_raw(a), F.of_raw(b)
        assert F.raw(x) == a and F.raw(y) == b  # exact both ways
        assert F.raw(F.add(x, y)) == mpf_add(a, b, prec, rnd)
        assert F.raw(F.sub(x, y)) == mpf_sub(a, b, prec, rnd)
        assert F.raw(F.mul(x, y)) == mpf_mul(a, b, prec, rnd)
        if b != fzero:
            assert F.raw(F.div(x, y)) == mpf_div(a, b, prec, rnd)
        assert F.gt(x, y) == mpf_gt(a, b) and F.lt(x, y) == mpf_lt(a, b)
        assert F.raw(F.max(x, y)) == (b if mpf_gt(b, a) else a)
        f = rng.choice([0.0, 1e-300, rng.random(), 10 ** rng.uniform(-16, -3)])  # a float operand: exact
        assert F.raw(F.sub(F.one, f)) == libmp_ops(prec, rnd).sub(libmp_ops(prec, rnd).one, mpmath.mpf(f)._mpf_)


def test_out_of_range_is_refused_not_rounded():
    F = mpfr_ops(136, "n")
    for raw in (finf, fnan, from_man_exp(3, 2**29), from_man_exp(3, -(2**29)), from_man_exp(3, 2**61)):
        with pytest.raises(MPFR_FAIL):
            F.of_raw(raw)
    big = F.of_raw(from_man_exp(1, 2**29 - 1))
    with pytest.raises(MPFR_FAIL):  # overflow is trapped, never an infinity
        F.mul(F.mul(big, big), big)
    with pytest.raises(MPFR_FAIL):  # underflow too
        tiny = F.of_raw(from_man_exp(1, -(2**29 - 1)))
        F.mul(F.mul(tiny, tiny), tiny)
    with pytest.raises(MPFR_FAIL):
        F.div(F.one, F.zero)
    with pytest.raises(MPFR_FAIL):  # an infinite relative error goes to the libmp chain
        F.bounds(TailValue(0, -1.0, math.inf, "x", 0, 0, 0.0))
    assert mpfr_ops(52, "n") is None  # below float precision: libmp


def test_profiles_at_huge_epsilon_fall_back_to_libmp():
    """e^ε for ε ~ 1e30 has a binary exponent ~1.4e30, beyond MPFR's range: the chain
    refuses and _assemble answers with libmp, as the former code."""
    rng = random.Random(5)
    eng = _Engine(rng)
    fake = type("A", (), {"engine": eng})()
    fields = ("d", "d_lo", "d_hi", "c", "c_lo", "c_hi", "p1", "p2")
    n = 0
    for _ in range(60):
        r = _record(rng)
        e = Fraction(rng.randint(10**29, 10**30), rng.randint(1, 7))
        r = ProfileValues(e, r.k1, r.k2, r.w, r.t1, r.t2, r.tl)
        with workdps(_DPS):
            try:
                ref = _assemble_ref(eng, r)
            except Exception:  # noqa: BLE001 - the same refusal is checked below
                with pytest.raises(Exception):
                    ExactAccountant._assemble(fake, r)
                continue
            got = ExactAccountant._assemble(fake, r)
        for f in fields:
            v = ref[f]
            assert (getattr(got, f) is None) if v is None else getattr(got, f)._mpf_ == v._mpf_, (f, r)
        n += 1
    assert n > 20


def test_real_profiles_same_bits_as_libmp_chain():
    """The DHC-like profiles of a real accountant: the MPFR chain and the libmp chain give
    the same tuples (and both the frozen mpf-object code's, see test_rawmp)."""
    from exactdp.accounting.accountant import _assemble_with
    from exactdp.mechanisms import Composition

    acc = ExactAccountant(Composition.from_rhos((Fraction(1, 3), Fraction(2, 7), Fraction(1, 50))), rel_tol=1e-10)
    eps = [Fraction(k, 4) for k in range(0, 24)] + [Fraction(1, 10**9)]
    recs = acc._profile_values(eps, full=True, complement=True)
    with workdps(_DPS):
        prec, rnd = mpmath.mp._prec_rounding
        for r in recs:
            a = _assemble_with(acc.engine, r, mpfr_ops(prec, rnd))
            b = _assemble_with(acc.engine, r, libmp_ops(prec, rnd))
            ref = _assemble_ref(acc.engine, r)
            for f, v in ref.items():
                if v is None:
                    assert getattr(a, f) is None and getattr(b, f) is None
                else:
                    assert getattr(a, f)._mpf_ == getattr(b, f)._mpf_ == v._mpf_, f
