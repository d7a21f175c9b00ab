"""The trade-off threshold offsets of a sweep pair, decided in float64 with a rigorous margin.

:func:`offsets_by_float` gives ``sorted({rint(div(mul(u, m), half)) for m in 0..half})``
(MPFR at a precision of at least 64 bits, round to nearest-even: what
:func:`exactdp.sweep.pair.threshold_offsets` computes) from one float64 pass over ``m``,
each integer decided by an error bound; an ``m`` whose value lies too near a half-integer
for the bound to decide takes the exact operations (the callable given).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["offsets_by_float", "FLOAT_MARGIN"]

#: relative distance allowed between the float64 quotient and MPFR's (see offsets_by_float)
FLOAT_MARGIN = 2.0**-50


def offsets_by_float(uf: float, half: int, exact) -> list[int]:
    """``sorted({exact(m) for m in range(half + 1)})`` where ``exact(m)`` is
    ``rint(div(mul(u, m), half))`` in MPFR (nearest-even, ≥ 64 bits) and ``uf = float(u)``.

    Parameters
    ----------
    uf : float
        ``u`` converted to float64 (any rounding: within 2⁻⁵² relative of ``u``).
    half : int
        The divisor and the largest ``m``.
    exact : callable
        ``m ↦`` the exact operations' integer, called for the ``m`` this pass leaves
        undecided.

    Notes
    -----
    Method: ``x = (uf·m)/half`` in float64 (numpy, IEEE operations), ``r = rint(x)``.
    Error bound: ``uf = u(1 + e₁)``, ``|e₁| ≤ 2⁻⁵²``, and the product and quotient round
    twice more (2⁻⁵³ each), so ``x = x*(1 + e)`` with ``|e| ≤ 4.01·2⁻⁵³`` for the exact
    ``x* = u·m/half``; MPFR's
    ``div(mul(u, m), half)`` is ``x*(1 + e')``, ``|e'| ≤ 2.01·2⁻⁶⁴`` at ≥ 64 bits.  Both
    lie within ``|x|·2⁻⁵⁰`` of each other; ``x − r`` is exact (``r`` an integer within 1/2
    of ``x``, ``|x| < 2⁵⁰``).  Where ``1/2 − |x − r| > |x|·2⁻⁵⁰ + 2⁻¹⁰⁰⁰``, no half-integer
    lies between (or on) the two, so both round to ``r``; other ``m`` (and a non-finite or
    huge ``uf``) take ``exact``.  Reference: IEEE 754 correct rounding (numpy's float64
    ``*``, ``/``, ``rint``; MPFR's ``mul``, ``div``, ``rint``).
    """
    if not (math.isfinite(uf) and abs(uf) < 2.0**40 and 0 < half < 2**20):
        return sorted({exact(m) for m in range(half + 1)})
    ms = np.arange(half + 1, dtype=np.float64)
    x = (uf * ms) / half
    r = np.rint(x)
    ok = 0.5 - np.abs(x - r) > np.abs(x) * FLOAT_MARGIN + 2.0**-1000
    got = set(np.unique(r[ok]).astype(np.int64).tolist())
    for m in np.flatnonzero(~ok).tolist():
        got.add(exact(m))
    return sorted(got)
