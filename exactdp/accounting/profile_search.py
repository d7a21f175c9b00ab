"""ε(δ) from certified δ brackets: the smallest ε ≥ 0 with δ(ε) ≤ a target.

δ(ε) is continuous and non-increasing, so the answer ε* lies in ``[lower, upper]``
whenever ``δ_lo(lower) > target`` and ``δ_hi(upper) ≤ target`` (both certified); the
narrowing is :func:`exactdp.numerics.search.secant_narrow` (the project's one bracketing
helper: secant steps on the estimate ``log δ_mid(ε) − log target`` propose, the certified
test decides).  The first upper end is the ρ-zCDP conversion ``ρ + 2√(ρ log(1/δ))``
(Bun & Steinke 2016), which bounds ε* for every discrete Gaussian composition.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.numerics.precision import DPS_LOW, EPS64, to_mpf, workdps
from exactdp.numerics.search import secant_narrow

__all__ = ["epsilon_brackets"]


def _snap(a: Fraction, b: Fraction) -> Fraction:
    """A binary float inside [a, b] (the one nearest the middle; a or b if none is)."""
    mid = float((a + b) / 2)
    f = Fraction(mid)
    if a <= f <= b:
        return f
    return b


def epsilon_brackets(log_delta_at, targets, rho, rel_width: float) -> tuple:
    """``(lower, upper, estimate)`` float lists for each target δ (Fraction in (0, 1)).

    ``log_delta_at(e_dn, e_up)`` returns certified log brackets of δ over float ε
    enclosures.  The brackets satisfy ``δ_lo(lower) > target`` (or lower = 0) and
    ``δ_hi(upper) ≤ target``, and ``upper − lower ≤ rel_width·upper`` (or the absolute
    ``rel_width·1e-300`` near 0)."""
    lows, ups, ests = [], [], []
    rho_f = float(rho)
    for t in targets:
        with workdps(DPS_LOW):
            lt = float(mpmath.log(to_mpf(t)))
        lt_dn = lt - 4 * EPS64 * (abs(lt) + 1)
        lt_up = lt + 4 * EPS64 * (abs(lt) + 1)

        def status(c: Fraction, lt_dn=lt_dn, lt_up=lt_up) -> int:
            x = float(c)
            lo, hi = log_delta_at(np.array([x]), np.array([x]))
            if hi[0] <= lt_dn:
                return 1
            if lo[0] > lt_up:
                return -1
            return 0

        def estimate(c: Fraction, lt=lt) -> float:
            x = float(c)
            lo, hi = log_delta_at(np.array([x]), np.array([x]))
            mid = 0.5 * (lo[0] + hi[0]) if np.isfinite(lo[0]) else hi[0]
            return float(mid - lt) if np.isfinite(mid) else -1e300

        s0 = status(Fraction(0))
        if s0 == 1:
            lows.append(0.0)
            ups.append(0.0)
            ests.append(0.0)
            continue
        # ρ-zCDP: ε ≤ ρ + 2√(ρ log(1/δ)), rounded up (a certified upper end)
        up = (rho_f + 2 * math.sqrt(rho_f * max(-lt, 0.0))) * (1 + 1e-12) + 1e-300
        up_f = Fraction(up)
        for _ in range(60):
            if status(up_f) == 1:
                break
            up_f *= 2
        lo_f = Fraction(0)
        if s0 == 0:  # δ(0) within its bracket of the target: ε* is 0 or just above
            lo_f = Fraction(0)
        coarse = max(up_f * Fraction(1, 1000), Fraction(1, 10**300))
        if s0 == -1:
            lo_f, up_f = secant_narrow(status, estimate, _snap, lo_f, up_f, coarse)
            width = Fraction(rel_width) * max(lo_f, Fraction(1, 10**300))
            if up_f - lo_f > width:
                lo_f, up_f = secant_narrow(status, estimate, _snap, lo_f, up_f, width)
        lows.append(float(lo_f))
        ups.append(float(up_f))
        ests.append(float((lo_f + up_f) / 2))
    return lows, ups, ests
