"""The one arithmetic layer: binary multiprecision with explicit precision and rounding.

Every operation takes its precision in bits and its rounding direction (``'n'`` nearest,
``'f'`` floor, ``'c'`` ceiling, ``'d'`` towards zero, ``'u'`` away from zero) as arguments,
in the style of mpmath's ``libmp`` (``mpf_add(a, b, prec, rnd)``); nothing reads a global
context except :func:`ctx_prec`, which hands the caller the current mpmath context's
``(prec, rnd)`` to pass on explicitly.  Values are raw mpf tuples ``(sign, man, exp, bc)``
(:func:`make` wraps one as an ``mpmath.mpf`` without rounding).

Three parts, one interface:

* **the primitives** — libmp's correctly rounded ``mpf_add/sub/mul/div/sqrt``, its ``mpf_exp``
  and ``mpf_ln`` (not correctly rounded: mpmath's), the exact conversions ``from_int`` /
  ``from_float`` / ``from_rational`` and the exact comparisons ``mpf_lt/le/gt/ge``, re-exported
  here so that callers import their arithmetic from one place;
* **raw helpers** — the mpf-object expressions of the accounting layer written as the *same*
  libmp calls the ``mpf`` operators and ``mpmath.exp`` / ``mpmath.log1p`` make, with the same
  arguments in the same order (same bits, without operator dispatch):

  - ``a + b``, ``a - b``, ``a * b``, ``a / b`` (mpf operands) → ``mpf_add/sub/mul/div(a, b,
    prec, rnd)``; an int operand is first converted exactly (``from_int``), ``1 - r``
    (``r.__rsub__``) is ``mpf_sub(from_int(1), r)``, ``1 + r`` (``r.__radd__``) is
    ``mpf_add(r, from_int(1))``;
  - ``mpmath.exp(x)`` → ``mpf_exp(x, prec, rnd)`` on the argument converted losslessly
    (a float by ``from_float``, an mpf as it is, not rounded first);
  - ``mpmath.mpf(float)`` → ``from_float`` then ``mpf_pos(·, prec)`` (exact for prec ≥ 53);
  - ``to_mpf(Fraction)`` → ``from_rational(p, q, prec, rnd)``;
  - ``max(a, b)`` → ``b if b > a else a`` and ``min(a, b)`` → ``b if b < a else a`` (the
    order CPython's builtins compare in), with ``mpf_gt`` / ``mpf_lt``;
  - ``mpmath.log1p(x)`` for a finite x > 0 → the steps of ``mpmath.functions.log1p`` under
    its ``_wrap_specfun`` wrapper (:func:`raw_log1p`); other arguments go to mpmath;

* **two namespaces** for chains of +, −, ×, ÷ and comparisons written once
  (``add sub mul div gt lt max min`` on values, ``of_raw`` / ``raw`` to convert from / to raw
  tuples, ``bounds`` of a tail value, ``zero``, ``one``, ``two``), each bound to one
  ``(prec, rnd)``:

  - :func:`mpfr_ops` — MPFR (gmpy2) in a context that traps overflow, underflow, invalid
    operations (NaN) and division by zero; values are finite mpfr.  Both libraries round
    +, −, × and ÷ *correctly* (round-nearest is ties-to-even in both), so at the same
    precision and rounding they give the same bits by definition, and a comparison is exact
    in both; exp and log stay libmp's and their results are converted exactly.  MPFR's
    exponent range is bounded (±(2^30 − 1) here, libmp's is not) and NaN comparisons differ,
    so a chain that meets anything but finite in-range numbers raises :data:`MPFR_FAIL`
    (a trap, an infinite or NaN input, an exponent beyond ±2^29) and the caller recomputes
    the whole chain with :func:`libmp_ops` — the same result in every case;
  - :func:`libmp_ops` — the libmp calls on raw tuples (unbounded exponents, inf/nan).

``tests/test_numerics_arith.py`` checks the MPFR namespace against libmp on random operands
(directed roundings and large exponents included) and the raw helpers against mpmath's
object arithmetic.
"""

from __future__ import annotations

import gmpy2
import mpmath
from gmpy2 import _mpmath_create
from mpmath.libmp import (
    dps_to_prec,
    finf,
    fnan,
    fone,
    from_float,
    from_int,
    from_man_exp,
    from_rational,
    fzero,
    mpf_abs,
    mpf_add,
    mpf_div,
    mpf_exp,
    mpf_ge,
    mpf_gt,
    mpf_le,
    mpf_ln,
    mpf_lt,
    mpf_mul,
    mpf_pos,
    mpf_sqrt,
    mpf_sub,
    round_nearest,
    to_float,
)

__all__ = [
    # the primitives (mpmath.libmp)
    "dps_to_prec", "finf", "fnan", "fone", "from_float", "from_int", "from_man_exp", "from_rational", "fzero",
    "mpf_abs", "mpf_add", "mpf_div", "mpf_exp", "mpf_ge", "mpf_gt", "mpf_le", "mpf_ln", "mpf_lt", "mpf_mul",
    "mpf_pos", "mpf_sqrt", "mpf_sub", "round_nearest", "to_float",
    # raw helpers
    "ctx_prec", "raw_real", "raw_exp", "raw_bounds", "raw_max", "raw_min", "raw_fraction", "make", "raw_log1p",
    "raw_convert", "FTWO", "tiny_width", "solve_in_piece",
    # the namespaces
    "MPFR_FAIL", "mpfr_ops", "libmp_ops",
]

_MPF = mpmath.mpf
_new = object.__new__
FTWO = from_int(2)


