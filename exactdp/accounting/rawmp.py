"""The accounting layer's mpmath arithmetic on raw mpf tuples (``mpmath.libmp``).

The certified profiles of the accountant (``_assemble``, the ε(δ) closed-form solves)
are a few dozen mpmath operations per breakpoint; written with ``mpmath.mpf`` objects
most of their time goes to operator dispatch and object creation.  These helpers do the
*same* libmp calls that the ``mpf`` operators and ``mpmath.exp`` make, with the same
arguments in the same order, at the precision and rounding mode of the current mpmath
context (``mpmath.mp._prec_rounding``, round-nearest): the results are the same bits.

The correspondence (mpmath 1.x, ``ctx_mp_python``):

* ``a + b``, ``a - b``, ``a * b``, ``a / b`` (mpf operands) → ``mpf_add/sub/mul/div(a, b,
  prec, rnd)``; an int operand is first converted exactly (``from_int``), and ``1 - r``
  (``r.__rsub__``) is ``mpf_sub(from_int(1), r)``, ``1 + r`` (``r.__radd__``) is
  ``mpf_add(r, from_int(1))``;
* ``mpmath.exp(x)`` → ``mpf_exp(x, prec, rnd)`` on the argument converted losslessly
  (a float by ``from_float``, an mpf as it is, not rounded first);
* ``mpmath.mpf(float)`` → ``from_float`` then ``mpf_pos(·, prec)`` (exact for prec ≥ 53);
* ``to_mpf(Fraction)`` → ``from_rational(p, q, prec, 'n')``;
* ``max(a, b)`` → ``b if b > a else a`` and ``min(a, b)`` → ``b if b < a else a`` (the
  order CPython's builtins compare in), with ``mpf_gt`` / ``mpf_lt``;
* comparisons → ``mpf_lt/le/gt/ge`` (exact, precision-free);
* ``mpmath.log1p(x)`` for a finite x > 0 → the steps of ``mpmath.functions.log1p`` under
  its ``_wrap_specfun`` wrapper (see :func:`raw_log1p`); other arguments go to mpmath.

``tests/test_rawmp.py`` checks every helper against the former mpf-object code.
"""

from __future__ import annotations

import mpmath
from mpmath.libmp import (
    fone,
    from_float,
    from_int,
    from_rational,
    fzero,
    mpf_add,
    mpf_exp,
    mpf_gt,
    mpf_ln,
    mpf_lt,
    mpf_mul,
    mpf_pos,
    mpf_sub,
)

__all__ = ["ctx_prec", "raw_real", "raw_exp", "raw_bounds", "raw_max", "raw_min", "raw_fraction", "make", "raw_log1p",
           "raw_convert", "FTWO"]

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
