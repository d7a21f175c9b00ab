"""The planner: which route answers a design, declared in one place.

:data:`ROUTES` is the ordered list of routes.  Each has ``fits(design)`` — decided before
anything is built: the lattice route's from a bound on its integer weights
(:func:`exactdp.engine.lattice.weights_exceed`, no gcd over all groups) — and
``cost(design, queries)``, an estimate of node-group evaluations made before any engine is
constructed.  :func:`plan` takes the first route that fits (or the one ``method=`` forces)
and builds only that route's engine, then applies the declared rules:

* **demotion** (:data:`LATTICE_FREE_ABOVE`): a lattice engine whose chosen method is
  estimated, once built, above that many node-group evaluations hands the design to the
  lattice-free route when that one can be built (else the lattice route stays);
* **fallback** (:data:`FALLBACK`): an ε(δ) target the lattice route's piece search cannot
  pin (a staircase δ(ε) of near-deterministic mechanisms), and any call of δ, ε(δ) or β the
  lattice route cannot certify (asked whole again by
  :class:`~exactdp.accounting.accountant.ExactAccountant`), is asked of the lattice-free route, built
  once on first need — never by the query itself (none when ``method=`` forces a route);
* a design no route can build is refused with every route's reason
  (:class:`~exactdp.numerics.errors.UncertifiedError`); a forced route that does not fit is
  an :class:`~exactdp.numerics.errors.InputError` naming the routes that do.

Pre-build estimates are coarse (the lattice route's counts the unsieved trapezoid rule, often
orders of magnitude above what its sieve keeps); once the lattice engine is built, its own
estimate of the chosen method (``TailEngine.cost``, per value) × (1 + queries) is reported
instead.  The chosen route, its estimate and the reason are in every result's
:class:`~exactdp.accounting.results.Diagnostics` (``route``, ``route_estimate``,
``route_reason``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from exactdp.accounting.base import Accountant, check_rel_tol
from exactdp.accounting.lattice_route import LatticeAccountant, check_groups_sigma2
from exactdp.engine.lattice import INT64_WEIGHTS, LatticeSum, lattice_of, weights_exceed
from exactdp.mechanisms import Composition
from exactdp.numerics.errors import InputError, LatticeTooLarge, UncertifiedError

__all__ = ["Plan", "Route", "ROUTES", "METHODS", "FALLBACK", "LATTICE_FREE_ABOVE", "plan", "QUERIES"]

#: lattice designs whose built engine is estimated above this many node-group evaluations try
#: the lattice-free route (every DHC, P.L. 94-171 and units pair is below it: the sweep stays
#: on the lattice)
LATTICE_FREE_ABOVE = 2.0e6
#: the queries a cost is estimated for when none are given: 20 δ, 3 ε(δ) and 3 β(α)
QUERIES = 26
#: the route asked when a route cannot certify a query (ε(δ) of a staircase profile)
FALLBACK = {"lattice": "lattice-free"}


#: up to this many groups a design's weights are checked on its lattice, built at once (the route
#: builds it next); beyond, by :func:`~exactdp.engine.lattice.weights_exceed`'s early exit
_DIRECT_GROUPS = 256


class Design:
    """What the planner knows of a composition, each fact computed once and only when asked."""

    def __init__(self, composition: Composition):
        self.composition = composition
        self.identical = all(m.shift == 0 for m, _ in composition.groups)
        self.n_groups = sum(1 for m, _ in composition.groups if m.shift != 0)
        self._exceeds: bool | None = None
        self._lattice: LatticeSum | None = None

    @property
    def lattice_too_large(self) -> bool:
        """Whether the exact lattice's weights reach 2^62 (decided without building it)."""
        if self._exceeds is None:
            if self.identical:
                self._exceeds = False
            elif len(self.composition.groups) <= _DIRECT_GROUPS:  # the lattice itself (needed next)
                self._exceeds = max(self.lattice.weights) >= INT64_WEIGHTS
            else:
                self._exceeds = weights_exceed(self.composition, INT64_WEIGHTS)
        return self._exceeds

    @property
    def lattice(self) -> LatticeSum:
        """The exact lattice (built once; only for a design whose weights fit)."""
        if self._lattice is None:
            self._lattice = lattice_of(self.composition)
        return self._lattice


