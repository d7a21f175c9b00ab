"""Certified tail probabilities ``P(S ≥ s)`` of a lattice sum: the engine that chooses.

:class:`TailEngine` holds one lattice sum and answers tails (and hockey-stick sums) with
a certified relative error, choosing per design among four methods (each in its own
module):

* the sieved tilted-contour trapezoid rule (:mod:`exactdp.engine.quadrature`) — the
  default, O(1) terms per tail, relative accuracy at any depth;
* exact lattice convolution (:mod:`exactdp.engine.convolution`) — when pruning is weak
  and the support is small (tails above its absolute truncation bound only);
* quadrature conditioned on the coarse groups (:mod:`exactdp.engine.conditioning`) —
  when a few groups with small σ² defeat the sieve or make the lattice too large; its
  sub-engine on the fine lattice is a TailEngine restricted to the first two methods;
* enumeration of tilted atoms — when every group is coarse (nearly deterministic noise).

Per value the quadrature costs ~nodes_kept·n_groups, the convolution n_atoms plus its
table set-up amortised over :data:`AMORTISED_VALUES` values (:func:`convolution_setup`), the
conditioned quadrature n_atoms(coarse)·(nodes kept on the fine lattice); the cheapest
is chosen, the others answer what it cannot certify.  Thresholds ``s ≤ 0`` use the
symmetry of S: ``P(S ≥ s) = 1 − P(S ≥ 1 − s)`` (the latter ≤ 1/2; lower tails
``P(S ≤ k) = P(S ≥ −k)`` are plain tails).  A value that cannot be certified to
``rel_tol`` raises :class:`UncertifiedError` (``strict=False`` returns it with the bound
it has).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.engine.atoms import SetCGF
from exactdp.engine.conditioning import ConditionedTails, atoms_estimate, fine_sublattice
from exactdp.engine.convolution import ConvolutionPlan, ConvolutionTails, plan_split, truncation_width
from exactdp.engine.lattice import LatticeSum
from exactdp.engine.quadrature import QuadratureTails, TailValue, WeightedQuery, certified, sieve_umaxes
from exactdp.engine.tilt import log_mgf_parts
from exactdp.engine.values import query_key, tail_queries, tail_value
from exactdp.numerics.errors import LatticeTooLarge, UncertifiedError
from exactdp.numerics.precision import DPS_RESULT, EPS64, to_mpf

__all__ = ["TailValue", "WeightedQuery", "TailEngine", "UncertifiedError", "METHODS"]

#: above this many sieved nodes a direct-convolution split is considered
SPLIT_MIN_NODES = 4000
#: the most coarse atoms (rough estimate) a conditioning may enumerate
MAX_COND_ATOMS = 20_000
#: the largest estimated cost (the units of ``costs``: nodes × groups, atoms, ...) the
#: engine takes on; beyond it (a decimal design whose lattice fits int64 but whose rule
#: needs 1e10 evaluations) the accountant hands the design to the lattice-free one.
#: The DHC pairs cost ≤ 1.3e6 (6-10, ~3 s).
COST_BUDGET = 50_000_000
#: the methods a TailEngine may choose among
METHODS = ("quadrature", "convolution", "conditioned")
#: the convolution's table set-up (multiply-adds, ~1 ns each) per node-group evaluation of the
#: rule (a theta ratio, ~50 ns): its set-up is charged to the values at this rate
SETUP_PER_EVAL = 50.0
#: the values a set-up is amortised over (the planner's 20 δ, 3 ε(δ) and 3 β(α))
AMORTISED_VALUES = 26
_NAMES = {"quadrature": "tilted-trapezoid", "convolution": "lattice-convolution",
          "conditioned": "conditioned-quadrature", "enumeration": "enumeration"}


def convolution_setup(A, m, s2, plan: ConvolutionPlan) -> float:
    """The multiply-adds of building a convolution plan's tables (the ``setup`` that
    :func:`exactdp.engine.convolution.plan_split` bounds by its MAX_SETUP): the dense fine
    table convolved with each fine group, and every group's m-fold pmf."""
    fine = plan.fine
    d = math.gcd(*(int(A[g]) for g in fine))
    dense = 1 + sum((int(A[g]) // d) * 2 * truncation_width(s2[g], m[g]) for g in fine)
    setup = sum(dense * (2 * truncation_width(s2[g], m[g]) + 1) for g in fine)
    setup += sum(int(m[g]) * (2 * truncation_width(s2[g], m[g]) + 1) * (2 * truncation_width(s2[g]) + 1)
                 for g in range(len(A)))
    return float(setup)


_ATOMS: dict = {}  # (σ², m) of one group → its factor of atoms_estimate


def _atoms_factor(s2: float, m: int) -> int:
    """``atoms_estimate([s2], [m])``, kept per group: :func:`atoms_estimate` of a set of groups is
    the product of these factors (one per group, the same integers), and a sweep's or a tune's
    designs share their groups."""
    key = (s2, m)
    got = _ATOMS.get(key)
    if got is None:
        if len(_ATOMS) >= 65536:
            _ATOMS.clear()
        got = _ATOMS[key] = atoms_estimate([s2], [m])
    return got


class TailEngine:
    """Tail probabilities of one lattice sum, with node sets and factors cached.

    Parameters
    ----------
    lattice : LatticeSum
    rel_tol : float
        Required certified relative error of every returned tail (default 1e-10).
    kappa : float
        Nodes per standard deviation: ``N ≈ kappa·sqrt(V')`` (default 16).
    lam_step_sd : float
        Spacing of the tilt grid in units of 1/sd(S) (default 1).
    methods : tuple of str
        The methods this engine may use (a subset of :data:`METHODS`); conditioning builds
        its sub-engine without ``"conditioned"``.

    Raises
    ------
    LatticeTooLarge
        When no method fits the design's lattice in int64 phase arithmetic.
    """

    def __init__(self, lattice: LatticeSum, rel_tol: float = 1e-10, kappa: float = 16.0,
                 lam_step_sd: float = 1.0, methods: tuple = METHODS):
        self.lattice = lattice
        self.rel_tol = float(rel_tol)
        if max(abs(int(a)) for a in lattice.weights) >= 2**62:
            raise LatticeTooLarge("lattice weights beyond 64 bits")
        self.A = np.array(lattice.weights, dtype=np.int64)
        self.m = np.array(lattice.counts, dtype=np.int64)
        self.s2 = np.array([float(s) for s in lattice.sigma2])
        self.vproxy = float(np.sum(self.m * self.A.astype(float) ** 2 * self.s2))
        self.quad: QuadratureTails | None
        try:
            self.quad = QuadratureTails(lattice, rel_tol=rel_tol, kappa=kappa, lam_step_sd=lam_step_sd)
        except LatticeTooLarge:
            self.quad = None
        q = self.quad
        if q is not None:
            self.var, self.n_nodes, umax = q.var, q.n_nodes, q.umax
        else:
            T = math.log(1.0 / self.rel_tol) + 0.5 * math.log(2 * math.pi * self.vproxy) + 6.0
            umax = sieve_umaxes(self.s2, self.m, T)
            self.var, self.n_nodes = self.vproxy, 0
        self.umax = umax
        self.conv: ConvolutionTails | None = None
        self.cond: ConditionedTails | None = None
        self.method = _NAMES["quadrature"]
        G = len(self.A)
        order = sorted(range(G), key=lambda g: (-umax[g], self.s2[g]))
        self._plan = plan_split(self.A, self.m, self.s2, order) if G > 1 and "convolution" in methods else None
        if q is not None and q.nodes_kept <= SPLIT_MIN_NODES and np.max(umax) < math.pi:
            self.cost = float(q.nodes_kept * G)
            return
        costs: dict[str, float] = {"quadrature": float(q.nodes_kept * G)} if q is not None else {}
        if self._plan is not None:
            costs["convolution"] = self._plan.n_atoms + convolution_setup(self.A, self.m, self.s2, self._plan) / (
                SETUP_PER_EVAL * AMORTISED_VALUES)
        coarse = [g for g in range(G) if umax[g] >= math.pi]
        cond = None
        pick = self._pick_coarse(coarse) if "conditioned" in methods and coarse else None
        if (pick is not None and q is not None and q.nodes_kept <= SPLIT_MIN_NODES
                and costs["quadrature"] <= min(costs.get("convolution", math.inf), pick[2])):
            # the quadrature is cheap and stays the method: the conditioning is only a
            # fallback, built when first needed (deterministically)
            self._lazy_cond = (pick, methods)
            self.cost = float(costs["quadrature"])
            return
        if pick is not None:
            sel, n_atoms, _ = pick
            if len(sel) < G:
                try:
                    d, sub_lattice = fine_sublattice(lattice, sel)
                    sub = TailEngine(sub_lattice, rel_tol=self.rel_tol / 4,
                                     methods=tuple(x for x in methods if x != "conditioned"))
                    cond = ConditionedTails(lattice, sel, d, sub)
                    # per atom, the sub-engine's cost of a value: its quadrature's nodes × groups, or
                    # (a sub-lattice beyond int64 phases: no quadrature) its chosen method's own estimate
                    costs["conditioned"] = n_atoms * max(cond.nodes_kept * (G - len(sel)), sub.cost, 1.0)
                except LatticeTooLarge:
                    cond = None
            else:
                cond = ConditionedTails(lattice, sel)
                costs["conditioned"] = n_atoms
        if not costs:
            raise LatticeTooLarge("the design's exact lattice is beyond int64 phase arithmetic "
                                  "(the lattice-free route takes such designs)")
        best = min(costs, key=costs.__getitem__)
        #: the chosen method's estimated node-group evaluations (the planner compares routes on it)
        self.cost = float(costs[best])
        if costs[best] > COST_BUDGET:
            raise LatticeTooLarge(f"the exact engine's cheapest method ({_NAMES[best]}) is estimated at "
                                  f"{costs[best]:.2g} node-group evaluations (budget {COST_BUDGET:.0e}; "
                                  "the lattice-free route takes such designs)")
        if cond is not None:
            self.cond = cond
        if best == "convolution":
            self._use_convolution()
        elif best == "conditioned":
            assert cond is not None  # costs["conditioned"] is set with it
            self.method = cond.method
            self._prefer_cond = True
        if q is None and best != "conditioned" and cond is None:
            self.method = _NAMES[best]

    _prefer_cond = False
    #: estimated node-group evaluations of the chosen method (0: not estimated)
    cost = 0.0
    _fallback: ConvolutionTails | None = None
    _lazy_cond: tuple | None = None

    def _conditioned(self):
        """The conditioned method (built on first use when it is only a fallback)."""
        if self.cond is None and self._lazy_cond is not None:
            (sel, _, _), methods = self._lazy_cond
            self._lazy_cond = None
            try:
                if len(sel) < len(self.A):
                    d, sub_lattice = fine_sublattice(self.lattice, sel)
                    sub = TailEngine(sub_lattice, rel_tol=self.rel_tol / 4,
                                     methods=tuple(x for x in methods if x != "conditioned"))
                    self.cond = ConditionedTails(self.lattice, sel, d, sub)
                else:
                    self.cond = ConditionedTails(self.lattice, sel)
            except LatticeTooLarge:
                self.cond = None
        return self.cond

    def _pick_coarse(self, coarse):
        """The groups to enumerate: among the prefixes of the coarse groups ordered by their
        share of the node count (m A² max(σ², 1/4), largest first), the one of least
        estimated cost (atoms × nodes of the rest × groups of the rest) with at most
        MAX_COND_ATOMS atoms; ``(groups, atoms, estimated cost)`` or None."""
        share = [int(self.m[g]) * float(self.A[g]) ** 2 * max(self.s2[g], 0.25) for g in range(len(self.A))]
        ranked = sorted(coarse, key=lambda g: -share[g])
        best = None
        for k in range(1, len(ranked) + 1):
            sel = tuple(sorted(ranked[:k]))
            n_atoms = math.prod(_atoms_factor(self.s2[g], int(self.m[g])) for g in sel)
            if n_atoms > MAX_COND_ATOMS:
                break
            rest = [g for g in range(len(self.A)) if g not in sel]
            if rest:
                d = math.gcd(*(int(self.A[g]) for g in rest))
                nodes = 16 * math.sqrt(sum(share[g] for g in rest)) / d + 64
                cost = n_atoms * nodes * len(rest)
            else:
                cost = n_atoms
            if best is None or cost < best[0]:
                best = (cost, sel, n_atoms)
        return None if best is None else (best[1], best[2], best[0])

    def _order(self) -> list:
        """The available methods, the chosen one first and the quadrature last."""
        has_cond = self.cond is not None or self._lazy_cond is not None
        alts = [n for n, ok in (("conditioned", has_cond), ("convolution", self.conv is not None)) if ok]
        if self._prefer_cond:
            alts.sort(key=lambda n: n != "conditioned")
        elif self.conv is not None and self.method == _NAMES["convolution"]:
            alts.sort(key=lambda n: n != "convolution")
        elif self.quad is not None:
            return ["quadrature"] + alts
        return alts + (["quadrature"] if self.quad is not None else [])

    def _use_convolution(self) -> None:
        if self.conv is None and self._plan is not None:
            self.conv = ConvolutionTails(self.A, self.m, self.s2, self._plan)
            self.method = _NAMES["convolution"]

    def log_chernoff(self, s: int):
        """An upper bound of log P(S ≥ s) (Chernoff at the saddle point, exact CGF; 0 for
        s ≤ 0), for tails no method certifies."""
        if self._cgf is None:
            lat = self.lattice
            self._cgf = SetCGF(lat.weights, lat.counts, lat.sigma2)
        return self._cgf.log_upper_tail(int(s))

    _cgf: SetCGF | None = None

    @property
    def weighted_costly(self) -> bool:
        """Whether hockey-stick sums cost more than tails (the chosen method, the
        convolution, gives tails only)."""
        return self.conv is not None and self.method == _NAMES["convolution"]

    @property
    def nodes_kept(self) -> int:
        return self.quad.nodes_kept if self.quad is not None else (self.cond.nodes_kept if self.cond else 0)

    def done(self, tv: TailValue | None) -> bool:
        return certified(tv, self.rel_tol)

    # -- tails ------------------------------------------------------------------------
    def tails(self, thresholds, strict: bool = True) -> list[TailValue]:
        """Certified ``P(S ≥ s)`` for each integer threshold (order preserved).

        With ``strict=False`` nothing is raised: a tail that could not be certified to
        ``rel_tol`` is returned with the (larger, possibly infinite) bound it has.
        """
        thr = [int(s) for s in thresholds]
        upper = sorted({s if s >= 1 else 1 - s for s in thr})
        best = dict(zip(upper, self._values(upper, strict, conv_ok=True, unique=True, plain=True)))
        if all(s > 0 for s in thr):
            return [best[s] for s in thr]
        # the lower thresholds by _complement, each distinct one once (a value is a pure
        # function of its threshold), in one loop
        comp = {}
        _exp, _expm1, _log, tnew, tv_cls, inf, eps2 = math.exp, math.expm1, math.log, tuple.__new__, TailValue, \
            math.inf, 2 * EPS64
        for s in thr:
            if s <= 0 and s not in comp:
                t, lv, rel, method, kept, total, lam = best[1 - s]  # the fields (a TailValue is their tuple)
                lv = lv if type(lv) is float else float(lv)
                p = _exp(lv)  # tv.value
                q = -_expm1(lv)  # 1 − p, p ≤ 1/2 here
                comp[s] = tnew(tv_cls, (1 - t, _log(q), (rel * p + eps2) / q, method + "+complement", kept, total, lam)
                               if q > 0 else (1 - t, -inf, inf, method + "+complement", kept, total, lam))
        return [best[s] if s > 0 else comp[s] for s in thr]

    def tail_floats(self, thresholds) -> tuple[list, list]:
        """The logs and certified relative bounds of ``P(S ≥ s)`` of each threshold (order
        kept): the ``log_value`` and ``rel_error`` of :meth:`tails` (``strict=True``), bit for
        bit, as two lists.

        When the quadrature is the first method and its first pass certifies every upper
        threshold on the float path (:meth:`QuadratureTails.plain_floats`), no TailValue is
        built: a lower threshold s ≤ 0 is the complement ``1 − P(S ≥ 1 − s)`` by the float
        operations of :meth:`tails` (``math``'s ``exp``, ``expm1``, ``log``, one value at a
        time).  Otherwise the fields of :meth:`tails`' values.
        """
        got = None
        ta = None
        if self.quad is not None and self._order()[0] == "quadrature":
            try:
                ta = np.array(thresholds, dtype=np.int64)
            except OverflowError:
                ta = None
        if ta is not None and ta.size and int(np.abs(ta).max()) < 2**52 and self.quad is not None:
            up = np.where(ta >= 1, ta, 1 - ta)
            upper = np.sort(up)  # sorted, distinct, ≥ 1 (np.unique's values, without its hash table)
            upper = upper[np.concatenate(([True], upper[1:] != upper[:-1]))]
            got = self.quad.plain_floats(upper)
        if got is None:
            tvs = self.tails([int(s) for s in thresholds])
            return [tv[1] for tv in tvs], [tv[2] for tv in tvs]
        assert ta is not None  # got is set only where ta is
        pos = np.searchsorted(upper, up)
        lv, rel = got[0][pos], got[1][pos]
        low = np.flatnonzero(ta <= 0)
        if low.size:
            # the lower thresholds by _complement's operations: math's exp, expm1 and log one
            # value at a time (numpy's are not libm's bit for bit); the products, sums and
            # quotients in numpy (IEEE operations, the same bits)
            lvl = lv[low].tolist()
            n_low = len(lvl)
            p = np.fromiter(map(math.exp, lvl), dtype=np.float64, count=n_low)
            q = -np.fromiter(map(math.expm1, lvl), dtype=np.float64, count=n_low)  # 1 − p, p ≤ 1/2 here
            ok = q > 0
            lv_low = np.full(n_low, -math.inf)
            rel_low = np.full(n_low, math.inf)
            qk = q[ok]
            lv_low[ok] = list(map(math.log, qk.tolist()))
            rel_low[ok] = (rel[low][ok] * p[ok] + 2 * EPS64) / qk
            lv[low] = lv_low
            rel[low] = rel_low
        return lv.tolist(), rel.tolist()

    def tail(self, s: int) -> TailValue:
        return self.tails([s])[0]

    def weighted(self, queries, strict: bool = True) -> list[TailValue]:
        """Certified hockey-stick sums ``Σ_{s≥k} P(S = s)(1 − e^{x0 − β(s−k)})`` (see
        :class:`~exactdp.engine.values.WeightedQuery`; x0 = −inf gives tails, which
        must then have k ≥ 1)."""
        return self._values(list(queries), strict, conv_ok=False)

    def _values(self, qs, strict: bool, conv_ok: bool, unique: bool = False, plain: bool = False):
        """The values of the queries ``qs`` (a list; ``unique``: no two equal), each
        method in :meth:`_order` asked for what the previous ones left uncertified, then
        the far-left and last-resort routes; kept per distinct query by index.  ``plain``:
        ``qs`` are the (unique, ≥ 1) thresholds of plain tails, and query objects are made
        only for a method that needs them (the same values)."""
        if not unique and not plain:
            first: dict = {}
            for q in qs:
                first.setdefault(query_key(q), q)
            if len(first) < len(qs):  # equal queries get one value (the same object)
                got = dict(zip(first, self._values(list(first.values()), strict, conv_ok, unique=True)))
                return [got[query_key(q)] for q in qs]
        thr = qs if plain else [q.threshold for q in qs]
        n = len(qs)
        vals = [None] * n
        ok = [False] * n  # certified(vals[i], tol), kept with vals[i]
        tol = self.rel_tol

        def offer(i, tv):
            if tv is None:
                return
            old = vals[i]
            if old is None or (tv.rel_error < old.rel_error):
                vals[i] = tv
                ok[i] = certified(tv, tol)

        def uncertified(idx):
            return [i for i in idx if not ok[i]]

        methods = self._order()
        if methods and methods[0] == "quadrature":
            # the first method asked for every value (the prior all None): the loop's first
            # pass, and the values themselves when it certifies them all
            assert self.quad is not None  # in _order only when built
            got, flags = self.quad.weighted_list_ok(qs, None, plain)
            if all(flags):  # a flag is certified(value): nothing else is asked, no value is None
                return got
            vals, ok = list(got), list(flags)
            methods = methods[1:]
        for name in methods:
            todo = uncertified(range(n))
            if not todo:
                break
            if name == "convolution":
                todo = [i for i in todo if abs(thr[i]) < 2**62]  # its table is int64
                if not conv_ok or not todo:
                    continue
                assert self.conv is not None  # in _order only when built
                vals_c = self.conv.tails([thr[i] for i in todo])
                for i, (lv, rel) in zip(todo, vals_c):
                    offer(i, tail_value(thr[i], lv, rel, "lattice-convolution", 0, 0, 0.0))
            elif name == "conditioned":
                cond = self._conditioned()
                if cond is None:
                    continue
                sub = tail_queries([thr[i] for i in todo]) if plain else [qs[i] for i in todo]
                for i, tv in zip(todo, cond.weighted(sub)):
                    offer(i, tv)
            else:
                # each value the better of its prior (vals[i]) and the rule's, as offer() keeps
                assert self.quad is not None  # in _order only when built
                got, flags = self.quad.weighted_list_ok([qs[i] for i in todo], [vals[i] for i in todo], plain)
                for i, tv, flag in zip(todo, got, flags):
                    if tv is not None:
                        vals[i] = tv
                        ok[i] = flag
        missing = uncertified(range(n))
        left = [] if plain else [i for i in missing if qs[i].x0 != -math.inf and qs[i].threshold <= 0]
        if left:
            for i, tv in zip(left, self._left_weighted([qs[i] for i in left])):
                offer(i, tv)
            missing = uncertified(range(n))
        if missing and strict and conv_ok and self._plan is not None and "convolution" not in self._order():
            # a last resort for strict tails: the convolution (built once, deterministic),
            # asked only for what the chosen methods could not certify
            if self._fallback is None:
                self._fallback = ConvolutionTails(self.A, self.m, self.s2, self._plan)
            todo = [i for i in missing if abs(thr[i]) < 2**62]
            for i, (lv, rel) in zip(todo, self._fallback.tails([thr[i] for i in todo])):
                offer(i, tail_value(thr[i], lv, rel, "lattice-convolution", 0, 0, 0.0))
            missing = uncertified(range(n))
        if missing and strict:
            raise UncertifiedError(f"could not certify {len(missing)} value(s) to relative accuracy "
                                   f"{self.rel_tol:g} (first threshold {thr[missing[0]]})")
        return [v or TailValue(s, -math.inf, math.inf, self.method, self.nodes_kept, self.n_nodes, 0.0)
                for s, v in zip(thr, vals)]

    def _left_weighted(self, qs):
        """Hockey-stick sums at thresholds left of the centre, where the rule's j > 0
        aliasing is not small: far left (1 − k ≥ max(10 sd, βV')) by

            Σ_{s≥k} P(S=s)(1 − e^{x0 − β(s−k)}) = −expm1(y) − P(S ≥ 1 − k) + r,
            y = x0 + βk + K(β),   0 ≤ r ≤ e^{x0 + β − (1 − k)²/(2V')}

        (K = log E e^{tS} exact; r = e^{x0+βk} E[e^{−βS}; S < k] by Chernoff with the
        sub-Gaussian bound), nearer the centre by the rule on a 2.5× finer grid."""
        out = []
        sd = math.sqrt(self.vproxy)
        wide = []
        far = [q for q in qs if 1 - q.threshold >= max(10 * sd, q.beta * self.vproxy)]
        lower = dict(zip((1 - q.threshold for q in far), self.tails([1 - q.threshold for q in far], strict=False)))
        for q in qs:
            k = q.threshold
            if 1 - k >= max(10 * sd, q.beta * self.vproxy):
                out.append(self._far_left(q, lower[1 - k]))
            else:
                out.append(None)
                wide.append(q)
        if wide:
            if self._wide is None:
                try:
                    self._wide = QuadratureTails(self.lattice, rel_tol=self.rel_tol, kappa=40.0)
                except LatticeTooLarge:
                    self._wide = False
            if self._wide:
                got = self._wide.weighted(wide)
                out = [got.get(q) if v is None else v for q, v in zip(qs, out)]
        return out

    _wide = None

    def _far_left(self, q, tl: TailValue) -> TailValue | None:
        """One far-left value given the certified lower tail ``tl = P(S ≥ 1 − k)``."""
        k = q.threshold
        if not self.done(tl):
            return None
        lat = self.lattice
        bq = Fraction(q.beta)
        exact, kappa, kerr = log_mgf_parts(lat.weights, lat.counts, [Fraction(x) for x in lat.sigma2], bq)
        with mpmath.workdps(DPS_RESULT + len(str(abs(k)))):
            y = mpmath.mpf(q.x0) + to_mpf(bq * k) + to_mpf(exact) + kappa
            if y >= 0:
                return None
            main = -mpmath.expm1(y)
            dy = EPS64 * (abs(q.x0) + 1) + kerr + 1e-30 * abs(y)
            main_err = main * (mpmath.expm1(dy) * mpmath.exp(y) / main + dy) if y > -1 else main * dy
            pt = mpmath.exp(tl.log_mp)
            rb = mpmath.exp(mpmath.mpf(q.x0) + q.beta - mpmath.mpf(1 - k) ** 2 / (2 * self.vproxy))
            est = main - pt + rb / 2
            if est <= 0:
                return None
            err = main_err + pt * tl.rel_error + rb / 2
            rel = float(err / est) * (1 + 1e-6)
            return TailValue(k, float(mpmath.log(est)), rel, self.method + "+far-left", self.nodes_kept, self.n_nodes,
                             0.0)

    @staticmethod
    def _complement(tv: TailValue, _exp=math.exp, _expm1=math.expm1, _log=math.log) -> TailValue:
        thr, lv, rel, method, kept, total, lam = tv  # the fields (a TailValue is their tuple)
        lv = lv if type(lv) is float else float(lv)
        p = _exp(lv)  # tv.value
        q = -_expm1(lv)  # 1 − p, p ≤ 1/2 here
        if q > 0:
            return tail_value(1 - thr, _log(q), (rel * p + 2 * EPS64) / q, method + "+complement", kept, total, lam)
        return tail_value(1 - thr, -math.inf, math.inf, method + "+complement", kept, total, lam)