def ctx_prec():
    """``(prec, rounding)`` of the current mpmath context (inside the caller's workdps)."""
    return mpmath.mp._prec_rounding


def make(raw):
    """An ``mpmath.mpf`` holding the raw tuple (as ``mpmath.mp.make_mpf``)."""
    v = _new(_MPF)
    v._mpf_ = raw
    return v


def raw_real(x, prec: int, rnd: str):
    """``mpmath.mpf(x)._mpf_`` at ``prec`` for a float or an mpf (an mpf is rounded to prec,
    as ``mpf(x)`` does); anything else through mpmath itself."""
    if type(x) is float:
        v = from_float(x)
        return v if prec >= 53 else mpf_pos(v, prec, rnd)
    if type(x) is _MPF:
        return mpf_pos(x._mpf_, prec, rnd)
    return _MPF(x)._mpf_


def raw_convert(x):
    """``mpmath.mp.convert(x)._mpf_``: the lossless conversion an mpf operator or
    ``mpmath.exp`` applies to a float, int or mpf operand (an mpf as it is)."""
    if type(x) is _MPF:
        return x._mpf_
    if type(x) is float:
        return from_float(x)
    return mpmath.mp.convert(x)._mpf_


def raw_exp(x, prec: int, rnd: str):
    """``mpmath.exp(x)._mpf_`` (x a float, an mpf or an int)."""
    return mpf_exp(raw_convert(x), prec, rnd)


def raw_bounds(tv, prec: int, rnd: str):
    """``accounting.curve._bounds(tv)`` raw: ``v = exp(tv.log_mp)``, ``r = mpf(rel_error)``,
    ``(v, v·(1 − r), v·(1 + r))``."""
    lv = tv.log_value
    # tv.log_mp: the mpf as stored, or mpf(float) (exact at prec ≥ 53)
    v = mpf_exp(lv._mpf_ if type(lv) is _MPF else raw_real(lv, prec, rnd), prec, rnd)
    r = raw_real(tv.rel_error, prec, rnd)
    return v, mpf_mul(v, mpf_sub(fone, r, prec, rnd), prec, rnd), mpf_mul(v, mpf_add(r, fone, prec, rnd), prec, rnd)


def raw_max(a, b):
    """Python's ``max(a, b)`` on mpf values: b when ``b > a``, else a."""
    return b if mpf_gt(b, a) else a


def raw_min(a, b):
    """Python's ``min(a, b)`` on mpf values: b when ``b < a``, else a."""
    return b if mpf_lt(b, a) else a


def raw_fraction(x, prec: int, rnd: str):
    """``to_mpf(x)._mpf_`` for a Fraction (or int) at ``prec``."""
    return from_rational(x.numerator, x.denominator, prec, rnd)


def raw_log1p(x, prec: int, rnd: str):
    """``mpmath.log1p(x)._mpf_`` at context precision ``prec``.

    For a finite x > 0 the steps of mpmath 1.x: the wrapper works at ``wp = prec + 10``
    and rounds the result once to ``prec``; ``log1p`` with ``mag(x) = exp + bc``: if
    ``mag ≥ −wp``, ``ln(fadd(1.0, x, prec=w))`` at ``wp`` with ``w = 2·wp`` when ``mag < 4``
    (the real part dominates the zero imaginary part), else ``w = wp``; otherwise the
    series ``x + 0·0·0.5`` (``mpf_add(x, 0)`` at ``wp``).  Zero gives zero; negative,
    infinite or nan arguments are left to ``mpmath.log1p`` itself (at ``prec``)."""
    sign, man, exp, bc = x
    if not man:
        if x == fzero:
            return fzero
    elif not sign:
        wp = prec + 10
        mag = exp + bc
        if mag >= -wp:
            return mpf_pos(mpf_ln(mpf_add(fone, x, 2 * wp if mag < 4 else wp, rnd), wp, rnd), prec, rnd)
        return mpf_pos(mpf_add(x, fzero, wp, rnd), prec, rnd)
    with mpmath.workprec(prec):
        return mpmath.log1p(make(x))._mpf_


_TINY_WIDTHS: dict = {}


def tiny_width(prec: int):
    """``mpf(10) ** -30`` at ``prec`` bits, raw (the floor of a result's width bound)."""
    v = _TINY_WIDTHS.get(prec)
    if v is None:
        with mpmath.workprec(prec):
            v = _TINY_WIDTHS[prec] = (mpmath.mpf(10) ** -30)._mpf_
    return v


def solve_in_piece(em0, e_right, scale, gap, den, prec: int, rnd: str):
    """``min(em0 + log1p(max(gap, 0)/(scale·den)), e_right)`` (``e_right`` when den ≤ 0) on
    raw mpf tuples: the closed-form solve of ε inside one piece of the profile
    (:mod:`exactdp.accounting.inversion`)."""
    g = fzero if mpf_gt(fzero, gap) else gap  # max(gap, 0)
    if mpf_le(den, fzero):
        return e_right
    x = mpf_add(em0, raw_log1p(mpf_div(g, mpf_mul(scale, den, prec, rnd), prec, rnd), prec, rnd), prec, rnd)
    return e_right if mpf_lt(e_right, x) else x  # min(x, e_right)


# ------------------------------------------------------------------ the namespaces
#: what an MPFR chain raises where it cannot reproduce libmp (the caller falls back to libmp):
#: its own range refusals and the trapped overflow, underflow, NaN and division by zero
MPFR_FAIL = (gmpy2.RangeError, gmpy2.InexactResultError, gmpy2.InvalidOperationError, gmpy2.DivisionByZeroError)

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
        """``raw_bounds(tv)``: ``v = exp(log_value)`` (libmp), ``r = rel_error``,
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
