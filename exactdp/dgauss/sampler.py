"""The exact discrete Gaussian sampler (Canonne, Kamath & Steinke 2020, Algorithms 1–3).

Integer and rational arithmetic only: the output distribution is exactly N_Z(μ, σ²).
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

from exactdp.numerics.exact import positive_fraction, to_int

__all__ = ["sample"]


def _bernoulli(p: Fraction, rng) -> bool:
    return rng.randrange(p.denominator) < p.numerator


def _bernoulli_exp(gamma: Fraction, rng) -> bool:
    """Bernoulli(exp(−γ)) for rational γ ≥ 0 (CKS Algorithm 1)."""
    while gamma > 1:
        if not _bernoulli_exp(Fraction(1), rng):
            return False
        gamma -= 1
    k = 1
    while _bernoulli(gamma / k, rng):
        k += 1
    return k % 2 == 1


def _discrete_laplace(t: int, rng) -> int:
    """P[X = x] ∝ exp(−|x|/t) (CKS Algorithm 2)."""
    while True:
        u = rng.randrange(t)
        if not _bernoulli_exp(Fraction(u, t), rng):
            continue
        v = 0
        while _bernoulli_exp(Fraction(1), rng):
            v += 1
        x = u + t * v
        y = rng.randrange(2)
        if y == 1 and x == 0:
            continue
        return -x if y else x


def sample(sigma2, size: int = 1, seed=None, mu: int = 0) -> list[int]:
    """Exact samples of N_Z(μ, σ²) (CKS Algorithm 3; integer arithmetic only).

    Parameters
    ----------
    sigma2 : Fraction-like
    size : int
    seed : int or random.Random, optional
        For reproducible output; by default the OS entropy source is used.
    mu : int
        Integer location.

    Notes
    -----
    Method: rejection from a discrete Laplace with scale ``t = ⌊σ⌋ + 1`` using exact
    Bernoulli(exp(−γ)) trials on rationals.  No floating point is involved, so the
    output distribution is exactly N_Z(μ, σ²).  Reference: Canonne, Kamath & Steinke,
    "The Discrete Gaussian for Differential Privacy", NeurIPS 2020.
    """
    s2 = positive_fraction(sigma2, "sigma2")
    mu = to_int(mu, "mu")
    if isinstance(seed, random.Random):
        rng = seed
    else:
        rng = random.Random(seed) if seed is not None else random.SystemRandom()
    t = math.isqrt(s2.numerator // s2.denominator) + 1
    out: list[int] = []
    while len(out) < size:
        y = _discrete_laplace(t, rng)
        gamma = (abs(y) - s2 / t) ** 2 / (2 * s2)
        if _bernoulli_exp(gamma, rng):
            out.append(y + mu)
    return out
