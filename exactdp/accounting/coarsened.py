"""Certified δ(ε) brackets for designs whose exact lattice is out of range.

When the privacy-loss weights ``w_g = |Δ_g|/σ_g²`` have large coprime denominators (the
P.L. 94-171 budgets: ~1e12), the exact lattice of :mod:`exactdp.engine.lattice` is too fine
for 64-bit phase arithmetic.  Round each weight to a grid, ``ŵ_g = k_g·h``, and write
``W = Ŵ + E`` with ``E = Σ (w_g − ŵ_g) X_g``.  E is sub-Gaussian with variance proxy
``v_E = Σ m_g (w_g − ŵ_g)² σ_g²`` (each N_Z(0, σ²) is σ²-sub-Gaussian, Canonne, Kamath &
Steinke 2020), so ``P(|E| ≥ τ) ≤ 2 e^{−τ²/(2 v_E)}`` and, for every t,

    P(Ŵ > t + τ) − P(E ≤ −τ)  ≤  P(W > t)  ≤  P(Ŵ > t − τ) + P(E ≥ τ)

(union bounds, valid whatever the dependence of Ŵ and E).  With
``δ(ε) = P(W > ε − c) − e^ε P(W > ε + c)`` this gives a certified bracket

    δ_lower = P̂(ε−c+τ) − e^ε P̂(ε+c−τ) − (1+e^ε) e^{−τ²/(2v_E)}
    δ_upper = P̂(ε−c−τ) − e^ε P̂(ε+c+τ) + (1+e^ε) e^{−τ²/(2v_E)}

where ``P̂(x) = P(Ŵ > x)`` is an exact lattice tail of the engine (with its certified
relative error folded in, on the conservative side).  The width is about
``2τ·|d log P/dx|`` relative: ~1e-5 with the default grid for the 2020 release.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath

from exactdp.accounting.accountant import as_real
from exactdp.engine.lattice import LatticeSum, floor_exact
from exactdp.mechanisms import Composition
from exactdp.engine.tails import TailEngine
from exactdp.numerics.errors import LatticeTooLarge
from exactdp.numerics.precision import DPS_RESULT, to_mpf

__all__ = ["CoarsenedAccountant", "DeltaBracket"]

_DPS = DPS_RESULT
#: e^{−τ²/(2 v_E)} is made ≤ this (so the E-terms are negligible next to any δ ≥ 1e-30)
E_TAIL = 1e-45


@dataclass(frozen=True)
class DeltaBracket:
    """Certified ``lower ≤ δ(ε) ≤ upper``; ``value`` is the conservative ``upper``."""

    epsilon: mpmath.mpf
    lower: mpmath.mpf
    upper: mpmath.mpf

    @property
    def value(self) -> mpmath.mpf:
        return self.upper

    @property
    def relative_width(self) -> float:
        return float((self.upper - self.lower) / self.upper) if self.upper > 0 else math.inf


class CoarsenedAccountant:
    """δ(ε) brackets of a composition through weights rounded to the grid ``h``.

    Parameters
    ----------
    composition : Composition
    grid : Fraction, optional
        The weight grid h; by default the finest power of ten for which the engine's
        integer phase arithmetic stays in range.

    Notes
    -----
    Method: exact lattice tails of the rounded sum Ŵ (sieved tilted trapezoid rule) and
    a sub-Gaussian bound on the rounding term E (module docstring).  Error bound: the
    bracket is certified; its width is reported.  Reference: Canonne, Kamath & Steinke
    (2020), Proposition on the sub-Gaussianity of the discrete Gaussian.
    """

    def __init__(self, composition: Composition, grid: Fraction | None = None, rel_tol: float = 1e-10):
        self.composition = composition
        self.c = composition.rho
        grids = [Fraction(grid)] if grid is not None else [Fraction(1, 10**p) for p in range(10, 3, -1)]
        last = None
        for h in grids:
            try:
                self._build(h, rel_tol)
                return
            except LatticeTooLarge as exc:
                last = exc
        raise LatticeTooLarge(f"no weight grid keeps the lattice in range ({last})")

    def _build(self, h: Fraction, rel_tol: float) -> None:
        items = [(m.weight, m.sigma2, count) for m, count in self.composition.groups if m.shift != 0]
        ks = []
        v_e = Fraction(0)
        for w, s2, count in items:
            k = round(w / h)
            eta = w - k * h
            v_e += count * eta * eta * s2
            ks.append((k, s2, count))
        d = math.gcd(*(k for k, _, _ in ks if k))
        merged: dict = {}
        for k, s2, count in ks:
            if k:
                merged[(k // d, s2)] = merged.get((k // d, s2), 0) + count
        keys = sorted(merged)
        self.grid = h
        self.step = d * h  # Ŵ = step · S
        lat = LatticeSum(tuple(k for k, _ in keys), tuple(merged[x] for x in keys), tuple(s for _, s in keys),
                         1 / self.step, self.c, 0)
        self.engine = TailEngine(lat, rel_tol=rel_tol)
        self.v_e = v_e
        # τ with e^{−τ²/(2 v_E)} ≤ E_TAIL, as an exact rational rounded up
        tau = math.sqrt(2 * float(v_e) * math.log(1 / E_TAIL)) * (1 + 1e-9) if v_e else 0.0
        self.tau = Fraction(tau).limit_denominator(10**15) + Fraction(1, 10**15) if v_e else Fraction(0)
        self.e_tail = math.exp(-float(self.tau) ** 2 / (2 * float(v_e))) if v_e else 0.0

    def _k(self, x) -> int:
        """S-threshold of the event {Ŵ > x}: S ≥ ⌊x/step⌋ + 1."""
        return floor_exact(x, 1 / self.step) + 1

    def delta(self, epsilons) -> tuple[DeltaBracket, ...]:
        """Certified brackets of δ(ε) for each ε (exact value or ``f(dps)`` callable)."""
        out = []
        c, tau = self.c, self.tau
        for e in epsilons:
            e = as_real(e, "epsilon")

            def shifted(off, e=e):
                if isinstance(e, Fraction):
                    return e + off
                return lambda dps: e(dps) + to_mpf(off)

            ks = [self._k(shifted(-c - tau)), self._k(shifted(c + tau)),
                  self._k(shifted(-c + tau)), self._k(shifted(c - tau))]
            t = self.engine.tails(ks)
            with mpmath.workdps(_DPS):
                em = e(_DPS) if callable(e) else to_mpf(e)
                ee = mpmath.exp(em)
                v = [mpmath.exp(mpmath.mpf(x.log_value)) for x in t]
                r = [x.rel_error for x in t]
                slack = (1 + ee) * self.e_tail
                upper = v[0] * (1 + r[0]) - ee * v[1] * (1 - r[1]) + slack
                lower = v[2] * (1 - r[2]) - ee * v[3] * (1 + r[3]) - slack
                out.append(DeltaBracket(em, max(lower, mpmath.mpf(0)), upper))
        return tuple(out)
