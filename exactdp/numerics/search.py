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
* :func:`first_true_near` — the same, searched outward from a guess (two tests when the
  guess is right);
* :func:`least_int` — the smallest integer ``≥ lowest`` where a monotone predicate is
  true, searched from a starting guess (:func:`expand` then :func:`first_true`);
* :func:`bisect_real` — a bracket ``[lo, hi]`` of width ≤ ``width`` around the boundary of
  a monotone predicate on the reals (Fractions or mpmath numbers);
* :func:`newton_root` — the root of an increasing function, Newton steps kept inside a
  shrinking bracket (bisection whenever a step would leave it);
* :func:`secant_narrow` — narrow a certified bracket of a three-valued (certified true,
  certified false, undecided) monotone test by safeguarded secant steps (Illinois rule)
  on an estimate, trial points chosen by a ``snap`` rule (e.g. simplest rationals);
* :func:`golden_max` / :func:`golden_min` — the maximum / minimum of a unimodal
  function (golden-section search);
* :class:`BrentMax` / :func:`brent_max` — the maximiser of a unimodal estimate by Brent's
  parabolic interpolation with golden-section safeguards, as an ask/tell state (many
  searches advanced together, one batched evaluation per round) or a loop.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath

__all__ = ["SearchError", "expand", "first_true", "first_true_near", "least_int", "bisect_real", "newton_root",
           "secant_narrow", "Maximum", "Minimum", "golden_max", "golden_min", "BrentMax", "brent_max"]


class SearchError(ArithmeticError):
    """A bracket could not be found within the allowed number of steps."""


