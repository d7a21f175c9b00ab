"""``D_R(x) = E(1 − e^{x−R})₊`` of the fine part R at any float x, certified.

Three brackets, each valid for every x; the narrowest is kept:

* **inversion** (:class:`~exactdp.engine.smoothed_profile.SmoothedProfile`) at the smoothing
  sd ``s`` that the bracket's predicted relative width ``s²(λ+1)(λ+1/2)`` needs for
  :data:`TARGET_WIDTH` (λ the saddle tilt); the smoothing levels form the fixed grid
  ``s = 2^{−j/2}`` (one node set per level — and, flat-level, per sieve target on a
  halving grid of the construction target — built on first use, so no bracket depends on
  the queries before it); a point still too wide
  goes two levels finer, unless its last step shows the other errors' floor above the target;
* **far left** (x ≪ 0, D close to 1): with ``C = 1 − D = E min(1, e^{x−R})``,
  ``e^x(M(1) − e^{μ'x}M(1+μ')) ≤ C ≤ min(e^x M(1) + e^{μx}M(μ), min_{ν∈[0,1]} e^{νx}M(ν))``
  for any μ, μ' ≥ 0 (``min(1, e^y) ≤ e^{νy}``; the two corrections bound
  ``E e^{−R}1{R ≤ x}`` and ``P(R ≤ x)`` by Chernoff; M = M_R, symmetric);
* **far right**: ``0 ≤ D ≤ M(λ)e^{−λx}/(λ+1)`` (``(1 − e^{−y})₊ ≤ e^{λy}/(λ+1)``).
"""

from __future__ import annotations

import math

import numpy as np

from exactdp.engine.smoothed_profile import GroupConsts, SmoothedProfile, TooCostly, log_sub
from exactdp.numerics.precision import EPS64

__all__ = ["FineProfile", "TARGET_WIDTH", "WIDE_NODE_WORK", "WIDE_SIEVE_VISITS", "WIDE_LEVEL", "TooCostly",
           "far_left_brackets", "far_left_complement",
           "complement_from_delta"]

#: relative bracket width aimed at (the promise is 1e-9)
TARGET_WIDTH = 2.5e-10
#: the finest smoothing level tried (s = 2^{−MAX_LEVEL/2})
MAX_LEVEL = 70
#: node-group work per smoothing level of the *wide* budget (:meth:`FineProfile.wide`): the
#: last resort for a design no split fits at the ordinary budget (many groups of close
#: decimal σ², whose frequency sieve keeps ~1/s coincidence nodes)
WIDE_NODE_WORK = 4_000_000
#: intervals the sieve of one level may visit under the wide budget (~15 per kept node)
WIDE_SIEVE_VISITS = 8_000_000
#: the flat sieve level (nats) under the wide budget; the dropped nodes are bounded a
#: posteriori (:func:`exactdp.kernels.mass_sieve.sieve_nodes_flat`; ten σ² ≈ 11: 2e-13 in the
#: sums' normalised units, ~P/√(2πV) at the saddle, ≳ 0.1 where the far-left bounds take
#: over), and the sieve keeps a third to a fifth of the ordinary level's nodes
WIDE_LEVEL = 38.0
#: a flat-level profile's source level: this many levels finer than its probe (the deepest
#: δ of a query usually needs one or two)
SOURCE_STEPS = 2
#: the complement's next level is one finer (not two) where half the widest point's width is
#: below this fraction of the target (the smoothing part halves a level; the rest does not)
STEP_ONE_MARGIN = 0.9


def _log1m_exp(a):
    """log(1 − e^a) for a ≤ 0 (−inf at a = 0)."""
    a = np.minimum(np.asarray(a, dtype=float), 0.0)
    with np.errstate(divide="ignore"):
        return np.where(a < -0.693, np.log1p(-np.exp(a)), np.log(-np.expm1(a)))


