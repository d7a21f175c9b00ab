"""Coarse groups by exact enumeration of their atoms, alone or conditioning a sub-engine for the rest.

Groups whose characteristic function never decays below the sieve level (few mechanisms with small σ²,
nearly deterministic noise) defeat the sieve and, with large lattice weights, make the rule's node count
huge.  Their sum ``C = Σ_{g∈C} A_g T_g`` has few atoms *that matter*.  Each T_g's probabilities come with
relative accuracy at any depth from :class:`exactdp.engine.atoms.GroupPMF` (tilted to the atom); with the
fine part F = d·T_F (``d = gcd`` of its weights)

    P(S ≥ s) = Σ_c p_c P(T_F ≥ ⌈(s − v_c)/d⌉),     (no fine part: Σ_{c: v_c ≥ s} p_c),

a sum of non-negative terms over a box of atoms ``t_g ∈ [lo_g, hi_g]``; the fine tails come from a
sub-engine on F's own lattice (:func:`fine_sublattice`), each certified.  The box starts at ±3 sd around
the tilted centres of the joint saddle point and grows while an edge atom's probability is within e^{−58}
of the estimate.  Hockey-stick sums split the same way, each atom's with its own exact offset.

Error bound: the certified relative errors of the sub-values and of the atoms carry over (non-negative
terms); outside the box, by Chernoff bounds (:class:`exactdp.engine.atoms.SetCGF`): configurations with
some ``T_g > hi_g`` add ≤ ``P(T_g ≥ hi_g + 1)``, those with ``T_g < lo_g`` add ≤ ``P(T_g ≤ lo_g − 1)·P(R_g
≥ s − A_g(lo_g − 1))`` (R_g the rest of S, monotone), and atoms whose fine value is not certified ≤ ``p_c
e^{−(s−v_c)_+²/(2V'_F)}`` (sub-Gaussian bound of Canonne–Kamath–Steinke 2020).

Cost: a call's queries are set up together (boxes pre-grown by float sub-Gaussian layer bounds), the fine
values of all their atoms asked of the sub-engine in one batch and kept across calls; far-left fine hockey
sums in float64 (:mod:`exactdp.engine.far_left`); the multiprecision Chernoff layers only where the float
sub-Gaussian layers' truncation bound is not negligible.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import reduce

import mpmath
import numpy as np

from exactdp.engine.atoms import GroupPMF, SetCGF, window
from exactdp.engine.far_left import far_left, mgf_parts
from exactdp.engine.lattice import LatticeSum
from exactdp.engine.quadrature import TailValue, WeightedQuery, certified
from exactdp.engine.tilt import HUGE_MU, exact_saddle, log_as_value, mp_bits_for
from exactdp.kernels.dgauss import tilted_moments
from exactdp.kernels.tilted import saddle_point
from exactdp.numerics.precision import EPS64, to_mpf

__all__ = ["fine_sublattice", "atoms_estimate", "ConditionedTails"]

MAX_ATOMS = 100_000
#: the most fine sub-values kept (cleared beyond)
CACHE_MAX = 200_000
#: the atoms :meth:`_sum` evaluates at once
BATCH = 64
#: the nats beyond EDGE a box is pre-grown (:meth:`_prepare`: :meth:`_one` grows by the
#: estimate, which may lie below the largest layer bound)
PREGROW_SLACK = 6.0
#: the nats below the largest atom bound that :meth:`_prefetch` still asks for (beyond
#: :meth:`_sum`'s cut of 60 + log n)
PREFETCH_SLACK = 16.0
#: a truncation bound (relative) by the float sub-Gaussian bounds is taken when at most this
TRUNC_FAST = 1e-16
#: an edge atom of the box is kept while its probability is above e^{−EDGE}·estimate
EDGE = 58.0


def fine_sublattice(lattice: LatticeSum, coarse) -> tuple[int, LatticeSum]:
    """``(d, lattice of T_F)`` with ``S_F = d·T_F`` for the groups not in ``coarse``."""
    fine = [g for g in range(lattice.n_groups) if g not in tuple(coarse)]
    d = reduce(math.gcd, (int(lattice.weights[g]) for g in fine))
    return d, LatticeSum(weights=tuple(int(lattice.weights[g]) // d for g in fine),
                         counts=tuple(int(lattice.counts[g]) for g in fine),
                         sigma2=tuple(lattice.sigma2[g] for g in fine), scale=lattice.scale / d, c=lattice.c, shift=0)


def atoms_estimate(s2, m) -> int:
    """Rough number of atoms of the coarse groups (s2, m) in a box of ±4 sd (worst tilt)."""
    n = 1
    for s, c in zip(s2, m):
        sd = math.sqrt(int(c) * max(float(s), 0.25))
        n *= int(8 * sd) + 2 * window(float(s), 1e-20) + 1
    return n


class _TiltedSum:
    """The tilt grid and saddle point of the full lattice sum (shared by both classes)."""

    def __init__(self, lattice: LatticeSum):
        self.lattice = lattice
        self.A = np.array(lattice.weights, dtype=np.int64)
        self.m = np.array(lattice.counts, dtype=np.int64)
        self.s2 = np.array([float(s) for s in lattice.sigma2])
        self.vproxy = float(np.sum(self.m * self.A.astype(float) ** 2 * self.s2))
        self.vq = sum((int(m) * int(a) ** 2 * Fraction(s) for a, m, s in zip(lattice.weights, lattice.counts,
                                                                           lattice.sigma2)), Fraction(0))
        self.step = 1.0 / math.sqrt(self.vproxy)
        self.mu_scale = float(np.max(np.abs(self.A.astype(float)) * self.s2))

    def lam_for(self, s: int) -> Fraction:
        """The saddle point of S at s on the tilt grid (exact when it is huge; 0 for s ≤ 0)."""
        if s <= 0:
            return Fraction(0)
        lam = float(saddle_point(self.A, self.m, self.s2, float(s), float(s) / self.vproxy))
        if lam * self.mu_scale > HUGE_MU:
            lat = self.lattice
            return exact_saddle(lat.weights, lat.counts, [Fraction(x) for x in lat.sigma2], int(s), self.vq)
        return Fraction(round(lam / self.step) * self.step)


def _logsumexp(parts):
    """log Σ e^{x} of floats or mpf (at the precision their size needs)."""
    mx = max(parts)
    if all(isinstance(x, float) for x in parts):
        return mx + math.log(math.fsum(math.exp(x - mx) for x in parts))
    with mpmath.workprec(mp_bits_for(mx) + 64):
        return mx + mpmath.log(mpmath.fsum(mpmath.exp(x - mx) for x in parts))


class ConditionedTails:
    """Certified tails of S with the groups ``coarse`` enumerated and the rest by a
    sub-engine on the fine lattice (or nothing: pure enumeration).

    Parameters
    ----------
    lattice : LatticeSum
        The full lattice sum.
    coarse : sequence of int
        The groups to enumerate.
    d : int
        ``gcd`` of the fine weights (from :func:`fine_sublattice`).
    sub : object or None
        Values of T_F: ``sub.tails(...)`` / ``sub.weighted(queries, strict=False)``
        returning TailValues, with ``nodes_kept`` and ``n_nodes``; None when every group
        is coarse.
    """

    def __init__(self, lattice: LatticeSum, coarse, d: int = 1, sub=None):
        self.coarse = tuple(coarse)
        self.d = d
        self.sub = sub
        self.full = _TiltedSum(lattice)
        G = lattice.n_groups
        self.A = [int(lattice.weights[g]) for g in self.coarse]
        self.groups = [GroupPMF(lattice.sigma2[g], lattice.counts[g]) for g in self.coarse]
        fine = [g for g in range(G) if g not in self.coarse]
        self.vq_fine = sum((int(lattice.counts[g]) * int(lattice.weights[g]) ** 2 * Fraction(lattice.sigma2[g])
                            for g in fine), Fraction(0))
        self.rest = []
        for g in self.coarse:
            idx = [h for h in range(G) if h != g]
            self.rest.append(SetCGF([lattice.weights[h] for h in idx], [lattice.counts[h] for h in idx],
                                    [lattice.sigma2[h] for h in idx]))
        # per coarse group, its rest R_g's sub-Gaussian variance proxy V_{R_g} (Canonne–Kamath–
        # Steinke: P(R_g ≥ x) ≤ e^{−x²/(2V)}, a certified bound; rounded up here by a margin)
        self._v_rest = [float(self.full.vq - int(lattice.counts[g]) * int(lattice.weights[g]) ** 2
                              * Fraction(lattice.sigma2[g])) * (1 + 1e-12) for g in self.coarse]
        #: the fine sub-values, by key (an int threshold or a WeightedQuery): each is a
        #: deterministic function of its key, so they are kept across calls
        self._cache: dict = {}
        self._mgf: dict = {}  # β → K(β) of the fine part, split (:meth:`_far_left`)
        self.nodes_kept = sub.nodes_kept if sub is not None else 0
        self.n_nodes = sub.n_nodes if sub is not None else 0
        self.method = "conditioned-quadrature" if sub is not None else "enumeration"

    def tails(self, thresholds):
        """List of TailValue for the integer thresholds (s ≥ 1)."""
        return self.weighted([WeightedQuery(int(s), -math.inf, 0.0, 1.0) for s in thresholds])

    def weighted(self, queries):
        """List of TailValue for WeightedQuery's (tails when x0 = −inf).

        Every query's box is set up first (:meth:`_prepare`) and the fine sub-values of all
        their atoms are asked of the sub-engine in one batch (one call for tails, one for
        hockey-stick sums); each value is then summed and certified on its own."""
        queries = list(queries)
        if len(self._cache) > CACHE_MAX:
            self._cache.clear()
        preps = [self._prepare(q) for q in queries]
        if self.sub is not None:
            self._prefetch(queries, preps)
        return [self._one(q, prep) for q, prep in zip(queries, preps)]

    # ------------------------------------------------------------------ batching
    def _prepare(self, q: WeightedQuery):
        """``(λ, box)`` of one query: the tilt and the initial box (:meth:`_box`), each side
        grown while its layer's float bound :meth:`_layer_sg` (sub-Gaussian, above the
        Chernoff bound :meth:`_one` grows by) is within EDGE + PREGROW_SLACK of the largest
        layer's; None for a pure enumeration (no sub-values to batch: :meth:`_one` sets its
        box up) or where the box cannot be set up.  Only the box
        depends on this — never a value's certification: :meth:`_one` grows it further by
        the certified criterion and bounds what is left."""
        s = q.threshold
        if self.sub is None:  # a pure enumeration: its own growth (no sub-values to batch)
            return None
        try:
            lamq = self.full.lam_for(s)
            box = self._box(lamq)
            for i in range(len(box)):
                def layer(t, i=i):
                    v = self._layer_sg(i, t, s)
                    return -math.inf if v is None else v[0]

                top = max(layer(t) for t in range(box[i][0], box[i][1] + 1))
                for side in (0, 1):
                    while True:
                        t = box[i][1] + 1 if side else box[i][0] - 1
                        if layer(t) < top - EDGE - PREGROW_SLACK or (box[i][1] - box[i][0]) > 4 * MAX_ATOMS ** 0.5:
                            break
                        box[i][side] = t
            if math.prod(hi - lo + 1 for lo, hi in box) > MAX_ATOMS:
                return None
        except (ArithmeticError, OverflowError, ValueError):
            return None
        return [lamq, box, None]  # the box's atom bounds are added by :meth:`_prefetch`

    def _prefetch(self, queries, preps) -> None:
        """The fine sub-values of every atom of every prepared box not yet cached, in one
        sub-engine call per kind (tails, hockey-stick sums)."""
        tails: list = []
        hockey: list = []
        for q, prep in zip(queries, preps):
            if prep is None:
                continue
            try:
                per, shape, n, ub = prep[2] = self._bounds(q, prep[1])
            except ArithmeticError:
                continue
            top = float(ub.max())
            if not math.isfinite(top):
                continue
            # the atoms :meth:`_sum` may evaluate: its estimate is within a few nats of the
            # largest bound (the sub-Gaussian bound of a fine tail is loose by a polynomial
            # factor); the ones it needs beyond are asked by it
            # (and its first batch, which it evaluates whole)
            keep = ub >= top - (60 + math.log(n) + PREFETCH_SLACK)
            keep[np.argsort(-ub, kind="stable")[:BATCH]] = True
            pick = np.flatnonzero(keep)
            idx = np.unravel_index(pick, shape)
            vs = [sum(per[g][int(idx[g][j])][0] for g in range(len(per))) for j in range(pick.size)]
            for k in self._keys(q, vs):
                if k not in self._cache:
                    (tails if isinstance(k, int) else hockey).append(k)
        self._fill(list(dict.fromkeys(tails)), list(dict.fromkeys(hockey)))

    def _keys(self, q, values) -> list:
        """The fine sub-query of each coarse atom value v: the tail at ``⌈(s − v)/d⌉``, or the
        hockey-stick sum there with the atom's exact offset."""
        s, d = q.threshold, self.d
        keys: list = []
        for v in values:
            u = int(-((-(s - v)) // d))  # ⌈(s − v)/d⌉
            if q.x0 == -math.inf:
                keys.append(u)
            else:
                rc = v + d * u - s  # ∈ [0, d)
                keys.append(WeightedQuery(u, q.x0 - q.beta * rc, q.x1 + q.beta * (d - 1 - rc), q.beta * d))
        return keys

    def _fill(self, tails, hockey) -> None:
        """Ask the sub-engine for the keys (not cached) and keep the values; hockey-stick
        sums far left of the fine centre by :meth:`_far_left` (float64), from the fine tails
        they need, asked in the same call as the others."""
        far = [q for q in hockey if self._is_far_left(q)]
        if far:
            tails = list(dict.fromkeys(tails + [1 - q.threshold for q in far if 1 - q.threshold not in self._cache]))
        if tails:
            self._cache.update(zip(tails, self.sub.tails(tails, strict=False)))
        for q in far:
            tv = self._far_left(q, self._cache[1 - q.threshold])
            if tv is not None:
                self._cache[q] = tv
        hockey = [q for q in hockey if q not in self._cache] if far else hockey
        if hockey:
            self._cache.update(zip(hockey, self.sub.weighted(hockey, strict=False)))

    def _is_far_left(self, q: WeightedQuery) -> bool:
        """Whether the fine hockey-stick sum q is far left: ``1 − k ≥ max(10 sd, βV')``."""
        v = self._v_sub
        return 1 - q.threshold >= max(10 * math.sqrt(v), q.beta * v)

    @property
    def _v_sub(self) -> float:
        """The fine sub-lattice's variance proxy V' (float, rounded up)."""
        if self._v_sub_f is None:
            self._v_sub_f = float(self.vq_fine / (self.d * self.d)) * (1 + 1e-12)
        return self._v_sub_f

    _v_sub_f: float | None = None

    def _far_left(self, q: WeightedQuery, tl: TailValue) -> TailValue | None:
        """A far-left fine hockey-stick sum in float64 (:func:`exactdp.engine.far_left.far_left`),
        K(β) of the fine part split once per β; None where it is not certain."""
        if not certified(tl, self.sub.rel_tol):
            return None
        kp = self._mgf.get(q.beta)
        if kp is None:
            kp = self._mgf[q.beta] = mgf_parts(self.sub.lattice, q.beta)
        got = far_left(q, tl, kp, self._v_sub)
        if got is None:
            return None
        return TailValue(q.threshold, got[0], got[1], self.sub.method + "+far-left", self.nodes_kept, self.n_nodes,
                         0.0)

    # ------------------------------------------------------------------ one value
    def _box(self, lamq: Fraction):
        """Initial box: ±(3 sd + 1) around each group's tilted mean at the joint tilt
        (the integer part of the tilted centres exact)."""
        out = []
        for a, grp in zip(self.A, self.groups):
            mu = a * grp.s2q * lamq
            n0 = round(mu)
            mean, var = tilted_moments(float(mu - n0), grp.s2)
            w = 3 * math.sqrt(grp.m * max(var, 0.0)) + 1
            c = grp.m * n0
            out.append([c + int(math.floor(grp.m * mean - w)), c + int(math.ceil(grp.m * mean + w))])
        return out

    def _one(self, q: WeightedQuery, prep=None) -> TailValue:
        s = q.threshold
        lamq = prep[0] if prep is not None else self.full.lam_for(s)
        lam = float(lamq)
        fail = TailValue(s, -math.inf, math.inf, self.method, self.nodes_kept, self.n_nodes, lam)
        try:
            box = [list(b) for b in prep[1]] if prep is not None else self._box(lamq)
            bounds = prep[2] if prep is not None else None
            for _ in range(6):
                res = self._sum(q, box, bounds)
                bounds = None  # (of the first box only)
                if res is None:
                    return fail
                log_est, rel, bad = res
                grown = False
                for i, (a, grp, rest) in enumerate(zip(self.A, self.groups, self.rest)):
                    for side in (0, 1):
                        while True:  # layer T_g = t: ≤ P(T_g = t) P(R_g ≥ s − A_g t)
                            t = box[i][1] + 1 if side else box[i][0] - 1
                            lg, _ = grp.logp(t)
                            x = s - a * t
                            # the sub-Gaussian bound is above the Chernoff bound: where it
                            # stops the growth the Chernoff bound would too (checked first: floats)
                            lsg = self._layer_sg(i, t, s)
                            if lsg is not None and lsg[0] < float(log_est) - EDGE - 1e-6 * (1 + abs(float(log_est))):
                                break
                            if lg + rest.log_upper_tail(x) < log_est - EDGE:
                                break
                            if (box[i][1] - box[i][0]) > 4 * MAX_ATOMS ** 0.5:
                                raise ArithmeticError("coarse box too wide")
                            box[i][side] = t
                            grown = True
                if not grown:
                    break
            else:
                return fail
            rel_trunc = self._truncation(s, box, log_est, bad)
        except ArithmeticError:
            return fail
        rel = (rel + rel_trunc) * (1 + 1e-6) + EPS64 * 8
        if not math.isfinite(rel):
            rel = math.inf
        log_value, rel = log_as_value(log_est if abs(log_est) >= 1e4 else float(log_est), rel)
        return TailValue(s, log_value, rel, self.method, self.nodes_kept, self.n_nodes, lam)

    def _bounds(self, q, box):
        """``(per, shape, n, ub)``: per group the atoms ``(A_g t, log P, rel)`` of its range,
        the box's shape and size, and per atom (flat, C order) the float upper bound of the
        log of its term (:meth:`_sum`)."""
        shape = [hi - lo + 1 for lo, hi in box]
        n = math.prod(shape)
        if n > MAX_ATOMS:
            raise ArithmeticError("too many coarse atoms")
        per = []
        for (lo, hi), a, grp in zip(box, self.A, self.groups):
            per.append([(a * t, *grp.logp(t)) for t in range(lo, hi + 1)])
        s = q.threshold
        vf = float(self.vq_fine) if self.sub is not None else 0.0
        lsum = np.zeros(1)
        vsum = np.zeros(1)
        for g in per:
            lsum = (lsum[:, None] + np.array([float(x[1]) for x in g])[None, :]).ravel()
            vsum = (vsum[:, None] + np.array([float(x[0]) for x in g])[None, :]).ravel()
        slack = 1e-15 * (abs(float(s)) + np.abs(vsum)) + 1.0  # float rounding of s − v
        if self.sub is None:
            ub = np.where(vsum + slack >= s, lsum, -np.inf)
        else:
            gap = np.maximum(float(s) - vsum - slack, 0.0)
            ub = lsum - gap * gap / (2 * vf)
        fin = np.isfinite(ub)
        ub[fin] += 1e-12 * (1 + np.abs(ub[fin]))  # the float sums of the logs, rounded upwards
        return per, shape, n, ub

    def _sum(self, q, box, bounds=None):
        """``(log estimate, relative error, skipped)`` over the box: atoms in decreasing
        order of the upper bound ``p_c e^{−(s − v_c)_+²/(2V'_F)}`` of their term, evaluated
        in batches until the rest is below e^{−60} of the estimate (``skipped`` collects
        the logs of bounds of what was not evaluated, or not certified).  The bounds are
        ranked in float64 (numpy, rounded upwards by a margin); the evaluated atoms are
        then summed from their exact values and logs."""
        per, shape, n, ub = bounds if bounds is not None else self._bounds(q, box)
        order = np.argsort(-ub, kind="stable")
        parts, rels, skipped = [], [], []
        log_est = -math.inf
        i = 0
        while i < n:
            if parts and ub[order[i]] < float(log_est) - 60 - math.log(n - i):
                rest = ub[order[i:]]
                rest = rest[np.isfinite(rest)]
                if rest.size:
                    top = float(rest.max())
                    skipped.append(top + math.log(float(np.exp(rest - top).sum())) + 1e-12)
                break
            batch = []
            js = order[i:i + BATCH]
            cols = [ix.tolist() for ix in np.unravel_index(js, shape)]
            for r, u in enumerate(ub[js].tolist()):
                combo = [g[c[r]] for g, c in zip(per, cols)]
                lp = [x[1] for x in combo]
                if all(isinstance(x, float) for x in lp):
                    lg = sum(lp)
                else:  # logs beyond float64 (|log| ≥ 1e4): summed exactly enough
                    with mpmath.workprec(mp_bits_for(max(abs(float(x)) for x in lp) * len(lp)) + 64):
                        lg = mpmath.fsum(lp)
                batch.append((u, sum(x[0] for x in combo), lg, sum(x[2] for x in combo)))
            i += len(batch)
            vals = self._values(q, [(v, lg, r) for _, v, lg, r in batch])
            for (u, _, lg, r), (val, vr) in zip(batch, vals):
                if val is None:
                    skipped.append(u)
                    continue
                if isinstance(val, float) and val == -math.inf:
                    continue
                if isinstance(lg, float) and isinstance(val, float):
                    parts.append(lg + val)  # float sums of logs: their rounding charged
                    rels.append(r + vr + 4 * EPS64 * (abs(lg) + abs(val) + 1))
                else:
                    with mpmath.workprec(mp_bits_for(abs(float(lg)) + abs(float(val))) + 64):
                        parts.append(mpmath.mpf(lg) + val)
                    rels.append(r + vr + 4 * EPS64 * (abs(float(lg)) * isinstance(lg, float)
                                                      + abs(float(val)) * isinstance(val, float) + 1))
            if parts:
                log_est = _logsumexp(parts)
        if not parts:
            return None
        mx = max(parts)
        with mpmath.workprec(mp_bits_for(mx) + 64):
            ws = [float(mpmath.exp(x - mx)) if not isinstance(x, float) or not isinstance(mx, float)
                  else math.exp(x - mx) for x in parts]
        tot = math.fsum(ws)
        rel = math.fsum(w * r for w, r in zip(ws, rels)) / tot
        return log_est, rel, skipped

    def _values(self, q, atoms):
        """Per atom: (log of its factor, relative error) — the indicator / hockey factor
        of a pure enumeration, else the fine sub-value (None when not certified)."""
        s = q.threshold
        out = []
        if self.sub is None:
            for v, _, _ in atoms:
                if v < s:
                    out.append((-math.inf, 0.0))
                elif q.x0 == -math.inf:
                    out.append((0.0, 0.0))
                else:
                    # x0 and β are floats rounded from exact values (relative u each) and
                    # x is formed in float64: |dx| ≤ 4u(|x0| + β|v − s| + |x|); the factor
                    # 1 − e^x (x < 0) then moves by ≤ |dx|/min(|x|, 1) relative
                    x = q.x0 - q.beta * (v - s)
                    dx = 4 * EPS64 * (abs(q.x0) + q.beta * abs(v - s) + abs(x))
                    out.append((math.log(-math.expm1(x)), EPS64 * 8 + dx / min(abs(x), 1.0)))
            return out
        keys = self._keys(q, [v for v, _, _ in atoms])
        todo = list(dict.fromkeys(k for k in keys if k not in self._cache))
        if todo:
            self._fill([k for k in todo if isinstance(k, int)], [k for k in todo if not isinstance(k, int)])
        for k in keys:
            t = self._cache[k]
            out.append((t.log_value, t.rel_error) if certified(t, 1e-3) else (None, 0.0))
        return out

    def _layer_sg(self, i: int, t: int, s: int):
        """``(L̃, e)``: an upper bound (float) ``L̃`` of ``L(t) = log P(T_g = t) − x₊²/(2V_{R_g})``
        (x = s − A_g t; the sub-Gaussian bound of ``log P(R_g ≥ x)``) for coarse group i, and
        ``e ≥ L̃ − L(t)``: the atom's certified log plus its relative error, float roundings
        charged; None when the atom's log is beyond float range."""
        lg, r = self.groups[i].logp(t)
        lgf = float(lg)
        if not math.isfinite(lgf):
            return None
        round_lg = 4 * EPS64 * (1 + abs(lgf))
        up = lgf + r + round_lg
        x = s - self.A[i] * t
        if x <= 0:
            return up, r + 2 * round_lg
        vr = self._v_rest[i]
        if not vr > 0:
            return -math.inf, 0.0
        xf = float(x) * (1 - 4 * EPS64)  # rounded down: x² and the bound's size too
        sg = xf * xf / (2 * vr) * (1 - 8 * EPS64)  # V rounded up (_v_rest)
        return up - sg, r + 2 * round_lg + 16 * EPS64 * (1 + sg)

    def _truncation_sg(self, s, box, log_est, bad):
        """:meth:`_truncation` by the sub-Gaussian layer bounds :meth:`_layer_sg` in float64,
        or None where they do not decay outwards at an edge (or leave float range).

        The function ``L(t) = log P(T_g = t) − (s − A_g t)₊²/(2V)`` is concave (a log-concave
        pmf plus a concave function of t); each computed value ``L̃`` is above L by at most
        ``e(t0)`` (:meth:`_layer_sg`), so with ``Δ = L̃(t0) − L̃(t0 ± 1) − e(t0) > 0`` every
        layer beyond decays by ``e^{−Δ}`` and their sum is ≤ ``e^{L̃(t0)}/(1 − e^{−Δ})``."""
        terms = []
        for i, (lo, hi) in enumerate(box):
            for t0, side in ((hi + 1, 1), (lo - 1, -1)):
                a0 = self._layer_sg(i, t0, s)
                a1 = self._layer_sg(i, t0 + side, s)
                if a0 is None or a1 is None:
                    return None
                (l0, err), (l1, _) = a0, a1
                if l0 == -math.inf:
                    continue
                delta = l0 - l1 - err - 1e-12 * (1 + abs(l0))
                if not delta > 0:
                    return None
                terms.append(l0 - math.log(-math.expm1(-delta)) + 1e-12 * (1 + abs(l0)))
        terms += [float(x) for x in bad]
        terms = [x for x in terms if x != -math.inf]
        if not terms:
            return 0.0
        mx = max(terms)
        le = float(log_est)
        if not (math.isfinite(mx) and math.isfinite(le)):
            return None
        tot = mx + math.log(math.fsum(math.exp(x - mx) for x in terms)) + 1e-12 * (1 + abs(mx))
        d = tot - le + 1e-12 * (1 + abs(le))
        return math.exp(min(d, 700.0))

    @staticmethod
    def _layers(a_g: int, grp, rest, s: int, t0: int, side: int):
        """log of a bound of Σ_{t ≥ t0} (side +1) or Σ_{t ≤ t0} (side −1) of the layers
        ``e^{L(t)}``: ``e^{L(t0)}/(1 − e^{−Δ})`` with Δ = L(t0) − L(t0 + side) > 0 (L concave),
        or None when L does not decrease outwards at t0."""
        def L(t):
            lg, r = grp.logp(t)
            return mpmath.mpf(lg) + r + rest.log_upper_tail(s - a_g * t)

        l0, l1 = L(t0), L(t0 + side)
        delta = l0 - l1 - 1e-9 * (1 + abs(l0))
        if not delta > 0:
            return None
        return l0 - mpmath.log(-mpmath.expm1(-delta))

    @staticmethod
    def _geometric_above(a_g: int, grp, rest, s: int, t0: int):
        """log of a bound of Σ_{t ≥ t0} P(T_g = t) P(R ≥ s − A_g t): with
        ``P(T_g = t) ≤ e^{K_g(a) − a t}`` and ``P(R ≥ x) ≤ e^{K_R(b) − b x}`` (a > b A_g ≥ 0)
        the terms are geometric: ``e^{K_g(a) + K_R(b) − bs − (a − bA_g)t0}/(1 − e^{−(a − bA_g)})``."""
        b = rest.saddle(s - a_g * t0) if s - a_g * t0 > 0 else Fraction(0)
        b = max(b, Fraction(0))
        gap = grp.cgf.saddle(t0) if t0 > 0 else Fraction(0)
        gap = max(gap, Fraction(1, 10**6) / max(1, int(grp.sd)))
        a = b * a_g + gap
        with mpmath.workprec(mp_bits_for(a * t0 + b * s) + 64):
            return (grp.cgf.K(a) + rest.K(b) - to_mpf(b * s) - to_mpf(gap * t0)
                    - mpmath.log(-mpmath.expm1(-to_mpf(gap))))

    def _truncation(self, s, box, log_est, bad) -> float:
        """Relative bound of the configurations outside the box and of the uncertified
        atoms (see the module docstring): by the sub-Gaussian float bounds
        (:meth:`_truncation_sg`) when they give at most TRUNC_FAST, else the smaller of
        theirs and the Chernoff bounds' (multiprecision)."""
        fast = self._truncation_sg(s, box, log_est, bad)
        if fast is not None and fast <= TRUNC_FAST:
            return fast
        slow = self._truncation_chernoff(s, box, log_est, bad)
        return slow if fast is None else min(fast, slow)

    def _truncation_chernoff(self, s, box, log_est, bad) -> float:
        """:meth:`_truncation` by the Chernoff bounds of the rests (multiprecision)."""
        terms = []
        for (lo, hi), a, grp, rest in zip(box, self.A, self.groups, self.rest):
            # the layers beyond each edge: L(t) = log P(T_g = t) + log P̄(R_g ≥ s − A_g t) is
            # concave in t (a log-concave pmf plus a Legendre transform), so past an edge
            # where it decreases outwards the layers decay at least geometrically
            up = self._layers(a, grp, rest, s, hi + 1, +1)
            if up is None:  # fall back: T_g ≥ t* (R unconstrained) and hi < T_g < t*
                t_star = -((-s) // a)  # the smallest t with s − A_g t ≤ 0
                up = grp.cgf.log_upper_tail(max(hi + 1, t_star))
                if hi + 1 < t_star:
                    up = _logsumexp([up, self._geometric_above(a, grp, rest, s, hi + 1)])
            terms.append(up)
            down = self._layers(a, grp, rest, s, lo - 1, -1)
            if down is None:
                lower = grp.cgf.log_upper_tail(1 - lo) if 1 - lo > 0 else mpmath.mpf(0)
                down = lower + rest.log_upper_tail(s - a * (lo - 1))
            terms.append(down)
        terms += [mpmath.mpf(x) for x in bad]  # bounds of skipped / uncertified atoms
        mx = max(terms)
        if mx == -math.inf:
            return 0.0
        with mpmath.workprec(mp_bits_for(mx) + 64):
            tot = mx + mpmath.log(mpmath.fsum(mpmath.exp(t - mx) for t in terms))
            return float(mpmath.exp(min(tot - log_est, mpmath.mpf(700))))
