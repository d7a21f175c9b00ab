"""Result objects: frozen, each value with its certified error bound and diagnostics.

One vocabulary for every point: ``estimate`` (the computed value), ``error_bound``
(``|estimate − truth| ≤ error_bound``, or the bracket width for ε), ``lower`` ≤ truth ≤
``upper`` (certified), and ``value`` — the conservative side (``upper`` for δ and ε,
``lower`` for the trade-off β).

Values are :class:`mpmath.mpf` (so that δ far below 1e-308 is representable); the
*conservative* side is the default ``value`` of each point: an upper bound for δ and ε,
a lower bound for the trade-off β.
"""

from __future__ import annotations

from dataclasses import dataclass

import mpmath

from exactdp.numerics.precision import DPS_RESULT

#: digits of the arithmetic of the derived properties (value, lower, upper): the global
#: mpmath precision (15 digits by default) would round bounds to the unsafe side
_DPS = DPS_RESULT + 10

__all__ = ["centred", "Diagnostics", "DeltaPoint", "EpsilonPoint", "TradeoffPoint", "AccountingResult",
           "BracketedDelta", "BracketedEpsilon", "BracketedTradeoff"]


def _lead_with_value(point, fields: tuple) -> str:
    """``Name(value=..., field=..., ...)``: the number to cite first, then the fields."""
    parts = [f"value={point.value!r}"] + [f"{f}={getattr(point, f)!r}" for f in fields]
    return f"{type(point).__name__}({', '.join(parts)})"


@dataclass(frozen=True)
class Diagnostics:
    """How a number was obtained.

    Attributes
    ----------
    method : str
        The method of the route's engine, e.g. ``"tilted-trapezoid"`` (sieved quadrature).
    nodes_kept, nodes_total : int
        Quadrature nodes evaluated after the sieve, of the ``N`` of the full rule
        (by conjugate symmetry only ``[0, N/2]`` is ever enumerated).
    lattice_scale : str
        ``S = scale·W`` (exact rational as text).
    n_groups : int
        Distinct (weight, variance) groups.
    route : str
        The planner's route (:mod:`exactdp.accounting.plan`): ``"lattice"`` or
        ``"lattice-free"`` ("" when the accountant was built without the planner).
    route_estimate : float
        The planner's cost estimate of that route, in node-group evaluations, made before
        anything was built.
    route_reason : str
        Why the planner chose it (the first route that fits, a demotion, or ``method=``).
    """

    method: str
    nodes_kept: int
    nodes_total: int
    lattice_scale: str
    n_groups: int
    route: str = ""
    route_estimate: float = 0.0
    route_reason: str = ""


@dataclass(frozen=True)
class DeltaPoint:
    """δ(ε) with a certified bound: ``|estimate − δ(ε)| ≤ error_bound``.

    ``value`` is the conservative upper bound ``estimate + error_bound``.
    ``first_term`` and ``second_term`` are P_P[L > ε] and e^ε·P_Q[L > ε].
    """

    epsilon: mpmath.mpf
    estimate: mpmath.mpf
    error_bound: mpmath.mpf
    first_term: mpmath.mpf
    second_term: mpmath.mpf
    thresholds: tuple

    @property
    def value(self) -> mpmath.mpf:
        with mpmath.workdps(_DPS):
            return self.estimate + self.error_bound

    @property
    def lower(self) -> mpmath.mpf:
        with mpmath.workdps(_DPS):
            return max(self.estimate - self.error_bound, mpmath.mpf(0))

    @property
    def upper(self) -> mpmath.mpf:
        return self.value

    def __repr__(self) -> str:
        return _lead_with_value(self, ("epsilon", "estimate", "error_bound", "first_term", "second_term", "thresholds"))

    @property
    def relative_error(self) -> float:
        return float(self.error_bound / self.estimate) if self.estimate > 0 else float("inf")


@dataclass(frozen=True)
class EpsilonPoint:
    """ε(δ): the smallest ε with δ(ε) ≤ target, bracketed by ``[lower, upper]``.

    ``value`` is ``upper`` (certified: δ(upper) ≤ target).
    """

    delta: mpmath.mpf
    estimate: mpmath.mpf
    lower: mpmath.mpf
    upper: mpmath.mpf
    piece: int

    @property
    def value(self) -> mpmath.mpf:
        return self.upper

    def __repr__(self) -> str:
        return _lead_with_value(self, ("delta", "estimate", "lower", "upper", "piece"))

    @property
    def error_bound(self) -> mpmath.mpf:
        with mpmath.workdps(_DPS):
            return self.upper - self.lower


@dataclass(frozen=True)
class TradeoffPoint:
    """β = f(α) of the optimal (randomised Neyman–Pearson) test.

    ``value`` is the conservative lower bound ``estimate − error_bound``.
    """

    alpha: mpmath.mpf
    estimate: mpmath.mpf
    error_bound: mpmath.mpf
    threshold: int

    @property
    def value(self) -> mpmath.mpf:
        with mpmath.workdps(_DPS):
            return max(self.estimate - self.error_bound, mpmath.mpf(0))

    @property
    def lower(self) -> mpmath.mpf:
        return self.value

    @property
    def upper(self) -> mpmath.mpf:
        with mpmath.workdps(_DPS):
            return min(self.estimate + self.error_bound, mpmath.mpf(1))

    @property
    def beta(self) -> mpmath.mpf:
        return self.value

    def __repr__(self) -> str:
        return _lead_with_value(self, ("alpha", "estimate", "error_bound", "threshold"))


@dataclass(frozen=True)
class AccountingResult:
    """Points of one query type plus the design's zCDP ρ and diagnostics."""

    kind: str
    rho: object
    points: tuple
    diagnostics: Diagnostics


def centred(lower, upper) -> tuple:
    """``(estimate, error_bound)`` of the bracket ``[lower, upper]`` with
    ``estimate ± error_bound ⊇ [lower, upper]`` whatever the rounding of the points' own
    arithmetic (at ``_DPS`` digits): the half-width is widened by ``10^(4 − _DPS)`` of the
    larger end."""
    with mpmath.workdps(_DPS):
        est = (lower + upper) / 2
        err = max(upper - est, est - lower)
        return est, err + max(abs(lower), abs(upper)) * mpmath.mpf(10) ** (4 - _DPS)


@dataclass(frozen=True)
class BracketedDelta(DeltaPoint):
    """A :class:`DeltaPoint` whose ``certification`` says how: ``"exact"`` (the error bound
    of an exact method) or ``"bracket"`` (``lower ≤ δ ≤ upper`` by a certified bracket)."""

    certification: str = "bracket"


@dataclass(frozen=True)
class BracketedEpsilon(EpsilonPoint):
    """An :class:`EpsilonPoint` with its ``certification`` (see :class:`BracketedDelta`)."""

    certification: str = "bracket"


@dataclass(frozen=True)
class BracketedTradeoff(TradeoffPoint):
    """A :class:`TradeoffPoint` with its ``certification`` (see :class:`BracketedDelta`)."""

    certification: str = "bracket"
