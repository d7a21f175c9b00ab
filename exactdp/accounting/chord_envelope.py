"""The chord envelope: a certified upper bound of the supremum of a concave function.

Given certified brackets ``(x_i, lo_i, hi_i)`` of a concave G at sorted points, every chord
through two neighbouring brackets, extended beyond them, bounds G from above outside their
interval (concavity); between two points the lower of the two extended neighbouring chords
bounds it.  :func:`chord_envelope` returns the largest such bound over the whole line and
where it is attained — the certified upper end of sup G, and the next point worth
evaluating (Kelley's cutting-plane rule).  Used by the trade-off's convex dual
(:mod:`exactdp.accounting.dual_tradeoff`, :mod:`exactdp.accounting.tradeoff_batch`), where
G(x) = 1 − δ(log x) − xα.
"""

from __future__ import annotations

import mpmath

__all__ = ["chord_envelope"]


def chord_envelope(points) -> tuple:
    """``(bound, x)``: a certified upper bound of sup G from the brackets ``points``
    (``(x, lo, hi)`` sorted by x) and the x where the envelope attains it (the next point
    worth evaluating: Kelley's cutting-plane rule on the chords); ``(inf, None)`` with fewer
    than three points or when the right end is not certified to decrease."""
    points = [p for k, p in enumerate(points) if k == 0 or p[0] > points[k - 1][0]]  # (a subset: still valid)
    n = len(points)
    if n < 3:
        return mpmath.inf, None
    xs = [p[0] for p in points]
    lo = [p[1] for p in points]
    hi = [p[2] for p in points]
    best = max(hi)
    at = xs[hi.index(best)]

    def s_hi(i):  # upper bound of the chord slope (x_{i-1}, x_i)
        return (hi[i] - lo[i - 1]) / (xs[i] - xs[i - 1])

    def t_lo(i):  # lower bound of the chord slope (x_i, x_{i+1})
        return (lo[i + 1] - hi[i]) / (xs[i + 1] - xs[i])

    # left of x_0 (x > 0): G(x) ≤ G(x_0) + t·(x − x_0) with t ≤ the chord (x_0, x_1)
    t0 = t_lo(0)
    if t0 < 0 and hi[0] - t0 * xs[0] > best:
        best, at = hi[0] - t0 * xs[0], xs[0] / 2
    # right of x_{n-1}: needs a certified decrease
    if s_hi(n - 1) > 0:
        return mpmath.inf, None
    for i in range(n - 1):
        a, b = xs[i], xs[i + 1]
        lines = []
        if i >= 1:
            lines.append((hi[i], s_hi(i), a))
        if i + 2 <= n - 1:
            lines.append((hi[i + 1], t_lo(i + 1), b))
        if not lines:
            return mpmath.inf, None
        if len(lines) == 1:
            g0, s, x0 = lines[0]
            cand, xat = max((g0 + s * (a - x0), a), (g0 + s * (b - x0), b))
        else:
            (g1, s1, p1), (g2, s2, p2) = lines
            ends = [a, b]
            if s1 != s2:
                xc = (g2 - s2 * p2 - g1 + s1 * p1) / (s1 - s2)
                if a < xc < b:
                    ends.append(xc)
            cand, xat = max((min(g1 + s1 * (x - p1), g2 + s2 * (x - p2)), x) for x in ends)
        if cand > best:
            best, at = cand, xat
    return best, at
