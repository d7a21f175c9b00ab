"""A small two-dimensional Nelder–Mead in floating point (internal helper of exactdp.countdep).

One-dimensional maximisation is :func:`exactdp.numerics.search.golden_max`."""

from __future__ import annotations

import math

__all__ = ["nelder_mead_max"]


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
