"""The overall trade-off curve of a sweep: lower convex envelope of the pairs' curves.

For a common grid of type-I errors α_m, each pair's curve is evaluated by linear
interpolation between its exact vertices (the randomised Neyman–Pearson curve is
piecewise linear between *consecutive* lattice vertices; between sampled vertices the
chord lies on or above it).  The pointwise minimum over pairs is then replaced by its
lower convex hull (with the corners (0, 1) and (1, 0)), which is the trade-off curve of
the mixture of all pairs' tests (Dong, Roth & Su 2022, Prop. on convex envelopes).

Accuracy stated per grid point: ``beta_error_bound`` propagates the certified vertex
errors through the interpolation, and ``beta_interp_gap`` is the width of the interval
that convexity leaves for the true curve between the two sampled vertices (chord minus
the larger extension of the neighbouring chords), i.e. how far the sampled curve can be
above the exact one there.
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Callable
from typing import NamedTuple

import gmpy2
import mpmath

from exactdp.runs.numtext import parse_mpfr

__all__ = ["alpha_grid", "pair_curve", "interpolate", "interpolate_grid", "lower_hull", "gdp_beta",
           "ENVELOPE_COLUMNS", "Arithmetic", "MPF_ARITHMETIC", "mpfr_arithmetic"]

ENVELOPE_COLUMNS = ("alpha", "beta_envelope", "on_hull", "beta_pointwise_min", "argmin_pair",
                    "beta_error_bound", "beta_interp_gap", "beta_gdp")


class Arithmetic(NamedTuple):
    """The operations of the interpolation: mpf operators under the ambient ``workdps``, or
    the correctly rounded methods of one MPFR context (the same numbers at the same
    precision: mpmath's + − × ÷ are correctly rounded, as MPFR's are)."""

    parse: Callable
    add: Callable
    sub: Callable
    mul: Callable
    div: Callable
    neg: Callable
    abs: Callable
    zero: object


MPF_ARITHMETIC = Arithmetic(mpmath.mpf, operator.add, operator.sub, operator.mul, operator.truediv, operator.neg,
                            abs, mpmath.mpf(0))


def mpfr_arithmetic(ctx) -> Arithmetic:
    """:class:`Arithmetic` in the gmpy2 context ``ctx`` (texts parsed as ``mpf(text)``)."""
    return Arithmetic(lambda t: parse_mpfr(t, ctx), ctx.add, ctx.sub, ctx.mul, ctx.div, ctx.minus, ctx.abs,
                      gmpy2.mpfr(0))


def alpha_grid(alpha_min, n: int = 401) -> list:
    """α_m = Φ̄(z_max − 2·z_max·m/(n−1)), ascending from alpha_min to 1 − alpha_min."""
    a = mpmath.mpf(alpha_min)
    z = -mpmath.sqrt(2) * mpmath.erfinv(2 * a - 1)
    return [mpmath.ncdf(-(z - 2 * z * m / (n - 1))) for m in range(n)]


def pair_curve(rows, ar: Arithmetic = MPF_ARITHMETIC) -> tuple:
    """Vertices of one pair sorted by α: lists (α, β, abs err α, abs err β)."""
    pts = []
    for r in rows:
        a, b = ar.parse(r["alpha"]), ar.parse(r["beta"])
        pts.append((a, b, ar.mul(a, ar.parse(r["alpha_rel_error"])), ar.mul(b, ar.parse(r["beta_rel_error"]))))
    pts.sort(key=lambda p: (p[0], ar.neg(p[1])))
    return ([p[0] for p in pts], [p[1] for p in pts], [p[2] for p in pts], [p[3] for p in pts])


def _line_at(x0, y0, x1, y1, x, ar: Arithmetic):
    if x1 == x0:
        return None
    return ar.add(y0, ar.div(ar.mul(ar.sub(y1, y0), ar.sub(x, x0)), ar.sub(x1, x0)))


def interpolate(curve, alpha, with_gap: bool = True, ar: Arithmetic = MPF_ARITHMETIC) -> tuple:
    """(β, error bound, convexity gap) of a pair's sampled curve at α (gap 0 if not asked)."""
    A, B, EA, EB = curve
    if alpha <= A[0]:
        return B[0], EB[0], ar.zero
    if alpha >= A[-1]:
        return B[-1], EB[-1], ar.zero
    r = bisect.bisect_right(A, alpha)
    return _chord(curve, r - 1, r, alpha, with_gap, ar)


