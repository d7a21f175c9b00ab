"""One-dimensional maximisation at multiprecision (golden-section search) and a small
two-dimensional Nelder–Mead in floating point.  Internal helpers of exactdp.countdep."""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath

__all__ = ["Maximum", "golden_max", "nelder_mead_max"]


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


def nelder_mead_max(f, x0, step, *, max_eval: int = 400, xtol: float = 1e-7, ftol: float = 1e-13):
    """Maximise ``f: (float, float) -> float`` from ``x0`` with a Nelder–Mead simplex.

    Returns ``(best_x, best_f, n_eval)``.  A heuristic local optimiser: any point it
    returns is a valid candidate, optimality is not certified.
    """
    pts = [tuple(x0), (x0[0] + step[0], x0[1]), (x0[0], x0[1] + step[1])]
    vals = [f(p) for p in pts]
    n_eval = 3
    while n_eval < max_eval:
        order = sorted(range(3), key=lambda i: -vals[i])
        pts = [pts[i] for i in order]
        vals = [vals[i] for i in order]
        size = max(abs(pts[i][k] - pts[0][k]) for i in (1, 2) for k in (0, 1))
        if size < xtol and abs(vals[0] - vals[2]) <= ftol * max(1.0, abs(vals[0])):
            break
        cx = ((pts[0][0] + pts[1][0]) / 2, (pts[0][1] + pts[1][1]) / 2)
        worst = pts[2]
        refl = (2 * cx[0] - worst[0], 2 * cx[1] - worst[1])
        fr = f(refl)
        n_eval += 1
        if fr > vals[0]:
            exp_ = (3 * cx[0] - 2 * worst[0], 3 * cx[1] - 2 * worst[1])
            fe = f(exp_)
            n_eval += 1
            pts[2], vals[2] = (exp_, fe) if fe > fr else (refl, fr)
        elif fr > vals[1]:
            pts[2], vals[2] = refl, fr
        else:
            con = ((cx[0] + worst[0]) / 2, (cx[1] + worst[1]) / 2)
            fc = f(con)
            n_eval += 1
            if fc > vals[2]:
                pts[2], vals[2] = con, fc
            else:
                for i in (1, 2):
                    pts[i] = ((pts[0][0] + pts[i][0]) / 2, (pts[0][1] + pts[i][1]) / 2)
                    vals[i] = f(pts[i])
                    n_eval += 1
        if not all(math.isfinite(v) for v in vals):
            vals = [v if math.isfinite(v) else -math.inf for v in vals]
    i = max(range(3), key=lambda k: vals[k])
    return pts[i], vals[i], n_eval
