"""Mechanisms and compositions (exact parameters, frozen dataclasses).

A :class:`DiscreteGaussian` is the additive mechanism ``x + N_Z(0, sigma2)`` applied to a
query whose value differs between the neighbouring datasets by the integer ``shift``.
A :class:`Composition` is a multiset of such mechanisms, stored grouped by identical
parameters.  For the pair of output distributions

    P = ⊗ N_Z(0, σ_i²)      Q = ⊗ N_Z(Δ_i, σ_i²)

the privacy-loss variable is ``ℓ(x) = c − Σ w_i x_i`` with ``w_i = Δ_i/σ_i²`` and
``c = Σ Δ_i²/(2σ_i²)`` (= the zCDP parameter ρ of the composition).  Because each
N_Z(0, σ²) is symmetric, ``ℓ`` is distributed as ``c + W`` under P and ``−c + W`` under Q,
with ``W = Σ w_i X_i``; the reflection ``x ↦ Δ − x`` swaps P and Q, so both directions of
the hockey-stick divergence coincide (the library still exposes both).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction

from exactdp.dgauss.conventions import variance
from exactdp.numerics.exact import InputError, as_sequence, positive_fraction, to_fraction, to_int

__all__ = ["DiscreteGaussian", "Composition", "count_groups", "MAX_COUNT", "MAX_SHIFT"]

#: the largest multiplicity of one mechanism and the largest |shift| (the engine's tested envelope,
#: README "What can be refused"): beyond them a design is refused naming the field
MAX_COUNT = 10**9
MAX_SHIFT = 10**12


@dataclass(frozen=True, order=True)
class DiscreteGaussian:
    """One discrete Gaussian mechanism N_Z(shift·b, sigma2), b ∈ {0, 1} the neighbour bit.

    Parameters
    ----------
    sigma2 : Fraction-like
        The variance parameter σ² > 0 of ``Pr[X = x] ∝ exp(−x²/(2σ²))`` (exact rational).
    shift : int
        The integer change of the query between neighbours (sensitivity), default 1.
    """

    sigma2: Fraction
    shift: int = 1

    def __post_init__(self):
        object.__setattr__(self, "sigma2", positive_fraction(self.sigma2, "sigma2"))
        shift = to_int(self.shift, "shift")
        if abs(shift) > MAX_SHIFT:
            raise InputError("shift", shift, "|shift| > 1e12 is beyond the envelope exactdp is sized for "
                                             "(|shift| ≤ 1e12); rescale the design")
        object.__setattr__(self, "shift", shift)

    @property
    def rho(self) -> Fraction:
        """zCDP parameter Δ²/(2σ²) of the mechanism."""
        return Fraction(self.shift**2) / (2 * self.sigma2)

    @property
    def weight(self) -> Fraction:
        """|Δ|/σ²: the weight of this mechanism's noise in the privacy loss."""
        return Fraction(abs(self.shift)) / self.sigma2


