"""The privacy profile of a design of few clumpy groups: both halves enumerated (meet in the middle).

A design of a few groups of small or moderate σ² (eight distinct variances near 3, say) has a
privacy-loss distribution made of ~10¹² incommensurate atoms: its characteristic function never
decays (each factor stays above ``e^{−π²σ²/2}``), so the smoothed inversion needs millions of
nodes, and no split into a coarse part and a smooth rest exists.  Its atoms, though, split
into two halves ``W = A + B`` of a million atoms each, and

    δ(θ) = Σ_a P(A = a)·D_B(θ − a),   1 − δ(θ) = Σ_a P(A = a)·C_B(θ − a),

with ``D_B``, ``C_B`` of B's atoms from sorted compensated prefix/suffix tables
(:mod:`exactdp.engine.enumerated_rest`); A is sorted by value, so one pointer into B's table
serves every a of a threshold: O(|A| + |B|) a threshold (:func:`exactdp.kernels.atom_sums.pair_sums`).
Both enumerations (:func:`exactdp.engine.coarse_split.coarse_atoms`) list the atoms above
``e^{−depth}`` (an ellipsoid, not the box of per-group truncations), with every probability
a certified lower bound within its log error and the mass left out bounded: a pair with an
omitted atom on either side adds at most ``ω_A + ω_B`` to δ (and to 1 − δ), added to the
upper ends.  Levels are enumerated to :data:`DEPTHS` nats, a deeper one built only for the
thresholds whose lower end is not far above the shallower one's omitted mass.
"""

from __future__ import annotations

import math

import numpy as np

from exactdp.engine.coarse_split import ball_atom_count, coarse_atoms, group_atom_count
from exactdp.engine.enumerated_rest import _scaled_exp, _Tables
from exactdp.kernels.atom_sums import pair_sums
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
#: A's shells: atoms within these many nats of the most probable one, then the rest
SHELLS = (36.0, 50.0, 64.0, 78.0)
#: the omitted mass must be below this fraction of the lower end, else the next level
SKIP_REL = 1e-12


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
    :data:`HALF_ATOMS` atoms at the first depth)."""
    if not 2 <= len(groups) <= MAX_GROUPS:
        return False
    a, b = split_halves(groups)
    if max(_spread(a, DEPTHS[0]), _spread(b, DEPTHS[0])) > MAX_SPREAD:
        return False  # a half's tables would leave the float range (near-deterministic large weights)
    return _enumerable(a) and _enumerable(b)


def _enumerable(half) -> bool:
    """Whether :func:`coarse_atoms` lists ``half`` at the first depth within :data:`HALF_ATOMS`
    atoms, and every intermediate product of its group-by-group enumeration within
    :data:`PAIR_WORK` pairs (a prefix of many groups can be far larger than the whole, whose
    normalisers alone may push the centre beyond the depth)."""
    for k in range(1, len(half) + 1):
        prefix = half[:k]
        n = ball_atom_count(prefix, DEPTHS[0])
        if n > HALF_ATOMS:
            return False
        if k < len(half) and n * group_atom_count(half[k], DEPTHS[0]) > PAIR_WORK:
            return False
    # the whole half's centre must lie inside the depth (else the enumeration omits most mass)
    return sum(0.5 * math.log(2 * math.pi * g.count * float(g.sigma2)) for g in half) < 0.5 * DEPTHS[0]


def _spread(groups, depth: float) -> float:
    """The range of a half's atom values at ``depth`` (an upper bound: ``2Σ w_g K_g``)."""
    return sum(2 * float(g.weight) * (math.sqrt(2 * g.count * float(g.sigma2) * depth) + 2) for g in groups)


