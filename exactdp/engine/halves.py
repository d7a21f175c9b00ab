"""The privacy profile of a design of few clumpy groups: both halves enumerated (meet in the middle).

A design of a few groups of small or moderate σ² (eight distinct variances near 3, say) has a
privacy-loss distribution made of ~10¹² incommensurate atoms: its characteristic function never
decays (each factor stays above ``e^{−π²σ²/2}``), so the smoothed inversion needs millions of
nodes, and no split into a coarse part and a smooth rest exists.  Its atoms, though, split
into two halves ``W = A + B`` of a million atoms each, and

    δ(θ) = Σ_a P(A = a)·D_B(θ − a),   1 − δ(θ) = Σ_a P(A = a)·C_B(θ − a),

with ``D_B``, ``C_B`` of B's atoms from sorted compensated prefix/suffix tables
(:func:`exactdp.kernels.half_sums.half_tables`).  All thresholds of a query are summed in one
kernel call (:func:`exactdp.kernels.half_sums.block_sums`): A's atoms in blocks (a tile of
values × a shell of probability), each block's contribution bounded from B's tables, the
blocks taken largest bound first until the rest is below :data:`SKIP_REL` of the sum (their
bounds added to the upper end), so a threshold costs about the atoms that matter to it.
Both enumerations (:func:`exactdp.engine.coarse_split.coarse_atoms`) list the atoms above
``e^{−depth}`` (an ellipsoid, not the box of per-group truncations), with every probability
a certified lower bound within its log error and the mass left out bounded: a pair with an
omitted atom on either side adds at most ``ω_A + ω_B`` to δ (and to 1 − δ), added to the
upper ends.  Levels are enumerated to :data:`DEPTHS` nats, a deeper one built only for the
thresholds whose lower end is not far above the shallower one's omitted mass; a threshold
still wider than :data:`GROUPED_REL` there (the deeper depths too large to build) is summed at
the grouped tilted levels below where they fit (ten σ² near 0.54 with counts 1–3: δ at 1e-30
was 1.5e-7 relative wide, ε(1e-30) 4.8e-9, ε(1e-60) refused; now ≤ 1.5e-10).

Where every group is one mechanism (σ² ≥ 1/4), the levels are *tilted* instead
(:mod:`exactdp.engine.tilted_atoms`): each half listed in the ellipsoid of :data:`TILT_DEPTH`
nats about the mode of ``p·e^{λa}``, λ on a ladder of step :func:`tilt_step`, what is left out
bounded per threshold (Chernoff); a threshold is summed at the nearest level built when that
bound is below :data:`SKIP_REL` of its lower end, else at the level of its own saddle tilt
``λ* ≈ θ/Var W``.  Which built level is tried first is steered by Chernoff's bound of the
value (:meth:`HalvesProfile._log_hint`: a guess that only saves summing a threshold twice);
the ladder's step widens for designs of small ``Var W`` (:func:`tilt_step`: fewer levels where
a tilt half a step away costs few nats).  A level is built in single passes over its atoms
(:mod:`exactdp.kernels.half_build`).  Deep thresholds need the atoms about their saddle, not a
ball reaching it: ten σ² in [2.5, 4.5] with shift 2 have halves of 6.5·10⁶ atoms a level
(5·10⁷ at 100 nats untilted, beyond the budget: the design was refused), eight σ² near 3
have 3·10⁵ (1.8·10⁶).  Groups of several mechanisms enter the tilted levels as one coordinate
each with ``grouped=True`` (:func:`grouped_tilted_fit`, :mod:`exactdp.engine.grouped_halves`):
ten σ² in [1.18, 1.28] with counts 2 have halves of 3·10⁶ atoms a level (as twenty singles,
2.7·10¹⁰).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from exactdp.engine.coarse_split import ball_atom_count, coarse_atoms, group_atom_count
from exactdp.engine.enumerated_rest import TAU_RANGE, WINDOW_ATOMS, table_scales
from exactdp.engine.families import Group
from exactdp.engine.tilted_atoms import OmissionBound, chernoff_log_mgf, tilted_atoms, tilted_fit
from exactdp.kernels.enumeration import bucket_sort
from exactdp.kernels.half_build import a_blocks, gather_atoms
from exactdp.kernels.half_sums import block_sums, half_tables
from exactdp.numerics.precision import EPS64

__all__ = ["HalvesProfile", "halves_fit", "split_halves", "DEPTHS", "HALF_ATOMS"]

#: the depths (nats) of the enumerations; the first serves δ down to about 1e-25
DEPTHS = (100.0, 160.0, 300.0)
#: a half may have at most this many atoms at the first depth (estimated)
HALF_ATOMS = 2_500_000
#: at most this many groups (the halves are for few clumpy groups; many groups are smooth or near-deterministic)
MAX_GROUPS = 24
#: at most this many (atom, entry) pairs in any step of a half's enumeration
PAIR_WORK = 80_000_000
#: the widest range of a half's values (its tables' scaled exponentials stay in the float range)
MAX_SPREAD = 1200.0
#: a deeper level is built only when each half has at most this many atoms
DEEP_HALF_ATOMS = 6_000_000
#: A's probability shells are this many nats wide (each cut into blocks of value-sorted atoms)
SHELL_NATS = 2.0
#: A's atoms (in value order) are cut into at most this many tiles of about equal counts,
#: each of at least TILE_ATOMS atoms
TILES = 1024
TILE_ATOMS = 512
#: the tilted levels: depth (nats of tilted cost), the most atoms of a half, ladder step of the
#: tilt λ, and how many levels are kept at once
TILT_DEPTH = 40.0
TILT_HALF_ATOMS = 8_000_000
#: tilted halves estimated above this many atoms a half are tried after the wide smoothed rest
HEAVY_TILT_ATOMS = 2_000_000
TILT_STEP = 2.0
#: the ladder's step is where a threshold's saddle tilt λ* half a step from its level costs
#: this many nats of tilted cost, (Δλ)²·Var W/2: low-variance designs need fewer levels,
#: high-variance ones more (else their brackets widen by e^{excess})
TILT_MISMATCH = 6.0
#: the narrowest ladder step (a design of Var W above 2·TILT_MISMATCH/(TILT_STEP_MIN/2)² = 768
#: has thresholds more than TILT_MISMATCH nats from their level, each bracket still certified)
TILT_STEP_MIN = 0.25
TILT_LEVELS = 4
#: the grouped levels' split tries every balanced split of at most this many groups
GROUPED_SPLIT_MAX = 14
#: the levels kept at once hold at most this many atoms (both halves; ~90 bytes an atom)
TILT_KEPT_ATOMS = 28_000_000
#: the omitted mass must be below this fraction of the lower end, else the next level; so
#: must the bounds of A's blocks left out of a threshold's sum
SKIP_REL = 1e-12
#: a threshold whose bracket from the levels by depth is wider than this (log of its ends'
#: ratio; the deeper depths too large to build) is summed at the grouped tilted levels where
#: they fit (ten σ² near 0.54 with counts 1–3: δ(ε) at 1e-30 was 1.5e-7 wide, ε(1e-30) 4.8e-9)
GROUPED_REL = 1e-10
#: nats by which a built level's left-out bound must clear SKIP_REL times the Chernoff bound
#: of the value for the level to be tried before the threshold's own one is built (a guess:
#: Chernoff's bound exceeds δ by a few nats, and a level tried and found wanting costs one
#: threshold's sum, a new level several)
HINT_MARGIN = 0.0


def tilt_step(var: float) -> float:
    """The ladder step of the tilted levels for ``Var W = var``: the step at which half a step
    costs :data:`TILT_MISMATCH` nats of tilted cost (``(step/2)²·var/2``) — wider than
    :data:`TILT_STEP` for designs of small ``Var W``, narrower for large ones (ten σ² in
    [2.5, 4.5] with shift 3, Var W ≈ 26.6: a step of 2 left thresholds 10.8 nats from their
    level, δ brackets 2.6e-8 relative wide; now 1.34) — and never below :data:`TILT_STEP_MIN`."""
    return max(TILT_STEP_MIN, 2.0 * math.sqrt(2.0 * TILT_MISMATCH / var)) if var > 0 else TILT_STEP


def split_halves(groups) -> tuple:
    """Two halves of ``groups`` with about equal atom counts (greedy, largest first;
    deterministic), the one with fewer atoms first."""
    order = sorted(groups, key=lambda g: (-group_atom_count(g, DEPTHS[0]), g.weight, g.sigma2, g.count))
    a: list = []
    b: list = []
    la = lb = 0.0
    for g in order:
        c = math.log(group_atom_count(g, DEPTHS[0]))
        if la <= lb:
            a.append(g)
            la += c
        else:
            b.append(g)
            lb += c
    # A is streamed once per threshold, B only pointed into: the smaller half is A
    if b and ball_atom_count(a, DEPTHS[0]) > ball_atom_count(b, DEPTHS[0]):
        a, b = b, a
    return tuple(a), tuple(b)


def halves_fit(groups) -> bool:
    """Whether :class:`HalvesProfile` takes ``groups`` (at least two groups, each half at most
    :data:`HALF_ATOMS` atoms at the first depth; else, for groups of one mechanism each, at
    most :data:`TILT_HALF_ATOMS` in the tilted ellipsoid of :data:`TILT_DEPTH` nats)."""
    if not 2 <= len(groups) <= MAX_GROUPS:
        return False
    return _untilted_fit(groups) or _tilted_fit(groups)


def tilted_singles(groups):
    """``groups`` with every count spelled out as that many one-mechanism groups, when only
    the counts keep them from the tilted levels (:func:`tilted_fit`) and the singles fit them
    (their loss is the same sum: a count-m group is m independent mechanisms); else None.  The
    tilted levels reach deep thresholds the untilted depths cannot (δ = 1e-60 … 1e-100 on
    twelve σ² near 0.8 with counts 2)."""
    if all(g.count == 1 for g in groups) or sum(g.count for g in groups) > MAX_GROUPS:
        return None
    singles = tuple(Group(g.weight, g.sigma2, 1) for g in groups for _ in range(g.count))
    return singles if _tilted_fit(singles) and not halves_heavy(singles) else None


def grouped_split(groups) -> tuple:
    """Two halves of ``groups`` for the grouped tilted levels: of the splits into halves of
    ⌊n/2⌋ and ⌈n/2⌉ groups (all of them for n ≤ :data:`GROUPED_SPLIT_MAX`, else the greedy one of
    :func:`split_halves`), the one of the fewest atoms in its larger half (estimated,
    :func:`~exactdp.engine.coarse_split.ball_atom_count` at :func:`_tilt_depth`; ties: the first in
    a fixed order), the smaller half first."""
    groups = tuple(sorted(groups, key=lambda g: (g.weight, g.sigma2, g.count)))
    n = len(groups)
    if n > GROUPED_SPLIT_MAX or n < 2:
        a, b = split_halves(groups)
    else:
        best: tuple | None = None
        combos = itertools.chain.from_iterable(itertools.combinations(range(1, n), k - 1)
                                               for k in sorted({n // 2, n - n // 2}))
        for combo in combos:
            ia = (0,) + combo  # group 0 always in the first half: each split once
            a = tuple(groups[i] for i in ia)
            b = tuple(g for i, g in enumerate(groups) if i not in ia)
            cost = max(ball_atom_count(a, _tilt_depth(a)), ball_atom_count(b, _tilt_depth(b)))
            if best is None or cost < best[0]:
                best = (cost, a, b)
        assert best is not None  # (n ≥ 2: at least one split)
        a, b = best[1], best[2]
    if ball_atom_count(a, _tilt_depth(a)) > ball_atom_count(b, _tilt_depth(b)):
        a, b = b, a
    return a, b


def grouped_tilted_fit(groups) -> bool:
    """Whether the tilted levels take ``groups`` with every group of up to
    :data:`~exactdp.engine.tilted_atoms.MAX_GROUP_COUNT` mechanisms entering as one coordinate
    (its sum's pmf, :mod:`exactdp.engine.group_log_pmf`), halves by :func:`grouped_split` each
    within :data:`TILT_HALF_ATOMS` atoms: ten σ² in [1.18, 1.28] with counts 2 (ρ ≈ 8), whose
    twenty singles are beyond the levels (2.7·10¹⁰ atoms a half) and whose untilted halves
    are beyond :data:`HALF_ATOMS`, have halves of 3·10⁶ atoms a level."""
    if not 2 <= len(groups) <= MAX_GROUPS or not tilted_fit(groups, grouped=True):
        return False
    a, b = grouped_split(groups)
    return max(_spread(a, TILT_DEPTH), _spread(b, TILT_DEPTH)) <= MAX_SPREAD \
        and _enumerable(a, _tilt_depth(a), TILT_HALF_ATOMS) and _enumerable(b, _tilt_depth(b), TILT_HALF_ATOMS)


def halves_heavy(groups) -> bool:
    """Whether ``groups`` fit the halves only tilted, with a half above :data:`HEAVY_TILT_ATOMS`
    atoms (estimated, :func:`~exactdp.engine.coarse_split.ball_atom_count`): the planner then
    asks the wide smoothed rest first (cheaper there once the sieve weights each kernel)."""
    if not 2 <= len(groups) <= MAX_GROUPS or _untilted_fit(groups) or not _tilted_fit(groups):
        return False
    a, b = split_halves(groups)
    return max(ball_atom_count(a, _tilt_depth(a)), ball_atom_count(b, _tilt_depth(b))) > HEAVY_TILT_ATOMS


def _tilted_fit(groups) -> bool:
    """Whether the tilted levels take ``groups`` (one mechanism a group, each half within
    :data:`TILT_HALF_ATOMS` atoms)."""
    if not tilted_fit(groups):
        return False
    a, b = split_halves(groups)
    return max(_spread(a, TILT_DEPTH), _spread(b, TILT_DEPTH)) <= MAX_SPREAD \
        and _enumerable(a, _tilt_depth(a), TILT_HALF_ATOMS) and _enumerable(b, _tilt_depth(b), TILT_HALF_ATOMS)


def _tilt_depth(half) -> float:
    """The untilted depth whose ellipsoid has about as many atoms as the tilted one of
    :data:`TILT_DEPTH` (the costs of :func:`ball_atom_count` include ``½log(2πσ²)`` a group)."""
    return TILT_DEPTH + sum(max(0.5 * math.log(2 * math.pi * g.count * float(g.sigma2)), 0.0) for g in half)


def _untilted_fit(groups) -> bool:
    a, b = split_halves(groups)
    if max(_spread(a, DEPTHS[0]), _spread(b, DEPTHS[0])) > MAX_SPREAD:
        return False  # a half's tables would leave the float range (near-deterministic large weights)
    return _enumerable(a) and _enumerable(b)


def _enumerable(half, depth: float = DEPTHS[0], budget: float = HALF_ATOMS) -> bool:
    """Whether :func:`coarse_atoms` lists ``half`` at the first depth within :data:`HALF_ATOMS`
    atoms, and every intermediate product of its group-by-group enumeration within
    :data:`PAIR_WORK` pairs (a prefix of many groups can be far larger than the whole, whose
    normalisers alone may push the centre beyond the depth)."""
    for k in range(1, len(half) + 1):
        prefix = half[:k]
        n = ball_atom_count(prefix, depth)
        if n > budget:
            return False
        if k < len(half) and n * group_atom_count(half[k], depth) > PAIR_WORK:
            return False
    # the whole half's centre must lie inside the depth (else the enumeration omits most mass)
    return sum(0.5 * math.log(2 * math.pi * g.count * float(g.sigma2)) for g in half) < 0.5 * depth


def _spread(groups, depth: float) -> float:
    """The range of a half's atom values at ``depth`` (an upper bound: ``2Σ w_g K_g``)."""
    return sum(2 * float(g.weight) * (math.sqrt(2 * g.count * float(g.sigma2) * depth) + 2) for g in groups)


class _BTables:
    """B's atoms sorted by midpoint (a bucket sort whose cells also serve the kernels'
    searches) with the tables :func:`exactdp.kernels.half_sums.half_tables` builds (those of
    ``C`` on first use); scales chosen as :class:`exactdp.engine.enumerated_rest._Tables` does."""

    def __init__(self, at):
        got = table_scales(at)
        if got is None:
            raise OverflowError("an empty half, or its tables would leave the float range")
        self.s, self.sq = got
        keys = 0.5 * (at.value_dn + at.value_up)
        self.g0, self.inv, ncell = _cells(keys, keys.size)
        order, self.cstart = bucket_sort(keys, self.g0, self.inv, ncell)
        self.vd, self.vu, self.lp, self.le = gather_atoms(order, at.value_dn, at.value_up, at.log_p, at.log_err)
        self.mid = 0.5 * (self.vd + self.vu)  # keys[order], bit for bit, without a random gather
        half = np.maximum(self.vu - self.mid, self.mid - self.vd)
        self.hw = float(np.max(half)) * (1 + 4 * EPS64) + 1e-300
        spread = float(self.mid[-1] - self.mid[0]) if self.mid.size > 1 else 1.0
        self.tau = min(max(WINDOW_ATOMS * spread / self.mid.size, TAU_RANGE[0]), TAU_RANGE[1])
        self._tables: dict = {}

    def tables(self, complement: bool) -> tuple:
        """``(p⁻, p⁺, P⁻, P⁺, Q_lo, Q_hi)`` of :func:`~exactdp.kernels.half_sums.half_tables`."""
        if complement not in self._tables:
            self._tables[complement] = half_tables(self.vd, self.vu, self.lp, self.le, self.s, self.sq, complement)
        return self._tables[complement]


def _cells(keys: np.ndarray, ncell: int) -> tuple:
    """``(g₀, inv, ncell)`` of a quantisation of ``keys`` into about ``ncell`` equal cells."""
    ncell = max(int(ncell), 1)
    g0, span = float(np.min(keys)), float(np.max(keys) - np.min(keys))
    inv = ncell / span if span > 0 and math.isfinite(ncell / span) else 0.0
    return g0, inv, ncell


class _Level:
    """Both halves enumerated to one depth: A's atoms in blocks (a tile of values × a shell
    of probability), B's sorted atoms and tables."""

    def __init__(self, at_a, at_b, omission=None):
        """``at_a`` sorted by value; ``omission``: None (the atoms' ``log_omitted`` bound what is
        left out) or an :class:`~exactdp.engine.tilted_atoms.OmissionBound` (per threshold)."""
        self.omission = omission
        self.tab = _BTables(at_b)
        self.s_a = -float(np.max(at_a.log_p + at_a.log_err))
        # A's atoms (sorted by value) in tiles of consecutive ones; each atom in a shell of
        # probability (SHELL_NATS wide, from the top); a block is one shell of one tile: the
        # scaled bounds p⁻ ≤ e^{s_a}P(A = a) ≤ p⁺ (exp rounded outward), e^{−v⁻}, each tile's
        # value range and each block's sums of p⁻ (rounded down) and of p⁺ (up)
        # (exactdp.kernels.half_build.a_blocks)
        na = at_a.size
        ntile = min(TILES, max(1, na // TILE_ATOMS))
        self.per_tile = -(-na // ntile)
        self.a_vd, self.a_vu = at_a.value_dn, at_a.value_up
        (self.shell, self.a_pl, self.a_ph, self.a_ex, self.tile_vd, self.tile_vu, self.blk_pl,
         self.blk_ph) = a_blocks(self.a_vd, self.a_vu, at_a.log_p, at_a.log_err, self.s_a, SHELL_NATS,
                                 self.per_tile, 255)
        self.ns = self.blk_ph.size // self.tile_vd.size
        t = self.tab
        self.vmin = float(np.min(t.vd))
        self.vabs = float(max(abs(self.vmin), abs(float(np.max(t.vu)))))
        self.log_omitted = float(np.logaddexp(at_a.log_omitted, at_b.log_omitted)) + 1e-12
        self.size = (at_a.size, at_b.size)

    def sums(self, th_dn, th_up, complement: bool) -> tuple:
        t = self.tab
        pl, ph, p_lo, p_hi, q_lo, q_hi = t.tables(complement)
        lo, hi = block_sums(th_dn, th_up, complement, self.per_tile, self.ns, self.shell, self.tile_vd, self.tile_vu,
                            self.blk_pl, self.blk_ph, self.a_vd, self.a_vu, self.a_pl, self.a_ph, self.a_ex, t.mid,
                            t.cstart, t.vd, t.vu, pl, ph, p_lo, p_hi, q_lo, q_hi, t.g0, t.inv, t.hw, t.tau, t.sq,
                            self.vmin, self.vabs, SKIP_REL)
        lo = lo * (1 - 4 * EPS64)  # the unscaling's product
        hi = hi * (1 + 4 * EPS64)
        scale = self.s_a + t.s
        with np.errstate(divide="ignore"):
            l_lo, l_hi = np.log(lo), np.log(hi)
        slack_lo = 2 * EPS64 * (np.abs(np.where(np.isfinite(l_lo), l_lo, 0.0)) + abs(scale) + 2)
        slack_hi = 2 * EPS64 * (np.abs(np.where(np.isfinite(l_hi), l_hi, 0.0)) + abs(scale) + 2)
        l_lo = l_lo - scale - slack_lo
        core = l_hi - scale + slack_hi
        omitted = self.log_omitted if self.omission is None else self.omission.log_bound(th_dn, th_up, complement)
        l_hi = np.logaddexp(core, omitted)
        l_hi = l_hi + 8 * EPS64 * (np.abs(l_hi) + 1)
        return np.minimum(l_lo, 0.0), np.minimum(l_hi, 0.0)


def _untilted_level(a_groups, b_groups, depth: float) -> _Level:
    """Both halves listed above ``e^{−depth}`` (the ellipsoid about the mode)."""
    return _Level(coarse_atoms(a_groups, depth, margin=0.0, sort=True),
                  coarse_atoms(b_groups, depth, margin=0.0, sort=False))


def _tilted_level(a_groups, b_groups, lam: float) -> _Level:
    """Both halves listed in the tilted ellipsoid of :data:`TILT_DEPTH` nats about the mode of
    ``p·e^{λa}`` (:mod:`exactdp.engine.tilted_atoms`), what they leave out bounded per threshold."""
    at_a, d_a, c_a = tilted_atoms(a_groups, lam, TILT_DEPTH, sort=True)
    at_b, d_b, c_b = tilted_atoms(b_groups, lam, TILT_DEPTH, sort=False)
    return _Level(at_a, at_b, OmissionBound((a_groups, b_groups), lam, (d_a, d_b), (c_a, c_b)))


class HalvesProfile:
    """Certified log brackets of ``δ(θ) = E(1 − e^{θ−W})₊`` and of ``1 − δ(θ)`` by the two-half
    enumeration of the module docstring.

    Parameters
    ----------
    groups : sequence of Group
        The privacy-loss noise W (:func:`halves_fit` should hold).
    tilted : bool, optional
        Tilted levels (:mod:`exactdp.engine.tilted_atoms`; groups of one mechanism each) or
        levels by depth; by default tilted wherever they fit (fewer atoms: a deep threshold
        needs the atoms about its saddle, not a ball reaching it), the levels by depth for a
        tilted level that cannot be built.
    grouped : bool, optional
        Tilted levels with each group of several mechanisms as one coordinate (its sum's pmf;
        :func:`grouped_tilted_fit` should hold), halves by :func:`grouped_split`.
    """

    nodes_kept = 0
    method = "halves-enumeration"

    def __init__(self, groups, tilted: bool | None = None, grouped: bool = False):
        self.groups = tuple(groups)
        self.grouped = bool(grouped)
        self.halves = grouped_split(self.groups) if self.grouped else split_halves(self.groups)
        self.untilted_fits = _untilted_fit(self.groups)
        self.tilted = True if self.grouped else (_tilted_fit(self.groups) if tilted is None else bool(tilted))
        self._levels: list = []
        self._grouped: HalvesProfile | bool | None = None  # the grouped levels beyond the depths
        if self.tilted:  # levels by tilt (ladder index → level), the untilted one (λ = 0) at once
            self._var = math.fsum(float(g.weight) ** 2 * float(g.sigma2) * g.count for g in self.groups)
            self._tilts: dict = {}
            self._hints: dict = {}
            self._step = tilt_step(self._var)
            try:
                self._tilt_level(0)
            except OverflowError:  # a half's tables beyond the float range: the levels by depth
                if not self.untilted_fits:
                    raise
                self.tilted = False
        if not self.tilted:
            self._level(0)

    def _level(self, k: int):
        while len(self._levels) <= k:
            depth = DEPTHS[len(self._levels)] if len(self._levels) < len(DEPTHS) else None
            if not self._levels and depth is not None:  # the first depth: halves_fit has checked it
                self._levels.append(_untilted_level(self.halves[0], self.halves[1], depth))
            elif depth is None or max(ball_atom_count(h, depth) for h in self.halves) > DEEP_HALF_ATOMS:
                self._levels.append(None)
            else:
                try:
                    self._levels.append(_untilted_level(self.halves[0], self.halves[1], depth))
                except OverflowError:
                    self._levels.append(None)
        return self._levels[k]

    def _sums(self, th_dn, th_up, complement: bool) -> tuple:
        th_dn = np.ascontiguousarray(th_dn, dtype=float)
        th_up = np.ascontiguousarray(th_up, dtype=float)
        if self.tilted:
            return self._tilted_sums(th_dn, th_up, complement)
        return self._untilted_sums(th_dn, th_up, complement)

    def _untilted_sums(self, th_dn, th_up, complement: bool) -> tuple:
        lo, hi = self._level(0).sums(th_dn, th_up, complement)
        todo = np.arange(th_dn.size)
        for k in range(1, len(DEPTHS)):
            prev = self._levels[k - 1]
            todo = todo[~(prev.log_omitted <= lo[todo] + math.log(SKIP_REL))]
            level = self._level(k) if todo.size else None
            if level is None:
                break
            lo[todo], hi[todo] = level.sums(th_dn[todo], th_up[todo], complement)
        with np.errstate(invalid="ignore"):
            wide = np.flatnonzero(~(hi - lo <= GROUPED_REL))
        grouped = self._grouped_levels() if wide.size else None
        if grouped is not None:
            # beyond the depths (a deeper one too large): the grouped tilted levels, whose
            # atoms sit about each threshold's saddle; both brackets hold, the narrower ends
            l2, h2 = grouped._tilted_sums(th_dn[wide], th_up[wide], complement)
            lo[wide] = np.maximum(lo[wide], l2)
            hi[wide] = np.minimum(hi[wide], h2)
        return np.minimum(lo, hi), hi

    def _grouped_levels(self) -> HalvesProfile | None:
        """The grouped tilted levels of the same groups (a :class:`HalvesProfile` with
        ``grouped=True``), built on first use, for the thresholds the levels by depth leave
        wider than :data:`GROUPED_REL`; None where they do not fit (every group one mechanism,
        :func:`grouped_tilted_fit` false, or a half's tables beyond the float range)."""
        if self._grouped is None:
            self._grouped = False
            if not (self.grouped or self.tilted) and any(g.count > 1 for g in self.groups) \
                    and grouped_tilted_fit(self.groups):
                try:
                    self._grouped = HalvesProfile(self.groups, grouped=True)
                except OverflowError:
                    pass
        return self._grouped if isinstance(self._grouped, HalvesProfile) else None

    def log_brackets(self, th_dn, th_up) -> tuple:
        """Certified ``(log lo, log hi)`` of δ(θ) for every θ in ``[th_dn, th_up]`` (floats)."""
        return self._sums(th_dn, th_up, complement=False)

    def log_complement(self, th_dn, th_up) -> tuple:
        """Certified ``(log lo, log hi)`` of ``1 − δ(θ)`` for every θ in ``[th_dn, th_up]``."""
        return self._sums(th_dn, th_up, complement=True)

    def _tilt_level(self, j: int) -> _Level:
        """The level of tilt ``j·step`` (:func:`tilt_step`; at most :data:`TILT_LEVELS` kept, and
        at most :data:`TILT_KEPT_ATOMS` atoms in all; the oldest dropped)."""
        if j not in self._tilts:
            if self._tilts:
                per_level = sum(next(iter(self._tilts.values())).size)
                keep = max(1, min(TILT_LEVELS, TILT_KEPT_ATOMS // max(per_level, 1)))
            else:
                keep = TILT_LEVELS
            while len(self._tilts) >= keep:
                self._tilts.pop(next(iter(self._tilts)))
            self._tilts[j] = _tilted_level(self.halves[0], self.halves[1], j * self._step)
        return self._tilts[j]

    def _log_hint(self, th: np.ndarray, complement: bool) -> np.ndarray:
        """Chernoff's upper bound of log δ(θ) (of log(1 − δ(θ)) with ``complement``; μ on the
        grid of :class:`~exactdp.engine.tilted_atoms.OmissionBound`): a guess of the value's
        size that only chooses the level a threshold is summed at, never a bound."""
        if complement not in self._hints:
            self._hints[complement] = chernoff_log_mgf(self.groups, complement)
        mus, base = self._hints[complement]
        sgn = 1.0 if complement else -1.0
        return np.minimum(np.min(base[None, :] + sgn * mus[None, :] * th[:, None], axis=1), 0.0)

    def _tilted_sums(self, th_dn, th_up, complement: bool) -> tuple:
        """Each threshold at the nearest level built when its left-out bound is below
        :data:`SKIP_REL` of its lower end there, else at the level of its own saddle tilt
        ``λ* ≈ θ/Var W`` (ladder step :func:`tilt_step`; in [0, 16] for δ, [−1, 0] for 1 − δ)."""
        n = th_dn.size
        lo = np.full(n, -np.inf)
        hi = np.zeros(n)
        mid = 0.5 * (th_dn + th_up)
        lam = np.clip(mid / self._var, -1.0, 0.0) if complement else np.clip(mid / self._var, 0.0, 16.0)
        own = np.rint(lam / self._step).astype(np.int64)
        todo = np.arange(n)
        if self._tilts and todo.size:  # the nearest level built, where it is the own one or should serve
            built = np.array(list(self._tilts))
            near = built[np.argmin(np.abs(built[None, :] - own[:, None]), axis=1)]
            # a guess only steers: a threshold is summed at the nearest level built when that is
            # its own level, or when the level's left-out bound looks small enough beside the
            # value (Chernoff's bound of it) and its own level is not to be built in this call
            # anyway; a summed one is checked below, the others go to their own level
            hint = self._log_hint(mid, complement)
            om_near = np.empty(n)
            for j in np.unique(near):
                sel = np.flatnonzero(near == j)
                om_near[sel] = self._tilts[int(j)].omission.log_bound(th_dn[sel], th_up[sel], complement)
            likely = (own == near) | (om_near <= hint + math.log(SKIP_REL) - HINT_MARGIN)
            try_near = likely & ((own == near) | ~np.isin(own, own[~likely]))
            for j in np.unique(near[try_near]):
                sel = np.flatnonzero(try_near & (near == j))
                lvl = self._tilts[int(j)]
                lo[sel], hi[sel] = lvl.sums(th_dn[sel], th_up[sel], complement)
                om = lvl.omission.log_bound(th_dn[sel], th_up[sel], complement)
                ok = om <= lo[sel] + math.log(SKIP_REL)
                todo = np.setdiff1d(todo, sel[ok | (own[sel] == j)])
        for j in np.unique(own[todo]):
            sel = todo[own[todo] == j]
            try:
                level = self._tilt_level(int(j))
            except OverflowError:  # its tables would leave the float range: the untilted levels
                if self.untilted_fits:  # where they fit, else the bracket so far stays
                    l2, h2 = self._untilted_sums(th_dn[sel], th_up[sel], complement)
                    lo[sel] = np.maximum(lo[sel], l2)
                    hi[sel] = np.minimum(hi[sel], h2)
                continue
            l2, h2 = level.sums(th_dn[sel], th_up[sel], complement)
            lo[sel] = np.maximum(lo[sel], l2)  # both brackets hold: the narrower ends
            hi[sel] = np.minimum(hi[sel], h2)
        return np.minimum(lo, hi), hi
