"""Why the unequal-variance Gaussian N(n, r²n²) fails count-dependent zCDP (Section 7).

Lemma 7.1: for P = N(μ_P, s_P²), Q = N(μ_Q, s_Q²) and α > 1, D_α(P‖Q) is finite iff
s_α² := α s_Q² + (1−α) s_P² > 0, and then (Gil, Alajaji and Linder 2013; van Erven and
Harremoës 2014)

    D_α(P‖Q) = log(s_Q/s_P) + log(s_Q²/s_α²)/(2(α−1)) + α(μ_P − μ_Q)²/(2 s_α²).

For the edge n ↔ n+1 of N(n, r²n²) the reverse direction P = N(n+1, r²(n+1)²),
Q = N(n, r²n²) is finite exactly for α < (n+1)²/(2n+1) (eq. 35), whatever r.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath

from exactdp.countdep.params import DPS, GUARD, validate_count, validate_r
from exactdp.numerics.exact import InputError, to_fraction
from exactdp.numerics.precision import to_mpf

__all__ = ["renyi_order_threshold", "gaussian_renyi", "UnequalEdge", "unequal_gaussian_edge"]


def renyi_order_threshold(n) -> Fraction:
    """(n+1)²/(2n+1): the reverse divergence on the edge n ↔ n+1 (n ≥ 1) is finite iff
    α is below this exact rational (eq. 35).

    Notes
    -----
    Exact rational; independent of r.  Reference: Fitzsimons (2026), eq. (35).
    """
    n = validate_count(n)
    if n < 1:
        raise InputError("n", n, "eq. (35) concerns positive edges n >= 1 (the edge 0 <-> 1 fails at every order)")
    return Fraction((n + 1) ** 2, 2 * n + 1)


def gaussian_renyi(alpha, mu_p, s2_p, mu_q, s2_q, dps: int = DPS):
    """Exact Rényi divergence D_α(N(μ_P, s_P²) ‖ N(μ_Q, s_Q²)) for α > 1.

    Parameters are exact rationals (Fraction/int); returns ``mpmath.inf`` when
    α s_Q² + (1−α) s_P² ≤ 0 (decided exactly in rational arithmetic, Lemma 7.1).

    Notes
    -----
    Closed form above, evaluated at dps + 10 digits (relative error < 10**-dps).
    """
    a = to_fraction(alpha, "alpha")
    if a <= 1:
        raise InputError("alpha", alpha, "Rényi order must be > 1")
    mp_, sp, mq, sq = (to_fraction(x, f) for x, f in ((mu_p, "mu_p"), (s2_p, "s2_p"), (mu_q, "mu_q"), (s2_q, "s2_q")))
    if sp <= 0 or sq <= 0:
        raise InputError("variance", (s2_p, s2_q), "variances must be > 0")
    s2a = a * sq + (1 - a) * sp
    if s2a <= 0:
        return mpmath.inf
    with mpmath.workdps(dps + GUARD):
        return (
            mpmath.log(to_mpf(sq / sp)) / 2
            + mpmath.log(to_mpf(sq / s2a)) / (2 * (to_mpf(a) - 1))
            + to_mpf(a * (mp_ - mq) ** 2 / (2 * s2a))
        )


@dataclass(frozen=True)
class UnequalEdge:
    """Rényi divergences across one edge of the mechanism X_n ~ N(n, r²n²).

    Attributes
    ----------
    n : int
        The edge joins n and n + 1.
    r : Fraction
    alpha : Fraction
    threshold : Fraction or None
        (n+1)²/(2n+1) (None for the boundary edge n = 0).
    forward : mpmath.mpf
        D_α(X_n ‖ X_{n+1}): finite for n ≥ 1 (smaller variance into larger); +∞ at
        n = 0, where δ_0 is not absolutely continuous w.r.t. N(1, r²).
    reverse : mpmath.mpf
        D_α(X_{n+1} ‖ X_n), infinite iff α ≥ threshold (every α at n = 0).
    """

    n: int
    r: Fraction
    alpha: Fraction
    threshold: Fraction | None
    forward: mpmath.mpf
    reverse: mpmath.mpf


def unequal_gaussian_edge(n, r, alpha, dps: int = DPS) -> UnequalEdge:
    """Both Rényi divergences across the edge n ↔ n+1 of N(n, r²n²) at order α.

    Notes
    -----
    Uses :func:`gaussian_renyi` (Lemma 7.1).  At n = 0 the law X_0 = δ_0 is degenerate:
    neither law is absolutely continuous w.r.t. the other, so both divergences are +∞ at
    every order (Section 7).
    """
    n = validate_count(n)
    r = validate_r(r)
    a = to_fraction(alpha, "alpha")
    if a <= 1:
        raise InputError("alpha", alpha, "Rényi order must be > 1")
    if n == 0:
        return UnequalEdge(0, r, a, None, mpmath.inf, mpmath.inf)
    r2 = r * r
    fwd = gaussian_renyi(a, n, r2 * n * n, n + 1, r2 * (n + 1) ** 2, dps)
    rev = gaussian_renyi(a, n + 1, r2 * (n + 1) ** 2, n, r2 * n * n, dps)
    return UnequalEdge(n, r, a, renyi_order_threshold(n), fwd, rev)
