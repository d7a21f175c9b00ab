"""The continuous Gaussian mechanism ``x + N(0, sigma2)``."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from exactdp.numerics.exact import parse_exact, positive_fraction

__all__ = ["Gaussian"]


@dataclass(frozen=True, order=True)
class Gaussian:
    """``N(0, σ²)`` against ``N(shift, σ²)`` (real sensitivity ``shift``, an exact rational).

    Its loss is Gaussian, ``N(ρ, 2ρ)`` under P with ``ρ = shift²/(2σ²)`` (exactly ρ-zCDP), so
    any number of them compose into one Gaussian loss of ``ρ = Σ ρ_i``; beside finite loss
    groups δ is a finite sum of Φ terms (:mod:`exactdp.accounting.mixed`).
    """

    sigma2: Fraction
    shift: Fraction = Fraction(1)
    kind = "gaussian"

    def __post_init__(self):
        object.__setattr__(self, "sigma2", positive_fraction(self.sigma2, "sigma2"))
        object.__setattr__(self, "shift", parse_exact(self.shift, "shift", lo=-10**12, hi=10**12))

    @property
    def rho(self) -> Fraction:
        """The exact zCDP ρ = shift²/(2σ²) (the mean of its loss)."""
        return self.shift**2 / (2 * self.sigma2)
