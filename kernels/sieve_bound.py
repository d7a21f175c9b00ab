"""The quadrature sieve's per-group node bound (one kernel call per sieve, not ~100 Python
function calls of a bisection per group); the sieve itself is :mod:`exactdp.kernels.sieve`.

:func:`sieve_umax` is the largest u ∈ [0, π] not excluded by one group (σ², count m) at
sieve level T: ``m·(logD − log P(u)) > T`` excludes u, with P the wrapped normal sum
bounded above by :func:`wrapped_log_upper` and ``D = 1 − 2Σ_{k≥1} e^{−2π²σ²k²}``.  Both
repeat the float operations of the Python code they replaced (formerly
``exactdp.engine.tilt``; frozen as the reference in ``tests/test_sieve_kernel.py``) in
the same order with the same libm calls — squares included: Python's ``x ** 2`` is libm's
``pow(|x|, 2.0)``, which is not always ``x·x``, so the exponent is passed in at run time
(:data:`POW2`, never a constant the compiler could fold into a multiplication).
"""

from __future__ import annotations

import math

import numpy as np
from exactdp.kernels.jit import kernel

__all__ = ["POW2", "sieve_umax", "sieve_umaxes", "wrapped_log_upper"]

#: the exponent of the squares, an argument (see the module docstring)
POW2 = np.array([2.0])
_PI2 = math.pi**2  # as Python computes it (libm pow)


@kernel("float64(float64, float64, float64[:])")
def wrapped_log_upper(u, s2, pow2):
    """An upper bound of log Σ_k exp(−s²(u − 2πk)²/2) for u in [0, π]: the terms
    |k| ≤ K plus a geometric bound of the rest (exponents below −40, ratio ≤ e^{−2π²s²K})."""
    p2 = pow2[0]
    K = max(3, int(math.ceil(math.sqrt(80.0 / max(s2, 1e-300)) / (2 * math.pi))) + 2)
    two_pi = 2 * math.pi
    mx = -0.5 * s2 * u * u  # k = 0 is the largest term for u ∈ [0, π]
    tot = 1.0
    for k in range(1, K + 1):
        for sign in range(2):
            kk = k if sign == 0 else -k
            e = -0.5 * s2 * abs(u - two_pi * kk) ** p2 - mx
            if e > -745.0:
                tot += math.exp(e)
    tail = 2 * math.exp(-0.5 * s2 * abs(two_pi * K - math.pi) ** p2 - mx) / (1 - math.exp(-2 * _PI2 * s2 * K))
    return mx + math.log(tot + tail) + 1e-12


@kernel("float64(float64, int64, float64, float64[:])")
def sieve_umax(s2, m, T, pow2):
    """Largest u ∈ [0, π] not excluded by group (s2, m) alone at sieve level T (``pow2``
    is :data:`POW2`)."""
    q = 0.0
    for k in range(1, 40):
        q += math.exp(-2 * _PI2 * s2 * k * k)
    D = 1 - 2 * q * (1 + 1e-12)
    if D <= 0.5:
        return math.pi
    logD = math.log(D)
    if -m * (wrapped_log_upper(math.pi, s2, pow2) - logD) <= T:
        return math.pi
    lo, hi = 0.0, math.pi
    # narrow the bracket around the Gaussian guess (each end is tested, so this is safe)
    guess = math.sqrt(2 * (T / m + max(logD, 0.0) + 1e-300) / s2) if s2 > 0 else math.pi
    if guess * 1.01 < math.pi and -m * (wrapped_log_upper(guess * 1.01, s2, pow2) - logD) > T:
        hi = guess * 1.01
        if -m * (wrapped_log_upper(guess * 0.99, s2, pow2) - logD) <= T:
            lo = guess * 0.99
    for _ in range(30 if lo > 0 else 56):  # the result is the excluded end (widened later)
        mid = 0.5 * (lo + hi)
        if -m * (wrapped_log_upper(mid, s2, pow2) - logD) > T:
            hi = mid
        else:
            lo = mid
    return hi


@kernel("float64[:](float64[:], int64[:], float64, float64[:])")
def sieve_umaxes(s2, m, T, pow2):
    """:func:`sieve_umax` of every group (arrays of σ² and counts)."""
    out = np.empty(s2.shape[0])
    for g in range(s2.shape[0]):
        out[g] = sieve_umax(s2[g], m[g], T, pow2)
    return out