@dataclass(frozen=True)
class Route:
    """One way to answer a design.

    Attributes
    ----------
    name : str
        The value of ``method=`` / ``--method`` that forces it.
    answers : str
        What it answers, and how (one line).
    fits : callable
        ``fits(design) -> None`` when the route can take the design, else the reason why not
        (cheap: nothing is built).
    cost : callable
        ``cost(design, queries) -> float``: estimated node-group evaluations of building the
        route and answering ``queries`` values (before anything is built).
    build : callable
        ``build(design, rel_tol) -> Accountant``; raises ``LatticeTooLarge`` or the
        lattice-free engine's ``TooCostly`` when the design is beyond it after all.
    """

    name: str
    answers: str
    fits: Callable[[Design], str | None]
    cost: Callable[[Design, int], float]
    build: Callable[[Design, float], Accountant]


@dataclass(frozen=True)
class Plan:
    """The planner's decision: the route, its estimate (node-group evaluations) and why."""

    route: str
    estimate: float
    reason: str


def _lattice_fits(d: Design) -> str | None:
    if d.lattice_too_large:
        return "its exact integer lattice has weights of 2^62 or more (beyond int64 phase arithmetic)"
    return None


def _lattice_cost(d: Design, queries: int) -> float:
    """The unsieved trapezoid rule: ``16·sqrt(Σ m A² max(σ², 1/4)) + 64`` nodes × groups, for the
    sieve and for each value (an upper estimate: the sieve keeps fewer)."""
    if d.identical:
        return 0.0
    lat = d.lattice
    var = sum(m * float(a) ** 2 * max(float(s2), 0.25) for a, m, s2 in zip(lat.weights, lat.counts, lat.sigma2))
    return (16.0 * math.sqrt(var) + 64.0) * lat.n_groups * (1 + queries)


def _lattice_build(d: Design, rel_tol: float) -> Accountant:
    return LatticeAccountant(d.composition, rel_tol, lattice=None if d.identical else d.lattice)


def _free_fits(d: Design) -> str | None:
    return None  # any lattice; refused at build time only beyond its work budget


def _free_cost(d: Design, queries: int) -> float:
    """~6 levels of ~128 sieved nodes per group to build, ~128 per group and value."""
    return 128.0 * d.n_groups * (6 + queries)


def _free_build(d: Design, rel_tol: float, wide: bool = True) -> Accountant:
    from exactdp.accounting.lattice_free import LatticeFreeAccountant

    return LatticeFreeAccountant(d.composition, rel_tol, wide)


#: the routes, in order of preference
ROUTES = (
    Route("lattice", "the int64 integer lattice: certified point values (exactdp.accounting.lattice_route)",
          _lattice_fits, _lattice_cost, _lattice_build),
    Route("lattice-free", "conditioned atoms and smoothed inversion: certified brackets, any lattice "
          "(exactdp.accounting.lattice_free)", _free_fits, _free_cost, _free_build),
)
#: the values of ``method=`` (``None`` or ``"auto"``: the planner chooses)
METHODS = tuple(r.name for r in ROUTES)
_BY_NAME = {r.name: r for r in ROUTES}


def _too_costly():
    """The lattice-free engine's refusal type (imported only when that route is built)."""
    from exactdp.engine.smoothed_profile import TooCostly

    return TooCostly


def _check(composition, rel_tol, method) -> tuple[float, Route | None]:
    if not isinstance(composition, Composition):
        raise InputError("composition", composition, "expected an exactdp.Composition")
    tol = check_rel_tol(rel_tol)
    check_groups_sigma2(composition)
    if method is None or method == "auto":
        return tol, None
    if method not in _BY_NAME:
        raise InputError("method", method, f"expected one of auto, {', '.join(METHODS)}")
    return tol, _BY_NAME[method]


