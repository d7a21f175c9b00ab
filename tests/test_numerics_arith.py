"""The arithmetic layer (:mod:`exactdp.numerics.arith`) against independent references.

* ``numerics.arith`` (MPFR namespace): MPFR's +, −, ×, ÷ at a given precision and rounding mode are
  correctly rounded, so they must give the bits of libmp's own correctly rounded
  operations (``mpf_add`` … on raw tuples) — inputs with the directed roundings, mantissas
  wider than the precision, exponents far beyond float64 and beyond MPFR's range (where
  the chain must refuse so that the caller falls back to libmp), zeros;
* ``numerics.arith`` (raw helpers): the raw-tuple helpers are defined as mpmath's object arithmetic
  (``exp``, ``log1p``, ``min``/``max`` and the four operations under ``workdps``); that
  arithmetic, written out in mpf objects, is the reference;
* ``accounting.base.bun_steinke_epsilon``: the closed form ρ + 2·sqrt(ρ·ln(1/δ)) at 40
  more digits.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath
import pytest
from mpmath.libmp import finf, fnan, from_man_exp, fzero, mpf_add, mpf_div, mpf_gt, mpf_lt, mpf_mul, mpf_sub

from exactdp.accounting.base import bun_steinke_epsilon
from exactdp.engine.tails import TailValue
from exactdp.numerics.arith import MPFR_FAIL, ctx_prec, libmp_ops, mpfr_ops, raw_bounds, raw_log1p
from exactdp.numerics.precision import DPS_RESULT as _DPS
from exactdp.numerics.precision import to_mpf, workdps

from harness import mp


# ------------------------------------------------------------------ MPFR against libmp
def _operand(rng):
    """A random raw mpf: mantissas up to 300 bits, exponents from −10^6 to 10^6 (some
    near each other, so that additions cancel), sometimes zero."""
    u = rng.random()
    if u < 0.04:
        return fzero
    man = rng.getrandbits(rng.randint(1, 300)) | 1
    exp = rng.randint(-40, 40) if u < 0.6 else rng.randint(-10**6, 10**6)
    return from_man_exp(-man if rng.random() < 0.5 else man, exp)


@pytest.mark.parametrize("rnd", ["n", "f", "c", "d", "u"])
def test_mpfr_operations_are_correctly_rounded_as_libmps(rnd):
    rng = random.Random(20261202 + ord(rnd))
    for _ in range(1500):
        prec = rng.choice([53, 64, 136, 170, 333])
        F = mpfr_ops(prec, rnd)
        a, b = _operand(rng), _operand(rng)
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


def test_mpfr_out_of_range_is_refused_not_rounded():
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


# ------------------------------------------------------------------ raw tuples against mpf objects
def _tail(rng):
    lv = rng.uniform(-2000.0, 0.0)
    if rng.random() < 0.2:  # a high-precision log (as the engine stores |log| ≥ 1e4)
        with workdps(60):
            lv = mpmath.mpf(lv) + mpmath.mpf(rng.random()) * mpmath.mpf(2) ** -80
    return TailValue(1, lv, rng.choice([10 ** rng.uniform(-16, -10), 1e-3, 0.0]), "x", 0, 0, 0.0)


def test_raw_bounds_are_the_mpf_expression():
    rng = random.Random(7)
    for _ in range(300):
        tv = _tail(rng)
        for dps in (_DPS, _DPS + 10):
            with workdps(dps):
                v = mpmath.exp(tv.log_mp)
                r = mpmath.mpf(tv.rel_error)
                assert raw_bounds(tv, *ctx_prec()) == (v._mpf_, (v * (1 - r))._mpf_, (v * (1 + r))._mpf_)


def test_raw_log1p_is_mpmaths():
    rng = random.Random(13)
    xs = [mpmath.mpf(0), mpmath.mpf(-0.25), mpmath.inf, mpmath.mpf(3), mpmath.mpf(2) ** -179, mpmath.mpf(2) ** -180]
    for dps in (_DPS, _DPS + 10):
        with workdps(dps):
            prec = ctx_prec()[0]
            # around the series switch (mag = −(prec + 10)) and the precision switch (mag = 4)
            for m in (-prec - 12, -prec - 11, -prec - 10, -prec - 9, 2, 3, 4, 5):
                xs += [mpmath.mpf(2) ** (m - 1) * (1 + mpmath.mpf(rng.random())) for _ in range(5)]
            xs += [mpmath.mpf(rng.random()) * mpmath.mpf(2) ** rng.randint(-400, 400) for _ in range(300)]
            for x in xs:
                x = +x
                assert raw_log1p(x._mpf_, *ctx_prec()) == mpmath.log1p(x)._mpf_, x


def test_piece_solve_is_the_mpf_expression():
    """ε on a lattice piece where δ meets the target: ``min(e0 + log1p(max(gap, 0)/(e^{e0}·P₂)),
    e_right)`` (``e_right`` when P₂ ≤ 0)."""
    from exactdp.numerics.arith import solve_in_piece as _solve_raw

    rng = random.Random(11)
    with workdps(_DPS + 10):
        for _ in range(300):
            em0 = to_mpf(Fraction(rng.randint(0, 10**8), rng.randint(1, 10**6)))
            e_right = em0 + mpmath.mpf(rng.random())
            scale = mpmath.exp(em0)
            gap = mpmath.mpf(rng.uniform(-1e-3, 1e-3)) * mpmath.mpf(10) ** rng.randint(-40, 0)
            den = mpmath.mpf(0) if rng.random() < 0.05 else mpmath.exp(-rng.uniform(0, 2000))
            want = e_right if den <= 0 else min(em0 + mpmath.log1p(max(gap, 0) / (scale * den)), e_right)
            got = _solve_raw(em0._mpf_, e_right._mpf_, scale._mpf_, gap._mpf_, den._mpf_, *ctx_prec())
            assert got == want._mpf_


# ------------------------------------------------------------------ the Bureau's conversion
@pytest.mark.parametrize("delta", [Fraction(1, 10**600), Fraction(1, 10**10), Fraction(3, 7), Fraction(1, 2),
                                   Fraction(999, 1000)])
def test_bun_steinke_epsilon_is_the_closed_form(delta):
    rng = random.Random(int(delta.denominator % 10**6))
    for _ in range(12):
        rho = Fraction(rng.randint(1, 10**8), 10 ** rng.randint(0, 20)) * 10 ** rng.randint(0, 6)
        f = bun_steinke_epsilon(rho, delta)
        for dps in (30, 50, 200):
            with workdps(dps + 40):
                ref = mp(rho) + 2 * mpmath.sqrt(mp(rho) * mpmath.log(1 / mp(delta)))
                got = f(dps)
                assert type(got) is mpmath.mpf
                assert abs(got - ref) <= ref * mpmath.mpf(10) ** -(dps + 5), (rho, dps)
