"""The pmf of a sum of independent discrete Gaussians, in float64 with a certified bound.

One implementation, :func:`convolution_power`, serves both users:

* :func:`dg_sum_pmf` — the sum of ``m`` iid ``N_Z(0, s²)`` from the float64 kernel pmf
  (:func:`exactdp.kernels.convolution.dg_pmf` over :func:`exactdp.kernels.dgauss.log_theta_real`),
  for the engine's lattice convolution;
* :func:`sum_pmf` — the sum of ``d`` iid ``DG`` with kernel coefficient ``a`` from a
  multiprecision table (:func:`exactdp.dgauss.tables.dg_table`, each entry correctly
  rounded), for the disclosure-risk package.

Error bound: the convolution of non-negative arrays is direct (not FFT), so every entry
of one convolution carries a relative error ≤ ``(k+1)·EPS64`` beyond those of its factors
(k terms, Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1; EPS64 = 2u
leaves room for the second-order terms); after ``m − 1`` convolutions the bound is
``m·r₀ + (m−1)(k+1)·EPS64`` for factors accurate to ``r₀``.  Truncation of the factors is
reported separately (absolute, it cannot be made relative where the pmf is tiny).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.dgauss.tables import dg_table
from exactdp.numerics.precision import DPS_LOW, EPS64

__all__ = ["convolution_power", "dg_sum_pmf", "SumPMF", "sum_pmf"]


def convolution_power(base: np.ndarray, m: int, base_rel: float) -> tuple[np.ndarray, float]:
    """The ``m``-fold self-convolution of a non-negative pmf on consecutive integers.

    Parameters
    ----------
    base : numpy.ndarray
        float64 pmf values (non-negative), each within a relative ``base_rel`` of the truth.
    m : int
        Number of summands (≥ 1).
    base_rel : float

    Returns
    -------
    (values, rel)
        The pmf of the sum (``m·(len(base) − 1) + 1`` entries, the first at ``m`` times the
        first support point of ``base``) and a bound on the relative error of every entry
        (rounding; entries that underflowed excepted).

    Notes
    -----
    Direct convolution (:func:`exactdp.kernels.convolution.convolve_strided`); each step
    adds ``base_rel + (len(base) + 1)·EPS64`` to the bound (module notes).
    """
    from exactdp.kernels.convolution import convolve_strided  # Numba: loaded on first use

    out = base
    rel = base_rel
    for _ in range(int(m) - 1):
        out = convolve_strided(out, base, 1)
        rel += base_rel + (base.shape[0] + 1) * EPS64
    return out, rel


def dg_sum_pmf(s2: float, m: int, half_width: int, max_exponent: float) -> tuple[np.ndarray, float]:
    """pmf of the sum of ``m`` iid ``N_Z(0, s2)``, each truncated to ``|x| ≤ half_width``.

    Returns ``(values, rel)``: the pmf on ``−m·half_width … m·half_width`` and a bound on
    the relative rounding error of every entry.  ``max_exponent`` bounds
    ``x²/(2s2)`` over the kept support; each factor entry ``exp(−x²/(2s2) − log Z)`` is
    then within ``4·EPS64·(max_exponent + 10 + |log(2π s2)|)`` (the exponent's rounding,
    the normaliser's and the exp's).  The dropped mass of each factor is the caller's
    truncation bound.
    """
    from exactdp.kernels.convolution import dg_pmf
    from exactdp.kernels.dgauss import log_theta_real

    base = dg_pmf(s2, half_width, log_theta_real(0.0, s2))
    rel = 4 * EPS64 * (max_exponent + 10 + abs(math.log(2 * math.pi * s2)))
    return convolution_power(base, m, rel)


@dataclass(frozen=True)
class SumPMF:
    """pmf of ``E_1 + … + E_d`` (iid ``DG`` with coefficient ``a``), in float64.

    Attributes
    ----------
    a : Fraction
    d : int
    offset : int
        ``values[i]`` is the probability of ``offset + i``.
    values : numpy.ndarray
        Read-only float64 array; truncated-component convolution ``h̃ ≤ h``.
    rel_error : float
        Relative rounding error bound of every entry that is ≥ 1e-290.
    error_bound : float
        Bound on ``h(u) - h̃(u)`` for every ``u`` (also outside the array), from truncating
        each component at ``|z| ≤ K`` (≤ d·P[|E| > K]) plus underflow.
    deficit : float
        Bound on the mass missing from ``h̃`` because of the component truncation
        (``≤ d·P[|E| > K]``); the binary64 rounding of the total is within ``rel_error``.

    Notes
    -----
    :func:`convolution_power` of the table's correctly rounded floats (relative error
    ≤ u + 10^-29 < EPS64 each), so ``rel_error = d·EPS64 + (d−1)(2K+2)·EPS64``.
    """

    a: Fraction
    d: int
    offset: int
    values: np.ndarray
    rel_error: float
    error_bound: float
    deficit: float

    def __call__(self, u):
        """Vectorised lookup (0 outside the support)."""
        u = np.asarray(u)
        idx = u - self.offset
        ok = (idx >= 0) & (idx < self.values.size)
        out = np.zeros(u.shape, dtype=np.float64)
        out[ok] = self.values[idx[ok]]
        return out


_SUMS: dict = {}


def sum_pmf(a: Fraction, d: int) -> SumPMF:
    """Cached :class:`SumPMF` with component tail ≤ 1e-60.

    The truncation error ``≤ d·1e-60`` per entry is reported in ``error_bound`` and
    ``deficit``; callers turn it into relative bounds where they use the values.
    """
    a = Fraction(a)
    d = int(d)
    key = (a, d)
    hit = _SUMS.get(key)
    if hit is not None:
        return hit
    table = dg_table(a, dps=DPS_LOW, log_eps=-60 * math.log(10.0))
    K = table.K
    vals, rel = convolution_power(table.floats(), d, EPS64)
    vals.setflags(write=False)
    with mpmath.workdps(DPS_LOW):
        outside = float(table.outside)
    abs_err = d * outside + 1e-300 * (2 * K + 1) * d
    res = SumPMF(a=a, d=d, offset=-d * K, values=vals, rel_error=rel, error_bound=abs_err, deficit=d * outside)
    if len(_SUMS) > 32:
        _SUMS.clear()
    _SUMS[key] = res
    return res
