"""Deprecated: δ(ε) brackets of designs beyond the int64 lattice (kept for its API).

The former method rounded the weights to a grid and bounded the rounding term by a
sub-Gaussian union bound (brackets ~4e-4 wide for the 2020 release).  It is replaced by
:class:`exactdp.accounting.bracketed.BigLatticeAccountant` (exact split enumeration or the
Gaussian-smoothed inversion, brackets ≤ 1e-9 relative), which :class:`ExactAccountant`
also uses by itself when a design's lattice is too large.  :class:`CoarsenedAccountant`
now delegates to it; its ``grid`` argument is accepted and ignored.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from fractions import Fraction

import mpmath

from exactdp.accounting.bracketed import BigLatticeAccountant
from exactdp.mechanisms import Composition

__all__ = ["CoarsenedAccountant", "DeltaBracket"]


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
    """Deprecated alias: δ(ε) brackets from :class:`BigLatticeAccountant`.

    Parameters
    ----------
    composition : Composition
    grid : Fraction, optional
        Ignored (the weights are no longer rounded).
    rel_tol : float

    Notes
    -----
    Method and error bound: those of :class:`exactdp.accounting.bracketed.BigLatticeAccountant`.
    """

    def __init__(self, composition: Composition, grid: Fraction | None = None, rel_tol: float = 1e-10):
        warnings.warn("CoarsenedAccountant is deprecated: use ExactAccountant (it hands designs beyond the "
                      "int64 lattice to BigLatticeAccountant) or BigLatticeAccountant", DeprecationWarning,
                      stacklevel=2)
        self.composition = composition
        self.c = composition.rho
        self.grid = None
        self.accountant = BigLatticeAccountant(composition, rel_tol=rel_tol)

    def delta(self, epsilons) -> tuple[DeltaBracket, ...]:
        """Certified brackets of δ(ε) for each ε (exact value or ``f(dps)`` callable)."""
        return tuple(DeltaBracket(p.epsilon, p.lower, p.upper) for p in self.accountant.delta(epsilons))
