"""Float screening of the ε(δ) search's certified comparisons.

A breakpoint's certified profile (:meth:`ExactAccountant._assemble`) is a few mpmath
operations on the engine's values (``exp`` of a log, ``v·(1 ± r)``, ``p1 − e^ε p2``,
minima and maxima).  The search asks one question of it per target: is the certified
upper bound of δ at most the target (or the lower bound above it)?  :func:`delta_bracket`
computes the same bounds in float64 together with a rigorous bound on the float error
(every operation's rounding, the rounding of ε to a float and its growth through ``exp``),
and :func:`decide` answers only when the target lies outside the bounds by more than that
error; otherwise it answers ``None`` and the caller assembles the mpmath profile.  So a
screened answer is always the answer the mpmath comparison gives, and the search's pieces
(hence every number reported) do not depend on the screen.

Error model: ``math.exp`` is within 1 ulp (≤ 2u relative, u = 2⁻⁵³) of the true value of
its float argument; each ``+ − ×`` adds ≤ u relative of its result; ``float(Fraction)``
is within u; the mpmath side carries ≥ 40 digits (its own error ≤ 1e-35 relative, covered
by the ``1e-30`` slack); the final comparisons keep a margin of 8u beyond the error
bound, which covers their own roundings.  Values whose logs are not floats in
(−700, 700), and targets below 1e-290, are not screened (no subnormal arithmetic).
"""

from __future__ import annotations

import math
from typing import NamedTuple

from exactdp.engine.values import TailValue
from exactdp.kernels.units import UNIT_ROUNDOFF as U

__all__ = ["ProfileValues", "delta_bracket", "decide", "estimate_log_delta", "margins", "upper_ends"]

#: slack for the mpmath side (≥ 40 digits) and for everything not modelled (relative)
SLACK = 1e-30
LOG_RANGE = 700.0


class ProfileValues(NamedTuple):
    """The engine values behind one certified profile point (see ``_profile_values``)."""

    eps: object  # exact ε (Fraction or callable)
    k1: int
    k2: int
    w: TailValue  # the hockey-stick value (or a "none" value)
    t1: TailValue | None  # P[S ≥ k1] (None when not asked)
    t2: TailValue  # P[S ≥ k2]
    tl: TailValue | None  # P[S ≥ 1 − k1] (None when not asked)


def _fb(tv):
    """Float ``(lower, upper, abs err)`` of a TailValue's ``v(1 − r), v(1 + r)``, or None."""
    lv = tv.log_value
    if type(lv) is not float or not -LOG_RANGE < lv < LOG_RANGE:
        return None
    r = tv.rel_error
    v = math.exp(lv)
    hi = v * (1.0 + r)
    # exp (2u), 1 ± r (u), the product (u), relative to the larger end
    return v * (1.0 - r), hi, 5.0 * U * hi


def delta_bracket(rec: ProfileValues, eps_float: float, done, chernoff_log):
    """``(d_lo, d_hi, err)``: floats within ``err`` of the certified δ bounds that
    ``_assemble`` computes in mpmath for ``rec``, or None when not screenable.

    ``done`` is the engine's certification test, ``chernoff_log(k)`` the log upper bound
    of a far tail that is not certified (called only then)."""
    if not -LOG_RANGE < eps_float < LOG_RANGE or eps_float < 0:
        return None
    ee = math.exp(eps_float)
    ee_rel = (abs(eps_float) + 3.0) * U  # float(ε) (|ε|u through exp) and exp itself
    if done(rec.t2):
        b2 = _fb(rec.t2)
        if b2 is None:
            return None
        p2lo, p2hi, e2 = b2
    else:
        lc = float(chernoff_log(rec.k2))
        if not -LOG_RANGE < lc < LOG_RANGE:
            return None
        p2lo, p2hi = 0.0, math.exp(lc)
        e2 = (abs(lc) + 3.0) * U * p2hi  # float(log) through exp, and exp
    # (value, error) pairs; min and max are 1-Lipschitz, so they take the larger error
    lo, hi, e_lo, e_hi = 0.0, 1.0, 0.0, 0.0
    if rec.t1 is not None and done(rec.t1):
        b1 = _fb(rec.t1)
        if b1 is None:
            return None
        p1lo, p1hi, e1 = b1
        m_hi, m_lo = ee * p2hi, ee * p2lo
        a = p1lo - m_hi  # the certified ends from two tails
        b = p1hi - m_lo
        ea = e1 + m_hi * (ee_rel + 2.0 * U) + e2 * ee + U * abs(a)
        eb = e1 + m_lo * (ee_rel + 2.0 * U) + e2 * ee + U * abs(b)
        lo, e_lo = max(a, lo), ea
        hi, e_hi = min(b, hi), eb
    if done(rec.w):
        bw = _fb(rec.w)
        if bw is None:
            return None
        dlo, dhi, ew = bw
        # the mpmath assembly raises when the two intervals do not meet: leave every
        # case that is not clearly consistent to it
        if not ((dlo + ew) * (1.0 + 4.0 * U) < (hi - e_hi) * (1.0 - 4.0 * U)
                and (dhi - ew) * (1.0 - 4.0 * U) > (lo + e_lo) * (1.0 + 4.0 * U)):
            return None
        lo, e_lo = max(lo, dlo), max(e_lo, ew)
        hi, e_hi = min(hi, dhi), max(e_hi, ew)
    d_hi = max(hi, lo)
    err = 1.01 * max(e_lo, e_hi) + SLACK * (abs(d_hi) + abs(lo))
    return lo, d_hi, err


def decide(bracket, target: float, side: str):
    """The certified comparison of δ with ``target`` (a float within u of the exact target)
    when the float bracket settles it, else None.  ``side='upper'``: δ ≤ target certain;
    ``'lower'``: δ > target certain."""
    if bracket is None or not 0.0 < target:
        return None
    lo, hi, err = bracket
    tl, th = margins(target)
    if side == "upper":
        up, down = upper_ends(bracket)
        if up < tl:
            return True
        if down > th:
            return False
        return None
    if lo - err > th:
        return True
    if lo + err < tl:
        return False
    return None


def margins(target: float) -> tuple:
    """``(target·(1 − 8u), target·(1 + 8u))``: the ends :func:`decide` compares with.

    Margins of 8u: the target's own rounding (u), these two products' and the sums of
    :func:`upper_ends` (u each) leave ≥ 5u, so a decided comparison holds for the real
    numbers."""
    return target * (1.0 - 8.0 * U), target * (1.0 + 8.0 * U)


def upper_ends(bracket) -> tuple:
    """``(hi + err, hi − err)`` of a bracket: what :func:`decide` compares with the
    target's margins on the ``'upper'`` side (computed once per screened point)."""
    _, hi, err = bracket
    return hi + err, hi - err


def estimate_log_delta(rec: ProfileValues, done) -> float | None:
    """A float estimate of log δ at the point (for search guesses only), or None."""
    if done(rec.w) and type(rec.w.log_value) is float and math.isfinite(rec.w.log_value):
        return rec.w.log_value
    return None
