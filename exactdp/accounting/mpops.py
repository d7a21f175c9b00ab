"""The certified profile arithmetic on MPFR (gmpy2), with libmp as the fallback: same bits.

The accountant's profiles (``ExactAccountant._assemble``) are chains of +, −, ×, ÷ and
comparisons on values rounded to the mpmath context's precision.  Written on raw libmp
tuples (:mod:`exactdp.accounting.rawmp`) most of their time is pure-Python libmp; MPFR
does the same operations in C.  Both libraries round +, −, × and ÷ *correctly* (the exact
result rounded once in the given mode; round-nearest is ties-to-even in both), so at the
same precision and rounding mode they give the same bits by definition, and a comparison
is exact in both.  exp and log are not correctly rounded in mpmath: they stay libmp's
(``mpf_exp`` on the raw tuple) and their results are converted exactly.

Two namespaces with one interface (``add sub mul div gt lt max min`` on values,
``of_raw`` / ``raw`` to convert from / to raw mpf tuples, ``bounds`` of a tail value,
``zero``, ``one``, ``two``) let the profile code be written once:

* :func:`mpfr_ops` — MPFR at ``(prec, rnd)`` in a context that traps overflow, underflow,
  invalid operations (NaN) and division by zero; values are finite mpfr;
* :func:`libmp_ops` — the former libmp calls on raw tuples (unbounded exponents, inf/nan).

MPFR's exponent range is bounded (±(2^30 − 1) in these contexts, libmp's is not) and NaN comparisons differ,
so a chain that meets anything but finite in-range numbers raises :data:`MPFR_FAIL` (a
trap, an infinite or NaN input, an exponent beyond ±2^29) and the caller recomputes the
whole chain with :func:`libmp_ops` — the same result in every case as the former code.
``tests/test_acct8_mpops.py`` checks both on random operands (directed roundings and large
exponents included) and the profiles against the former libmp code.
"""

from __future__ import annotations

import gmpy2
import mpmath
from gmpy2 import _mpmath_create
from mpmath.libmp import fone, fzero, mpf_add, mpf_div, mpf_exp, mpf_gt, mpf_lt, mpf_mul, mpf_sub

from exactdp.accounting.rawmp import FTWO, raw_bounds, raw_max, raw_min, raw_real

__all__ = ["MPFR_FAIL", "mpfr_ops", "libmp_ops"]

#: what an MPFR chain raises where it cannot reproduce libmp (the caller falls back to libmp):
#: its own range refusals and the trapped overflow, underflow, NaN and division by zero
MPFR_FAIL = (gmpy2.RangeError, gmpy2.InexactResultError, gmpy2.InvalidOperationError, gmpy2.DivisionByZeroError)

_MPF = mpmath.mpf
#: the contexts' exponent range (gmpy2's default, ±(2^30 − 1)); raw exponents beyond
#: ±_EXP_LIMIT go to libmp without a try (overflow and underflow are trapped anyway)
_EMAX = (1 << 30) - 1
_EXP_LIMIT = 1 << 29
_RND = {"n": gmpy2.RoundToNearest, "f": gmpy2.RoundDown, "c": gmpy2.RoundUp, "d": gmpy2.RoundToZero,
        "u": gmpy2.RoundAwayZero}
_OPS: dict = {}


def _context(prec: int, rnd: str):
    return gmpy2.context(precision=prec, round=_RND[rnd], emax=_EMAX, emin=-_EMAX,
                         subnormalize=False, trap_overflow=True, trap_underflow=True, trap_invalid=True,
                         trap_divzero=True, trap_erange=True)


def _fmax(a, b):
    """Python's ``max(a, b)``: b when ``b > a``, else a (finite mpfr, exact comparison)."""
    return b if b > a else a


def _fmin(a, b):
    return b if b < a else a


def _out_of_range():
    return gmpy2.RangeError("a value outside MPFR's finite exponent range: recomputed with libmp")


