"""The privacy profile of any design: coarse atoms enumerated, the fine rest smoothed.

``δ(θ) = Σ_a P(A = a)·D_R(θ − a)`` (see :mod:`exactdp.engine.coarse_split`), with
``D_R`` from :class:`~exactdp.engine.fine_profile.FineProfile` (R = ∅: ``D_R(x) =
(1 − e^x)₊`` exactly).  For each θ the atoms are ranked by a certified upper bound of
their term (``p_a·min(1, e^{−(x)₊²/(2V)}/…)``, sub-Gaussian); the terms within
:data:`SKIP_NATS` of the largest bound are evaluated, the rest are bounded and added to
the upper end, as is the mass the enumeration left out.  If the skipped bound is not
negligible against the lower end, the cut is lowered (the answer never depends on it
beyond its bound).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from exactdp.engine.coarse_split import MAX_ATOMS, TINY_S2, coarse_atoms, coarse_candidates, joint_atom_count
from exactdp.engine.enumerated_rest import EnumeratedRest, rest_fits
from exactdp.engine.families import family_of
from exactdp.engine.fine_profile import TARGET_WIDTH, FineProfile, TooCostly, far_left_brackets, far_left_complement
from exactdp.engine.lattice_rest import LatticeRest
from exactdp.engine.smoothed_profile import exact_sum
from exactdp.kernels.atom_sums import log_row_sums
from exactdp.numerics.errors import LatticeTooLarge
from exactdp.numerics.precision import EPS64

__all__ = ["ConditionedProfile", "SKIP_NATS", "profile_for"]

#: terms whose bound is this many nats below the largest one are bounded, not evaluated
SKIP_NATS = 48.0
#: the skipped and omitted mass must stay below this fraction of the lower end
SKIP_REL = 1e-12
#: the depths (nats) of the coarse enumeration, tried in turn by each query
DEPTHS = (200.0, 800.0, 3000.0)
#: at most this many (θ, atom) pairs at once
CHUNK_TERMS = 2_000_000
#: a one-family rest with more resonances than this in its frequency range is enumerated
MAX_RESONANCES = 64
#: an atom whose threshold lies this many of R's sd below 0 uses the complement bounds
FAR_LEFT_SD = 12.0
#: a split with an enumerated rest is preferred when its coarse part has at most this many atoms
ENUM_COARSE_ATOMS = 20_000
#: theta evaluations per tilt the smoothed rest may cost (nodes × groups)
NODE_WORK = 400_000


def _log1m_exp(a):
    a = np.minimum(np.asarray(a, dtype=float), 0.0)
    with np.errstate(divide="ignore"):
        return np.where(a < -0.693, np.log1p(-np.exp(a)), np.log(-np.expm1(a)))


def _logsumexp(v):
    v = np.asarray(v, dtype=float)
    if v.size == 0:
        return -np.inf
    mx = float(np.max(v))
    if mx == -np.inf:
        return -np.inf
    return mx + math.log(float(np.sum(np.exp(v - mx))))


def _rest_engine(fine, v_rest: float):
    """The engine of the fine part, or None when it would cost too much: its atoms summed
    through sorted prefix/suffix tables when they are few enough (:func:`rest_fits`); the
    int64 lattice engine when it is one family whose resonances would crowd the smoothed
    inversion's frequency range (more than :data:`MAX_RESONANCES` below the range a typical
    tilt needs); else the smoothed inversion within its node budget (:data:`NODE_WORK`
    theta evaluations per tilt)."""
    if rest_fits(fine):
        return EnumeratedRest(fine)
    unit = float(family_of(fine).unit)
    sd = math.sqrt(max(v_rest, 1e-300))
    lam = 10.0 / sd
    u_range = math.sqrt(2 * 60.0) * (lam + 1) / math.sqrt(TARGET_WIDTH)
    if u_range * unit / (2 * math.pi) > MAX_RESONANCES:
        try:
            return LatticeRest(fine)
        except (LatticeTooLarge, OverflowError):
            pass
    try:
        return FineProfile(fine, node_budget=min(100_000, max(2000, NODE_WORK // len(fine))))
    except TooCostly:
        return None


def _final_sums(lo_t, hi_t, extra) -> tuple:
    """Row-wise certified ``(log lo, log hi)`` of the sums of the terms' brackets (−inf for
    none), ``extra`` (skipped and omitted mass, log) added to the upper end: compensated
    (:func:`exactdp.kernels.atom_sums.log_row_sums`, whose bound is independent of the
    number of terms), plus the terms' own rounding ``4u(|sum| + 1)`` and the final
    ``logaddexp``'s."""
    s_lo, e_lo = log_row_sums(np.ascontiguousarray(lo_t))
    s_hi, e_hi = log_row_sums(np.ascontiguousarray(hi_t))
    fin_lo = np.isfinite(s_lo)
    out_lo = np.where(fin_lo, s_lo - e_lo - 8 * EPS64 * (np.abs(np.where(fin_lo, s_lo, 0.0)) + 1), -np.inf)
    fin_hi = np.isfinite(s_hi)
    core = np.where(fin_hi, s_hi + e_hi + 8 * EPS64 * (np.abs(np.where(fin_hi, s_hi, 0.0)) + 1), -np.inf)
    hi_sum = np.logaddexp(core, extra)
    return out_lo, np.minimum(0.0, hi_sum + 8 * EPS64 * (np.abs(hi_sum) + 1))


