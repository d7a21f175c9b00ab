"""Constants and ball helpers shared by the mixed route's δ (:mod:`exactdp.accounting.mixed`) and its
ε(δ) / β(α) (:mod:`exactdp.accounting.mixed_queries`)."""

from __future__ import annotations

import flint
import mpmath

__all__ = ["WIDTH", "FLOOR", "WINDOW_ATOMS", "ORACLE_FREE_RATIO", "PRECS", "to_mpf"]

#: the relative width aimed at for δ (a certified relative error of at most 5e-12)
WIDTH = 1e-11
#: below this δ the width is absolute (δ under 1e-4000 is reported as such a bound)
FLOOR = mpmath.mpf("1e-4000")
#: the largest grid on which discrete Gaussians join the finite composition as windows
WINDOW_ATOMS = 400_000
#: the discrete-Gaussian oracle is the lattice-free route where the lattice engine's estimate per
#: value is above this many times the lattice-free route's (``MixedAccountant._prefer_free``)
ORACLE_FREE_RATIO = 16
PRECS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384)


def to_mpf(a: flint.arb, upper: bool) -> mpmath.mpf:
    """The upper (or lower) end of a ball as an exact mpf."""
    end = a.upper() if upper else a.lower()
    man, exp = end.mid().man_exp()
    if not man:
        return mpmath.mpf(0)
    with mpmath.workprec(int(man).bit_length() + 8):  # exact
        return mpmath.mpf((int(man), int(exp)))


