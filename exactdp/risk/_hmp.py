"""Multiprecision evaluation of the two-level posterior, approximation kernel (private).

With the approximation ``k(u) = exp(-b u²)`` (``b = a1/d``) every summand over ``X2`` is a
Gaussian in ``X2`` and completing the square gives, for ``x ∈ {0, 1}`` (reduced
coordinates, ``known`` subtracted)::

    S_x = Σ_{X2 ≥ x} exp(-a2 (x2* - X2)² - b (y1* + x - X2)²)
        = exp(-C_x) Σ_{X2 ≥ x} exp(-A (X2 - m_x)²),
    A = a2 + b,  m_x = (a2 x2* + b (y1* + x)) / A,  C_x = a2 b (x2* - y1* - x)² / A.

Truncation: with ``n0 = max(x, ⌈m_x⌉) ≥ m_x``, the term at ``n0 + j`` is at most the term
at ``n0`` times ``exp(-A j²)``, so the terms beyond ``n0 + K`` add at most a relative
``Σ_{j>K} exp(-A j²) ≤ exp(-A(K+1)²)/(1-exp(-2A(K+1)))`` (bounded explicitly below).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath

from exactdp.dgauss.mp import half_tail_sum_bound
from exactdp.numerics.precision import DPS_ANALYSIS, DPS_GUARD, to_mpf
from exactdp.numerics.search import least_int
from exactdp.risk._hsetup import HierarchicalSetup
from exactdp.risk.single import log_prior_odds

__all__ = ["MPPosterior", "posterior_mp", "log_odds_mp"]


def _cutoff(A, dps: int) -> int:
    """Smallest ``K`` (from the Gaussian estimate up) with ``Σ_{j>K} exp(−A j²) ≤ 10^{−(dps+8)}``."""
    target = mpmath.mpf(10) ** (-(dps + 8))
    K0 = max(2, int(math.sqrt((dps + 8) * math.log(10.0) / float(A))) + 1)
    return least_int(lambda K: half_tail_sum_bound(A, K) <= target, K0, lowest=K0)


def _gauss_terms(A, m, lo: int, K: int):
    """``[exp(-A (X - m)²) for X in lo..n0+K]`` with ``n0 = max(lo, ⌈m⌉)``; returns (lo, terms, n0)."""
    n0 = max(lo, int(mpmath.ceil(m)))
    terms = [mpmath.exp(-A * (X - m) ** 2) for X in range(lo, n0 + K + 1)]
    return lo, terms, n0


@dataclass(frozen=True)
class MPPosterior:
    """Raw multiprecision result (reduced coordinates)."""

    log_odds: object
    posterior: object
    x2_lo: int
    x2_probs: tuple
    log_odds_error_bound: mpmath.mpf


def log_odds_mp(setup: HierarchicalSetup, x1s: int, x2s: int, y1s: int, dps: int = DPS_ANALYSIS, want_x2: bool = False):
    """Posterior log-odds of "has c" (reduced coordinates) at ``dps`` digits.

    Returns ``(log_odds, err, x2_lo, x2_probs)`` where ``err`` bounds the absolute error of
    ``log_odds`` (truncation + rounding) and ``x2_probs`` (if ``want_x2``) is the posterior
    pmf of ``X2`` on ``x2_lo, x2_lo+1, …``.
    """
    with mpmath.workdps(dps + DPS_GUARD):
        a1 = to_mpf(setup.a1)
        a2 = to_mpf(setup.a2)
        b = to_mpf(setup.b)
        A = a2 + b
        K = _cutoff(A, dps)
        tail = half_tail_sum_bound(A, K)
        lpo = log_prior_odds(setup.p)
        base = lpo + a1 * (2 * x1s - 1)  # prior odds + block likelihood ratio
        m = [(a2 * x2s + b * (y1s + x)) / A for x in (0, 1)]
        C = [a2 * b * (x2s - y1s - x) ** 2 / A for x in (0, 1)]
        lo0, t0, _ = _gauss_terms(A, m[0], 0, K)
        lo1, t1, _ = _gauss_terms(A, m[1], 1, K)
        T0 = mpmath.fsum(t0)
        T1 = mpmath.fsum(t1)
        rounding = mpmath.mpf(10) ** (-(dps + 2)) * (1 + abs(base) + abs(C[0]) + abs(C[1]))
        if setup.model == "joint":
            lo = base - C[1] + C[0] + mpmath.log(T1) - mpmath.log(T0)
            err = 2 * tail + rounding
            probs = ()
            if want_x2:
                # P[X2 = j] ∝ Σ_{x ≤ j} exp(base·x) exp(-C_x) exp(-A (j - m_x)²)
                w0 = mpmath.exp(-C[0])
                w1 = mpmath.exp(base - C[1])
                hi = max(len(t0) - 1, len(t1))
                vals = []
                for j in range(0, hi + 1):
                    v = w0 * t0[j] if j < len(t0) else mpmath.mpf(0)
                    if 1 <= j < len(t1) + 1:
                        v += w1 * t1[j - 1]
                    vals.append(v)
                tot = mpmath.fsum(vals)
                probs = tuple(v / tot for v in vals)
            return lo, err, 0, probs
        # gibbs-variant: stationary X1 law of the chain X2 | X1 (with X2 ≥ X1), X1 | X2 (no indicator)
        # K01 = Σ_{X2≥0} q0(X2) σ(Λ_X2), K10 = Σ_{X2≥1} q1(X2) (1 - σ(Λ_X2)),
        # Λ_X2 = base - b (2 (y1* - X2) + 1).
        def lam(X):
            return base - b * (2 * (y1s - X) + 1)

        def sig(v):
            return 1 / (1 + mpmath.exp(-v))

        n01 = [t0[i] * sig(lam(lo0 + i)) for i in range(len(t0))]
        n10 = [t1[i] * sig(-lam(lo1 + i)) for i in range(len(t1))]
        N01 = mpmath.fsum(n01)
        N10 = mpmath.fsum(n10)
        # tails: terms beyond the window are ≤ (last-included gaussian bound)·1; relative to N
        rel01 = tail * max(t0) / N01
        rel10 = tail * max(t1) / N10
        lo = mpmath.log(N01) - mpmath.log(T0) - mpmath.log(N10) + mpmath.log(T1)
        err = rel01 + rel10 + 2 * tail + rounding
        probs = ()
        if want_x2:
            pi1 = sig(lo)
            hi = max(len(t0) - 1, len(t1))
            vals = []
            for j in range(0, hi + 1):
                v = (1 - pi1) * t0[j] / T0 if j < len(t0) else mpmath.mpf(0)
                if 1 <= j < len(t1) + 1:
                    v += pi1 * t1[j - 1] / T1
                vals.append(v)
            probs = tuple(vals)
        return lo, err, 0, probs


def posterior_mp(setup: HierarchicalSetup, x1s: int, x2s: int, y1s: int, dps: int = DPS_ANALYSIS) -> MPPosterior:
    """Posterior of "has c" and of ``X2`` (reduced coordinates), multiprecision."""
    lo, err, x2lo, probs = log_odds_mp(setup, x1s, x2s, y1s, dps=dps, want_x2=True)
    with mpmath.workdps(dps + DPS_GUARD):
        post = 1 / (1 + mpmath.exp(-lo))
    return MPPosterior(log_odds=lo, posterior=post, x2_lo=x2lo, x2_probs=probs, log_odds_error_bound=err)
