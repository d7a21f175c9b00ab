"""Compensated summation (Neumaier), shared by the kernels.

``acc, comp = neumaier_add(acc, comp, term)`` accumulates ``term``; the sum is
``acc + comp``, with a rounding error ≤ 2u·Σ|terms| + O(n u²)·Σ|terms|
(Higham, *Accuracy and Stability of Numerical Algorithms*, §4.3).
"""

from __future__ import annotations

from exactdp.kernels.jit import kernel

__all__ = ["neumaier_add"]


@kernel("UniTuple(float64, 2)(float64, float64, float64)")
def neumaier_add(acc, comp, term):
    tot = acc + term
    if abs(acc) >= abs(term):
        comp += (acc - tot) + term
    else:
        comp += (term - tot) + acc
    return tot, comp
