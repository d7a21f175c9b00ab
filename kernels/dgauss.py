"""Discrete Gaussian kernels: the complex log-theta function in both regimes.

``Θ(z; s²) = Σ_{x∈ℤ} exp(z·x − x²/(2s²))`` so that the moment generating function of
N_Z(0, s²) is ``M(z) = Θ(z)/Θ(0)``.  With ``z = a + i·b``:

* Poisson (dual) form, used for s² ≥ POISSON_MIN_S2:
  ``Θ = sqrt(2π s²)·e^{s²a²/2}·Σ_k exp(−s²(b − 2πk)²/2 + i·s²·a·(b − 2πk))``.
  ``b`` is reduced to [−π, π] by the caller's exact integer arithmetic; the terms
  ``|k| ≤ 3`` are summed.  The neglected terms are below ``exp(−12π² s²)`` relative to
  the largest one (< 1e-50 for s² ≥ 1).
* Direct form, used for s² < POISSON_MIN_S2: the terms ``|x − round(a s²)| ≤ X`` with
  ``X = ceil(sqrt(100 s²)) + 2``; the neglected terms are below ``e^{−50}`` relative to
  the largest one, and their sum below 1e-21 of it.

Both return ``log Θ`` as a complex number (log-modulus, phase) so nothing over- or
underflows for any a.
"""

from __future__ import annotations

import math

import numpy as np

from exactdp.kernels.jit import kernel

__all__ = ["POISSON_MIN_S2", "log_theta", "log_theta_ratio", "log_poisson_numerator", "log_theta_real"]

POISSON_MIN_S2 = 1.0
TWO_PI = 2.0 * math.pi


@kernel("Tuple((float64, complex128, float64))(float64, float64, float64)")
def _direct_sums(a, b, s2):
    """Direct form around the maximum: ``tmax`` and the scaled sums
    ``Σ_x exp(a x − x²/(2s²) − tmax)·e^{ibx}`` and the same at b = 0, over
    ``|x − round(a s²)| ≤ ceil(sqrt(100 s²)) + 2``."""
    x0 = float(round(a * s2))
    half = int(math.ceil(math.sqrt(100.0 * s2))) + 2
    tmax = -np.inf
    for dx in range(-1, 2):
        x = x0 + dx
        t = a * x - x * x / (2.0 * s2)
        if t > tmax:
            tmax = t
    acc = 0.0 + 0.0j
    acc0 = 0.0
    for xi in range(int(x0) - half, int(x0) + half + 1):
        x = float(xi)
        t = a * x - x * x / (2.0 * s2) - tmax
        if t < -745.0:
            continue
        w = math.exp(t)
        acc += w * (math.cos(b * x) + 1j * math.sin(b * x))
        acc0 += w
    return tmax, acc, acc0


@kernel("complex128(float64, float64, float64)")
def log_theta(a, b, s2):
    """Complex ``log Θ(a + i b; s2)`` (b must lie in [−π, π] for the Poisson form)."""
    if s2 >= POISSON_MIN_S2:
        # terms t_k = exp(-s2 (b-2πk)^2/2 + i s2 a (b-2πk)), k = -3..3; the k=0 term
        # has the largest modulus since |b| <= π.
        acc = 0.0 + 0.0j
        for k in range(-3, 4):
            d = b - TWO_PI * k
            e = -0.5 * s2 * (d * d - b * b)
            if e < -745.0:
                continue
            ph = s2 * a * d
            acc += math.exp(e) * (math.cos(ph) + 1j * math.sin(ph))
        re0 = 0.5 * math.log(TWO_PI * s2) + 0.5 * s2 * a * a - 0.5 * s2 * b * b
        mod = abs(acc)
        if mod == 0.0:
            return complex(-np.inf, 0.0)
        return complex(re0 + math.log(mod), math.atan2(acc.imag, acc.real))
    tmax, acc, _ = _direct_sums(a, b, s2)
    mod = abs(acc)
    if mod == 0.0:
        return complex(-np.inf, 0.0)
    return complex(tmax + math.log(mod), math.atan2(acc.imag, acc.real))


@kernel("complex128(float64, float64, float64)")
def log_theta_ratio(a, b, s2):
    """Complex ``log[Θ(a + i b)/Θ(a)]`` computed without forming the large common
    factor ``s²a²/2`` (b in [−π, π]); its real part is ≤ 0."""
    if s2 >= POISSON_MIN_S2:
        acc = 0.0 + 0.0j
        acc0 = 0.0 + 0.0j
        for k in range(-3, 4):
            d = b - TWO_PI * k
            e = -0.5 * s2 * (d * d - b * b)
            if e > -745.0:
                ph = s2 * a * d
                acc += math.exp(e) * (math.cos(ph) + 1j * math.sin(ph))
            d0 = -TWO_PI * k
            e0 = -0.5 * s2 * d0 * d0
            if e0 > -745.0:
                ph0 = s2 * a * d0
                acc0 += math.exp(e0) * (math.cos(ph0) + 1j * math.sin(ph0))
        mod = abs(acc)
        if mod == 0.0:
            return complex(-np.inf, 0.0)
        return complex(-0.5 * s2 * b * b + math.log(mod) - math.log(abs(acc0)),
                       math.atan2(acc.imag, acc.real) - math.atan2(acc0.imag, acc0.real))
    _, acc, acc0 = _direct_sums(a, b, s2)
    mod = abs(acc)
    if mod == 0.0:
        return complex(-np.inf, 0.0)
    return complex(math.log(mod / acc0), math.atan2(acc.imag, acc.real))


#: Poisson terms whose weight relative to the k = 0 term is below e^{−SKIP} are skipped
#: (at most 6 of them: a relative truncation ≤ 6e^{−50} < 1e-21).
SKIP = 50.0


@kernel("complex128(float64, float64, float64)")
def log_poisson_numerator(a, b, s2):
    """``log Σ_k exp(−s²((b−2πk)² − b²)/2 + i s² a (b − 2πk))`` (b in [−π, π]); with the
    per-λ constant ``log Σ_k(…)|_{b=0}`` subtracted and ``−s²b²/2`` added this is
    ``log[Θ(a+ib)/Θ(a)]`` in the Poisson regime."""
    acc = 0.0 + 0.0j
    for k in range(-3, 4):
        d = b - TWO_PI * k
        e = -0.5 * s2 * (d * d - b * b)
        if e > -SKIP:
            ph = s2 * a * d
            acc += math.exp(e) * (math.cos(ph) + 1j * math.sin(ph))
    mod = abs(acc)
    if mod == 0.0:
        return complex(-np.inf, 0.0)
    return complex(math.log(mod), math.atan2(acc.imag, acc.real))


@kernel("float64(float64, float64)")
def log_theta_real(a, s2):
    """``log Θ(a; s2)`` for real a (the log of the untilted normaliser at a = 0)."""
    return log_theta(a, 0.0, s2).real
