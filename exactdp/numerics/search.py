"""Monotone searches: the one bracketing helper used by every layer.

Every search in exactdp is a search for the boundary of a *monotone predicate*: the
smallest integer (or the smallest real, to a stated width) at which a certified test
turns true.  The predicate decides; an optional ``probe`` (an estimate, e.g. a secant
step on log δ) only proposes where to test next, so a wrong estimate can slow a search
but never change its answer.  (Modelled on dp_accounting's
``pld.common.inverse_monotone_function``, with integer and certified-predicate forms.)

* :func:`expand` — grow a bracket geometrically until the predicate changes value;
* :func:`first_true` — the smallest integer in ``(lo, hi]`` where a monotone predicate
  is true (bisection, optionally accelerated by a probe);
* :func:`bisect_real` — a bracket ``[lo, hi]`` of width ≤ ``width`` around the boundary of
  a monotone predicate on the reals (Fractions or mpmath numbers);
* :func:`golden_max` — the maximum of a unimodal function (golden-section search).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import mpmath

__all__ = ["SearchError", "expand", "first_true", "bisect_real", "Maximum", "golden_max"]


class SearchError(ArithmeticError):
    """A bracket could not be found within the allowed number of steps."""


def expand(pred: Callable[[object], bool], start, step, *, want: bool = True, max_steps: int = 200):
    """Walk ``x = start, start + step, start + 3·step, …`` (the step doubling) until
    ``pred(x) == want``; return ``(previous, x)``, where ``previous`` is the last point
    tested with the other value (or ``None`` when ``start`` already satisfies it).

    ``step`` may be negative (walk down).  Raises :class:`SearchError` after
    ``max_steps`` steps.
    """
    x = start
    prev = None
    for _ in range(max_steps):
        if pred(x) == want:
            return prev, x
        prev = x
        x = x + step
        step = step * 2
    raise SearchError(f"no bracket within {max_steps} doubling steps from {start}")


def first_true(pred: Callable[[int], bool], lo: int, hi: int, *,
               probe: Callable[[int, int], int] | None = None) -> int:
    """Smallest integer ``k`` in ``(lo, hi]`` with ``pred(k)`` true.

    Requires a monotone predicate (false … false true … true) with ``pred(lo)`` false and
    ``pred(hi)`` true; neither end is re-tested.  ``probe(lo, hi)``, if given, proposes
    the next point to test (clamped into the open interval); probes alternate with
    midpoints, so the bracket at least halves every two tests whatever the probe says.
    """
    lo, hi = int(lo), int(hi)
    use_probe = probe is not None
    while hi - lo > 1:
        k = (lo + hi) // 2
        if use_probe:
            guess = probe(lo, hi)
            if guess is not None:
                k = min(max(int(guess), lo + 1), hi - 1)
        if pred(k):
            hi = k
        else:
            lo = k
        use_probe = probe is not None and not use_probe
    return hi


def bisect_real(pred: Callable[[object], bool], lo, hi, *, width, max_iter: int = 10_000):
    """Bracket the boundary of a monotone predicate on the reals.

    Requires ``pred(lo)`` false and ``pred(hi)`` true (neither is re-tested); returns
    ``(lo, hi)`` with ``pred(lo)`` false, ``pred(hi)`` true and ``hi − lo ≤ width``, where
    ``width`` is a number or a callable ``width(lo, hi)`` (for relative widths).
    Works on Fractions (exact midpoints) and on mpmath numbers.
    """
    wfun = width if callable(width) else (lambda a, b: width)
    for _ in range(max_iter):
        if hi - lo <= wfun(lo, hi):
            return lo, hi
        mid = (lo + hi) / 2
        if pred(mid):
            hi = mid
        else:
            lo = mid
    raise SearchError(f"bisection did not reach the width in {max_iter} steps")


@dataclass(frozen=True)
class Maximum:
    """A numerically located maximum.

    Attributes
    ----------
    value : mpmath.mpf
        f(argmax).
    argmax : mpmath.mpf
        The maximiser found.
    bracket_width : mpmath.mpf
        Width of the final golden-section bracket containing the maximiser (for a
        unimodal f); ``value`` is within ``max |f''| bracket_width**2`` of the supremum.
    """

    value: mpmath.mpf
    argmax: mpmath.mpf
    bracket_width: mpmath.mpf


def golden_max(f, lo, hi, *, tol=None, max_iter: int = 2000) -> Maximum:
    """Maximise a unimodal ``f`` on ``[lo, hi]`` by golden-section search.

    Runs at the caller's mpmath precision; stops when the bracket is narrower than
    ``tol`` (default ``10**(-dps/2 - 2)``, so that the value is accurate to about the
    working precision, the error of the value being quadratic in the bracket width).
    """
    lo = mpmath.mpf(lo)
    hi = mpmath.mpf(hi)
    if tol is None:
        tol = mpmath.mpf(10) ** (-(mpmath.mp.dps // 2) - 2) * max(1, abs(lo), abs(hi))
    invphi = (mpmath.sqrt(5) - 1) / 2
    a, b = lo, hi
    x1 = b - invphi * (b - a)
    x2 = a + invphi * (b - a)
    f1, f2 = f(x1), f(x2)
    for _ in range(max_iter):
        if b - a <= tol:
            break
        if f1 < f2:
            a, x1, f1 = x1, x2, f2
            x2 = a + invphi * (b - a)
            f2 = f(x2)
        else:
            b, x2, f2 = x2, x1, f1
            x1 = b - invphi * (b - a)
            f1 = f(x1)
    if f1 >= f2:
        return Maximum(f1, x1, b - a)
    return Maximum(f2, x2, b - a)
