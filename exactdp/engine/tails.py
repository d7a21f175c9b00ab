"""Certified tail probabilities ``P(S ≥ s)`` of a lattice sum: the engine that chooses.

:class:`TailEngine` holds one lattice sum and answers tails with a certified relative
error, choosing per design among three methods (each in its own module):

* the sieved tilted-contour trapezoid rule (:mod:`exactdp.engine.quadrature`) — the
  default, O(1) terms per tail in log space, relative accuracy down to e^{−700} and below;
* exact lattice convolution (:mod:`exactdp.engine.convolution`) — when pruning is weak
  and the support is small;
* quadrature conditioned on the coarse groups (:mod:`exactdp.engine.conditioning`) —
  when a few groups with small σ² defeat the sieve; its sub-engine on the fine lattice is
  a TailEngine restricted to the other two methods.

Per tail the quadrature costs ~nodes_kept·n_groups, the convolution n_atoms, the
conditioned quadrature n_atoms(coarse)·(nodes kept on the fine lattice); the cheapest
is chosen.  Thresholds ``s ≤ 0`` use the symmetry of S: ``P(S ≥ s) = 1 − P(S ≥ 1 − s)``.
A tail that cannot be certified to ``rel_tol`` raises :class:`UncertifiedError`
(``strict=False`` returns it with the bound it has).
"""

from __future__ import annotations

import math

import numpy as np

from exactdp.engine.conditioning import ConditionedTails, coarse_atoms_count, fine_sublattice
from exactdp.engine.convolution import ConvolutionTails, plan_split
from exactdp.engine.lattice import LatticeSum
from exactdp.engine.quadrature import QuadratureTails, TailValue
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.precision import EPS64

__all__ = ["TailValue", "TailEngine", "UncertifiedError", "METHODS"]

#: above this many sieved nodes a direct-convolution split is considered
SPLIT_MIN_NODES = 4000
#: the methods a TailEngine may choose among
METHODS = ("quadrature", "convolution", "conditioned")


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
        The methods this engine may use (a subset of :data:`METHODS` that contains
        ``"quadrature"``); conditioning builds its sub-engine without ``"conditioned"``.
    """

    def __init__(self, lattice: LatticeSum, rel_tol: float = 1e-10, kappa: float = 16.0,
                 lam_step_sd: float = 1.0, methods: tuple = METHODS):
        self.lattice = lattice
        self.rel_tol = float(rel_tol)
        self.quad = QuadratureTails(lattice, rel_tol=rel_tol, kappa=kappa, lam_step_sd=lam_step_sd)
        q = self.quad
        self.A, self.m, self.s2 = q.A, q.m, q.s2
        self.vproxy, self.var, self.n_nodes = q.vproxy, q.var, q.n_nodes
        self.conv = None
        self.cond = None
        self.method = "tilted-trapezoid"
        # least prunable groups first: they are the ones to enumerate exactly
        order = sorted(range(len(self.A)), key=lambda g: (-q.umax[g], self.s2[g]))
        self._plan = plan_split(self.A, self.m, self.s2, order) if len(self.A) > 1 and "convolution" in methods else None
        if q.nodes_kept > SPLIT_MIN_NODES or np.max(q.umax) >= math.pi:
            costs = {"quadrature": q.nodes_kept * len(self.A)}
            if self._plan is not None:
                costs["convolution"] = self._plan.n_atoms
            coarse = [g for g in range(len(self.A)) if q.umax[g] >= math.pi]
            cond = None
            if "conditioned" in methods and coarse and len(coarse) < len(self.A):
                if coarse_atoms_count(self.s2, self.m, coarse) <= 4000:
                    d, sub_lattice = fine_sublattice(lattice, self.A, self.m, coarse)
                    sub = TailEngine(sub_lattice, rel_tol=self.rel_tol / 4,
                                     methods=tuple(x for x in methods if x != "conditioned"))
                    cond = ConditionedTails(self.A, self.m, self.s2, coarse, d, sub)
                    costs["conditioned"] = len(cond.values) * max(cond.nodes_kept, 1) * (len(self.A) - len(coarse))
            best = min(costs, key=costs.get)
            if best == "convolution":
                self._use_convolution()
            elif best == "conditioned":
                self.cond = cond
                self.method = "conditioned-quadrature"

    def _use_convolution(self) -> None:
        if self.conv is None and self._plan is not None:
            self.conv = ConvolutionTails(self.A, self.m, self.s2, self._plan)
            self.method = "lattice-convolution"

    @property
    def nodes_kept(self) -> int:
        return self.quad.nodes_kept

    # -- tails ------------------------------------------------------------------------
    def tails(self, thresholds, strict: bool = True) -> list[TailValue]:
        """Certified ``P(S ≥ s)`` for each integer threshold (order preserved).

        With ``strict=False`` nothing is raised: a tail that could not be certified to
        ``rel_tol`` is returned with the (larger, possibly infinite) bound it has.
        """
        thr = [int(s) for s in thresholds]
        best: dict[int, TailValue] = {}

        def offer(tv: TailValue) -> None:
            old = best.get(tv.threshold)
            if old is None or tv.rel_error < old.rel_error:
                best[tv.threshold] = tv

        upper = sorted({s if s >= 1 else 1 - s for s in thr})
        for alt, name in ((self.cond, "conditioned-quadrature"), (self.conv, "lattice-convolution")):
            if alt is None:
                continue
            todo = [s for s in upper if not self.quad.done(best.get(s))]
            for s, (lv, rel) in zip(todo, alt.tails(todo)):
                offer(TailValue(s, lv, rel, name, getattr(alt, "nodes_kept", 0), getattr(alt, "n_nodes", 0), 0.0))
        self.quad.tails(upper, best)
        missing = [s for s in upper if not self.quad.done(best.get(s))]
        if missing and strict:
            if self.conv is None and self._plan is not None:
                self._use_convolution()
                return self.tails(thresholds, strict)
            raise UncertifiedError(f"float64 tail not certified at thresholds {missing[:5]}")
        return [self._complement(best[1 - s]) if s <= 0 else best[s] for s in thr]

    def tail(self, s: int) -> TailValue:
        return self.tails([s])[0]

    def _complement(self, tv: TailValue) -> TailValue:
        p = tv.value
        q = -math.expm1(tv.log_value)  # 1 − p, p ≤ 1/2 here
        err = (tv.rel_error * p + 2 * EPS64) / q
        return TailValue(1 - tv.threshold, math.log(q), err, tv.method + "+complement", tv.nodes_kept, tv.nodes_total, tv.lam)
