"""Exact tails by meeting in the middle: two windowed halves, one of them sorted.

When no family has a dense lattice pmf that leaves few atoms to enumerate (four or more
incommensurate groups with large σ²), split the groups into an *outer* half O and a
*base* half B, enumerate both in the tilted windows of :mod:`exactdp.engine.split`
(atoms ``c_i`` with probabilities ``p_i``; ``b_j`` with ``q_j``), sort both and sum

    P(W > t) = Σ_i p_i · Σ_{b_j > t − c_i} q_j

by one merge per threshold (O by decreasing c: the cut into B only moves up), so a
threshold costs ``N_O + N_B`` instead of ``N_O·N_B``.  Atom values are exact rationals
``Σ_g w_g s_g`` held as floats with a certified error ``tol`` (each term correctly
rounded, the sums' and the difference ``t − c_i``'s rounding); every ``b_j`` within
``tol`` of ``t − c_i`` is settled exactly (rational arithmetic, or 80 digits for an
irrational t), so the sum is over the exact event.
Error bound: as :class:`exactdp.engine.split.SplitTails` — truncation of each discrete
Gaussian, the window bound over the groups of both halves (union bound under the tilt),
the pmf and product rounding; the merge adds exact comparisons only.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.engine.families import family_of
from exactdp.engine.split import MAX_ATOMS, PLAN_LOG_DELTA, TooManyAtoms, WindowedTails, _Unit, _window_len, window_T
from exactdp.kernels.convolution import suffix_sums
from exactdp.kernels.split import NEAR_SLOTS, sorted_tail_sums
from exactdp.numerics.precision import EPS64

__all__ = ["SortedSplitTails", "sorted_plan", "MAX_SORTED"]

#: largest sorted base half
MAX_SORTED = 4_000_000
#: the halves are searched over all subsets up to this many groups
MAX_PLAN_GROUPS = 12


def sorted_plan(groups, rel_tol: float = 1e-11):
    """(outer groups, base groups, N_O, N_B) minimising N_O + N_B over the windows sized
    for δ ≥ 1e-21, or None when no partition keeps both halves within their limits."""
    if len(groups) > MAX_PLAN_GROUPS or len(groups) < 2:
        return None
    T = window_T(rel_tol)
    c = sum(g.count * float(g.weight) ** 2 * float(g.sigma2) for g in groups) / 2
    lam_nom = math.sqrt(PLAN_LOG_DELTA / max(c, 1e-300))
    lens = [_window_len(g, lam_nom, T) for g in groups]
    best = None
    idx = range(len(groups))
    for r in range(1, len(groups)):
        for base in itertools.combinations(idx, r):
            nb = math.prod(lens[i] for i in base)
            no = math.prod(lens[i] for i in idx if i not in base)
            if nb > MAX_SORTED or no > MAX_ATOMS:
                continue
            if best is None or no + nb < best[0]:
                best = (no + nb, base)
    if best is None:
        return None
    base = set(best[1])
    outer = [groups[i] for i in idx if i not in base]
    inner = [groups[i] for i in sorted(base)]
    return outer, inner, math.prod(lens[i] for i in idx if i not in base), math.prod(lens[i] for i in base)


class _Half:
    """One half's atoms in a window set: float values (sorted), probabilities, the exact
    coordinates (for settling near ties) and a bound on the values' float error."""

    def __init__(self, units, windows, descending: bool):
        vals = np.zeros(1)
        probs = np.ones(1)
        mag = np.zeros(1)
        for u, (L, H) in zip(units, windows):
            s = range(L, H + 1)
            v = np.array([float(u.fam.unit * x) for x in s])  # correctly rounded terms
            vals = (vals[:, None] + v[None, :]).ravel()
            mag = (mag[:, None] + np.abs(v)[None, :]).ravel()
            probs = (probs[:, None] * u.pmf[L - u.lo:H - u.lo + 1][None, :]).ravel()
        keep = np.flatnonzero(probs > 0)
        order = keep[np.argsort(-vals[keep] if descending else vals[keep], kind="stable")]
        self.vals = np.ascontiguousarray(vals[order])
        self.probs = np.ascontiguousarray(probs[order])
        self.index = order
        # each term's rounding ≤ |v|·EPS/2, each of the len(units) additions ≤ |partial sum|·EPS/2
        self.err = float(mag.max(initial=0.0)) * (len(units) + 2) * EPS64
        self.top = float(np.abs(self.vals).max(initial=0.0))
        self.units, self.windows = units, list(windows)
        self.sizes = [max(H - L + 1, 0) for L, H in windows]

    def exact(self, k: int) -> Fraction:
        i = int(self.index[k])
        tot = Fraction(0)
        for u, (L, _), size in reversed(list(zip(self.units, self.windows, self.sizes))):
            i, r = divmod(i, size)
            tot += u.fam.unit * (L + r)
        return tot


