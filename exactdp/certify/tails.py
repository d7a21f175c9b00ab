"""The certificate's tail oracle for one lattice sum: it chooses among three enclosures.

* ``enumeration`` — every group enumerated as an Arb polynomial (:mod:`.enumeration`),
  when the support is small (degree ≤ :data:`ENUM_MAX_DEGREE`);
* ``tilted-trapezoid`` — the tilted trapezoid rule in balls over this package's own
  node set (:mod:`.trapezoid`, :mod:`.nodes`);
* ``conditioned`` — the groups with the smallest own support (``m_g s_g²``) enumerated,
  the rest by the trapezoid rule on its own, smaller lattice.

The choice is by an estimated cost (seconds) from the sizes that matter — polynomial
degree, kept nodes, atoms — and affects speed only: each method's enclosure is rigorous
on its own.  Thresholds ``s ≤ 0`` of the trapezoid rule use ``P(S ≥ s) = 1 − P(S ≥ 1−s)``.
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import arb

from exactdp.certify.enumeration import ConditionedTails, EnumeratedTails, enumeration_size
from exactdp.certify.trapezoid import TrapezoidTails
from exactdp.engine.lattice import LatticeSum

__all__ = ["BallTails", "METHODS", "ENUM_MAX_DEGREE"]

METHODS = ("enumeration", "conditioned", "tilted-trapezoid")
ENUM_MAX_DEGREE = 400_000
COND_MAX_DEGREE = 200_000
MAX_CANDIDATES = 3_000_000
#: rough costs (seconds, measured on the bench machine) of one theta evaluation, one
#: node-phase product, one enumerated coefficient and one residue-class product
C_THETA, C_NODE, C_COEF, C_PIECE = 30e-6, 6e-6, 5e-6, 1e-4
#: tilts a query typically needs (two tails of a δ, the steps of an ε or β search)
N_TILTS = 3


class BallTails:
    """Enclosures of ``P(S ≥ s)`` for the lattice sum of a design (build inside
    :func:`exactdp.certify.balls.precision`).

    Parameters
    ----------
    lattice : LatticeSum
    log_inv_eta : float
        ``log(1/η)``: discarded terms ≤ η relative to each tail.
    method : str, optional
        Force one of :data:`METHODS` (default: the cheapest).
    kappa : float, optional
        Trapezoid nodes per standard deviation (default from η).
    """

    def __init__(self, lattice: LatticeSum, log_inv_eta: float, method: str | None = None,
                 kappa: float | None = None):
        if method is not None and method not in METHODS:
            raise ValueError(f"method must be one of {METHODS}")
        self.lattice = lattice
        self.log_inv_eta = float(log_inv_eta)
        self.log_inv_tau = 745.0 + self.log_inv_eta
        self.groups = [(int(a), int(m), Fraction(s2))
                       for a, m, s2 in zip(lattice.weights, lattice.counts, lattice.sigma2)]
        self.impl = self._choose(method, kappa)
        self.method = self.impl.method
        self._cache: dict = {}

    # -- planning -----------------------------------------------------------------------
    def _choose(self, method, kappa):
        groups = self.groups
        G = len(groups)
        options = {}
        builders = {}
        deg, pieces = enumeration_size(groups, self.log_inv_tau)
        if deg <= ENUM_MAX_DEGREE or (method == "enumeration" and deg < 10**18):
            options["enumeration"] = C_COEF * deg + C_PIECE * pieces
            builders["enumeration"] = lambda: EnumeratedTails(groups, self.log_inv_tau, self.log_inv_eta)
        if method in (None, "tilted-trapezoid"):
            tt = self._trapezoid(groups, self.log_inv_eta, kappa)
            if tt is not None:
                options["tilted-trapezoid"] = tt.nodes_kept * (N_TILTS * G * C_THETA + 4 * C_NODE)
                builders["tilted-trapezoid"] = lambda: tt
        if method in (None, "conditioned") and G > 1:
            order = sorted(range(G), key=lambda g: (groups[g][1] * groups[g][2], g))
            best = None
            for k in range(1, G):
                coarse = [groups[g] for g in order[:k]]
                fine = [groups[g] for g in order[k:]]
                cdeg, cpieces = enumeration_size(coarse, self.log_inv_tau)
                if cdeg > COND_MAX_DEGREE:
                    break
                cost = self._conditioned_cost(coarse, fine, cdeg, kappa)  # None: this split is infeasible
                cost = None if cost is None else cost + C_PIECE * cpieces
                if cost is not None and (best is None or cost < best[0]):
                    best = (cost, coarse, fine)
            if best is not None:
                _, coarse, fine = best
                options["conditioned"] = best[0]
                builders["conditioned"] = lambda: ConditionedTails(coarse, fine, self.log_inv_eta,
                                                                   self.log_inv_tau, kappa)
        if method is not None:
            if method not in builders:
                raise ValueError(f"method {method!r} is not feasible for this design")
            return builders[method]()
        if not options:
            raise OverflowError("no certification method is feasible for this design (lattice too large)")
        return builders[min(options, key=options.get)]()

    @staticmethod
    def _trapezoid(groups, log_inv_eta, kappa):
        try:
            return TrapezoidTails(groups, log_inv_eta, kappa, max_candidates=MAX_CANDIDATES)
        except OverflowError:
            return None

    def _conditioned_cost(self, coarse, fine, cdeg, kappa):
        d = math.gcd(*(a for a, _, _ in fine))
        sub = [(a // d, m, s2) for a, m, s2 in fine]
        tt = self._trapezoid(sub, self.log_inv_eta + 4.0, kappa)
        if tt is None:
            return None
        gam = math.gcd(*(a for a, _, _ in coarse))
        sd_y = math.sqrt(sum(m * a * a * float(s2) for a, m, s2 in coarse)) / gam
        n_eff = min(cdeg + 1, 20.0 * sd_y + 1)
        n_lam = min(2 * n_eff, 160)
        return (C_COEF * cdeg + 4 * n_eff * tt.nodes_kept * C_NODE
                + n_lam * tt.nodes_kept * len(fine) * C_THETA)

    # -- tails ------------------------------------------------------------------------
    def parameters(self) -> dict:
        """What the chosen method used (node count, sieve level, truncation widths, ...)."""
        return {"tail_method": self.method, "discard_log2": round(self.log_inv_eta / math.log(2), 3),
                **self.impl.parameters()}

    def tail(self, s: int) -> arb:
        """A ball containing ``P(S ≥ s)`` (any integer s)."""
        s = int(s)
        v = self._cache.get(s)
        if v is None:
            v = self._cache[s] = self.impl.tail(s)
        return v