def _enumerable_split(groups, order, depth: float):
    """The fewest coarse candidates (a prefix of ``order``) whose rest the atom sums take
    (:func:`rest_fits`), if their joint atoms are at most :data:`ENUM_COARSE_ATOMS`; else None.
    An enumerated rest is exact to its float rounding and O(log n) a threshold, so it is
    preferred to the lattice rest and the smoothed inversion when the coarse part is small."""
    for relaxed in (False, True):  # a rest whose deep levels fit first (δ down to 1e-300)
        for k in range(len(order) + 1):
            coarse = order[:k]
            if joint_atom_count(coarse, depth) > ENUM_COARSE_ATOMS:
                break
            fine = [g for g in groups if g not in coarse]
            if fine and rest_fits(fine, relaxed):
                return k
    return None


class ConditionedProfile:
    """Certified log brackets of ``δ(θ) = E(1 − e^{θ−W})₊`` for float θ enclosures.

    Parameters
    ----------
    groups : sequence of Group
        The privacy-loss noise W.
    wide : bool
        The last resort: no conditioning beyond the first split, the rest by the smoothed
        inversion under its wide budget (:meth:`FineProfile.wide`; TooCostly beyond it).
    """

    def __init__(self, groups, wide: bool = False):
        self.groups = tuple(groups)
        self.depth = DEPTHS[0]
        order = coarse_candidates(self.groups, self.depth)
        k = _enumerable_split(self.groups, order, self.depth)
        # else the near-deterministic groups are conditioned on from the start: their atoms are
        # far apart, and a smoothed rest containing them cannot resolve the clumps
        coarse: list = list(order[:k]) if k is not None else [g for g in order if float(g.sigma2) < TINY_S2]
        fine = [g for g in self.groups if g not in coarse]
        while True:
            v_rest = float(exact_sum(g.count * g.weight**2 * g.sigma2 for g in fine))
            rest: object | None
            if wide and fine:
                rest = FineProfile.wide(fine)  # TooCostly: beyond the wide budget too
                break
            rest = _rest_engine(fine, v_rest) if fine else None
            if rest is not None or not fine:
                break
            nxt = next((g for g in order if g in fine), None)
            if nxt is None:
                raise TooCostly("no split of the design into enumerated coarse groups and a smoothed rest fits "
                                "the work budget")
            coarse.append(nxt)
            fine.remove(nxt)
        self.coarse, self.fine = tuple(coarse), tuple(fine)
        self.atoms = coarse_atoms(self.coarse, self.depth)
        self._deeper: dict = {self.depth: self.atoms}
        self.v_rest = v_rest
        self.sd_rest = math.sqrt(v_rest)
        self.rest = rest
        # log M_R(1) = ρ_R exactly (R is its sub-design's loss noise: E_P e^{−R} = e^{ρ_R}),
        # for the far-left complement bounds
        rho_r = float(exact_sum(Fraction(g.count) * g.weight**2 * g.sigma2 for g in fine) / 2)
        self.log_m1 = (rho_r * (1 - 4 * EPS64), rho_r * (1 + 4 * EPS64) + 1e-300)

    @property
    def method(self) -> str:
        if self.rest is None:
            return "enumeration"
        inner = ("lattice-enumeration" if isinstance(self.rest, LatticeRest) else
                 "atom-sum" if isinstance(self.rest, EnumeratedRest) else "smoothed-inversion")
        return inner if not self.coarse else "conditioned-" + inner

    @property
    def nodes_kept(self) -> int:
        return self.rest.nodes_kept if self.rest is not None else 0

    def _rest_brackets(self, x_dn, x_up) -> tuple:
        """(log lo, log hi) of D_R over [x_dn, x_up] (D_R is non-increasing)."""
        if self.rest is None:  # D_R(x) = (1 − e^x)₊ exactly; log1p/expm1 to a few ulps
            with np.errstate(divide="ignore"):
                lo = np.where(x_up < 0, _log1m_exp(x_up), -np.inf)
                hi = np.where(x_dn < 0, _log1m_exp(x_dn), -np.inf)
            lo = lo - 8 * EPS64 * (1 + np.abs(np.where(np.isfinite(lo), lo, 0.0)))
            hi = np.minimum(hi + 8 * EPS64 * (1 + np.abs(np.where(np.isfinite(hi), hi, 0.0))), 0.0)
            return lo, hi
        both = np.concatenate([x_up, x_dn])
        lo, hi = self.rest.log_brackets(both)
        n = x_up.size
        return lo[:n], hi[n:]

    def _term_bounds(self, x_dn) -> np.ndarray:
        """Cheap certified log upper bounds of D_R(x) (sub-Gaussian: log M_R(λ) ≤ λ²V/2)."""
        if self.rest is None:
            return np.where(x_dn < 0, 0.0, -np.inf)
        v = max(self.v_rest, 1e-300)
        lam = np.maximum(x_dn / v, 0.0)
        return np.minimum(0.0, 0.5 * lam * lam * v - lam * x_dn + 1e-9)

    def _atoms_at(self, depth: float):
        """The coarse atoms enumerated to ``depth`` nats (built on first use), or None when
        they would be more than 4·MAX_ATOMS."""
        if depth not in self._deeper:
            fits = joint_atom_count(self.coarse, depth) <= 4 * MAX_ATOMS
            self._deeper[depth] = coarse_atoms(self.coarse, depth) if fits else None
        return self._deeper[depth]

    def _by_depth(self, fn, th_dn, th_up) -> tuple:
        """Run ``fn(th_dn, th_up, atoms)`` at the depths of :data:`DEPTHS` in turn, keeping for
        each θ the first answer whose omitted atom mass is below SKIP_REL of its lower end
        (a query deeper than the enumeration gets the next, deeper one); θ are processed in
        chunks of at most CHUNK_TERMS (θ, atom) pairs."""
        th_dn = np.asarray(th_dn, dtype=float)
        th_up = np.asarray(th_up, dtype=float)
        lo = np.full(th_dn.size, -np.inf)
        hi = np.zeros(th_dn.size)
        todo = np.arange(th_dn.size)
        for depth in DEPTHS:
            at = self._atoms_at(depth)
            if at is None or todo.size == 0:
                break
            step = max(1, CHUNK_TERMS // max(at.size, 1))
            for k in range(0, todo.size, step):
                idx = todo[k:k + step]
                lo[idx], hi[idx] = fn(th_dn[idx], th_up[idx], at)
            if at.log_omitted == -math.inf:
                break
            todo = todo[~(at.log_omitted <= lo[todo] + math.log(SKIP_REL))]
        return lo, hi

    def log_brackets(self, th_dn, th_up) -> tuple:
        """Certified ``(log lo, log hi)`` of δ(θ) for every θ in ``[th_dn, th_up]`` (floats)."""
        return self._by_depth(self._log_brackets, th_dn, th_up)

    def log_complement(self, th_dn, th_up) -> tuple:
        """Certified ``(log lo, log hi)`` of ``1 − δ(θ)`` for every θ in ``[th_dn, th_up]``
        (see :meth:`_log_complement`)."""
        return self._by_depth(self._log_complement, th_dn, th_up)

    def _log_brackets(self, th_dn, th_up, at) -> tuple:
        """:meth:`log_brackets` with the atoms ``at``.

        All the (θ, atom) terms of one round go to the rest's engine in one call; a θ whose
        skipped terms are not negligible against its lower end gets another round with the
        cut lowered by :data:`SKIP_NATS`."""
        n = th_dn.size
        if self.rest is not None and at.size == 1 and at.log_p[0] == 0.0 and at.log_err[0] == 0.0 \
                and at.value_dn[0] == 0.0 and at.value_up[0] == 0.0 and at.log_omitted == -math.inf:
            lo, _ = self.rest.log_brackets(th_up)
            _, hi = self.rest.log_brackets(th_dn)
            return np.minimum(lo, hi), hi
        x_dn = np.nextafter(th_dn[:, None] - at.value_up[None, :], -np.inf)
        x_up = np.nextafter(th_up[:, None] - at.value_dn[None, :], np.inf)
        bound = at.log_p[None, :] + at.log_err[None, :] + self._term_bounds(x_dn)
        lo_t = np.full(x_dn.shape, -np.inf)
        hi_t = np.full(x_dn.shape, -np.inf)
        done = np.zeros(x_dn.shape, dtype=bool)
        cut = np.max(bound, axis=1) - SKIP_NATS
        if self.rest is not None:  # far left of R: closed-form complement bounds
            left = (x_up < -FAR_LEFT_SD * self.sd_rest) & (bound >= cut[:, None])
            if left.any():
                lo, _ = far_left_brackets(x_up[left], self.v_rest, *self.log_m1)
                _, hi = far_left_brackets(x_dn[left], self.v_rest, *self.log_m1)
                lp = np.broadcast_to(at.log_p, x_dn.shape)[left]
                le = np.broadcast_to(at.log_err, x_dn.shape)[left]
                lo_t[left] = lp - le + lo
                hi_t[left] = lp + le + hi
                done |= left
        todo = np.arange(n)
        extra = np.full(n, -np.inf)
        log_omit = at.log_omitted
        for _ in range(8):
            sel = ~done[todo] & (bound[todo] >= cut[todo, None])
            rows, cols = np.nonzero(sel)
            rows = todo[rows]
            if rows.size:
                lo, hi = self._rest_brackets(x_dn[rows, cols], x_up[rows, cols])
                lo_t[rows, cols] = at.log_p[cols] - at.log_err[cols] + lo
                hi_t[rows, cols] = at.log_p[cols] + at.log_err[cols] + hi
                done[rows, cols] = True
            nxt = []
            for i in todo.tolist():
                lo_sum = _logsumexp(lo_t[i][done[i]])
                rest = bound[i][~done[i]]
                skipped = _logsumexp(rest) if rest.size else -np.inf
                extra[i] = np.logaddexp(skipped, log_omit)
                if rest.size and extra[i] > lo_sum + math.log(SKIP_REL):
                    nxt.append(i)
                    cut[i] -= SKIP_NATS
            todo = np.array(nxt, dtype=np.int64)
            if todo.size == 0:
                break
        return _final_sums(np.where(done, lo_t, -np.inf), np.where(done, hi_t, -np.inf), extra)

    def _log_complement(self, th_dn, th_up, at) -> tuple:
        """Certified ``(log lo, log hi)`` of ``1 − δ(θ) = E min(1, e^{θ−W}) = Σ_a P(A = a)·C_R(θ
        − a)`` for every θ in ``[th_dn, th_up]`` (C is non-decreasing in θ): positive terms
        throughout, so a δ within 1e-10 of 1 still has a relatively accurate complement.
        Terms are bounded by ``p_a·min(1, e^{νx + ν²V/2})`` (sub-Gaussian R, ν = min(1, −x/V)),
        those :data:`SKIP_NATS` below the largest bound are bounded, not evaluated; far to the
        right of R a term is ``p_a·[1 − e^{−x²/(2V)}, 1]``; far to the left, the closed-form
        complement bounds; in between R's engine, all pairs of all θ in one call."""
        n = th_dn.size
        x_dn = np.nextafter(th_dn[:, None] - at.value_up[None, :], -np.inf)
        x_up = np.nextafter(th_up[:, None] - at.value_dn[None, :], np.inf)
        lp = np.broadcast_to(at.log_p, x_dn.shape)
        le = np.broadcast_to(at.log_err, x_dn.shape)
        lo_t = np.full(x_dn.shape, -np.inf)
        hi_t = np.full(x_dn.shape, -np.inf)
        if self.rest is None:  # C_R(x) = min(1, e^x) exactly
            lo_t = lp - le + np.minimum(x_dn, 0.0) - 4 * EPS64 * (1 + np.abs(x_dn))
            hi_t = lp + le + np.minimum(np.minimum(x_up, 0.0) + 4 * EPS64 * (1 + np.abs(x_up)), 0.0)
            skipped = np.full(n, -np.inf)
        else:
            V = max(self.v_rest, 1e-300)
            nu = np.clip(-x_up / V, 0.0, 1.0)
            bound = lp + le + np.minimum(0.0, nu * x_up + 0.5 * nu * nu * V)
            cut = np.max(bound, axis=1, keepdims=True) - SKIP_NATS
            right = x_dn > FAR_LEFT_SD * self.sd_rest
            lo_t[right] = lp[right] - le[right] + _log1m_exp(-(x_dn[right] ** 2) / (2 * V) + 1e-12)
            hi_t[right] = lp[right] + le[right]
            # far left of R: the closed-form complement bounds (lower end 0 far out), except
            # for an enumerated rest, whose exact atom sums stay narrow there
            left = (x_up < -FAR_LEFT_SD * self.sd_rest) & (bound >= cut) & (not isinstance(self.rest, EnumeratedRest))
            if left.any():
                l1, _ = far_left_complement(x_dn[left], self.v_rest, *self.log_m1)
                _, h1 = far_left_complement(x_up[left], self.v_rest, *self.log_m1)
                lo_t[left] = lp[left] - le[left] + l1
                hi_t[left] = lp[left] + le[left] + h1
            mid = ~right & ~left & (bound >= cut)
            if mid.any():
                both = np.concatenate([x_dn[mid], x_up[mid]])
                l2, h2 = self.rest.log_complement(both)
                m = int(mid.sum())
                lo_t[mid] = lp[mid] - le[mid] + l2[:m]
                hi_t[mid] = lp[mid] + le[mid] + h2[m:]
            skip = ~right & ~left & ~mid
            skipped = np.array([_logsumexp(bound[i][skip[i]]) for i in range(n)])
        return _final_sums(lo_t, hi_t, np.logaddexp(skipped, at.log_omitted))


def profile_for(groups, wide: bool = True):
    """The profile engine of ``groups``: :class:`ConditionedProfile` where an atom-table split
    exists, else the two-half enumeration (:class:`exactdp.engine.halves.HalvesProfile`) where
    its halves fit, else :class:`ConditionedProfile` (a smoothed or lattice rest), else (when
    ``wide``) its smoothed rest under the wide budget; TooCostly when none fits.  Halves that
    fit only tilted and heavy (:func:`~exactdp.engine.halves.halves_heavy`) ask the wide
    smoothed rest first (ten two-decimal σ² in [2.5, 4.5] at shift 2: ~3× cheaper).  Where
    neither the atom-table split nor the halves fit, the grouped tilted halves
    (:mod:`exactdp.engine.grouped_halves`: each group of several mechanisms one coordinate)
    are asked before the wide budget (ten σ² near 1.23 with counts 1–3 at shift 2: the wide
    budget answers in ~50 CPU-s, mostly β(α); the grouped halves in ~8)."""
    from exactdp.engine.grouped_halves import grouped_halves, grouped_halves_fit
    from exactdp.engine.halves import halves_fit, halves_heavy, tilted_singles

    groups = tuple(groups)
    order = coarse_candidates(groups, DEPTHS[0])
    heavy = False  # (asked only where the halves fit: the estimates need groups the halves take)
    if _enumerable_split(groups, order, DEPTHS[0]) is None and halves_fit(groups):
        # few groups of enumerable support that no atom-table split takes: the halves are
        # cheaper than a lattice or smoothed rest (five decimal σ² with counts to 38 and
        # shifts to 6, ρ ≈ 390: β(α) on the lattice rest ran for minutes; here ~1–6 s)
        singles = tilted_singles(groups)
        if singles is not None:  # counts spelled out: the tilted levels
            found = _wide_then_halves(singles, False)
            if found is not None:
                return found
        heavy = wide and halves_heavy(groups)
        found = _wide_then_halves(groups, heavy)
        if found is not None:
            return found
    try:
        return ConditionedProfile(groups)
    except TooCostly:
        if halves_fit(groups):
            heavy = wide and halves_heavy(groups)
            found = _wide_then_halves(groups, heavy)
            if found is not None:
                return found
        if grouped_halves_fit(groups):  # before the wide budget (cheaper where both answer)
            found = grouped_halves(groups)
            if found is not None:
                return found
        if wide and not heavy:  # the last resort: the smoothed rest under its wide budget (ten close decimal σ²)
            try:
                return ConditionedProfile(groups, wide=True)
            except TooCostly:
                pass
        raise


def _wide_then_halves(groups, heavy: bool):
    """The wide smoothed rest when ``heavy`` and it fits, else the halves (None when a half's
    tables leave the float range)."""
    from exactdp.engine.halves import HalvesProfile

    if heavy:
        try:
            return ConditionedProfile(groups, wide=True)
        except TooCostly:
            pass
    try:
        return HalvesProfile(groups)
    except OverflowError:  # a half's tables beyond the float range after all
        return None
