"""Exact privacy accounting: δ(ε), ε(δ) and the f-DP trade-off curve of any design.

:class:`ExactAccountant` is one class for every design: it asks the planner
(:mod:`exactdp.accounting.plan`) which route answers the composition, holds that route's
accountant and delegates every query to it:

* the int64 lattice route (:mod:`exactdp.accounting.lattice_route`: exact integer
  thresholds, certified point values; the methods and their error bounds are described
  there);
* the lattice-free route (:mod:`exactdp.accounting.lattice_free`: certified brackets, any
  lattice).

``method=`` forces a route; the chosen route, its cost estimate and the reason are in
:meth:`ExactAccountant.diagnostics` (and so in every result).  On the lattice route a point
whose certified relative error exceeds ``max(1e-9, 10·rel_tol)`` raises
:class:`UncertifiedError` instead of being returned; the bracketing routes aim at 2.5e-10
and return any certified bracket up to 1e-6 relative wide (its ``error_bound`` says how
wide), refusing beyond.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from exactdp.accounting.base import Accountant, bun_steinke_epsilon, check_rel_tol
from exactdp.accounting.plan import METHODS, Plan, plan
from exactdp.accounting.results import AccountingResult, Diagnostics
from exactdp.engine.lattice import LatticeSum
from exactdp.engine.tails import TailEngine
from exactdp.mechanisms import Composition
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import InputError, as_real, check_sigma2_range

__all__ = ["ExactAccountant", "delta", "epsilon", "tradeoff", "bun_steinke_epsilon", "as_real", "check_rel_tol",
           "check_sigma2_range", "METHODS"]


class ExactAccountant(Accountant):
    """Exact accountant of one composition, whatever its lattice (see the module docstring).

    Parameters
    ----------
    composition : Composition
    rel_tol : float
        Certified relative accuracy required of every tail (default 1e-10, in
        [1e-15, 1e-2]).
    method : str, optional
        ``None`` or ``"auto"`` (the planner chooses), ``"lattice"`` or ``"lattice-free"``
        (forced; :class:`InputError` naming the routes that fit when it does not).

    Attributes
    ----------
    route : str
        The route that answers (``"lattice"`` or ``"lattice-free"``).
    plan : Plan
        The planner's decision: route, estimate (node-group evaluations) and reason.
    certification : str
        ``"exact"`` (certified point values, the lattice route) or ``"bracket"``.

    Notes
    -----
    Method: the chosen route's (:mod:`exactdp.accounting.lattice_route`: tilted-contour
    trapezoid rule with a sieve, lattice convolution, tilted-atom enumeration or
    conditioning; :mod:`exactdp.accounting.lattice_free`: conditioned atoms and smoothed
    inversion).  Error bound: each returned number carries the propagated certified
    bounds; on the lattice route ≤ ``max(1e-9, 10·rel_tol)`` relative, on the bracketing
    routes ≤ 1e-6 relative (aimed at 2.5e-10), else :class:`UncertifiedError` is raised.
    Reference: Su, Su & Wang, exact privacy accounting of the 2020 Census (sieve
    quadrature); Dong, Roth & Su (2022) for f-DP.
    """

    def __init__(self, composition: Composition | None = None, rel_tol: float = 1e-10, method: str | None = None):
        if composition is None:
            raise InputError("composition", None, "ExactAccountant() needs a composition")
        acc, decision = _mixed(composition, rel_tol, method) or plan(composition, rel_tol, method)
        self._route_acc: Any = acc
        self.plan: Plan = decision
        self.composition = composition
        self.rho = acc.rho
        self.rel_tol = acc.rel_tol
        self._fell_back: set = set()

    @property
    def route(self) -> str:
        return self.plan.route

    @property
    def answerer(self) -> Accountant:
        """The chosen route's accountant (what every query is delegated to)."""
        return self._route_acc

    @property
    def certification(self) -> str:  # type: ignore[override]
        return self._route_acc.certification

    @property
    def identical(self) -> bool:
        """P = Q: every shift is 0."""
        return bool(self._route_acc.identical)

    @property
    def lattice(self) -> LatticeSum | None:
        """The exact integer lattice (None off the lattice route or when P = Q)."""
        return getattr(self._route_acc, "lattice", None)

    @property
    def engine(self) -> TailEngine | None:
        """The lattice route's tail engine (None off the lattice route or when P = Q)."""
        return getattr(self._route_acc, "engine", None)

    def __getattr__(self, name: str):
        # everything else a route offers (tradeoff_vertices, log_delta_at, method, ...)
        if name.startswith("__") or name in ("_route_acc", "_fell_back"):
            raise AttributeError(name)
        return getattr(self._route_acc, name)

    def delta(self, epsilons) -> tuple:
        """δ(ε) for each ε (exact rational, decimal string, or callable for irrationals)."""
        return self._ask("delta", epsilons)

    def epsilon(self, deltas) -> tuple:
        """The smallest ε with δ(ε) ≤ target, for each target δ ∈ (0, 1)."""
        return self._ask("epsilon", deltas)

    def tradeoff(self, alphas) -> tuple:
        """β = f(α) for each α ∈ [0, 1] (value = certified lower bound)."""
        return self._ask("tradeoff", alphas)

    def _ask(self, query: str, values) -> tuple:
        """The query on the chosen route; a call that route cannot certify is asked, whole, of
        the planner's declared fallback route (:data:`exactdp.accounting.plan.FALLBACK`; none
        when ``method=`` forced the route), whose points say ``certification="bracket"``."""
        try:
            return getattr(self._route_acc, query)(values)
        except UncertifiedError:
            fallback = getattr(self._route_acc, "fallback", None)
            alt = fallback() if fallback is not None else None
            if alt is None:
                raise
            self._fell_back.add(query)
            return getattr(alt, query)(values)

    def diagnostics(self) -> Diagnostics:
        """The route's diagnostics with the planner's route, estimate and reason."""
        reason = self.plan.reason
        if self._fell_back:
            reason += (f"; {', '.join(sorted(self._fell_back))} call(s) it could not certify were answered by the "
                       f"lattice-free fallback")
        return dataclasses.replace(self._route_acc.diagnostics(), route=self.plan.route,
                                   route_estimate=self.plan.estimate, route_reason=reason)


