"""The discrete Gaussian N_Z(μ, σ²): ``Pr[X = x] ∝ exp(−(x − μ)²/(2σ²))``, x ∈ ℤ.

The one discrete-Gaussian layer of exactdp:

* :mod:`exactdp.dgauss.float64` — float64 wrappers over the Numba kernels of
  :mod:`exactdp.kernels.dgauss` (normaliser, pmf, tails, MGF/CF, variance);
* :mod:`exactdp.dgauss.mp` — their multiprecision twins (suffix ``_mp``, mpmath inside a
  ``workdps`` context);
* :mod:`exactdp.dgauss.sampler` — the exact CKS sampler (integer arithmetic only).

Series and truncation (both twins):

* normaliser ``Z(μ, σ²) = Σ_x exp(−(x−μ)²/(2σ²))``: Poisson form
  ``sqrt(2πσ²)·Σ_k exp(−2π²σ²k²)·cos(2πkμ)`` for σ² ≥ 1 (|k| ≤ 3 in float64, terms
  beyond below e^{−18π²}), direct sum otherwise (terms beyond ``sqrt(2σ²·50)`` from the
  centre below e^{−50} relative).
* ``M(z) = E e^{zX}``, ``φ(t) = M(it)`` from the same theta function (see kernels).
"""

from __future__ import annotations

from exactdp.dgauss.float64 import cf, log_mgf, log_normalizer, logpmf, pmf, tail, variance, variance_float
from exactdp.dgauss.mp import cf_mp, log_normalizer_mp, logpmf_mp, mgf_mp, pmf_mp, tail_mp
from exactdp.dgauss.sampler import sample

__all__ = [
    "log_normalizer", "logpmf", "pmf", "tail", "log_mgf", "cf",
    "log_normalizer_mp", "logpmf_mp", "pmf_mp", "tail_mp", "mgf_mp", "cf_mp",
    "sample", "variance", "variance_float",
]