@dataclass(frozen=True)
class Composition:
    """A multiset of discrete Gaussian mechanisms, grouped by identical parameters.

    Use the constructors :meth:`of`, :meth:`from_sigma2` or :meth:`from_rhos`.

    Attributes
    ----------
    groups : tuple of (DiscreteGaussian, int)
        Distinct mechanisms and their multiplicities, sorted (order of composition is
        irrelevant to every privacy quantity).
    """

    groups: tuple = field(default=())

    def __post_init__(self):
        counts = count_groups(self.groups, DiscreteGaussian, "DiscreteGaussian", "expected a DiscreteGaussian")
        grouped = tuple(sorted((m, c) for m, c in counts.items() if c > 0))
        if not grouped:
            raise InputError("mechanisms", list(self.groups), "a composition needs at least one mechanism")
        object.__setattr__(self, "groups", grouped)

    # -- constructors -------------------------------------------------------------
    @classmethod
    def of(cls, mechanisms: Iterable[DiscreteGaussian]) -> Composition:
        """The composition of the given mechanisms (each once)."""
        return cls(tuple((m, 1) for m in as_sequence(mechanisms, "mechanisms")))

    @classmethod
    def from_sigma2(cls, sigma2s: Iterable, shift: int = 1) -> Composition:
        """Mechanisms with the given variances σ² and a common shift (a sequence: a lone
        string such as ``"25"`` is refused, not read as ``["2", "5"]``)."""
        return cls.of(DiscreteGaussian(to_fraction(s, "sigma2"), shift) for s in as_sequence(sigma2s, "sigma2s"))

    @classmethod
    def from_rhos(cls, rhos: Iterable) -> Composition:
        """Census convention: per-query zCDP ρ_q with σ_q² = 1/ρ_q and unit shifts.

        (Under change-one-record neighbours the histogram moves −1 and +1 in two cells;
        the DAS accounts ρ_q = 2/(2σ²) for that pair of cells, i.e. one unit-shift
        mechanism of variance 1/ρ_q per query and per moved cell: the ``"production"``
        convention of :mod:`exactdp.dgauss.conventions`.)  ``rhos`` is a sequence: a lone
        string such as ``"12"`` is refused, not read as ``["1", "2"]``.
        """
        counts: dict = {}  # (p, q) of each ρ > 0 → [ρ, count], in order of first appearance
        for r in rhos if isinstance(rhos, (tuple, list)) else as_sequence(rhos, "rhos"):
            if type(r) is not Fraction:
                r = to_fraction(r, "rho")
            p = r.numerator
            if p < 0:
                raise InputError("rho", r, "must be >= 0")
            if p:
                key = (p, r.denominator)  # a normalised Fraction: equal values, equal keys
                got = counts.get(key)
                if got is None:
                    counts[key] = [r, 1]
                else:
                    got[1] += 1
        return cls(tuple((DiscreteGaussian(variance(r, "production"), 1), c) for r, c in counts.values()))

    # -- properties -----------------------------------------------------------------
    @property
    def size(self) -> int:
        """Number of mechanisms composed."""
        return sum(c for _, c in self.groups)

    @property
    def rho(self) -> Fraction:
        """zCDP parameter Σ Δ²/(2σ²) (also the constant c of the privacy loss).

        Exact: ``Σ c·Δ²·q/(2p)`` (σ² = p/q) over one common denominator, normalised once
        (the same Fraction as summing the groups' ρ); computed once per composition (kept
        beside the fields, not one of them: equality, hash and repr are the fields')."""
        d = self.__dict__
        v = d.get("_rho")
        if v is None:
            terms = [(c * m.shift * m.shift * m.sigma2.denominator, 2 * m.sigma2.numerator) for m, c in self.groups]
            den = math.lcm(*(b for _, b in terms)) if terms else 1
            v = d["_rho"] = Fraction(sum(a * (den // b) for a, b in terms), den)
        return v

    def __add__(self, other: Composition) -> Composition:
        return Composition(self.groups + other.groups)

    def reversed(self) -> Composition:
        """The composition with all shifts negated (the pair (Q, P))."""
        return Composition(tuple((DiscreteGaussian(m.sigma2, -m.shift), c) for m, c in self.groups))


def count_groups(groups, kinds, pair_name: str, kind_message: str) -> Counter:
    """The multiplicity of every mechanism in ``groups`` (pairs ``(mechanism, count)``, equal
    mechanisms merged), each mechanism an instance of ``kinds`` and every count an integer in
    [0, 1e9]; a bad item raises :class:`InputError` naming the field (``pair_name`` names the
    mechanism in the pair's message, ``kind_message`` is the message for another type)."""
    counts: Counter = Counter()
    if isinstance(groups, (str, bytes)) or not isinstance(groups, Iterable):
        raise InputError("groups", groups, f"expected a sequence of ({pair_name}, count) pairs")
    for item in groups:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise InputError("groups", item, f"each group must be a pair ({pair_name}, count)")
        mech, count = item
        if not isinstance(mech, kinds):
            raise InputError("mechanism", mech, kind_message)
        count = to_int(count, "count")
        if count < 0:
            raise InputError("count", count, "must be >= 0")
        counts[mech] += count
        if counts[mech] > MAX_COUNT:
            raise InputError("count", counts[mech], "a mechanism repeated more than 1e9 times is beyond the "
                                                    "envelope exactdp is sized for (counts ≤ 1e9)")
    return counts
