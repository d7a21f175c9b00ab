"""The pmf of a sum of m iid discrete Gaussians, pointwise, from its m residue values.

The tilted levels of the two-half enumeration (:mod:`exactdp.engine.tilted_atoms`) need each
group's log pmf on a window about its tilted mode with a pointwise error, and an upper bound
just beyond the window.  A group of ``m`` mechanisms N_Z(0, σ²) enters as one coordinate (its
sum S): ``m`` singles would make the halves ``m``-times higher-dimensional ellipsoids of
(for σ² ≈ 1.2) ~10⁴ times more atoms.  S has a closed form up to ``m`` constants: for
``j ∈ Z^m`` with ``Σj = k``, ``Σ j_i² = k²/m + Σ(j_i − k/m)²``, and the set of ``j − k/m`` depends
only on ``k mod m``, so

    P(S = k) = e^{−k²/(2mσ²)} Θ(k mod m) / Z^m,   hence   P(S = k) = P(S = r)·e^{−(k² − r²)/(2mσ²)}

for ``r = k mod m`` (an identity).  The ``m`` values ``P(S = r)``, ``r = 0 … m−1``, are a
direct convolution of the single pmf on ``|j| ≤ J`` (positive terms only: relative error at
most ``(1+ε₁)^m(1+γ_n)^{m−1} − 1``, ε₁ the error of a single term, γ_n = nu/(1 − nu)), plus
at most the mass ``m·P(|X| > J) ≤ 2m e^{−(J+1)²/(2σ²)}`` of the configurations with a
coordinate beyond J (X is σ²-sub-Gaussian, Canonne–Kamath–Steinke 2020), J chosen so that
it is below ``e^{−`` :data:`TAIL_NATS` ``}``.  S is log-concave (a convolution of log-concave
sequences; Karlin 1968, *Total Positivity*), which the tilted window's end check relies on.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from exactdp.engine.coarse_split import _single_pmf
from exactdp.numerics.precision import EPS64

__all__ = ["group_log_pmf", "TAIL_NATS"]

#: the single pmf is convolved on |j| ≤ J with P(|X| > J) ≤ e^{−TAIL_NATS}
TAIL_NATS = 200.0


def _gamma(n: int) -> float:
    """``γ_n = nu/(1 − nu)`` rounded up (the relative error of a sum of n positive products)."""
    nu = n * EPS64
    return nu / (1 - nu) * (1 + 1e-9)


def residue_log_pmf(s2: Fraction, m: int) -> tuple:
    """``(log P(S = r), error)`` for ``r = 0 … m−1`` (arrays; ``|log − truth| ≤ error``)."""
    v = float(s2)
    J = max(int(math.ceil(math.sqrt(2 * v * TAIL_NATS))) + 1, m)
    lp1, e1, log_beyond = _single_pmf(Fraction(s2), J)
    p1 = np.exp(lp1)
    # a single term's relative error: its log within e1 (and the exp's rounding, ≤ 4u)
    eps1 = math.expm1(float(np.max(e1))) * (1 + 1e-9) + 4 * EPS64
    conv = p1
    for _ in range(m - 1):
        conv = np.convolve(conv, p1)  # direct sums (numpy never uses an FFT here)
    n = 2 * J + 2
    rel = math.expm1(m * math.log1p(eps1) + (m - 1) * math.log1p(_gamma(n))) * (1 + 1e-9)
    centre = m * J  # index of S = 0 in the m-fold convolution
    c = conv[centre:centre + m]
    if not (np.all(c > 0) and rel < 1e-6):
        raise OverflowError("a group's residue probabilities are beyond the float range")
    deficit = math.log(m) + log_beyond  # mass of the configurations with |j_i| > J
    lp = np.log(c)
    # truth in [c/(1+rel), c(1+rel) + e^{deficit}]: log error ≤ rel + e^{deficit}/(c(1 − rel)) + log's rounding
    err = rel * (1 + 1e-9) + np.exp(deficit - lp) / (1 - rel) + 4 * EPS64 * (np.abs(lp) + 1) + 1e-300
    return lp, err * (1 + 1e-9)


def group_log_pmf(s2: Fraction, m: int, K: int) -> tuple:
    """``(log pmf, errors)`` of the sum of ``m`` iid N_Z(0, σ² = s2) on ``−K … K`` (numpy
    arrays of ``2K + 1`` floats, ``|log − log P(S = k)| ≤ error``); the single pmf for m = 1.

    Notes
    -----
    Method: the residue identity of the module docstring, ``log P(S = k) = log P(S = r) −
    (k² − r²)/(2mσ²)``; the error adds the float evaluation of the quadratic (``8u(|q| + 1)``)
    and of the sum (``4u(|log| + 1)``) to the residue's.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from exactdp.engine.group_log_pmf import group_log_pmf
    >>> lp, err = group_log_pmf(Fraction(6, 5), 2, 3)
    >>> import math
    >>> round(math.fsum(math.exp(x) for x in lp), 6)   # P(|S| ≤ 3)
    0.978504
    """
    s2 = Fraction(s2)
    m = int(m)
    if m == 1:
        lp, err, _ = _single_pmf(s2, K)
        return lp, err
    lr, er = residue_log_pmf(s2, m)
    k = np.arange(-K, K + 1, dtype=np.int64)
    r = np.mod(k, m)
    kf = k.astype(float)
    rf = r.astype(float)
    q = (kf * kf - rf * rf) / (2.0 * m * float(s2))  # k² exact in floats (|k| < 2^26)
    lp = lr[r] - q
    err = er[r] + 8 * EPS64 * (np.abs(q) + 1) + 4 * EPS64 * (np.abs(lp) + 1)
    return lp, err
