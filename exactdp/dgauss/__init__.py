"""The discrete Gaussian N_Z(μ, σ²): ``Pr[X = x] ∝ exp(−(x − μ)²/(2σ²))``, x ∈ ℤ.

The one discrete-Gaussian layer of exactdp:

* :mod:`exactdp.dgauss.float64` — float64 wrappers over the Numba kernels of
  :mod:`exactdp.kernels.dgauss` (normaliser, pmf, tails, MGF/CF, variance);
* :mod:`exactdp.dgauss.mp` — their multiprecision twins (suffix ``_mp``, mpmath inside a
  ``workdps`` context), the theta twins, and the rigorous bounds on Gaussian tail sums
  used by every truncation;
* :mod:`exactdp.dgauss.conventions` — the two noise conventions ρ → σ² (paper
  σ² = 1/(2ρ), production σ² = 1/ρ) and the kernel coefficient a = 1/(2σ²);
* :mod:`exactdp.dgauss.tables` — multiprecision pmf tables in the kernel-coefficient form
  with certified truncation (used by :mod:`exactdp.risk`);
* :mod:`exactdp.dgauss.sums` — the pmf of a sum of iid discrete Gaussians in float64 with a
  certified relative rounding bound (one convolution routine for the engine and risk);
* :mod:`exactdp.dgauss.sampler` — the exact CKS sampler (integer arithmetic only).

Series and truncation (both twins):

* normaliser ``Z(μ, σ²) = Σ_x exp(−(x−μ)²/(2σ²))``: Poisson form
  ``sqrt(2πσ²)·Σ_k exp(−2π²σ²k²)·cos(2πkμ)`` for σ² ≥ 1 (|k| ≤ 3 in float64, terms
  beyond below e^{−18π²}), direct sum otherwise (terms beyond ``sqrt(2σ²·50)`` from the
  centre below e^{−50} relative).
* ``M(z) = E e^{zX}``, ``φ(t) = M(it)`` from the same theta function (see kernels).

Names are loaded on first use (PEP 562): importing a submodule that needs no kernel
(conventions, tables, the mp twins) does not load Numba.  Imports only
:mod:`exactdp.numerics` and the kernels.
"""

from __future__ import annotations

from exactdp.numerics.lazy import lazy_names

#: public name → the submodule that defines it
_NAMES = {
    **{n: "exactdp.dgauss.float64" for n in
       ("cf", "log_mgf", "log_normalizer", "logpmf", "pmf", "tail", "variance", "variance_float")},
    **{n: "exactdp.dgauss.mp" for n in
       ("cf_mp", "log_normalizer_mp", "logpmf_mp", "mgf_mp", "pmf_mp", "tail_mp")},
    "sample": "exactdp.dgauss.sampler",
}

__all__ = list(_NAMES)

__getattr__, __dir__ = lazy_names(__name__, _NAMES)
