"""The loss-group protocol: what a mechanism kind tells the accountant about its privacy loss.

A mechanism kind is a pair of output distributions (P, Q) on neighbouring inputs.  Every kind
here is *symmetric* (a bijection of the outputs swaps P and Q), so the privacy loss
``L = log(dP/dQ)`` under Q is distributed as ``−L`` under P, and both directions of the
hockey-stick divergence coincide.  A kind with a finite loss distribution tells:

* :meth:`LossGroup.loss_atoms` — the atoms ``(v, P[L = v])`` of the loss under P, with
  rational values v and probabilities as certified balls (:class:`flint.arb`) at a
  requested precision;
* :meth:`LossGroup.infinite_mass` — ``P[L = +∞]`` (the mass where Q vanishes);
* :attr:`LossGroup.lattice_weight` — the step of the rational grid the finite values lie on;
* :attr:`LossGroup.pure_epsilon` — the largest finite loss when there is no infinite mass
  (the kind is then ε-DP with that ε), else None;
* :attr:`LossGroup.rho` — the exact zCDP ρ where the kind's loss is Gaussian-type, else None.
"""

from __future__ import annotations

import abc
import math
from fractions import Fraction

import flint

__all__ = ["LossGroup", "grid_step"]


def grid_step(values) -> Fraction:
    """The largest rational g with every difference of ``values`` an integer multiple of g
    (0 when all values coincide)."""
    vs = sorted(set(Fraction(v) for v in values))
    g = Fraction(0)
    for a, b in zip(vs, vs[1:]):
        d = b - a
        if g == 0:
            g = d
        else:  # gcd of two positive rationals: gcd(numerators)/lcm(denominators) after a common base
            den = g.denominator * d.denominator // math.gcd(g.denominator, d.denominator)
            g = Fraction(math.gcd(g.numerator * (den // g.denominator), d.numerator * (den // d.denominator)), den)
    return g


class LossGroup(abc.ABC):
    """One symmetric mechanism kind (see the module docstring)."""

    #: the kind's name in files and diagnostics
    kind: str = ""

    @abc.abstractmethod
    def loss_atoms(self, prec: int) -> tuple:
        """``(values, masses)``: distinct rational loss values (sorted) and their P-masses
        as :class:`flint.arb` balls at ``prec`` bits."""

    def infinite_mass(self, prec: int) -> flint.arb:
        """``P[L = +∞]`` at ``prec`` bits (0 unless the kind says otherwise)."""
        del prec
        return flint.arb(0)

    def deficit(self, prec: int) -> flint.arb:
        """A ball containing the P-mass the atoms leave out (0: the atoms are complete)."""
        del prec
        return flint.arb(0)

    @property
    def has_infinite_mass(self) -> bool:
        return False

    @property
    @abc.abstractmethod
    def loss_values(self) -> tuple:
        """The distinct finite loss values (exact rationals, sorted)."""

    @property
    def lattice_weight(self) -> Fraction:
        """The step of the rational grid of the finite loss values (0: a single value)."""
        return grid_step(self.loss_values)

    @property
    def pure_epsilon(self) -> Fraction | None:
        """The ε of pure ε-DP (the largest finite loss), or None with an infinite mass."""
        return None if self.has_infinite_mass else max(self.loss_values)

    @property
    def rho(self) -> Fraction | None:
        """The exact zCDP ρ where the loss is Gaussian-type (None for these kinds)."""
        return None
