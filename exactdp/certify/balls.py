"""Ball-arithmetic plumbing: precision contexts, exact conversions, outward-rounded output.

Every number of the certification path is an Arb ball (python-flint ``arb`` / ``acb``):
a midpoint and a radius such that the exact value lies inside, whatever roundings and
truncations happened on the way (Arb's own functions put their truncation errors into
the radius).  This module holds the few conversions between balls and the rest of
exactdp:

* :func:`precision` — a context manager for Arb's working precision (``flint.ctx.prec``
  is process-global; it is always restored);
* :func:`ball` — an exact rational (Fraction, int, decimal string) as a ball containing it;
* :class:`BallReal` — a real number given by a function ``prec -> arb`` (irrational ε
  such as the Bureau's ``ρ + 2 sqrt(ρ log(1/δ))``);
* :func:`interval` — the ball containing ``[lo, hi]``;
* :func:`endpoints` — the exact dyadic endpoints of a ball, as Fractions;
* :func:`decimal_outward` — a decimal string rounded down (``"floor"``) or up
  (``"ceil"``) from an exact rational, with a given number of significant digits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction

import mpmath
from flint import arb, ctx, fmpq

from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import to_fraction

__all__ = ["precision", "ball", "BallReal", "bureau_epsilon", "as_ball_real", "interval", "endpoints",
           "dyadic_mpf", "decimal_outward", "floor_ball", "fmpq_of", "prefix_sums", "suffix_sums"]


@contextmanager
def precision(bits: int):
    """Run with Arb's working precision set to ``bits`` (restored on exit)."""
    old = ctx.prec
    ctx.prec = int(bits)
    try:
        yield
    finally:
        ctx.prec = old


def fmpq_of(x) -> fmpq:
    """An exact rational as a flint ``fmpq``."""
    f = x if isinstance(x, Fraction) else Fraction(x)
    return fmpq(f.numerator, f.denominator)


def ball(x) -> arb:
    """A ball containing the exact rational ``x`` (rounded to the working precision)."""
    return arb(fmpq_of(x))


@dataclass(frozen=True)
class BallReal:
    """A real number known through balls: ``evaluate(prec)`` returns an arb containing it,
    narrower as ``prec`` grows.  ``text`` describes it (for reports)."""

    evaluate: Callable[[int], arb]
    text: str

    def __call__(self, prec: int) -> arb:
        with precision(prec):
            return self.evaluate(prec)


def bureau_epsilon(rho, delta) -> BallReal:
    """The Bureau's conversion ``ε = ρ + 2 sqrt(ρ log(1/δ))`` (Bun & Steinke 2016) as a
    :class:`BallReal` (exact rationals ρ, δ)."""
    r = to_fraction(rho, "rho")
    d = to_fraction(delta, "delta")

    def ev(prec):
        rb, db = ball(r), ball(d)
        return rb + 2 * (rb * (1 / db).log()).sqrt()

    return BallReal(ev, f"rho + 2 sqrt(rho log(1/delta)) with rho={r}, delta={d}")


def as_ball_real(value, field: str):
    """An exact rational (Fraction) or a :class:`BallReal`, from user input."""
    if isinstance(value, BallReal):
        return value
    return to_fraction(value, field)


def interval(lo: arb, hi: arb) -> arb:
    """The ball containing every point of ``[lo, hi]`` (both balls included)."""
    return lo.union(hi)


def endpoints(x: arb) -> tuple[Fraction, Fraction]:
    """The exact ends ``(mid − rad, mid + rad)`` of a ball, as dyadic Fractions (no
    rounding: independent of the working precision)."""
    if not x.is_finite():
        raise ArithmeticError(f"ball {x} is not finite")
    m, r = _exact(x.mid()), _exact(x.rad())
    return m - r, m + r


#: largest |binary exponent| of a ball end held as an exact Fraction (2^-4194304 ≈
#: 10^-1262612); a deeper end would need a multi-megabyte denominator per operation
MAX_EXACT_EXPONENT = 1 << 22


class BeyondExactRange(UncertifiedError):
    """A ball end too small or too large to hold as an exact Fraction (every precision
    level fails alike, so no further level is tried)."""


def _exact(e: arb) -> Fraction:
    man_f, exp_f = e.man_exp()
    man, exp = int(man_f), int(exp_f)
    if abs(exp) > MAX_EXACT_EXPONENT:
        raise BeyondExactRange(f"a ball end of about 2^{exp} is beyond the certificate's exact range "
                               f"(|binary exponent| ≤ {MAX_EXACT_EXPONENT}); try the query without --certify: the fast "
                               f"path's value keeps its own certified error bound")
    return Fraction(man * 2**exp) if exp >= 0 else Fraction(man, 2**-exp)


def dyadic_mpf(q: Fraction):
    """An exact dyadic rational as an mpmath number, exactly (no rounding)."""
    num, den = q.numerator, q.denominator
    if den & (den - 1):
        raise ValueError("not a dyadic rational")
    exp = -(den.bit_length() - 1)
    with mpmath.workprec(max(53, abs(num).bit_length() + 2)):
        return mpmath.ldexp(mpmath.mpf(num), exp)


def floor_ball(x: arb) -> int | None:
    """``floor`` of the real inside the ball, or None when the ball straddles an integer."""
    f = x.floor()
    u = f.unique_fmpz()
    return None if u is None else int(u)


def decimal_outward(q: Fraction, digits: int, direction: str) -> str:
    """``q`` as a decimal string of ``digits`` significant digits, rounded toward −∞
    (``"floor"``) or +∞ (``"ceil"``): the string's value is ≤ q, resp. ≥ q."""
    if direction not in ("floor", "ceil"):
        raise ValueError("direction must be 'floor' or 'ceil'")
    if q == 0:
        return "0." + "0" * (digits - 1)
    sign = -1 if q < 0 else 1
    a = abs(q)
    # e10 = floor(log10(a)), exactly (estimate from bit lengths, then exact comparisons)
    e10 = math.floor((a.numerator.bit_length() - a.denominator.bit_length()) * 0.30102999566398120)
    while Fraction(10) ** e10 > a:
        e10 -= 1
    while Fraction(10) ** (e10 + 1) <= a:
        e10 += 1
    scaled = a / Fraction(10) ** (e10 - digits + 1)  # in [10^(digits-1), 10^digits)
    round_up = (direction == "ceil") == (sign > 0)
    m = math.ceil(scaled) if round_up else math.floor(scaled)
    if m >= 10**digits:  # 99.9… rounded up to 100…: the same number, one digit shorter
        m //= 10
        e10 += 1
    s = str(m)
    text = f"{s[0]}.{s[1:]}e{e10:+d}" if len(s) > 1 else f"{s}e{e10:+d}"
    return ("-" if sign < 0 else "") + text


def suffix_sums(xs: list) -> list:
    """``out[i] = Σ_{j ≥ i} xs[j]`` (balls; ``out[len(xs)] = 0``): sums of positive terms."""
    out = [arb(0)] * (len(xs) + 1)
    acc = arb(0)
    for i in range(len(xs) - 1, -1, -1):
        acc += xs[i]
        out[i] = acc
    return out


def prefix_sums(xs: list) -> list:
    """``out[i] = Σ_{j < i} xs[j]`` (balls; ``out[0] = 0``)."""
    out = [arb(0)] * (len(xs) + 1)
    acc = arb(0)
    for i, x in enumerate(xs):
        acc += x
        out[i + 1] = acc
    return out
