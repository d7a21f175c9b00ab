"""Constants and ball helpers shared by the mixed route's δ (:mod:`exactdp.accounting.mixed`) and its
ε(δ) / β(α) (:mod:`exactdp.accounting.mixed_queries`)."""

from __future__ import annotations

import math
from fractions import Fraction

import flint
import mpmath
import numpy

from exactdp.engine.finite_loss import prec_ctx
from exactdp.kernels.units import UNIT_ROUNDOFF

__all__ = ["WIDTH", "FLOOR", "WINDOW_ATOMS", "ORACLE_FREE_RATIO", "PRECS", "to_mpf", "zcdp_rest"]

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




def _pow2_table() -> numpy.ndarray:
    """``T[r] ≥ 2^(−r/16)``, r = 0 … 15 (rounded up)."""
    out = numpy.empty(16)
    with prec_ctx(128):
        for r in range(16):
            b = flint.arb(2) ** flint.arb(flint.fmpq(-r, 16))
            f = float(b.upper())
            out[r] = f if flint.arb(f) >= b.upper() else math.nextafter(f, math.inf)
    return out


_POW2 = _pow2_table()
_U = UNIT_ROUNDOFF


def zcdp_rest(d: Fraction, step: Fraction, idx: numpy.ndarray, mass_up: numpy.ndarray, rho: Fraction,
              order: numpy.ndarray) -> numpy.ndarray:
    """Certified upper bounds ``rest[j] ≥ Σ_{i ≥ j} m_{order[i]}·min(1, e^{−(t−ρ)²/(4ρ)})`` at
    ``t = d − idx·step`` (``rest[len(order)] = 0``), in float64 with every rounding bounded:
    ``t − ρ`` from above by ``8u·(|d − ρ| + idx·step + |t − ρ|)``, the exponent from below, and
    ``e^{−E} ≤ 2^{−⌊16E/ln 2⌋/16}`` (a power of two times a table value rounded up; terms
    below 2^−1000 count as 2^−1000); the sums are sequential (γ_n, Higham Eq. 4.4)."""
    D, S = float(d - rho), float(step)
    i = idx[order].astype(numpy.float64)
    m = mass_up[order]
    with numpy.errstate(over="ignore", under="ignore", invalid="ignore"):
        y = D - i * S
        y_lo = y - 8 * _U * (abs(D) + i * S + numpy.abs(y)) - 1e-300
        r4 = float(4 * rho)
        if Fraction(r4) < 4 * rho:
            r4 = math.nextafter(r4, math.inf)
        e_lo = numpy.where(y_lo > 0, (y_lo * y_lo) / r4 * (1 - 4 * _U), 0.0)
        q = numpy.floor(numpy.minimum(e_lo * (16 / math.log(2)) * (1 - 8 * _U), 16_000.0)).astype(numpy.int64)
        q = numpy.maximum(q, 0)
        term = numpy.ldexp(m * _POW2[q & 15], -(q >> 4)) * (1 + 4 * _U)
        term = numpy.where(m > 0, numpy.maximum(term, 2.0 ** -1000), 0.0)
    n = len(term)
    g = n * _U / (1 - n * _U) if n else 0.0
    out = numpy.zeros(n + 1)
    out[:n] = numpy.cumsum(term[::-1])[::-1] * (1 + 2 * g) * (1 + 4 * _U)
    return out