def _chord(curve, i0: int, i1: int, alpha, with_gap: bool, ar: Arithmetic) -> tuple:
    """:func:`interpolate` between consecutive sampled vertices i0 < i1."""
    A, B = curve[0], curve[1]
    a0, a1, b0, b1 = A[i0], A[i1], B[i0], B[i1]
    beta, err = _chord_beta(curve, i0, i1, alpha, ar)
    if a1 == a0 or not with_gap:
        return beta, err, ar.zero
    lower = ar.zero
    if i0 >= 1:
        v = _line_at(A[i0 - 1], B[i0 - 1], a0, b0, alpha, ar)
        if v is not None:
            lower = max(lower, v)
    if i1 + 1 < len(A):
        v = _line_at(a1, b1, A[i1 + 1], B[i1 + 1], alpha, ar)
        if v is not None:
            lower = max(lower, v)
    return beta, err, max(ar.sub(beta, lower), ar.zero)


def _chord_beta(curve, i0: int, i1: int, alpha, ar: Arithmetic) -> tuple:
    """``(β, error bound)`` of the chord between vertices i0 < i1 at α (the smaller β and
    the larger error when the two vertices share their α)."""
    A, B, EA, EB = curve
    a0, a1, b0, b1 = A[i0], A[i1], B[i0], B[i1]
    eb0, eb1 = EB[i0], EB[i1]
    eb = eb1 if eb1 > eb0 else eb0  # max(eb0, eb1), spelt out (the same object)
    if a1 == a0:
        return min(b0, b1), eb
    _, add, sub, mul, div, _, abs_, _ = ar
    ea0, ea1 = EA[i0], EA[i1]
    slope = div(sub(b1, b0), sub(a1, a0))
    return add(b0, mul(slope, sub(alpha, a0))), add(eb, mul(abs_(slope), ea1 if ea1 > ea0 else ea0))


def interpolate_grid(curve, grid, ar: Arithmetic):
    """``interpolate(curve, α, with_gap=False)[:2]`` for every α of an ascending grid.

    The bracketing index is walked forward instead of bisected (it is
    ``bisect_right(A, α)``: the first vertex with α < A[r]).  Yields ``(β, error bound)``
    (:func:`_chord_beta`, the chord :func:`_chord` uses).
    """
    A, B, _, EB = curve
    n = len(A)
    first, last = A[0], A[-1]
    r = 0
    for alpha in grid:
        if alpha <= first:
            yield B[0], EB[0]
            continue
        if alpha >= last:
            yield B[-1], EB[-1]
            continue
        while r < n and not alpha < A[r]:
            r += 1
        yield _chord_beta(curve, r - 1, r, alpha, ar)


def lower_hull(points) -> list:
    """Indices of the lower convex hull of points sorted by x (monotone chain)."""
    hull: list = []
    for idx, (x, y) in enumerate(points):
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = points[hull[-2]], points[hull[-1]]
            if (x2 - x1) * (y - y1) - (y2 - y1) * (x - x1) <= 0:
                hull.pop()
            else:
                break
        hull.append(idx)
    return hull


def gdp_beta(alpha, mu):
    """The μ-GDP trade-off Φ(Φ⁻¹(1−α) − μ) (Dong, Roth & Su 2022)."""
    if alpha <= 0:
        return mpmath.mpf(1)
    if alpha >= 1:
        return mpmath.mpf(0)
    return mpmath.ncdf(mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * alpha) - mu)
