"""What is tuned: the groups of cells, their bounds, the weights and the objective.

A *cell* is one (level, query) of an allocation's base table with a non-zero budget
ρ_lq (its noise variance σ²_lq = 1/ρ_lq on the full chain).  A *group* is the set of
cells one variable acts on: a level, a query, or a single cell (``vary``).  Each group g
gets a rational multiplier m_g on its variances (σ'² = m_g σ², i.e. ρ' = ρ / m_g); the
bounds ``m_lo ≤ m_g ≤ m_hi`` hold for every cell, and ``no_worse`` adds ``m ≤ 1`` on every
cell of every path (:meth:`exactdp.tune.spine.Spine.path_shortfalls`).

Objectives (exact rationals):

* ``variance`` — total weighted noise variance ``Σ_c w_c σ'²_c`` over the base cells,
  weights from a file (:func:`read_weights`) or all 1;
* ``uniform`` — the largest uniform variance reduction: every cell gets one multiplier
  (the special case ``exactdp calibrate`` answers), reported as ``1 − m``.

The continuous proxy of the constraint (every path spends the same total ρ' = Σ_c ρ'_c,
and δ of a composition of fine discrete Gaussians is nearly that of a Gaussian of the
same ρ) gives the water-filling shape of :meth:`Problem.shape`; the exact evaluation
decides (:mod:`exactdp.tune.search`).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from exactdp.census.allocations import Allocation
from exactdp.numerics.exact import InputError, fraction_str, to_fraction
from exactdp.numerics.inputfiles import read_text
from exactdp.tune.spine import Spine

__all__ = ["VARY", "OBJECTIVES", "Problem", "read_weights", "DEFAULT_BOUNDS"]

VARY = ("level", "query", "cell")
OBJECTIVES = ("variance", "uniform")
#: default bounds on a variance multiplier
DEFAULT_BOUNDS = (Fraction(1, 1000), Fraction(1000))


class _TomlFloat(str):
    """A TOML float literal, kept as text so it can be refused with its spelling."""


def read_weights(path, alloc: Allocation) -> dict:
    """Weights of the cells from a TOML file: ``{(level, query): Fraction}``.

    The file has optional tables ``[levels]`` and ``[queries]`` (name = weight) and
    ``[cells.LEVEL]`` (query = weight); a cell's weight is its ``[cells]`` entry if any,
    else its level's weight times its query's weight (each 1 when not given).  Weights
    are exact rationals written as strings (``"1/10"``, ``"0.5"``) or integers, ≥ 0.

    Raises
    ------
    InputError
        Unreadable file, a TOML float, an unknown level or query, a negative weight.

    Notes
    -----
    Method: ``tomllib`` with a float hook that refuses float literals; exact Fractions.
    """
    path = Path(path)
    try:
        doc = tomllib.loads(read_text(path, "--weights"), parse_float=_TomlFloat)  # bounded, special files refused
    except OSError as exc:
        raise InputError("--weights", str(path), f"cannot be read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError("--weights", str(path), f"is not valid TOML: {exc}") from None

    def value(v, field):
        if isinstance(v, _TomlFloat) or isinstance(v, bool) or not isinstance(v, (str, int)):
            raise InputError(f"{path}: {field}", v, 'must be an exact rational written as a string ("1/10", "0.5") '
                                                    'or an integer (a TOML float is inexact)')
        w = to_fraction(v, f"{path}: {field}")
        if w < 0:
            raise InputError(f"{path}: {field}", v, "must be >= 0")
        return w

    def table(key, names):
        t = doc.get(key, {})
        if not isinstance(t, dict):
            raise InputError(f"{path}: {key}", t, "must be a table of name = weight")
        for name in t:
            if name not in names:
                raise InputError(f"{path}: {key}.{name}", t[name], f"unknown name (known: {', '.join(names)})")
        return {n: value(t[n], f"{key}.{n}") for n in t}

    for key in doc:
        if key not in ("levels", "queries", "cells"):
            raise InputError(f"{path}: {key}", doc[key], "unknown key; allowed: levels, queries, cells")
    lw, qw = table("levels", alloc.levels), table("queries", alloc.queries)
    cells = doc.get("cells", {})
    if not isinstance(cells, dict):
        raise InputError(f"{path}: cells", cells, "must be a table of [cells.LEVEL] tables")
    cw = {}
    for lev, row in cells.items():
        if lev not in alloc.levels:
            raise InputError(f"{path}: cells.{lev}", row, f"unknown level (known: {', '.join(alloc.levels)})")
        if not isinstance(row, dict):
            raise InputError(f"{path}: cells.{lev}", row, "must be a table of query = weight")
        for q, v in row.items():
            if q not in alloc.queries:
                raise InputError(f"{path}: cells.{lev}.{q}", v, "unknown query")
            cw[(lev, q)] = value(v, f"cells.{lev}.{q}")
    return {(lev, q): cw.get((lev, q), lw.get(lev, Fraction(1)) * qw.get(q, Fraction(1)))
            for lev in alloc.levels for q in alloc.queries}


@dataclass(frozen=True)
class Problem:
    """One tuning problem (everything exact).

    Parameters
    ----------
    alloc : Allocation
        The input allocation.
    vary : {"level", "query", "cell"}
    objective : {"variance", "uniform"}
    weights : dict, optional
        ``{(level, query): weight}`` (default all 1).
    bounds : (Fraction, Fraction)
        Bounds ``(m_lo, m_hi)`` of every variance multiplier.
    no_worse : bool
        No variance of any cell on any path may exceed the input's.

    Notes
    -----
    Method: exact Fraction bookkeeping of the cells, groups and objective; the proxy
    (:meth:`shape`) is float64 and only proposes designs.  Error bound: none needed (the
    objective is exact).  Reference: the water-filling solution of a separable convex
    objective under one linear constraint (Boyd & Vandenberghe, *Convex Optimization*,
    §5.5.3); the DAS spine rule for the paths (:mod:`exactdp.tune.spine`).
    """

    alloc: Allocation
    vary: str = "level"
    objective: str = "variance"
    weights: dict | None = None
    bounds: tuple = DEFAULT_BOUNDS
    no_worse: bool = False
    # derived in __post_init__ (not arguments; not compared)
    cells: tuple[tuple[int, int], ...] = field(init=False, repr=False, compare=False)
    cell_weights: tuple[Fraction, ...] = field(init=False, repr=False, compare=False)
    spine: Spine = field(init=False, repr=False, compare=False)
    groups: tuple[tuple[str, tuple[int, ...]], ...] = field(init=False, repr=False, compare=False)
    group_of: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.vary not in VARY:
            raise InputError("vary", self.vary, f"must be one of {', '.join(VARY)}")
        if self.objective not in OBJECTIVES:
            raise InputError("objective", self.objective, f"must be one of {', '.join(OBJECTIVES)}")
        lo, hi = (to_fraction(b, "bounds") for b in self.bounds)
        if not 0 < lo <= 1 <= hi:
            raise InputError("bounds", f"{fraction_str(lo)}:{fraction_str(hi)}",
                             "need 0 < lower <= 1 <= upper (the input allocation is a multiplier of 1)")
        if self.no_worse:
            hi = Fraction(1)
        object.__setattr__(self, "bounds", (lo, hi))
        alloc = self.alloc
        cells = tuple((x, q) for x, lev in enumerate(alloc.levels) for q in range(len(alloc.queries))
                      if alloc.base[lev][q] != 0)
        object.__setattr__(self, "cells", cells)
        w = self.weights or {}
        object.__setattr__(self, "cell_weights", tuple(
            Fraction(w.get((alloc.levels[x], alloc.queries[q]), 1)) for x, q in cells))
        if self.objective == "variance" and not any(self.cell_weights):
            raise InputError("weights", "all 0", "at least one measured cell needs a positive weight (with every "
                                                 "weight 0 the objective is 0 for any design)")
        object.__setattr__(self, "spine", Spine.of(alloc))
        key = {"level": lambda c: alloc.levels[c[0]], "query": lambda c: alloc.queries[c[1]],
               "cell": lambda c: f"{alloc.levels[c[0]]}/{alloc.queries[c[1]]}"}[self.vary]
        names: dict = {}
        for k, c in enumerate(cells):
            names.setdefault(key(c), []).append(k)
        object.__setattr__(self, "groups", tuple((n, tuple(ks)) for n, ks in names.items()))
        object.__setattr__(self, "group_of", tuple(next(g for g, (_, ks) in enumerate(self.groups) if k in ks)
                                                   for k in range(len(cells))))

    # -- exact quantities of a design (a base table: level -> per-query ρ) ----------
    def rho(self, design, k: int) -> Fraction:
        x, q = self.cells[k]
        return design[self.alloc.levels[x]][q]

    def input_design(self) -> dict:
        return {lev: tuple(self.alloc.base[lev]) for lev in self.alloc.levels}

    def objective_value(self, design) -> Fraction:
        """Σ_c w_c σ_c² = Σ_c w_c / ρ_c (exact)."""
        return sum((w / self.rho(design, k) for k, w in enumerate(self.cell_weights)), Fraction(0))

    def total_rho(self, design) -> Fraction:
        """What every path spends: Σ_c ρ_c."""
        return sum((self.rho(design, k) for k in range(len(self.cells))), Fraction(0))

    def multipliers(self, design) -> tuple:
        """Variance multiplier σ'²/σ² = ρ/ρ' of every cell (exact)."""
        base = self.input_design()
        return tuple(self.rho(base, k) / self.rho(design, k) for k in range(len(self.cells)))

    def allocation(self, design, *, name=None, description=None, provenance=None) -> Allocation:
        """The allocation of a design: its base table and the paths of the spine rule."""
        a = self.alloc
        return self.spine.rebuild(a, design, name=name or a.name, description=description or a.description,
                                  provenance=dict(provenance if provenance is not None else a.provenance))

    # -- the continuous proxy ------------------------------------------------------------
    def group_sums(self) -> tuple[list[float], list[float]]:
        """Per group: ``V_g = Σ w/ρ`` (its objective at multiplier 1) and ``a_g = Σ ρ``."""
        base = self.input_design()
        V = [0.0] * len(self.groups)
        a = [0.0] * len(self.groups)
        for k, w in enumerate(self.cell_weights):
            g, r = self.group_of[k], self.rho(base, k)
            V[g] += float(w / r)
            a[g] += float(r)
        return V, a

    def r_bounds(self) -> tuple[float, float]:
        """Bounds of a budget multiplier r = 1/m."""
        lo, hi = self.bounds
        return float(1 / hi), float(1 / lo)

    def shape(self, budget: float, costs=None) -> list[float]:
        """Budget multipliers r_g minimising Σ V_g / r_g subject to Σ c_g r_g = budget and
        the bounds (water-filling: r_g = clamp(t·sqrt(V_g/c_g))), ``c`` = ``costs`` or a_g.

        The uniform objective returns one multiplier for all groups.  float64 arithmetic:
        a proposal only (every decision is made on the exact design it is snapped to)."""
        V, a = self.group_sums()
        c = list(costs) if costs is not None else a
        rlo, rhi = self.r_bounds()
        if self.objective == "uniform":
            r = min(max(budget / sum(a), rlo), rhi)
            return [r] * len(V)
        ratio = [math.sqrt(v / cg) if cg > 0 and v > 0 else 0.0 for v, cg in zip(V, c)]

        def at(t):
            return [rhi if cg <= 0 else min(max(t * x, rlo), rhi) for x, cg in zip(ratio, c)]

        def spent(t):
            return sum(cg * r for cg, r in zip(c, at(t)))

        lo_t, hi_t = 0.0, 1.0
        while spent(hi_t) < budget and hi_t < 1e300:
            hi_t *= 2
        for _ in range(200):
            mid = (lo_t + hi_t) / 2
            if spent(mid) < budget:
                lo_t = mid
            else:
                hi_t = mid
        return at(hi_t)
