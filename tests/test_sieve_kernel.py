"""Issue 14 (engpy): the sieve's node bound ``sieve_umax`` moved from Python into a kernel
(``kernels/sieve_bound.py``) returns the bits of the Python code it replaced.

The reference below is ``exactdp/engine/tilt.py::sieve_umax`` and ``_wrapped_log_upper``
as they were at main e2cac23, frozen verbatim (pure Python floats and libm: ``x ** 2`` is
``pow``, which is not always ``x·x``, so a kernel that squared by multiplication would
differ here).  Inputs span the DHC regime and off it: σ² from 1/1000 to 10⁷, counts from
1 to 10⁹, sieve levels of rel_tol 1e-6 … 1e-40 (raised by 25), and the engines' own.
"""

from __future__ import annotations

import math
import random

import numpy as np

from exactdp.engine.tilt import sieve_umax, sieve_umaxes
from exactdp.kernels.sieve_bound import POW2, wrapped_log_upper


# ------------------------------------------------------------------ frozen reference (e2cac23)
def _wrapped_log_upper(u: float, s2: float) -> float:
    K = max(3, int(math.ceil(math.sqrt(80.0 / max(s2, 1e-300)) / (2 * math.pi))) + 2)
    two_pi = 2 * math.pi
    mx = -0.5 * s2 * u * u  # k = 0 is the largest term for u ∈ [0, π]
    tot = 1.0
    for k in range(1, K + 1):
        for kk in (k, -k):
            e = -0.5 * s2 * (u - two_pi * kk) ** 2 - mx
            if e > -745.0:
                tot += math.exp(e)
    tail = 2 * math.exp(-0.5 * s2 * (two_pi * K - math.pi) ** 2 - mx) / (1 - math.exp(-2 * math.pi**2 * s2 * K))
    return mx + math.log(tot + tail) + 1e-12


def _sieve_umax(s2: float, m: int, T: float) -> float:
    q = sum(math.exp(-2 * math.pi**2 * s2 * k * k) for k in range(1, 40))
    D = 1 - 2 * q * (1 + 1e-12)
    if D <= 0.5:
        return math.pi
    logD = math.log(D)

    def h(u):
        return -m * (_wrapped_log_upper(u, s2) - logD)

    if h(math.pi) <= T:
        return math.pi
    lo, hi = 0.0, math.pi
    guess = math.sqrt(2 * (T / m + max(logD, 0.0) + 1e-300) / s2) if s2 > 0 else math.pi
    if guess * 1.01 < math.pi and h(guess * 1.01) > T:
        hi = guess * 1.01
        if h(guess * 0.99) <= T:
            lo = guess * 0.99
    for _ in range(30 if lo > 0 else 56):
        mid = 0.5 * (lo + hi)
        if h(mid) > T:
            hi = mid
        else:
            lo = mid
    return hi


# ------------------------------------------------------------------ tests
def _inputs():
    rng = random.Random(20261201)
    out = []
    for _ in range(300):
        s2 = 10 ** rng.uniform(-3, 7)
        m = rng.choice([1, 2, 3, 7, 10, 43, 100, 1000, 10**6, 10**9])
        rel_tol = 10.0 ** -rng.uniform(6, 40)
        T = math.log(1 / rel_tol) + 0.5 * math.log(2 * math.pi * 10 ** rng.uniform(0, 12)) + 6.0
        out.append((s2, m, T + 25.0 * rng.randint(0, 1)))
    out += [(1 / 1000, 1, 30.0), (0.25, 5, 40.0), (1.0, 1, 35.0), (10.0, 2, 50.0), (1e7, 10**6, 60.0)]
    return out


def test_wrapped_log_upper_bits():
    rng = random.Random(7)
    for _ in range(400):
        u, s2 = rng.uniform(0, math.pi), 10 ** rng.uniform(-3, 7)
        assert wrapped_log_upper(u, s2, POW2) == _wrapped_log_upper(u, s2)
    for u in (0.0, math.pi, 1e-300):
        assert wrapped_log_upper(u, 0.5, POW2) == _wrapped_log_upper(u, 0.5)


def test_sieve_umax_bits():
    xs = _inputs()
    for s2, m, T in xs:
        assert sieve_umax(s2, m, T) == _sieve_umax(s2, m, T), (s2, m, T)
    s2 = np.array([x[0] for x in xs[:40]])
    m = np.array([x[1] for x in xs[:40]], dtype=np.int64)
    got = sieve_umaxes(s2, m, 45.0)
    assert got.tolist() == [_sieve_umax(float(a), int(b), 45.0) for a, b in zip(s2, m)]
