"""Float64 discrete Gaussian primitives: thin wrappers over :mod:`exactdp.kernels.dgauss`.

Each function validates its exact parameters and calls a Numba kernel; the multiprecision
twins (same names, suffix ``_mp``) are in :mod:`exactdp.dgauss.mp`.
"""

from __future__ import annotations

import math

import numpy as np

from exactdp.kernels.dgauss import log_theta, log_theta_real
from exactdp.numerics.exact import positive_fraction, to_fraction, to_int
from exactdp.numerics.precision import DPS_FLOAT64

__all__ = ["log_normalizer", "logpmf", "pmf", "tail", "log_mgf", "cf", "variance", "variance_float"]


def _wrap(b: float) -> float:
    return math.remainder(b, 2 * math.pi)


def log_normalizer(sigma2, mu=0) -> float:
    """``log Σ_x exp(−(x−μ)²/(2σ²))`` (float64)."""
    s2 = float(positive_fraction(sigma2, "sigma2"))
    mu = to_fraction(mu, "mu")
    # Σ_x exp(−(x−μ)²/(2s²)) = e^{−μ²/(2s²)} Θ(μ/s²)
    return -float(mu) ** 2 / (2 * s2) + log_theta_real(float(mu) / s2, s2)


def logpmf(x: int, sigma2, mu=0) -> float:
    s2 = float(positive_fraction(sigma2, "sigma2"))
    return -((to_int(x, "x") - float(to_fraction(mu, "mu"))) ** 2) / (2 * s2) - log_normalizer(sigma2, mu)


def pmf(x: int, sigma2, mu=0) -> float:
    return math.exp(logpmf(x, sigma2, mu))


def variance(sigma2) -> float:
    """Var N_Z(0, σ²) (≤ σ²), float64 by the direct/Poisson series."""
    return variance_float(float(positive_fraction(sigma2, "sigma2")))


def variance_float(s2: float) -> float:
    """Var N_Z(0, s²) for a float s² (Poisson form for s² ≥ 1: the first correction term
    ``4π²s⁴ e^{−2π²s²}`` suffices in float64; direct sum over |x| ≤ 60 otherwise)."""
    if s2 >= 1.0:
        q = math.exp(-2 * math.pi**2 * s2)
        return s2 * (1 - 4 * math.pi**2 * s2 * q / (1 + 2 * q))
    x = np.arange(-60, 61, dtype=float)
    w = np.exp(-x * x / (2 * s2))
    return float((w * x * x).sum() / w.sum())


def log_mgf(z: complex, sigma2) -> complex:
    """``log E e^{zX}`` for X ~ N_Z(0, σ²) (complex z; float64)."""
    s2 = float(positive_fraction(sigma2, "sigma2"))
    z = complex(z)
    return log_theta(z.real, _wrap(z.imag), s2) - log_theta_real(0.0, s2)


def cf(t: float, sigma2) -> complex:
    """Characteristic function ``E e^{itX}`` (float64)."""
    import cmath

    return cmath.exp(log_mgf(complex(0.0, t), sigma2))


def tail(k: int, sigma2, mu=0) -> float:
    """``P(X ≥ k)`` as a float: the 20-digit twin :func:`tail_mp` rounded (relative accuracy)."""
    from exactdp.dgauss.mp import tail_mp  # the mp twins load only when asked for

    return float(tail_mp(k, sigma2, mu, dps=DPS_FLOAT64))
