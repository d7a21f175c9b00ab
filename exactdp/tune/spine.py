"""The spine rule of an allocation's paths: how a changed base table changes every path.

An allocation file stores a base table of per-query zCDP budgets ρ_lq and, per path, one
multiplier per level.  The multipliers come from the DAS spine optimiser
(``optimize_spine.py::bypass_geounit``): a bypassed geounit's budget is *added to the
neighbouring level of the same chain* and its own multiplier becomes 0; the receiving
level's queries share the sum in that level's own proportions.  On path k the receiving
level l therefore has the multiplier

    m_kl = (Σ_{y ∈ A_kl} T_y) / T_l,        T_y = Σ_q ρ_yq  (level totals),

where ``A_kl`` is l together with the levels it absorbed.  :class:`Spine` recovers every
``A_kl`` from the file (exact Fractions: each zero run of a path is split between the
nearest non-zero levels above and below, and the split must reproduce every multiplier;
exactly one split may do so) and :meth:`Spine.rebuild` applies the same rule to a tuned
base table, so that every path of the tuned allocation again spends the same total ρ
(``Σ_y T'_y``) and the result is a valid ``exactdp-allocation/1`` allocation.

A tuned table whose variances all shrink (``ρ'_lq ≥ ρ_lq``) never raises a variance on
any path when the level's proportions are kept (``ρ'_klq = s_lq Σ_{A} T'_y ≥ s_lq Σ_A T_y``);
when proportions change, :meth:`Spine.path_shortfalls` says which cells of which paths
lost budget (the ``--no-worse`` check on every path, not only on the full chain).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

from exactdp.census.allocations import Allocation
from exactdp.numerics.exact import InputError, fraction_str

__all__ = ["Spine"]


def _zero_runs(mult, totals) -> list[tuple[int, int]]:
    """Maximal runs ``(a, b)`` of levels with multiplier 0 and a non-zero total (levels
    without budget are transparent: they neither absorb nor break a run)."""
    runs, start = [], None
    for x, (m, t) in enumerate(zip(mult, totals)):
        if t == 0:
            continue
        if m == 0:
            start = x if start is None else start
            end = x
        elif start is not None:
            runs.append((start, end))
            start = None
    if start is not None:
        runs.append((start, end))
    return runs


def _splits(run, nonzero, totals):
    """Every assignment of the run's levels: a prefix to the nearest non-zero level above,
    the rest to the nearest below (both must exist for their part)."""
    a, b = run
    up = max((x for x in nonzero if x < a), default=None)
    down = min((x for x in nonzero if x > b), default=None)
    members = [x for x in range(a, b + 1) if totals[x] != 0]
    out = []
    for cut in range(len(members) + 1):
        head, tail = members[:cut], members[cut:]
        if (head and up is None) or (tail and down is None):
            continue
        out.append([(x, up) for x in head] + [(x, down) for x in tail])
    return out


@dataclass(frozen=True)
class Spine:
    """Which levels each path's receiving levels absorbed (the spine rule, recovered).

    Attributes
    ----------
    levels : tuple of str
    absorbed : tuple of tuple of (int, tuple of int)
        Per path (1-based order): ``(l, A_kl)`` for every non-zero level ``l`` with a
        budget, ``A_kl`` the levels (l first) whose totals it carries.
    kept : tuple of tuple of (int, Fraction)
        Per path: levels without budget (total 0) and their multiplier, copied as is.

    Notes
    -----
    Method: exact Fraction arithmetic; the split of each zero run is found by
    enumeration (at most ``Π (run length + 1)`` candidates per path).  Reference: DAS
    ``programs/geographic_spines/optimize_spine.py::bypass_geounit`` ("the PLB of the
    bypassed level is added to the neighbouring level on the same chain").
    """

    levels: tuple
    absorbed: tuple
    kept: tuple

    @classmethod
    def of(cls, alloc: Allocation) -> Spine:
        """Recover the spine rule of ``alloc``.

        Raises
        ------
        InputError
            A path whose multipliers are not sums of neighbouring level totals, or
            admit two different readings.
        """
        totals = [sum(alloc.base[lev], Fraction(0)) for lev in alloc.levels]
        absorbed, kept = [], []
        for k, mult in enumerate(alloc.paths, start=1):
            nonzero = [x for x, m in enumerate(mult) if m != 0 and totals[x] != 0]
            options = [_splits(run, nonzero, totals) for run in _zero_runs(mult, totals)]
            found = []
            for combo in itertools.product(*options):
                recv = {x: [x] for x in nonzero}
                for assign in combo:
                    for x, to in assign:
                        recv[to].append(x)
                if all(mult[x] * totals[x] == sum(totals[y] for y in recv[x]) for x in nonzero):
                    found.append(tuple((x, tuple(recv[x])) for x in nonzero))
            if len(found) != 1:
                why = ("no split of its bypassed levels between their non-zero neighbours reproduces its multipliers"
                       if not found else "two splits of its bypassed levels reproduce its multipliers")
                raise InputError(f"paths.{k}", "[" + ", ".join(fraction_str(m) for m in mult) + "]",
                                 f"tuning rebuilds every path by the spine rule (a bypassed level's budget "
                                 f"goes to a neighbouring level of the same chain), but {why}")
            absorbed.append(found[0])
            kept.append(tuple((x, m) for x, m in enumerate(mult) if totals[x] == 0))
        return cls(tuple(alloc.levels), tuple(absorbed), tuple(kept))

    @property
    def has_receivers(self) -> bool:
        """Whether some path carries another level's budget (proportions then matter)."""
        return any(len(a) > 1 for path in self.absorbed for _, a in path)

    def multipliers(self, totals) -> tuple:
        """Per-path level multipliers for level totals ``totals`` (exact)."""
        out = []
        for absorbed, kept in zip(self.absorbed, self.kept):
            m = [Fraction(0)] * len(self.levels)
            for x, ys in absorbed:
                m[x] = sum((totals[y] for y in ys), Fraction(0)) / totals[x]
            for x, v in kept:
                m[x] = v
            out.append(tuple(m))
        return tuple(out)

    def _totals(self, base: dict) -> list:
        """Level totals ``T'_l`` of a base table (refused when a level that carries budget
        on some path is emptied)."""
        totals = [sum(base[lev], Fraction(0)) for lev in self.levels]
        for path in self.absorbed:
            for x, _ in path:
                if totals[x] == 0:
                    raise InputError(f"base.{self.levels[x]}", "0",
                                     "a level that carries budget on some path cannot be emptied")
        return totals

    def rebuild(self, alloc: Allocation, base: dict, *, name: str, description: str,
                provenance: dict) -> Allocation:
        """The allocation with base table ``base`` (level → per-query ρ) and the paths the
        spine rule gives for it (every path spends ``Σ_l T'_l``)."""
        totals = self._totals(base)
        return Allocation(name, description, provenance, alloc.levels, alloc.queries, base,
                          self.multipliers(totals))

    def least_ratios(self, before: Allocation, base: dict) -> dict[tuple[int, int], Fraction]:
        """Per cell that lost budget on some path of the rebuilt allocation with base table
        ``base``: ``{(level index, query index): min_k ρ'_klq/ρ_klq}`` (< 1), the least
        ratio of :meth:`path_shortfalls` over the paths, keyed in level then query order.

        ``ρ'_klq/ρ_klq = (m'_kl/m_kl)·(ρ'_lq/ρ_lq)`` (m the path multipliers; cells with
        ``ρ_klq = 0`` never lose budget), so the least ratio of a cell is its level's least
        multiplier ratio times its own ratio: one exact product per cell instead of a
        comparison per (path, cell).  The same exact values as :meth:`path_shortfalls` on
        :meth:`rebuild`'s allocation (and the same refusal of an emptied level)."""
        new = self.multipliers(self._totals(base))
        out: dict = {}
        for x, lev in enumerate(self.levels):
            least = None
            for old_m, new_m in zip(before.paths, new):
                if old_m[x] != 0:
                    c = new_m[x] / old_m[x]
                    if least is None or c < least:
                        least = c
            if least is None:
                continue
            for q, (a, b) in enumerate(zip(before.base[lev], base[lev])):
                if a != 0:
                    ratio = least * (b / a)
                    if ratio < 1:
                        out[x, q] = ratio
        return out

    def path_shortfalls(self, before: Allocation, after: Allocation) -> list[tuple[int, str, int, Fraction]]:
        """Cells whose budget shrank on some path: ``(path, level, query index, ρ_after/ρ_before)``
        for every path and cell with ``ρ_after < ρ_before`` (a variance that grew)."""
        out = []
        for k in range(1, before.n_paths + 1):
            old, new = before.path_table(k), after.path_table(k)
            for lev in self.levels:
                for q, (a, b) in enumerate(zip(old[lev], new[lev])):
                    if b < a:
                        out.append((k, lev, q, b / a))
        return out