class _MpfrOps:
    """The MPFR namespace at one ``(prec, rnd)`` (see the module notes)."""

    __slots__ = ("prec", "rnd", "ctx", "add", "sub", "mul", "div", "zero", "one", "two", "_wide")

    gt = staticmethod(lambda a, b: a > b)
    lt = staticmethod(lambda a, b: a < b)
    max = staticmethod(_fmax)
    min = staticmethod(_fmin)

    def __init__(self, prec: int, rnd: str):
        self.prec, self.rnd = prec, rnd
        self.ctx = c = _context(prec, rnd)
        self.add, self.sub, self.mul, self.div = c.add, c.sub, c.mul, c.div
        self.zero = c.mul_2exp(0, 0)
        self.one = c.mul_2exp(1, 0)
        self.two = c.mul_2exp(1, 1)
        self._wide: dict = {}  # bc → exact context for a mantissa wider than prec

    def of_raw(self, raw):
        """The raw mpf tuple as an mpfr, exactly (zero included; inf/nan refused)."""
        sign, man, exp, bc = raw
        if not man:
            if raw == fzero:
                return self.zero
            raise _out_of_range()
        if not -_EXP_LIMIT < exp < _EXP_LIMIT:
            raise _out_of_range()
        c = self.ctx
        if bc > self.prec:
            c = self._wide.get(bc)
            if c is None:
                c = self._wide[bc] = _context(bc, "n")
        return c.mul_2exp(-man if sign else man, exp)

    @staticmethod
    def raw(x):
        """The raw (normalised) mpf tuple of a finite mpfr, exactly; any zero is fzero."""
        if not x.is_finite():
            raise _out_of_range()
        man, exp = x.as_mantissa_exp()
        return _mpmath_create(man, int(exp))

    def bounds(self, tv):
        """``rawmp.raw_bounds(tv)``: ``v = exp(log_value)`` (libmp), ``r = rel_error``,
        ``(v, v·(1 − r), v·(1 + r))``."""
        prec, rnd = self.prec, self.rnd
        lv = tv.log_value
        v = self.of_raw(mpf_exp(lv._mpf_ if type(lv) is _MPF else raw_real(lv, prec, rnd), prec, rnd))
        r = tv.rel_error
        if type(r) is float:
            if r - r != 0.0:  # inf or nan: the libmp chain
                raise _out_of_range()
        else:
            r = self.of_raw(raw_real(r, prec, rnd))
        mul = self.mul
        return v, mul(v, self.sub(self.one, r)), mul(v, self.add(r, self.one))


class _LibmpOps:
    """The libmp namespace at one ``(prec, rnd)``: the raw-tuple calls of the former code."""

    __slots__ = ("prec", "rnd", "add", "sub", "mul", "div")

    gt = staticmethod(mpf_gt)
    lt = staticmethod(mpf_lt)
    max = staticmethod(raw_max)
    min = staticmethod(raw_min)
    zero = fzero
    one = fone
    two = FTWO

    def __init__(self, prec: int, rnd: str):
        self.prec, self.rnd = prec, rnd
        self.add = lambda a, b: mpf_add(a, b, prec, rnd)
        self.sub = lambda a, b: mpf_sub(a, b, prec, rnd)
        self.mul = lambda a, b: mpf_mul(a, b, prec, rnd)
        self.div = lambda a, b: mpf_div(a, b, prec, rnd)

    @staticmethod
    def of_raw(raw):
        return raw

    @staticmethod
    def raw(x):
        return x

    def bounds(self, tv):
        return raw_bounds(tv, self.prec, self.rnd)


def mpfr_ops(prec: int, rnd: str):
    """The MPFR namespace at ``(prec, rnd)`` (cached), or None below 53 bits (where a float
    operand would be rounded first: the libmp chain)."""
    key = (prec, rnd, True)
    ops = _OPS.get(key)
    if ops is None:
        if prec < 53 or rnd not in _RND:
            return None
        ops = _OPS[key] = _MpfrOps(prec, rnd)
    return ops


def libmp_ops(prec: int, rnd: str):
    """The libmp namespace at ``(prec, rnd)`` (cached)."""
    key = (prec, rnd, False)
    ops = _OPS.get(key)
    if ops is None:
        ops = _OPS[key] = _LibmpOps(prec, rnd)
    return ops
