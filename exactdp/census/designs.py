"""Compositions named by an allocation and a neighbour pair of paths.

A record change moves −1 along path ``i`` and +1 along path ``j`` of an allocation, so
the neighbour case ``(i, j)`` is the composition of every discrete Gaussian mechanism of
both paths (σ_q² = 1/ρ_q, unit shifts).  The whole-release case composes that with the
P.L. 94-171 persons full chain, whose pair is ``(1, 1)`` (the record may change its
attributes on the one PL path).
"""

from __future__ import annotations

from exactdp.census.allocations import load_allocation
from exactdp.mechanisms import Composition

__all__ = ["composition_for_allocation", "release_composition", "PL94_ALLOCATION"]

#: The built-in P.L. 94-171 persons allocation (one path: the full chain).
PL94_ALLOCATION = "pl94-persons-2020"


def composition_for_allocation(name, i: int, j: int) -> Composition:
    """The composition of neighbour case ``(i, j)`` of an allocation.

    Parameters
    ----------
    name : str, path or Allocation
        A built-in allocation name (e.g. ``"dhc-persons-2020"``) or an allocation file.
    i, j : int
        Path numbers (1-based); the record leaves path ``i`` and joins path ``j``.

    Returns
    -------
    Composition
        ``Composition.from_rhos(allocation.pair_rhos(i, j))``; its zCDP ρ equals the
        allocation's total ρ.

    Raises
    ------
    InputError
        Unknown allocation or a path number out of range.

    Notes
    -----
    Method: exact rational bookkeeping only (no error bound needed).  Reference: the
    DAS production code (σ_q² = 1/ρ_q per query, change-one-record neighbours) and Su,
    Su & Wang, exact privacy accounting for the 2020 U.S. Census (the 946 pairs).
    """
    alloc = load_allocation(name)
    return Composition.from_rhos(alloc.pair_rhos(i, j))


def release_composition(name, i: int, j: int, pl94=PL94_ALLOCATION) -> Composition:
    """Neighbour case ``(i, j)`` of ``name`` composed with the P.L. 94-171 full chain.

    A person's record feeds both the P.L. 94-171 persons tables and the DHC persons
    tables, so one record change costs both.  The result's ρ is the sum of the two
    files' ρ (the Bureau's accounting of the release).

    Notes
    -----
    Method: concatenation of the two mechanism multisets (exact).  Reference: DAS
    production configurations for the P.L. 94-171 and DHC persons files.
    """
    pl = load_allocation(pl94)
    return composition_for_allocation(name, i, j) + Composition.from_rhos(pl.pair_rhos(1, 1))
