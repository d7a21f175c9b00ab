"""From a proposal (one float multiplier per group) to an exact design on a small lattice.

The exact engine's cost grows with the integer lattice of each pair's privacy-loss
weights, i.e. with the common denominator of the pair's ρ *relative to one another* (a
common factor is free).  Every design the tuner evaluates therefore lies on a grid:

* ``level`` groups (and the uniform objective): a level keeps its own proportions and its
  multiplier is a multiple of ``1/(Q·G_l)`` (``G_l`` the gcd of the level's ρ, ``Q`` the
  cell quantum), so every cell stays in ``Z/Q`` and every path's receiving row in
  ``Z/(den(share)·Q)`` — the lattice of the input allocation, at most ``Q/Q_input`` finer;
* ``query`` or ``cell`` groups on an allocation without receiving levels: every cell
  rounded to ``Z/Q``;
* ``query`` or ``cell`` groups when some path carries another level's budget: the spine
  rule multiplies a row by ``Σ T'/T'_l``, whose denominator is the level total's
  numerator — arbitrary for free cells.  Each level's total is rounded to a multiple of
  ``total_quantum`` (``1/Q_T``) and its proportions to ``Z/M`` (equal proportions kept
  equal, each ≥ 1/M), so every path's cell lies in ``Z/(M·Q_T)``.

The design evaluated is exactly the design reported: nothing is ever certified through a
neighbouring design (δ is not monotone in a discrete Gaussian's variance, see
``docs/tune.rst``).  Bounds and ``no_worse`` are checked on the exact design; a cell that
rounding pushed out of them moves its group back (the whole group: a group keeps one
multiplier up to rounding) by up to :data:`REPAIR_ROUNDS` re-snaps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from exactdp.tune.problem import Problem

__all__ = ["Grid", "default_grid", "REPAIR_ROUNDS", "CLASS_MOVE"]

#: re-snaps allowed to move cells back inside their bounds
REPAIR_ROUNDS = 12
#: how far (in units of 1/M) a class of equal proportions may move from its nearest value
CLASS_MOVE = 6


def _gcd(values) -> Fraction:
    vals = [Fraction(v) for v in values if v]
    den = math.lcm(*(v.denominator for v in vals))
    return Fraction(math.gcd(*(v.numerator * (den // v.denominator) for v in vals)), den)


def _nearest(x: Fraction, step: Fraction, lo: Fraction, hi: Fraction) -> Fraction | None:
    """The multiple of ``step`` nearest to ``x`` inside ``[lo, hi]`` (ties up), or None."""
    n = math.floor(x / step + Fraction(1, 2))
    n = min(max(n, math.ceil(lo / step)), math.floor(hi / step))
    if n * step < lo or n * step > hi or n <= 0:
        return None
    return n * step


def _class_rounding(parts, den: int) -> list[int] | None:
    """Integers ``n_c ≥ 1``, equal for equal parts, with ``Σ n_c = den`` and the least total
    error ``Σ |n_c − den·p_c|``: each class of equal parts starts at the nearest integer and
    moves by at most :data:`CLASS_MOVE` (a small knapsack over the classes); None when no
    such move reaches ``den``."""
    classes: dict = {}
    for c, p in enumerate(parts):
        classes.setdefault(p, []).append(c)
    keys = list(classes)
    base = {p: max(1, math.floor(p * den + Fraction(1, 2))) for p in keys}
    left = den - sum(base[p] * len(classes[p]) for p in keys)
    best: dict[int, tuple[Fraction, tuple[int, ...]]] = {0: (Fraction(0), ())}  # reached sum -> (error, moves)
    for p in keys:
        m, x = len(classes[p]), p * den
        nxt: dict[int, tuple[Fraction, tuple[int, ...]]] = {}
        for reached, (err, moves) in best.items():
            for d in range(-CLASS_MOVE, CLASS_MOVE + 1):
                if base[p] + d < 1:
                    continue
                key = reached + d * m
                e = err + m * (abs(x - base[p] - d) - abs(x - base[p]))
                if key not in nxt or e < nxt[key][0]:
                    nxt[key] = (e, moves + (d,))
        best = nxt
    if left not in best:
        return None
    n = [0] * len(parts)
    for p, d in zip(keys, best[left][1]):
        for c in classes[p]:
            n[c] = base[p] + d
    return n


def _largest_remainder(parts, den: int) -> list[int]:
    """Integers ``n_c ≥ 1`` with ``Σ n_c = den``, ``n_c/den`` close to ``parts`` (which sum to
    1): by :func:`_class_rounding` (equal cells stay equal, so a row keeps as few distinct ρ
    as it had: smaller lattices), else by the largest-remainder rule cell by cell (ties to
    the earlier cell)."""
    n = _class_rounding(parts, den)
    if n is not None:
        return n
    raw = [p * den for p in parts]
    n = [max(1, math.floor(x)) for x in raw]
    order = sorted(range(len(raw)), key=lambda c: (-(raw[c] - n[c]), c))
    k = 0
    while sum(n) < den:
        n[order[k % len(order)]] += 1
        k += 1
    while sum(n) > den:
        c = max((c for c in range(len(n)) if n[c] > 1), key=lambda c: (n[c] - raw[c], -c))
        n[c] -= 1
    return n


@dataclass(frozen=True)
class Grid:
    """The lattice-friendly grid of designs.

    Attributes
    ----------
    quantum : Fraction
        ``1/Q``: every base cell (and every level total) is a multiple of it.
    share_den : int
        ``M``: level proportions are multiples of ``1/M`` when they change on an
        allocation with receiving levels.
    total_quantum : Fraction, optional
        ``1/Q_T``: the level totals of those levels are multiples of it (default
        ``quantum``).

    Notes
    -----
    Method: exact rounding of a float proposal (module notes); every design returned is
    exact and is the design evaluated and reported.  Error bound: none (exact).
    Reference: the lattice of :mod:`exactdp.engine.lattice` (its size is what the grid
    keeps small).
    """

    quantum: Fraction
    share_den: int
    total_quantum: Fraction | None = None

    def as_text(self) -> str:
        text = f"cells in Z*{self.quantum}"
        if self.share_den == 1:
            return text
        return (f"{text}; where level proportions change: level totals in Z*{self.total_quantum or self.quantum}, "
                f"proportions in Z/{self.share_den}")

    def snap(self, problem: Problem, r_groups) -> dict | None:
        """The exact design nearest to budget multipliers ``r_groups`` (one per group,
        floats or Fractions) inside the bounds, or None when rounding cannot keep a cell
        inside them."""
        r = [Fraction(x) for x in r_groups]
        for _ in range(REPAIR_ROUNDS):
            design = self._round(problem, [r[problem.group_of[k]] for k in range(len(problem.cells))])
            if design is None:
                return None
            fix = self.violations(problem, design)
            if not fix:
                return design
            # a group moves as one (its cells keep one multiplier): by the largest factor its
            # cells need upwards, else by the smallest downwards
            moves: dict = {}
            for k, factor in fix.items():
                g = problem.group_of[k]
                old = moves.get(g, factor)
                moves[g] = max(old, factor) if max(old, factor) > 1 else min(old, factor)
            for g, factor in moves.items():
                r[g] *= factor
        return None

    # -- rounding -----------------------------------------------------------------------
    def _round(self, problem: Problem, r_cells) -> dict | None:
        alloc = problem.alloc
        base = problem.input_design()
        rlo, rhi = (1 / problem.bounds[1], 1 / problem.bounds[0])
        out = {lev: list(base[lev]) for lev in alloc.levels}
        by_level: dict = {}
        for k, (x, q) in enumerate(problem.cells):
            by_level.setdefault(x, []).append((k, q))
        for x, members in by_level.items():
            lev = alloc.levels[x]
            rs = [r_cells[k] for k, _ in members]
            if problem.vary == "level" or problem.objective == "uniform" or len(set(rs)) == 1:
                step = self.quantum / _gcd(base[lev][q] for _, q in members)
                r = _nearest(rs[0], step, rlo, rhi)
                if r is None:
                    return None
                for _, q in members:
                    out[lev][q] = base[lev][q] * r
            elif not problem.spine.has_receivers:
                for (_, q), r in zip(members, rs):
                    v = _nearest(base[lev][q] * r, self.quantum, base[lev][q] * rlo, base[lev][q] * rhi)
                    if v is None:
                        return None
                    out[lev][q] = v
            else:
                raw = [base[lev][q] * r for (_, q), r in zip(members, rs)]
                total = sum(raw, Fraction(0))
                tq = self.total_quantum or self.quantum
                t = max(tq, tq * math.floor(total / tq + Fraction(1, 2)))
                n = _largest_remainder([v / total for v in raw], self.share_den)
                for (_, q), nc in zip(members, n):
                    out[lev][q] = t * Fraction(nc, self.share_den)
        return {lev: tuple(v) for lev, v in out.items()}

    def violations(self, problem: Problem, design) -> dict:
        """``{cell: factor}`` moving each cell that left its bounds (on the full chain, or,
        with ``no_worse``, on some path) back towards them."""
        lo, hi = problem.bounds
        fix = {}
        for k, m in enumerate(problem.multipliers(design)):
            if m > hi:
                fix[k] = m / hi * Fraction(1001, 1000)
            elif m < lo:
                fix[k] = m / lo * Fraction(999, 1000)
        if problem.no_worse and problem.spine.has_receivers and not fix:
            index = {c: k for k, c in enumerate(problem.cells)}
            for cell, ratio in problem.spine.least_ratios(problem.alloc, design).items():
                fix[index[cell]] = 1 / ratio * Fraction(1001, 1000)
        return fix


def default_grid(problem: Problem, refine: int = 1) -> Grid:
    """The default grid.

    ``Q`` = the common denominator of the input's cells times ``refine`` (times 100 more
    for a single neighbour pair, whose one lattice is cheap: a cell of 3e-4 then moves in
    steps of 0.3 %, and the pair's lattice stays within the Arb certificate's reach).

    Where some path carries another level's budget: ``M`` = the smallest multiple of the
    common denominator ``L`` of the input's proportions within each level that is ≥
    1000·refine (the input's proportions lie on the grid: a row whose cells move together
    keeps them; for DHC persons ``M = L = 1040``; a common ``M = 1000`` would multiply the
    lattices by 13), and level totals in ``Z·10·quantum`` when every level total spans at
    least 10 of those steps (DHC persons: ``Z/1000``; every path's cell then lies in
    ``Z/(1.04e6)``, the scale of the input's own finest pair, which the Arb certificate
    encloses: with ``Z/10⁴`` its coarse pairs (6-6) are beyond it).  Rounding a total by up
    to half a step moves the objective by second order only (the proxy is at an optimum
    along the constraint)."""
    base = problem.input_design()
    den = math.lcm(*(problem.rho(base, k).denominator for k in range(len(problem.cells))))
    quantum = Fraction(1, den * refine)
    share_den, total_quantum = 1, None  # proportions matter only where a path carries another level
    if problem.spine.has_receivers:
        lcm = math.lcm(*(v.denominator for row in base.values() if sum(row) for v in (x / sum(row) for x in row)))
        share_den = lcm * max(1, -(-1000 * refine // lcm))
        smallest = min(sum(row) for row in base.values() if sum(row))
        total_quantum = 10 * quantum if smallest >= 100 * quantum else quantum
    if problem.alloc.n_paths == 1 and problem.vary != "level":
        quantum /= 100
    return Grid(quantum, share_den, total_quantum)