class _Level:
    """Both halves enumerated to one depth: A's scaled atoms and B's tables."""

    def __init__(self, a_groups, b_groups, depth: float):
        at_a = coarse_atoms(a_groups, depth, margin=0.0)
        at_b = coarse_atoms(b_groups, depth, margin=0.0)
        tab = _Tables.build(at_b)
        if tab is None:
            raise OverflowError("the half's logs span more than the float range")
        self.tab = tab
        lp_lo, lp_hi = at_a.log_p - at_a.log_err, at_a.log_p + at_a.log_err
        self.s_a = -float(np.max(lp_hi))
        # A's atoms in shells of probability (each sorted by value): a threshold whose lower end
        # dwarfs the mass of the shells below stops there, that mass added to its upper end
        below = -self.s_a - lp_hi
        shell = np.searchsorted(np.array(SHELLS), below, side="right")
        self.shells = []
        for k in range(len(SHELLS) + 1):
            idx = np.flatnonzero(shell == k)
            if idx.size == 0:
                continue
            vd, vu = at_a.value_dn[idx], at_a.value_up[idx]
            with np.errstate(over="ignore", under="ignore"):
                ex = np.where(np.abs(vd) < 700.0, np.exp(-vd), 0.0)
            self.shells.append((np.ascontiguousarray(vd), np.ascontiguousarray(vu),
                                _scaled_exp(lp_lo[idx] + self.s_a, up=False),
                                _scaled_exp(lp_hi[idx] + self.s_a, up=True), np.ascontiguousarray(ex)))
        # the (scaled) mass of the shells after each one, rounded up
        masses = [float(np.sum(sh[3])) * (1 + 2 * (sh[3].size + 1) * EPS64) for sh in self.shells]  # γ_n
        self.rest_mass = [sum(masses[k + 1:]) * (1 + 1e-12) for k in range(len(self.shells))]
        self.vmin = float(np.min(at_b.value_dn))
        self.vabs = float(max(abs(self.vmin), abs(float(np.max(at_b.value_up)))))
        self.log_omitted = float(np.logaddexp(at_a.log_omitted, at_b.log_omitted)) + 1e-12
        self.size = (at_a.size, at_b.size)

    def sums(self, th_dn, th_up, complement: bool) -> tuple:
        t = self.tab
        if complement:
            p_lo, p_hi, q_lo, q_hi = t.pre_pl, t.pre_ph, t.suf_qc, t.suf_qd
            b_tot = float(t.pre_ph[-1])
        else:
            p_lo, p_hi, q_lo, q_hi = t.suf_pl, t.suf_ph, t.suf_qa, t.suf_qb
            b_tot = float(t.suf_ph[0])
        b_tot *= 1 + 1e-12  # ≥ D_B and C_B everywhere (scaled)
        lo = np.zeros(th_dn.size)
        hi = np.zeros(th_dn.size)
        todo = np.arange(th_dn.size)
        for sh, rest in zip(self.shells, self.rest_mass):
            l_s, h_s = pair_sums(th_dn[todo], th_up[todo], complement, *sh, t.mid, t.vd, t.vu, t.pl, t.ph,
                                 p_lo, p_hi, q_lo, q_hi, t.hw, t.tau, t.sq, self.vmin, self.vabs)
            lo[todo] += l_s
            hi[todo] += h_s
            extra = rest * b_tot
            stop = extra <= SKIP_REL * lo[todo]
            hi[todo[stop]] += extra
            todo = todo[~stop]
            if todo.size == 0:
                break
        n_add = len(self.shells) + 1  # the additions' rounding
        lo = lo * (1 - 2 * n_add * EPS64)
        hi = hi * (1 + 2 * n_add * EPS64)
        scale = self.s_a + t.s
        with np.errstate(divide="ignore"):
            l_lo, l_hi = np.log(lo), np.log(hi)
        slack_lo = 2 * EPS64 * (np.abs(np.where(np.isfinite(l_lo), l_lo, 0.0)) + abs(scale) + 2)
        slack_hi = 2 * EPS64 * (np.abs(np.where(np.isfinite(l_hi), l_hi, 0.0)) + abs(scale) + 2)
        l_lo = l_lo - scale - slack_lo
        core = l_hi - scale + slack_hi
        l_hi = np.logaddexp(core, self.log_omitted)
        l_hi = l_hi + 8 * EPS64 * (np.abs(l_hi) + 1)
        return np.minimum(l_lo, 0.0), np.minimum(l_hi, 0.0)


class HalvesProfile:
    """Certified log brackets of ``δ(θ) = E(1 − e^{θ−W})₊`` and of ``1 − δ(θ)`` by the two-half
    enumeration of the module docstring.

    Parameters
    ----------
    groups : sequence of Group
        The privacy-loss noise W (:func:`halves_fit` should hold).
    """

    nodes_kept = 0
    method = "halves-enumeration"

    def __init__(self, groups):
        self.groups = tuple(groups)
        self.halves = split_halves(self.groups)
        self._levels: list = [_Level(self.halves[0], self.halves[1], DEPTHS[0])]

    def _level(self, k: int):
        while len(self._levels) <= k:
            depth = DEPTHS[len(self._levels)] if len(self._levels) < len(DEPTHS) else None
            if depth is None or max(ball_atom_count(h, depth) for h in self.halves) > DEEP_HALF_ATOMS:
                self._levels.append(None)
            else:
                try:
                    self._levels.append(_Level(self.halves[0], self.halves[1], depth))
                except OverflowError:
                    self._levels.append(None)
        return self._levels[k]

    def _sums(self, th_dn, th_up, complement: bool) -> tuple:
        th_dn = np.ascontiguousarray(th_dn, dtype=float)
        th_up = np.ascontiguousarray(th_up, dtype=float)
        lo, hi = self._levels[0].sums(th_dn, th_up, complement)
        todo = np.arange(th_dn.size)
        for k in range(1, len(DEPTHS)):
            prev = self._levels[k - 1]
            todo = todo[~(prev.log_omitted <= lo[todo] + math.log(SKIP_REL))]
            level = self._level(k) if todo.size else None
            if level is None:
                break
            lo[todo], hi[todo] = level.sums(th_dn[todo], th_up[todo], complement)
        return np.minimum(lo, hi), hi

    def log_brackets(self, th_dn, th_up) -> tuple:
        """Certified ``(log lo, log hi)`` of δ(θ) for every θ in ``[th_dn, th_up]`` (floats)."""
        return self._sums(th_dn, th_up, complement=False)

    def log_complement(self, th_dn, th_up) -> tuple:
        """Certified ``(log lo, log hi)`` of ``1 − δ(θ)`` for every θ in ``[th_dn, th_up]``."""
        return self._sums(th_dn, th_up, complement=True)
