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

import mpmath

__all__ = ["alpha_grid", "pair_curve", "interpolate", "interpolate_grid", "lower_hull", "gdp_beta",
           "ENVELOPE_COLUMNS"]

ENVELOPE_COLUMNS = ("alpha", "beta_envelope", "on_hull", "beta_pointwise_min", "argmin_pair",
                    "beta_error_bound", "beta_interp_gap", "beta_gdp")


def alpha_grid(alpha_min, n: int = 401) -> list:
    """α_m = Φ̄(z_max − 2·z_max·m/(n−1)), ascending from alpha_min to 1 − alpha_min."""
    a = mpmath.mpf(alpha_min)
    z = -mpmath.sqrt(2) * mpmath.erfinv(2 * a - 1)
    return [mpmath.ncdf(-(z - 2 * z * m / (n - 1))) for m in range(n)]


def pair_curve(rows) -> tuple:
    """Vertices of one pair sorted by α: lists (α, β, abs err α, abs err β)."""
    pts = []
    for r in rows:
        a, b = mpmath.mpf(r["alpha"]), mpmath.mpf(r["beta"])
        pts.append((a, b, a * mpmath.mpf(r["alpha_rel_error"]), b * mpmath.mpf(r["beta_rel_error"])))
    pts.sort(key=lambda p: (p[0], -p[1]))
    return ([p[0] for p in pts], [p[1] for p in pts], [p[2] for p in pts], [p[3] for p in pts])


def _line_at(x0, y0, x1, y1, x):
    if x1 == x0:
        return None
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def interpolate(curve, alpha, with_gap: bool = True) -> tuple:
    """(β, error bound, convexity gap) of a pair's sampled curve at α (gap 0 if not asked)."""
    A, B, EA, EB = curve
    n = len(A)
    if alpha <= A[0]:
        return B[0], EB[0], mpmath.mpf(0)
    if alpha >= A[-1]:
        return B[-1], EB[-1], mpmath.mpf(0)
    r = bisect.bisect_right(A, alpha)
    i0, i1 = r - 1, r
    a0, a1, b0, b1 = A[i0], A[i1], B[i0], B[i1]
    if a1 == a0:
        return min(b0, b1), max(EB[i0], EB[i1]), mpmath.mpf(0)
    slope = (b1 - b0) / (a1 - a0)
    beta = b0 + slope * (alpha - a0)
    err = max(EB[i0], EB[i1]) + abs(slope) * max(EA[i0], EA[i1])
    if not with_gap:
        return beta, err, mpmath.mpf(0)
    lower = mpmath.mpf(0)
    if i0 >= 1:
        v = _line_at(A[i0 - 1], B[i0 - 1], a0, b0, alpha)
        if v is not None:
            lower = max(lower, v)
    if i1 + 1 < n:
        v = _line_at(a1, b1, A[i1 + 1], B[i1 + 1], alpha)
        if v is not None:
            lower = max(lower, v)
    return beta, err, max(beta - lower, mpmath.mpf(0))


def interpolate_grid(curve, grid, ctx):
    """``interpolate(curve, α, with_gap=False)[:2]`` for every α of an ascending grid, on
    ``gmpy2.mpfr`` values in the MPFR context ``ctx`` (round to nearest).

    ``curve`` holds four lists (A ascending), ``grid`` the α in ascending order.  The
    bracketing index is walked forward instead of bisected (it is ``bisect_right(A, α)``:
    the first vertex with α < A[r]).  Every step is the correctly rounded operation that
    the mpf operators of :func:`interpolate` perform under ``workdps`` of the same
    precision (mpmath's + − × ÷ are correctly rounded, as MPFR's are), so the numbers
    are the same.  Yields ``(β, error bound)``.
    """
    A, B, EA, EB = curve
    n = len(A)
    sub, mul, add, div = ctx.sub, ctx.mul, ctx.add, ctx.div
    r = 0
    for alpha in grid:
        if alpha <= A[0]:
            yield B[0], EB[0]
            continue
        if alpha >= A[-1]:
            yield B[-1], EB[-1]
            continue
        while r < n and not alpha < A[r]:
            r += 1
        i0, i1 = r - 1, r
        a0, a1, b0, b1 = A[i0], A[i1], B[i0], B[i1]
        eb = EB[i1] if EB[i1] > EB[i0] else EB[i0]  # max(): the first of equals
        if a1 == a0:
            yield (b1 if b1 < b0 else b0), eb
            continue
        slope = div(sub(b1, b0), sub(a1, a0))
        beta = add(b0, mul(slope, sub(alpha, a0)))
        ea = EA[i1] if EA[i1] > EA[i0] else EA[i0]
        yield beta, add(eb, mul(ctx.abs(slope), ea))


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