def expand(pred: Callable[[Any], bool], start, step, *, want: bool = True, max_steps: int = 200):
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
    the next point to test (clamped into the open interval); a probe that did not halve
    the bracket is followed by a midpoint, so the bracket at least halves every two
    tests whatever the probe says (and a good probe is never interrupted).
    """
    lo, hi = int(lo), int(hi)
    use_probe = probe is not None
    while hi - lo > 1:
        k = (lo + hi) // 2
        width = hi - lo
        probed = False
        if use_probe and probe is not None:
            guess = probe(lo, hi)
            if guess is not None:
                k = min(max(int(guess), lo + 1), hi - 1)
                probed = True
        if pred(k):
            hi = k
        else:
            lo = k
        use_probe = probe is not None and (not probed or 2 * (hi - lo) <= width)
    return hi


def first_true_near(pred: Callable[[int], bool], guess: int, lo: int, hi: int, *,
                    hi_tested: bool = True, max_steps: int = 200) -> int:
    """Smallest integer ``k`` in ``(lo, hi]`` with ``pred(k)`` true, searched outward
    from a guess: test ``guess``; if true walk down by steps 1, 1, 2, 4, … until false
    (or ``lo``), else up by the same steps until true (or ``hi``); then
    :func:`first_true` on the last step.  A guess on the answer costs
    two tests, one ``d`` away about ``2 log2 d`` more.

    Requires a monotone predicate with ``pred(lo)`` false; ``pred(hi)`` must be true, and
    is tested (only if the walk reaches it) when ``hi_tested`` is False — a false value
    there raises :class:`SearchError`.  The answer does not depend on the guess.
    """
    lo, hi = int(lo), int(hi)
    g = min(max(int(guess), lo + 1), hi)
    steps = [1, 1]  # then 2, 4, …: a guess one off costs one test more, not two
    if pred(g):
        top = g
        for i in range(max_steps):
            x = max(top - (steps[i] if i < 2 else 2 ** (i - 1)), lo)
            if x == lo or not pred(x):
                return first_true(pred, x, top)
            top = x
    else:
        bottom = g
        for i in range(max_steps):
            x = min(bottom + (steps[i] if i < 2 else 2 ** (i - 1)), hi)
            if x == hi and hi_tested:
                return first_true(pred, bottom, hi)
            if pred(x):
                return first_true(pred, bottom, x)
            if x == hi:
                raise SearchError(f"the predicate is false at the upper end {hi}")
            bottom = x
    raise SearchError(f"no bracket within {max_steps} doubling steps from {guess}")


def least_int(pred: Callable[[int], bool], start: int, *, lowest: int, max_steps: int = 200) -> int:
    """Smallest integer ``k ≥ lowest`` with ``pred(k)`` true, for a monotone predicate.

    The search starts at ``start`` (a guess, clamped to ``≥ lowest``): if ``pred(start)``
    holds, bisect down over ``[lowest, start]``; otherwise walk up with doubling steps
    (:func:`expand`) and bisect the last step (:func:`first_true`).  The answer does not
    depend on the guess.
    """
    lowest = int(lowest)
    start = max(int(start), lowest)
    if pred(start):
        return first_true(pred, lowest - 1, start)
    prev, hi = expand(pred, start + 1, 1, max_steps=max_steps)
    return first_true(pred, start if prev is None else prev, hi)


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


def newton_root(fdf: Callable, lo, hi, x, *, xtol: Callable, max_iter: int = 300):
    """Root of an increasing function by Newton steps kept inside a shrinking bracket.

    ``fdf(x)`` returns ``(f(x), f'(x))``; the root lies in ``[lo, hi]`` and ``x`` is the
    first point to evaluate.  Each step evaluates ``f(x)``, moves the end of the bracket
    on the side of the root (``f(x) < 0``: ``lo = x``, else ``hi = x``) and proposes the
    Newton iterate ``x − f/f'``; a proposal outside the (closed) bracket is replaced by
    the midpoint.  Stops when the step ``|x_new − x| ≤ xtol(x)`` or the bracket
    ``hi − lo ≤ xtol(hi)``.

    Returns ``(x_new, lo, hi)``: the last iterate and the final bracket (after
    ``max_iter`` steps, the bracket's midpoint as the iterate).  The root is an
    *estimate*: callers that need a certified side test it (e.g. keep ``hi``).
    """
    for _ in range(max_iter):
        fx, dfx = fdf(x)
        if fx < 0:
            lo = x
        else:
            hi = x
        nx = x - fx / dfx
        if not lo <= nx <= hi:
            nx = (lo + hi) / 2
        if abs(nx - x) <= xtol(x) or hi - lo <= xtol(hi):
            return nx, lo, hi
        x = nx
    return (lo + hi) / 2, lo, hi


def secant_narrow(status: Callable, estimate: Callable, snap: Callable, lo: Fraction, hi: Fraction,
                  width: Fraction, *, max_tests: int | None = None):
    """Narrow a certified bracket ``(lo, hi]`` of a monotone three-valued test to ``width``.

    ``status(c)`` is ``1`` (certified true: the boundary is ≤ c), ``-1`` (certified false:
    the boundary is > c) or ``0`` (undecided, c lies within the test's error bars);
    ``status(lo) == -1`` and ``status(hi) == 1`` on entry.  ``estimate(c)`` is a real
    that changes sign at the boundary (positive on the false side, e.g. log δ(c) − log δ_t):
    it only proposes the next trial point, by a secant step between the ends with the
    Illinois rule (halve the estimate kept at an end that survives twice); after two slow
    steps (the bracket not halved), bisect.  ``snap(a, b)`` picks the trial point within
    a window ``[a, b]`` around the proposal (e.g. the simplest rational: small lattices).
    Close to the end (bracket < 64·width) two windows straddle the proposal.  An
    undecided trial point is stepped over to both sides by ``width/8 … width/4``.

    Exact rationals throughout (the estimate is converted with 15 significant digits);
    returns ``(lo, hi)`` with ``hi − lo ≤ width``, ``status(lo) == -1``,
    ``status(hi) == 1``.  With ``max_tests``, the narrowing stops once that many tests
    were made (a test that cannot resolve ``width`` would otherwise never end) and returns
    the bracket it has, certified but possibly wider than ``width``.
    """
    tests = 0
    if max_tests is not None:
        inner = status

        def status(c):
            nonlocal tests
            tests += 1
            return inner(c)

    fa, fb, last, slow = estimate(lo), estimate(hi), 0, 0
    while hi - lo > width and (max_tests is None or tests < max_tests):
        gap = hi - lo
        if fa > 0 > fb and slow < 2:
            x = lo + gap * Fraction(mpmath.nstr(fa / (fa - fb), 15))
        else:
            x, slow = lo + gap / 2, 0
        edge = gap / 1000
        x = min(max(x, lo + edge), hi - edge)
        if gap < 64 * width:  # close: straddle the estimate
            wins = [(x - width / 3, x - width / 6), (x + width / 6, x + width / 3)]
        else:
            hw = max(width / 8, gap / 64)
            wins = [(x - hw, x + hw)]
        for a, b in wins:
            a, b = max(a, lo + edge), min(b, hi - edge)
            if a > b:
                continue
            c = snap(a, b)
            s = status(c)
            if s == 0:  # undecided: step to both sides
                for cc in (snap(c + width / 8, c + width / 4), snap(c - width / 4, c - width / 8)):
                    if lo < cc < hi and status(cc) == 1:
                        hi, fb = cc, estimate(cc)
                    elif lo < cc < hi and status(cc) == -1:
                        lo, fa = cc, estimate(cc)
                continue
            if s == 1:
                hi, fb = c, estimate(c)
                if last == 1:
                    fa /= 2
                last = 1
            else:
                lo, fa = c, estimate(c)
                if last == -1:
                    fb /= 2
                last = -1
        slow = slow + 1 if hi - lo > gap / 2 else 0
    return lo, hi


@dataclass(frozen=True)
class Maximum:
    """A numerically located maximum.

    Attributes
    ----------
    value : mpmath.mpf or float
        f(argmax).
    argmax : mpmath.mpf or float
        The maximiser found.
    bracket_width : mpmath.mpf or float
        Width of the final golden-section bracket containing the maximiser (for a
        unimodal f); ``value`` is within ``max |f''| bracket_width**2`` of the supremum.
    """

    value: mpmath.mpf
    argmax: mpmath.mpf
    bracket_width: mpmath.mpf


@dataclass(frozen=True)
class Minimum:
    """A numerically located minimum (as :class:`Maximum`, for ``min``)."""

    value: mpmath.mpf
    argmin: mpmath.mpf
    bracket_width: mpmath.mpf


def _golden(f, lo, hi, keep_left, tol, max_iter, float64):
    """Golden-section search; ``keep_left(f1, f2)`` says whether the optimum is taken to
    lie in the left part ``[a, x2]`` of the bracket (ties go to the side it says)."""
    if float64:
        a, b = float(lo), float(hi)
        invphi = (math.sqrt(5) - 1) / 2
        if tol is None:
            tol = 0.0
    else:
        a, b = mpmath.mpf(lo), mpmath.mpf(hi)
        invphi = (mpmath.sqrt(5) - 1) / 2
        if tol is None:
            tol = mpmath.mpf(10) ** (-(mpmath.mp.dps // 2) - 2) * max(1, abs(a), abs(b))
    x1 = b - invphi * (b - a)
    x2 = a + invphi * (b - a)
    f1, f2 = f(x1), f(x2)
    for _ in range(max_iter):
        if b - a <= tol:
            break
        if keep_left(f1, f2):
            b, x2, f2 = x2, x1, f1
            x1 = b - invphi * (b - a)
            f1 = f(x1)
        else:
            a, x1, f1 = x1, x2, f2
            x2 = a + invphi * (b - a)
            f2 = f(x2)
    if keep_left(f1, f2):
        return f1, x1, b - a
    return f2, x2, b - a


def golden_max(f, lo, hi, *, tol=None, max_iter: int = 2000, float64: bool = False) -> Maximum:
    """Maximise a unimodal ``f`` on ``[lo, hi]`` by golden-section search.

    Runs at the caller's mpmath precision; stops when the bracket is narrower than
    ``tol`` (default ``10**(-dps/2 - 2)``, so that the value is accurate to about the
    working precision, the error of the value being quadratic in the bracket width) or
    after ``max_iter`` steps.  ``float64=True`` runs the same steps in binary64 (no
    default width: give ``tol`` or ``max_iter``), for heuristic searches whose result is
    re-evaluated exactly.  Ties keep the left part of the bracket.
    """
    value, arg, w = _golden(f, lo, hi, lambda f1, f2: f1 >= f2, tol, max_iter, float64)
    return Maximum(value, arg, w)


def golden_min(f, lo, hi, *, tol=None, max_iter: int = 2000, float64: bool = False) -> Minimum:
    """Minimise a unimodal ``f`` on ``[lo, hi]`` (as :func:`golden_max`; ties keep the
    right part of the bracket)."""
    value, arg, w = _golden(f, lo, hi, lambda f1, f2: f1 < f2, tol, max_iter, float64)
    return Minimum(value, arg, w)


class BrentMax:
    """Brent's maximisation of ``f`` on ``[a, b]`` as an ask/tell state (Brent, *Algorithms
    for Minimization without Derivatives*, 1973, ch. 5; the bounded form of scipy's
    ``fminbound``): :meth:`ask` the next point, :meth:`tell` its value; ``x`` is the best
    point so far, ``[a, b]`` the bracket (``width``) that holds the maximiser of a unimodal
    ``f``.  Parabolic steps through the three best points, golden-section steps where a
    parabola would leave the bracket or not shrink it.

    It only chooses points (a heuristic on estimates): callers certify what it finds.
    Values may be floats or mpmath numbers; points are floats.

    Examples
    --------
    >>> from exactdp.numerics.search import BrentMax
    >>> s = BrentMax(0.0, 4.0)
    >>> for _ in range(30):
    ...     u = s.ask()
    ...     s.tell(-(u - 1.25) ** 2)
    >>> abs(s.x - 1.25) < 1e-6
    True
    """

    GOLDEN = 0.5 * (3.0 - math.sqrt(5.0))

    def __init__(self, a: float, b: float):
        self.a, self.b = a, b
        self.x = self.w = self.v = a + self.GOLDEN * (b - a)
        self.fx: Any = None  # (the values f at x, w, v: None until the first tell)
        self.fw: Any = None
        self.fv: Any = None
        self.d = self.e = 0.0
        self._u: float | None = self.x

    @classmethod
    def warm(cls, points: list, a: float, b: float) -> BrentMax:
        """A state resumed from points already evaluated (``(u, f(u))`` pairs in ``[a, b]``):
        the bracket is the best point's neighbours among them (``a`` or ``b`` where it is at an
        end), ``x, w, v`` the three best points, and the first step may be parabolic."""
        pts = sorted(points)
        k = max(range(len(pts)), key=lambda i: pts[i][1])
        s = cls(pts[k - 1][0] if k > 0 else a, pts[k + 1][0] if k + 1 < len(pts) else b)
        best = sorted(pts, key=lambda p: p[1], reverse=True) + [pts[k]] * 2
        (s.x, s.fx), (s.w, s.fw), (s.v, s.fv) = best[:3]
        s.e, s._u = s.b - s.a, None
        return s

    @property
    def width(self) -> float:
        return self.b - self.a

    def ask(self) -> float:
        """The next point to evaluate (the same until :meth:`tell`)."""
        if self._u is not None:
            return self._u
        a, b, x, w, v = self.a, self.b, self.x, self.w, self.v
        fx, fw, fv = self.fx, self.fw, self.fv
        m = 0.5 * (a + b)
        tol = 1e-12 * abs(x) + 1e-300
        para = False
        if abs(self.e) > tol:  # a parabola through x, w, v
            r = (x - w) * (fx - fv)
            q = (x - v) * (fx - fw)
            p = (x - v) * q - (x - w) * r
            q = 2.0 * (q - r)
            if q > 0.0:
                p = -p
            q = abs(q)
            if abs(p) < abs(0.5 * q * self.e) and q * (a - x) < p < q * (b - x):
                self.e, self.d, para = self.d, float(p / q), True
        if not para:
            self.e = (a - x) if x >= m else (b - x)
            self.d = self.GOLDEN * self.e
        d = self.d
        self._u = float(x + (d if abs(d) >= tol else math.copysign(tol, d or 1.0)))
        return self._u

    def steer(self, u: float) -> None:
        """Evaluate ``u`` (inside the bracket, e.g. a cutting-plane peak) next instead of
        Brent's own step; the bracket and the best points are kept as for any point."""
        if self.a < u < self.b:
            self._u = float(u)

    def tell(self, fu) -> None:
        """The value at the point :meth:`ask` gave."""
        u, self._u = self.ask(), None
        if self.fx is None:  # the first point
            self.fx = self.fw = self.fv = fu
            return
        if fu >= self.fx:
            if u >= self.x:
                self.a = self.x
            else:
                self.b = self.x
            self.v, self.fv, self.w, self.fw, self.x, self.fx = self.w, self.fw, self.x, self.fx, u, fu
        else:
            if u < self.x:
                self.a = u
            else:
                self.b = u
            if fu >= self.fw or self.w == self.x:
                self.v, self.fv, self.w, self.fw = self.w, self.fw, u, fu
            elif fu >= self.fv or self.v == self.x or self.v == self.w:
                self.v, self.fv = u, fu

    def curvature(self):
        """The second divided difference of f through x, w, v (None when two coincide)."""
        x, w, v = self.x, self.w, self.v
        if x == w or x == v or w == v:
            return None
        return 2 * ((self.fw - self.fx) / (w - x) - (self.fv - self.fx) / (v - x)) / (w - v)


def brent_max(f, a: float, b: float, stop, max_iter: int = 200) -> float:
    """The point of ``[a, b]`` where ``f(x, width)`` (an estimate; width the current
    bracket) is largest, by :class:`BrentMax`, until ``stop(x, width)`` or ``max_iter``
    steps.

    Examples
    --------
    >>> from exactdp.numerics.search import brent_max
    >>> x = brent_max(lambda u, w: -(u - 0.3) ** 2, -1.0, 2.0, lambda x, w: w < 1e-9)
    >>> abs(x - 0.3) < 1e-8
    True
    """
    s = BrentMax(a, b)
    s.tell(f(s.ask(), s.width))
    for _ in range(max_iter):
        if stop(s.x, s.width):
            break
        u = s.ask()
        s.tell(f(u, s.width))
    return s.x