class _HalfPair:
    def __init__(self, outer, inner, wo, wi):
        self.O = _Half(outer, wo, True)
        self.B = _Half(inner, wi, False)
        self.suffix = suffix_sums(self.B.probs)  # compensated, len + 1 entries
        self.pairs = list(zip(outer, wo)) + list(zip(inner, wi))


class SortedSplitTails(WindowedTails):
    """Exact certified ``P(W > t)`` / ``P(W ≥ t)`` by two windowed halves (see module).

    Parameters
    ----------
    groups : sequence of Group
    rel_tol : float
        Relative size of the window bound.

    Raises
    ------
    TooManyAtoms
        When no partition keeps both halves within their limits.
    """

    def __init__(self, groups, rel_tol: float = 1e-11):
        plan = sorted_plan(groups, rel_tol)
        if plan is None:
            raise TooManyAtoms("no meet-in-the-middle split keeps both halves small")
        outer, inner, self.n_outer, self.n_base = plan
        self.n_atoms = self.n_outer + self.n_base
        self.outer = [_Unit(family_of([g]), Fraction(1)) for g in outer]
        self.inner = [_Unit(family_of([g]), Fraction(1)) for g in inner]
        self._init_common(groups, rel_tol)
        self.atom_rel = sum(u.rel for u in self.outer + self.inner) + 8 * EPS64 * (len(groups) + 2)
        self.method = "split-sorted"

    def _chunk_cost(self, lam_lo: float, lam_hi: float) -> float:
        no = math.prod(max(H - L + 1, 0) for L, H in (u.window(lam_lo, lam_hi, self.T) for u in self.outer))
        nb = math.prod(max(H - L + 1, 0) for L, H in (u.window(lam_lo, lam_hi, self.T) for u in self.inner))
        return max(no / min(MAX_ATOMS, 2 * self.n_outer), nb / min(MAX_SORTED, 2 * self.n_base))

    def _build_set(self, lam_lo: float, lam_hi: float) -> _HalfPair:
        return _HalfPair(self.outer, self.inner, [u.window(lam_lo, lam_hi, self.T) for u in self.outer],
                         [u.window(lam_lo, lam_hi, self.T) for u in self.inner])

    def _chunk_tails(self, hp: _HalfPair, ts, tf, strict: bool) -> tuple:
        O, B = hp.O, hp.B
        # |fl(b) − b| + |fl(c) − c| + |fl(t) − t| + rounding of t − c and of y ± tol
        tol = (np.abs(tf) + O.top + B.top) * 4 * EPS64 + O.err + B.err
        near = np.zeros((len(ts), 3 * NEAR_SLOTS), dtype=np.int64)
        sums, cnt = sorted_tail_sums(O.vals, O.probs, B.vals, hp.suffix, tf, tol, bool(strict), near)
        out = np.empty(len(ts))
        for k, t in enumerate(ts):
            tot = float(sums[k])
            if cnt[k] > NEAR_SLOTS:
                triples = self._near_ranges(hp, float(tf[k]), float(tol[k]))
            else:
                triples = near[k, :3 * cnt[k]].reshape(-1, 3)
            for i, j0, j1 in triples:
                ci = O.exact(int(i))
                for j in range(int(j0), int(j1)):
                    if self._above(ci + B.exact(j), t, strict):
                        tot += float(O.probs[i]) * float(B.probs[j])
            out[k] = tot
        return out, self.atom_rel + 8 * EPS64

    @staticmethod
    def _near_ranges(hp: _HalfPair, t: float, tol: float):
        """All (i, j0, j1) with b_j within tol of t − c_i (the kernel's slots overflowed),
        the same ranges the kernel reports."""
        y = t - hp.O.vals
        j0 = np.searchsorted(hp.B.vals, y - tol, side="left")
        j1 = np.searchsorted(hp.B.vals, y + tol, side="right")
        i = np.flatnonzero(j1 > j0)
        return np.stack([i, j0[i], j1[i]], axis=1)

    @staticmethod
    def _above(v: Fraction, t, strict: bool) -> bool:
        if isinstance(t, Fraction):
            return v > t if strict else v >= t
        with mpmath.workdps(80):
            d = mpmath.mpf(v.numerator) / v.denominator - mpmath.mpf(t)
            if abs(d) < mpmath.mpf(10) ** -60:
                raise ArithmeticError("an irrational threshold within 1e-60 of an atom")
            return d > 0