def _mixed(design, rel_tol, method) -> tuple | None:
    """``(MixedAccountant, Plan)`` for a :class:`~exactdp.kinds.Mixture` with kinds beside the
    discrete Gaussian (route ``"mixed"``); None for any other design."""
    from exactdp.kinds.mixture import Mixture

    if not isinstance(design, Mixture):
        return None
    gaussians = design.gaussians
    if not design.others and not design.continuous and not design.laplaces and gaussians is not None:
        return plan(gaussians, rel_tol, method)
    if method not in (None, "auto", "mixed"):
        raise InputError("method", method, "a design mixing mechanism kinds is answered by the 'mixed' route only")
    from exactdp.accounting.mixed import MixedAccountant

    acc = MixedAccountant(design, check_rel_tol(rel_tol))
    return acc, Plan("mixed", float(acc.finite.size), "the design mixes kinds beside the discrete Gaussian: "
                                                       "exact finite loss composition (with the Gaussian part's "
                                                       "route as its oracle)")


def _accountant(design, rel_tol, method=None) -> Accountant:
    if isinstance(design, Accountant):
        return design
    return ExactAccountant(design, rel_tol=rel_tol, method=method)


def delta(design, epsilons, *, rel_tol: float = 1e-10,
          method: str | None = None) -> AccountingResult:
    """δ(ε) of a composition for each ε.

    Parameters
    ----------
    design : Composition or ExactAccountant
    epsilons : iterable of exact values (``"26.3405888527"``, Fraction) or callables
        ``f(dps) -> mpf`` (e.g. :func:`bun_steinke_epsilon`); negative ε allowed.
    rel_tol : float
        Certified relative accuracy of each tail.
    method : str, optional
        The route (see :class:`ExactAccountant`; ``None``: the planner chooses).

    Returns
    -------
    AccountingResult
        ``points`` are :class:`DeltaPoint` (value = conservative upper bound).

    Notes
    -----
    Method: ``δ(ε) = Σ_{s≥k} P(S = s)(1 − e^{ε−c−s/scale})`` by the tilted trapezoid rule
    with the hockey-stick kernel (no cancellation), intersected with
    ``P[S ≥ k] − e^ε P[S ≥ k + K]`` from two certified tails.  Error bound: half the width
    of the intersection.  Reference: Balle & Wang (2018) for the profile of Gaussian-type
    mechanisms; Canonne, Kamath & Steinke (2020) for the discrete Gaussian.
    """
    acc = _accountant(design, rel_tol, method)
    return AccountingResult("delta", acc.rho, acc.delta(epsilons), acc.diagnostics())


def epsilon(design, deltas, *, rel_tol: float = 1e-10,
            method: str | None = None) -> AccountingResult:
    """ε(δ): the smallest ε with δ(ε) ≤ each target (value = certified upper bound).

    Notes
    -----
    Method: integer search of the lattice piece on certified bounds of δ at the
    breakpoints, closed-form solve inside the piece.  Error bound: the bracket
    [lower, upper], each end certified (δ(upper) ≤ target < δ(ε) for ε < lower).
    """
    acc = _accountant(design, rel_tol, method)
    return AccountingResult("epsilon", acc.rho, acc.epsilon(deltas), acc.diagnostics())


def tradeoff(design, alphas, *, rel_tol: float = 1e-10,
             method: str | None = None) -> AccountingResult:
    """The f-DP trade-off β = f(α) (value = certified lower bound).

    Notes
    -----
    Method: randomised Neyman–Pearson test on the lattice; vertices
    ``(P[S ≥ k], P[S ≥ K − k + 1])``, linear in between with the exact likelihood-ratio
    slope.  Error bound: propagated certified tail bounds of the two bracketing vertices.
    Reference: Dong, Roth & Su, Gaussian differential privacy (JRSS-B 2022).
    """
    acc = _accountant(design, rel_tol, method)
    return AccountingResult("tradeoff", acc.rho, acc.tradeoff(alphas), acc.diagnostics())
