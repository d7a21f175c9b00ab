"""Far-left hockey-stick sums of a lattice sum in float64, every rounding charged.

For a threshold k far left of the centre of T (``1 − k ≥ max(10 sd, βV')``) the identity of
:meth:`exactdp.engine.tails.TailEngine._far_left` (there in multiprecision)

    Σ_{t≥k} P(T=t)(1 − e^{x0 − β(t−k)}) = −expm1(y) − P(T ≥ 1 − k) + r,
    y = x0 + βk + K(β),   0 ≤ r ≤ e^{x0 + β − (1 − k)²/(2V')},

holds with K(β) = log E e^{βT} split exactly (:func:`exactdp.engine.tilt.log_mgf_parts`:
exact part, κ and its bound) and the certified fine tail ``P(T ≥ 1 − k)``.  Here every
term is a float64 with its rounding bounded: the conditioned quadrature
(:mod:`exactdp.engine.conditioning`) asks hundreds of such sums per query, one β each.
"""

from __future__ import annotations

import math
from fractions import Fraction

from exactdp.engine.tilt import log_mgf_parts
from exactdp.numerics.precision import EPS64

__all__ = ["mgf_parts", "far_left"]


def mgf_parts(lattice, beta: float) -> tuple:
    """``(β exact, exact part, |exact part|, κ, κ's bound)`` of K(β) of the lattice sum, floats
    but β (the float ``beta`` taken as exact, as the multiprecision twin does)."""
    bq = Fraction(beta)
    exact, kappa, kerr = log_mgf_parts(lattice.weights, lattice.counts, [Fraction(x) for x in lattice.sigma2], bq)
    return bq, float(exact), abs(float(exact)), float(kappa), float(kerr)


def far_left(q, tl, kp: tuple, v: float) -> tuple | None:
    """``(log estimate, relative error)`` of the far-left hockey-stick sum of the query q
    (threshold k, x0, β), given the certified tail ``tl = P(T ≥ 1 − k)``, K(β)'s parts ``kp``
    (:func:`mgf_parts`) and the variance proxy ``v ≥ V'``; None where y is not certainly
    negative or the estimate not positive."""
    k = q.threshold
    bq, ex, aex, ka, kerr = kp
    bk = float(bq * k)
    y = ((q.x0 + bk) + ex) + ka
    # roundings: x0 (u|x0|, as the multiprecision twin charges), β·k and the exact part
    # (u each, converted), κ (≤ u|κ| + its bound), three additions (u·|partial sum| each)
    dy = 8 * EPS64 * (abs(q.x0) + abs(bk) + aex + abs(ka) + abs(y) + 1) + kerr + 1e-30 * abs(y)
    if not y + dy < 0:
        return None
    main = -math.expm1(y)
    main_err = math.exp(y + dy) * dy + 4 * EPS64 * main  # |d(−expm1)/dy| ≤ e^{y+dy}; expm1's rounding
    lt = float(tl.log_value)
    pt = math.exp(lt)
    pt_err = pt * (tl.rel_error + 4 * EPS64 * (1 + abs(lt)))
    er = q.x0 + q.beta - float(1 - k) ** 2 / (2 * v)
    rb = math.exp(er + 1e-12 * (1 + abs(er)))
    est = main - pt + rb / 2
    if not est > 0:
        return None
    err = main_err + pt_err + rb / 2 + 4 * EPS64 * (main + pt + rb)
    lv = math.log(est)
    return lv, err / est * (1 + 1e-6) + 4 * EPS64 * (1 + abs(lv))