def plan(composition: Composition, rel_tol: float = 1e-10, method: str | None = None,
         queries: int = QUERIES) -> tuple[Accountant, Plan]:
    """The accountant of the chosen route and the :class:`Plan` behind it.

    Parameters
    ----------
    composition : Composition
    rel_tol : float
        Certified relative accuracy of each tail (in [1e-15, 1e-2]).
    method : str, optional
        ``None``/``"auto"`` (the planner chooses) or one of :data:`METHODS` (forced).
    queries : int
        The number of values the cost estimates are for.

    Raises
    ------
    InputError
        A bad argument, or a forced route that does not fit the design.
    UncertifiedError
        No route can take the design (each one's reason is given).
    """
    tol, forced = _check(composition, rel_tol, method)
    d = Design(composition)
    if forced is not None:
        return _forced(d, forced, tol, queries)
    causes: dict[str, str] = {}
    too_costly = None
    for route in ROUTES:
        why = route.fits(d)
        if why is not None:
            causes[route.name] = why
            continue
        estimate = route.cost(d, queries)
        if route.name == "lattice-free":
            too_costly = _too_costly()
        try:
            acc = route.build(d, tol)
        except (LatticeTooLarge, OverflowError) as exc:
            causes[route.name] = str(exc)
            continue
        except ArithmeticError as exc:
            if too_costly is None or not isinstance(exc, too_costly):
                raise
            causes[route.name] = str(exc)
            continue
        reason = "the first route that fits and builds" + (f" ({'; '.join(f'{k}: {v}' for k, v in causes.items())})"
                                                if causes else "")
        if isinstance(acc, LatticeAccountant) and acc.engine is not None:
            built = acc.engine.cost
            if built > LATTICE_FREE_ABOVE:  # the declared demotion
                alt = _fallback_accountant(d, tol, "lattice", wide=False)  # not the wide budget's seconds
                if alt is not None:
                    return alt, Plan("lattice-free", _free_cost(d, queries),
                                     f"the lattice engine, built, is estimated at {built:.3g} node-group "
                                     f"evaluations (above {LATTICE_FREE_ABOVE:.0e})")
            _attach_fallback(acc, d, tol)
            if built > 0:  # the engine's own (sieved) estimate replaces the unsieved one
                estimate = built * (1 + queries)
        return acc, Plan(route.name, estimate, reason)
    # (the lattice route's pointer to the lattice-free route is moot here: that route refused too)
    lattice_cause = causes.get("lattice", "").replace(" (the lattice-free route takes such designs)", "") \
        .replace("; the lattice-free route takes such designs)", ")")
    why = causes.get("lattice-free", "")
    rho = composition.rho
    raise UncertifiedError("design beyond every engine: " + why
                           + (f"; the int64 lattice engine: {lattice_cause}" if lattice_cause else "")
                           + f"; try the zCDP bound of ρ = {float(rho):.6g} (ε = ρ + 2√(ρ·ln(1/δ)): a valid, "
                           "looser guarantee), or a design inside the documented envelope (README, "
                           "'What can be refused')")


def _forced(d: Design, route: Route, tol: float, queries: int) -> tuple[Accountant, Plan]:
    """The forced route's accountant (no demotion, no fallback), or InputError naming the
    routes that fit when it does not."""
    why = route.fits(d)
    if why is None:
        too_costly = _too_costly() if route.name == "lattice-free" else None
        try:
            return route.build(d, tol), Plan(route.name, route.cost(d, queries), "forced by method=")
        except (LatticeTooLarge, OverflowError) as exc:
            why = str(exc)
        except ArithmeticError as exc:
            if too_costly is None or not isinstance(exc, too_costly):
                raise
            raise UncertifiedError(f"the {route.name} route cannot answer this design: {exc}; "
                                   f"try method=None (auto)") from None
    others = [r.name for r in ROUTES if r is not route and r.fits(d) is None]
    raise InputError("method", route.name, f"does not fit this design ({why}); allowed here: "
                                           f"{', '.join(['auto', *others])}")


def _fallback_accountant(d: Design, tol: float, name: str, wide: bool = True) -> Accountant | None:
    """The declared fallback route of ``name`` built for the design, or None if it cannot be
    (``wide=False``: the lattice-free route without its wide budget, for the demotion)."""
    route = _BY_NAME[FALLBACK[name]]
    too_costly = _too_costly() if route.name == "lattice-free" else None
    try:
        return route.build(d, tol) if wide or route.build is not _free_build else _free_build(d, tol, wide=False)
    except (UncertifiedError, LatticeTooLarge, OverflowError):
        return None
    except ArithmeticError as exc:
        if too_costly is not None and isinstance(exc, too_costly):
            return None
        raise


def _attach_fallback(acc: LatticeAccountant, d: Design, tol: float) -> None:
    """Give the lattice route its declared fallback, built once on first need."""
    built: list = []

    def fallback():
        if not built:
            built.append(_fallback_accountant(d, tol, "lattice"))
        return built[0]

    acc.fallback = fallback