def far_left_brackets(x, vproxy: float, log_m1_lo: float, log_m1_hi: float) -> tuple:
    """Certified ``(log lo, log hi)`` of D_R(x) from the complement ``C = 1 − D`` alone, for
    any R that is ``vproxy``-sub-Gaussian (``log M_R(μ) ≤ μ²V/2``, Canonne–Kamath–Steinke)
    with ``log_m1_lo ≤ log M_R(1) ≤ log_m1_hi``: for μ, μ' ≥ 0, ν ∈ [0, 1],

        e^x(M(1) − e^{μ'x + (1+μ')²V/2}) ≤ C ≤ min(e^x M(1) + e^{μx + μ²V/2}, e^{νx + ν²V/2}),

    at ``μ = −x/V``, ``μ' = max(0, −x/V − 1)``, ``ν = min(1, −x/V)``.  Vectorised; meant
    for x ≪ −sd (elsewhere the bracket is merely wide)."""
    c_lo, c_hi = far_left_complement(x, vproxy, log_m1_lo, log_m1_hi)
    return _log1m_exp(c_hi), _log1m_exp(c_lo)


class FineProfile:
    """Certified log brackets of ``D_R`` for the groups of R (see the module docstring).

    Parameters
    ----------
    groups : sequence of Group
    target : float
        Relative bracket width aimed at.
    node_budget : int, optional
        Largest node set of any smoothing level (a larger one: TooCostly at construction,
        or a wider bracket later).
    sieve_budget : int, optional
        Intervals the sieve of one level may visit (default
        :data:`~exactdp.engine.smoothed_profile.SIEVE_BUDGET`).
    flat_level : float, optional
        Sieve each level at this flat level, the dropped nodes bounded a posteriori
        (default: the ordinary sieve of :mod:`~exactdp.engine.smoothed_profile`).
    """

    def __init__(self, groups, target: float = TARGET_WIDTH, node_budget: int | None = None,
                 sieve_budget: int | None = None, flat_level: float | None = None):
        self.groups = tuple(groups)
        self.target = float(target)
        # the construction target: ``target`` may be lowered for a while (the trade-off batch's
        # oracle width); a flat-level profile's levels are kept per (level, sieve target)
        # (:meth:`_sieve_target`), so a level's node set never depends on the query that built it
        self.sieve_target = self.target
        self.consts = GroupConsts(self.groups)  # shared by every smoothing level
        self.vproxy = self.consts.vproxy
        self.sd = math.sqrt(self.vproxy)
        self.node_budget = node_budget
        self.sieve_budget = sieve_budget
        self.flat_level = flat_level
        self._source = None
        self._levels: dict = {}
        # the probe: the level a tilt of 10/sd needs (a δ near 1e-20); too many nodes there
        # raises TooCostly, and the caller conditions on a coarse group instead
        probe = self._level_for(10.0 / max(self.sd, 1e-300))
        self._probe = probe
        if flat_level is not None and probe + SOURCE_STEPS <= MAX_LEVEL:
            # a flat-level profile sieves one level SOURCE_STEPS finer than the probe (fixed by the
            # design: every node set still depends on the design and s only); the coarser
            # levels are filtered from its nodes instead of sieved again
            # (the source itself is not a level: its own level is filtered from it too, so
            # every level drops its least nodes within the filter's mass)
            try:
                self._source = SmoothedProfile(self.groups, 2.0 ** (-(probe + SOURCE_STEPS) / 2), node_budget,
                                               self.consts, sieve_budget, flat_level=flat_level,
                                               lam_w=self._lam_of(probe + SOURCE_STEPS, self.sieve_target))
            except TooCostly:
                self._levels[(probe + SOURCE_STEPS, self.sieve_target)] = None
        self._any = self._level(probe)

    # -- smoothing levels --------------------------------------------------------------
    def _level_for(self, lam: float) -> int:
        s = math.sqrt(self.target / ((lam + 1) * (lam + 0.5)))
        return min(MAX_LEVEL, max(0, int(math.ceil(-2 * math.log2(s)))))

    def _sieve_target(self):
        """The target a flat-level profile's levels are sieved for now (None: an ordinary
        profile, whose node sets do not depend on it): the construction target
        :attr:`sieve_target` halved k times, k the most with the result still at least
        :attr:`target` (a lowered target, as the trade-off batch's, gets levels of its own on
        that grid: a few node sets, each a function of the design, the level and k)."""
        if self.flat_level is None:
            return None
        t0 = self.sieve_target
        if not self.target < t0:
            return t0
        return t0 * 2.0 ** -math.floor(math.log2(t0 / self.target))

    def _lam_of(self, j: int, t: float) -> float:
        """The largest tilt whose level (:meth:`_level_for` at the target t) is at most j: the
        kernel tilt Λ of a flat-level profile's weighted sieve at level j for the sieve target
        t (a larger tilt there is still certified, its dropped-node bound scaled up:
        :meth:`SmoothedProfile._drop`)."""
        c = t * 2.0**j
        return max(1.0 / max(self.sd, 1e-300), 0.5 * (math.sqrt(0.25 + 4 * c) - 1.5))

    def _level(self, j: int) -> SmoothedProfile:
        """The smoothing level j (built on first use); TooCostly — remembered: a level beyond
        the node budget is not sieved again at every query."""
        t = self._sieve_target()
        key = (j, t)
        if key in self._levels:
            prof = self._levels[key]
            if prof is None:
                raise TooCostly(f"smoothing level {j} exceeds the node budget")
            return prof
        try:
            src = self._source if self._source is not None and self._source.s <= 2.0 ** (-j / 2) else None
            prof = SmoothedProfile(self.groups, 2.0 ** (-j / 2), self.node_budget, self.consts, self.sieve_budget,
                                   flat_level=self.flat_level, source=src,
                                   lam_w=self._lam_of(j, t) if t is not None else None)
        except TooCostly:
            self._levels[key] = None
            raise
        self._levels[key] = prof
        return prof

    def _fallback_level(self, j: int, first: bool):
        """``(k, level k)`` answering a point whose level j is beyond the budget, or None: at
        the point's first level, the probe level (built at construction) where it is coarser
        than j, else the finest coarser level within the budget (it refines from there); a
        point refined from j − 2 keeps its bracket (None: sieving j − 1 for it costs more than
        it gains on the bench's designs).  A function of the design, j and the target only."""
        if not first:
            return None
        if self._probe < j:
            try:
                return self._probe, self._level(self._probe)
            except TooCostly:
                pass
        return self._coarser_level(j)

    def _coarser_level(self, j: int, least: int = 0):
        """``(k, level k)`` of the finest level ``least ≤ k < j`` within the budget (built if
        need be), or None: a function of the design, j and least only (each level's
        TooCostly is)."""
        for k in range(j - 1, least - 1, -1):
            try:
                return k, self._level(k)
            except TooCostly:
                continue
        return None

    @classmethod
    def wide(cls, groups, target: float = TARGET_WIDTH) -> FineProfile:
        """The profile under the wide budget (:data:`WIDE_NODE_WORK` node-group evaluations
        per level, :data:`WIDE_SIEVE_VISITS` sieve intervals, the flat sieve level
        :data:`WIDE_LEVEL`): the same certified brackets,
        seconds of work where the ordinary budget refuses (TooCostly beyond it)."""
        groups = tuple(groups)
        return cls(groups, target, node_budget=max(2000, WIDE_NODE_WORK // max(len(groups), 1)),
                   sieve_budget=WIDE_SIEVE_VISITS, flat_level=WIDE_LEVEL)

    @property
    def nodes_kept(self) -> int:
        return max(p.nodes_kept for p in self._levels.values() if p is not None)

    def log_mgf(self, lam: float) -> tuple:
        return self._any.log_mgf(lam)

    # -- brackets ----------------------------------------------------------------------
    def _far_left(self, x: np.ndarray) -> tuple:
        """(log lo, log hi) of D from the complement bounds (valid for every x)."""
        lm1, e1 = self.log_mgf(1.0)
        c_hi = np.zeros(x.size)
        c_lo = np.full(x.size, -np.inf)
        v = max(self.vproxy, 1e-300)
        for i, xv in enumerate(x.tolist()):
            mu = max(0.0, -xv / v)
            lm, em = self.log_mgf(mu) if mu > 0 else (0.0, 0.0)
            b2 = mu * xv + lm + em
            mu1 = max(0.0, -xv / v - 1.0)
            lmp, emp = self.log_mgf(1.0 + mu1)
            b1 = mu1 * xv + lmp + emp
            nu = min(1.0, mu)
            lnu, enu = self.log_mgf(nu) if nu > 0 else (0.0, 0.0)
            hi1 = np.logaddexp(xv + lm1 + e1, b2)
            c_hi[i] = min(hi1, nu * xv + lnu + enu, 0.0) + 8 * EPS64 * (abs(xv) + abs(lm1) + 1)
            d = log_sub(np.array([lm1 - e1]), np.array([b1]))[0]
            c_lo[i] = xv + d - 8 * EPS64 * (abs(xv) + abs(lm1) + 1) if np.isfinite(d) else -np.inf
        lo = _log1m_exp(c_hi)
        hi = _log1m_exp(c_lo)
        return lo, hi

    def _far_right(self, x: np.ndarray) -> np.ndarray:
        """log of the upper bound ``M(λ)e^{−λx}/(λ+1)`` at λ = max(x/V, 1/sd)."""
        out = np.zeros(x.size)
        for i, xv in enumerate(x.tolist()):
            lam = max(xv / max(self.vproxy, 1e-300), 1.0 / max(self.sd, 1e-300))
            lm, em = self.log_mgf(lam)
            out[i] = min(0.0, lm + em - lam * xv - math.log1p(lam) + 8 * EPS64 * (abs(lam * xv) + 1))
        return out

    def log_complement(self, x) -> tuple:
        """Certified ``(log lo, log hi)`` of ``C_R(x) = 1 − D_R(x) = E min(1, e^{x−R})``: the
        narrowest of ``1 − D`` (D's brackets), the far-left bounds and, for x < 0, the
        complement's own inversion (:meth:`SmoothedProfile.log_complement`)."""
        x = np.asarray(x, dtype=float)
        lo, hi = complement_from_delta(*self.log_brackets(x))
        neg = np.flatnonzero((x < 0) & (_rel_width(lo, hi) > self.target))
        if neg.size:
            v, e = self.log_mgf(1.0)
            l2, h2 = far_left_complement(x[neg], self.vproxy, v - e, v + e)
            lo[neg] = np.maximum(lo[neg], l2)
            hi[neg] = np.minimum(hi[neg], h2)
            todo = neg[_rel_width(lo[neg], hi[neg]) > self.target]
            if todo.size:
                lam = np.abs(np.maximum(x[todo], -self.vproxy) / max(self.vproxy, 1e-300))
                for j in np.unique([self._level_for(float(v)) for v in lam]):
                    sel = todo[np.array([self._level_for(float(v)) for v in lam]) == j]
                    self._complement_levels(x, sel, int(j), lo, hi)
        return np.minimum(lo, hi), hi

    def _complement_levels(self, x, sel, j: int, lo, hi) -> None:
        """Narrow ``[lo, hi][sel]`` (in place) by the complement's inversion at level j; where
        that level is beyond the node budget, at the finest coarser level within it (a tighter
        target never answers wider); points still wider than the target go one level finer
        where half the widest one's width is within :data:`STEP_ONE_MARGIN` of the target (the
        smoothing part halves a level), else two (or one, the finest within the budget), while
        their width shrinks by more than a quarter (one level) or half (two; the smoothing part
        shrinks 4-fold per two levels; less means the other errors' floor).  (Which level answers
        is a choice of work only: every level's bracket is certified.)"""
        done, prev, gain = -1, np.full(sel.size, np.inf), 0.5
        for _ in range(12):
            if sel.size == 0 or j <= done:
                return
            try:
                prof = self._level(j)
            except TooCostly:
                j -= 1
                continue
            l3, h3 = prof.log_complement(x[sel])
            lo[sel] = np.maximum(lo[sel], l3)
            hi[sel] = np.minimum(hi[sel], h3)
            w = _rel_width(l3, h3)
            keep = (_rel_width(lo[sel], hi[sel]) > self.target) & (w < gain * prev)
            if j >= MAX_LEVEL or not keep.any():
                return
            # one level finer where halving the widest point's width meets the target (the
            # smoothing part shrinks 2-fold a level), else two
            step = 1 if float(np.max(w[keep])) <= 2 * self.target * STEP_ONE_MARGIN else 2
            gain = 0.75 if step == 1 else 0.5
            sel, prev, done, j = sel[keep], w[keep], j, min(MAX_LEVEL, j + step)

    def log_brackets(self, x) -> tuple:
        """Certified ``(log lo, log hi)`` of ``D_R(x)`` at float x (exact binary rationals)."""
        x = np.asarray(x, dtype=float)
        lo = np.full(x.size, -np.inf)
        hi = np.zeros(x.size)
        left = x < -6 * self.sd
        if left.any():
            k = np.flatnonzero(left)
            lo[k], hi[k] = self._far_left(x[k])
        todo = np.flatnonzero(_rel_width(lo, hi) > self.target)
        if todo.size:
            lam = self._any.saddle(x[todo])
            levels = np.array([self._level_for(v) for v in lam])
            pending = todo
            lv = levels
            for step in range(8):
                if pending.size == 0:
                    break
                nxt, nlv = [], []
                for j in np.unique(lv):
                    sel = pending[lv == j]
                    try:
                        prof = self._level(int(j))
                    except TooCostly:
                        # never "the finest level built so far": that would depend on the earlier
                        # queries (:meth:`_fallback_level`)
                        k = self._fallback_level(int(j), step == 0)
                        if k is None:
                            continue
                        j, prof = k
                    before = _rel_width(lo[sel], hi[sel])
                    l2, h2, _ = prof.log_brackets(x[sel])
                    lo[sel] = np.maximum(lo[sel], l2)
                    hi[sel] = np.minimum(hi[sel], h2)
                    w = _rel_width(lo[sel], hi[sel])
                    # the smoothing part of the width shrinks 4-fold a step (s halves): every
                    # finer level together removes about a third of this step's gain, so a
                    # point still short of the target by more than the whole gain has met the
                    # other errors' floor and is not refined further
                    with np.errstate(invalid="ignore"):
                        floor = np.isfinite(before) & (w - (before - w) > self.target)
                    wide = (w > self.target) & ~floor
                    if j < MAX_LEVEL and wide.any():
                        nxt.append(sel[wide])
                        nlv.append(np.full(int(wide.sum()), min(MAX_LEVEL, int(j) + 2)))
                pending = np.concatenate(nxt) if nxt else np.zeros(0, dtype=np.int64)
                lv = np.concatenate(nlv) if nlv else np.zeros(0, dtype=np.int64)
        right = np.flatnonzero(x > 6 * self.sd)
        if right.size:
            hi[right] = np.minimum(hi[right], self._far_right(x[right]))
        lo = np.minimum(lo, hi)
        return lo, hi


def _rel_width(lo, hi):
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(np.isfinite(hi), -np.expm1(lo - hi), np.inf)


def complement_from_delta(lo, hi) -> tuple:
    """``(log lo, log hi)`` of ``C = 1 − D`` from D's log bracket (certified; useful where D
    is not close to 1)."""
    c_lo = _log1m_exp(hi) - 8 * EPS64
    c_hi = _log1m_exp(lo)
    c_hi = np.minimum(c_hi + 8 * EPS64 * (np.abs(np.where(np.isfinite(c_hi), c_hi, 0.0)) + 1), 0.0)
    return c_lo, c_hi


def far_left_complement(x, vproxy: float, log_m1_lo: float, log_m1_hi: float) -> tuple:
    """Certified ``(log lo, log hi)`` of ``C(x) = 1 − D_R(x)`` from the bounds of
    :func:`far_left_brackets` (the same inequalities, kept on the complement's side)."""
    x = np.asarray(x, dtype=float)
    V = max(vproxy, 1e-300)
    mu = np.maximum(-x / V, 0.0)
    b2 = mu * x + 0.5 * mu * mu * V
    nu = np.minimum(1.0, mu)
    c_hi = np.minimum(np.logaddexp(x + log_m1_hi, b2), nu * x + 0.5 * nu * nu * V)
    mu1 = np.maximum(0.0, mu - 1.0)
    b1 = mu1 * x + 0.5 * (1 + mu1) ** 2 * V
    c_lo = x + log_sub(np.full(x.size, log_m1_lo), b1)
    slack = 8 * EPS64 * (np.abs(x) + abs(log_m1_hi) + 1) + 1e-15
    return np.where(np.isfinite(c_lo), c_lo - slack, -np.inf), np.minimum(c_hi + slack, 0.0)
