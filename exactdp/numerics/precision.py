"""Precision: multiprecision contexts, the digit constants, the float64 rounding unit.

exactdp never changes mpmath's global precision.  Every multiprecision computation runs
inside :func:`workdps` (a thin alias of :func:`mpmath.workdps`), which restores the
previous precision on exit, also when an exception is raised.

This module is the one place that fixes

* the working precisions (decimal digits) of each kind of multiprecision work:
  :data:`DPS_RESULT` (arithmetic on certified results: e^ε times a tail, brackets),
  :data:`DPS_ANALYSIS` (closed-form conversions and bounds), :data:`VERIFY_DPS` (the
  verification twin), :data:`DPS_LOW` (quick multiprecision checks), :data:`DPS_FLOAT64`
  (enough digits to round once to a binary64), :data:`DPS_DECIDE` (the sign or floor of
  an exact real), :data:`DPS_GUARD`, the guard digits carried beyond a requested
  precision, and :data:`DPS_TEXT_GUARD`, those of a printed number;
* :data:`EPS64`, the rounding unit of every float64 error bound: ``2⁻⁵²`` bounds the
  relative error of one correctly rounded float64 operation (it is twice the unit
  roundoff ``u = 2⁻⁵³``, so bounds counted in EPS64 are conservative by a factor 2);
* :func:`to_mpf`, the one conversion of an exact rational to an mpmath number.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
from mpmath.libmp import from_rational, round_nearest

from exactdp.kernels.units import EPS64 as _EPS64

__all__ = ["workdps", "workprec", "backend", "to_mpf", "EPS64",
           "DPS_FLOAT64", "DPS_LOW", "DPS_RESULT", "DPS_ANALYSIS", "VERIFY_DPS", "DPS_GUARD", "DPS_DECIDE",
           "DPS_TEXT_GUARD"]

#: Relative rounding bound of one float64 operation used by every error bound (2⁻⁵²), defined once
#: in :mod:`exactdp.kernels.units` (the kernels' unit too).
EPS64 = _EPS64

#: Decimal digits of a multiprecision value that is only rounded to a binary64 (17 + 3).
DPS_FLOAT64 = 20
#: Decimal digits of quick multiprecision checks and reports.
DPS_LOW = 30
#: Decimal digits of arithmetic on certified results (e^ε·tail, brackets, summaries).
DPS_RESULT = 40
#: Decimal digits of closed-form conversions and bounds (zCDP, RDP, GDP, Edgeworth).
DPS_ANALYSIS = 50
#: Default number of decimal digits of the verification twin.
VERIFY_DPS = 60
#: Guard digits carried internally beyond a requested number of digits.
DPS_GUARD = 10
#: Decimal digits at which the sign or the floor of an exact real is decided.
DPS_DECIDE = 60
#: Guard digits of a printed number: one with d significant digits is first rounded to
#: d + DPS_TEXT_GUARD digits (:func:`exactdp.sweep.pair.fmt`).
DPS_TEXT_GUARD = 15

workdps = mpmath.workdps
workprec = mpmath.workprec


def to_mpf(x):
    """An exact rational (Fraction, int, or anything with numerator/denominator) as an
    mpmath number at the *current* precision: ``numerator / denominator`` correctly
    rounded once.  An mpmath number (an already computed real) is rounded to the
    current precision."""
    if isinstance(x, mpmath.mpf):
        return +x
    if not isinstance(x, Fraction):
        x = Fraction(x)
    return mpmath.mpf(from_rational(x.numerator, x.denominator, mpmath.mp.prec, round_nearest))


def backend() -> str:
    """The arithmetic backend of mpmath: ``"gmpy"`` when gmpy2 is in use (expected)."""
    return mpmath.libmp.BACKEND
