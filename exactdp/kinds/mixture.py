"""A design that mixes mechanism kinds: discrete Gaussians beside the loss-group kinds."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction

from exactdp.kinds.gaussian import Gaussian
from exactdp.kinds.laplace import Laplace
from exactdp.kinds.protocol import LossGroup
from exactdp.mechanisms import Composition, DiscreteGaussian, count_groups
from exactdp.numerics.exact import InputError, as_sequence

__all__ = ["Mixture"]


def _key(mech) -> tuple:
    return (type(mech).__name__, mech)


@dataclass(frozen=True)
class Mixture:
    """A multiset of mechanisms of any kind (discrete Gaussians, :class:`DiscreteLaplace`,
    :class:`RandomizedResponse`, :class:`ApproxDP`, ...), grouped by identical parameters.

    Build it from ``(mechanism, count)`` pairs, ``Mixture(((DiscreteLaplace("5/2"), 3),
    (DiscreteGaussian(4), 2)))``, from mechanisms each once (:meth:`of`), or from a
    :class:`~exactdp.Composition` and more groups (:meth:`with_gaussians`).

    Attributes
    ----------
    groups : tuple of (mechanism, int)
        Distinct mechanisms and their multiplicities (order is irrelevant to privacy).
    """

    groups: tuple = field(default=())

    def __post_init__(self):
        counts = count_groups(self.groups, (DiscreteGaussian, LossGroup, Gaussian, Laplace), "mechanism",
                              "expected a DiscreteGaussian, DiscreteLaplace, RandomizedResponse, ApproxDP, Gaussian or "
                              "Laplace")
        grouped = tuple(sorted(((m, c) for m, c in counts.items() if c > 0), key=lambda mc: _key(mc[0])))
        if not grouped:
            raise InputError("mechanisms", list(self.groups), "a design needs at least one mechanism")
        object.__setattr__(self, "groups", grouped)

    @classmethod
    def of(cls, mechanisms: Iterable) -> Mixture:
        """The mixture of the given mechanisms (each once)."""
        return cls(tuple((m, 1) for m in as_sequence(mechanisms, "mechanisms")))

    @classmethod
    def with_gaussians(cls, composition: Composition | None, groups: Iterable = ()) -> Mixture:
        """A :class:`~exactdp.Composition` of discrete Gaussians beside more ``(mechanism,
        count)`` groups."""
        base = () if composition is None else tuple(composition.groups)
        return cls(base + tuple(as_sequence(groups, "groups")))

    @property
    def gaussians(self) -> Composition | None:
        """The discrete-Gaussian part (None when there is none)."""
        dg = tuple((m, c) for m, c in self.groups if isinstance(m, DiscreteGaussian))
        return Composition(dg) if dg else None

    @property
    def others(self) -> tuple:
        """The ``(kind, count)`` groups with a finite loss (not Gaussian of either kind)."""
        return tuple((m, c) for m, c in self.groups if isinstance(m, LossGroup))

    @property
    def continuous(self) -> tuple:
        """The ``(Gaussian, count)`` groups (continuous Gaussians)."""
        return tuple((m, c) for m, c in self.groups if isinstance(m, Gaussian))

    @property
    def laplaces(self) -> tuple:
        """The ``(Laplace, count)`` groups (continuous Laplaces)."""
        return tuple((m, c) for m, c in self.groups if isinstance(m, Laplace))

    @property
    def size(self) -> int:
        """Number of mechanisms composed."""
        return sum(c for _, c in self.groups)

    @property
    def pure_epsilon(self) -> Fraction | None:
        """The ε of pure ε-DP by basic composition when every part is pure (no discrete
        Gaussian, no δ > 0), else None (a bound, not the exact profile)."""
        if self.gaussians is not None or self.continuous:
            return None
        pure = self.others + self.laplaces
        eps = [m.pure_epsilon for m, _ in pure]
        if any(e is None for e in eps):
            return None
        return sum((e * c for e, (_, c) in zip(eps, pure)), Fraction(0))

    def __add__(self, other) -> Mixture:
        if isinstance(other, Composition):
            return Mixture(self.groups + other.groups)
        if isinstance(other, Mixture):
            return Mixture(self.groups + other.groups)
        return NotImplemented

    __radd__ = __add__
