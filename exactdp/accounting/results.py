"""Result objects: frozen, each value with its certified error bound and diagnostics.

One bracket type: every point is a :class:`~exactdp.numerics.bracket.Bracket` — ``lower`` ≤
truth ≤ ``upper`` (certified), an ``estimate`` inside, and the *reported side* ``value``,
the conservative end (``upper`` for δ and ε, ``lower`` for the trade-off β); see
:mod:`exactdp.numerics.bracket` for the vocabulary.  :class:`DeltaPoint`,
:class:`EpsilonPoint` and :class:`TradeoffPoint` (and their ``Bracketed*`` forms) are thin
names over it: they store either ``(estimate,
error_bound)`` (δ, β) or ``(estimate, lower, upper)`` (ε) and derive the rest.

``error_bound`` has one meaning: a certified bound on ``|estimate − truth|``.  For δ and β
it is the bracket's half-width (``lower = estimate − error_bound``, ``upper = estimate +
error_bound``, clipped to [0, 1]); for ε it is the full width ``upper − lower`` (a valid
bound, since the estimate lies in the bracket, at most twice the tightest one; kept so that
no printed number changes).  :attr:`Bracket.half_width` and :attr:`Bracket.width` give
the two widths of any point, exactly.

Values are :class:`mpmath.mpf` (so that δ far below 1e-308 is representable).
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import mpmath

from exactdp.numerics.bracket import Bracket
from exactdp.numerics.precision import DPS_RESULT

#: digits of the arithmetic of the derived properties (value, lower, upper), each rounded
#: outward (the global mpmath precision, 15 digits by default, would round bounds to the unsafe
#: side, and even at these digits a nearest rounding could move an end inward by half an ulp)
_DPS = DPS_RESULT + 10

__all__ = ["centred", "Diagnostics", "DeltaPoint", "EpsilonPoint", "TradeoffPoint", "AccountingResult",
           "BracketedDelta", "BracketedEpsilon", "BracketedTradeoff", "points_frame"]


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
class DeltaPoint(Bracket):
    """δ(ε) with a certified bound: ``|estimate − δ(ε)| ≤ error_bound``.

    ``value`` is the conservative upper bound ``min(estimate + error_bound, 1)``.
    ``first_term`` and ``second_term`` are P_P[L > ε] and e^ε·P_Q[L > ε].
    ``float(point)`` is ``value`` rounded up (see :class:`Bracket`).
    """

    _ARG, _NAME = "epsilon", "δ"

    epsilon: mpmath.mpf
    estimate: mpmath.mpf
    error_bound: mpmath.mpf
    first_term: mpmath.mpf
    second_term: mpmath.mpf
    thresholds: tuple

    @property
    def value(self) -> mpmath.mpf:
        # (at most 1: δ ≤ 1 always, so the clamp stays conservative — a ball's rounding left
        # δ(0) of a near-deterministic design 1e-46 above 1)
        with mpmath.workdps(_DPS):
            return min(mpmath.fadd(self.estimate, self.error_bound, rounding="c"), mpmath.mpf(1))

    @property
    def lower(self) -> mpmath.mpf:
        with mpmath.workdps(_DPS):
            return max(mpmath.fsub(self.estimate, self.error_bound, rounding="f"), mpmath.mpf(0))

    @property
    def upper(self) -> mpmath.mpf:
        return self.value

    def __repr__(self) -> str:
        return _lead_with_value(self, ("epsilon", "estimate", "error_bound", "first_term", "second_term", "thresholds"))

    @property
    def relative_error(self) -> float:
        return float(self.error_bound / self.estimate) if self.estimate > 0 else float("inf")


@dataclass(frozen=True)
class EpsilonPoint(Bracket):
    """ε(δ): the smallest ε with δ(ε) ≤ target, bracketed by ``[lower, upper]``.

    ``value`` is ``upper`` (certified: δ(upper) ≤ target); ``float(point)`` rounds it up.
    ``error_bound`` is the full width ``upper − lower`` (module notes).
    """

    _ARG, _NAME = "delta", "ε"

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
            return mpmath.fsub(self.upper, self.lower, rounding="c")


@dataclass(frozen=True)
class TradeoffPoint(Bracket):
    """β = f(α) of the optimal (randomised Neyman–Pearson) test.

    ``value`` is the conservative lower bound ``estimate − error_bound``;
    ``float(point)`` rounds it down.
    """

    _UPPER = False
    _ARG, _NAME = "alpha", "β"

    alpha: mpmath.mpf
    estimate: mpmath.mpf
    error_bound: mpmath.mpf
    threshold: int

    @property
    def value(self) -> mpmath.mpf:
        with mpmath.workdps(_DPS):
            return max(mpmath.fsub(self.estimate, self.error_bound, rounding="f"), mpmath.mpf(0))

    @property
    def lower(self) -> mpmath.mpf:
        return self.value

    @property
    def upper(self) -> mpmath.mpf:
        with mpmath.workdps(_DPS):
            return min(mpmath.fadd(self.estimate, self.error_bound, rounding="c"), mpmath.mpf(1))

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

    def __len__(self) -> int:
        return len(self.points)

    def __iter__(self):
        return iter(self.points)

    def __getitem__(self, i):
        return self.points[i]

    def to_pandas(self):
        """The points as a :class:`pandas.DataFrame` (one row each, see :func:`points_frame`)."""
        return points_frame(self.points)

    def _repr_html_(self) -> str:
        rows = "".join(f"<li>{p._repr_html_()}</li>" for p in self.points)
        return (f"<div class='exactdp-result'><b>{html.escape(self.kind)}</b> of a design with zCDP ρ = "
                f"{html.escape(str(self.rho))} ({html.escape(self.diagnostics.method)})<ul>{rows}</ul></div>")

    def _repr_markdown_(self) -> str:
        return "\n".join(f"- {p._repr_markdown_()}" for p in self.points)


def points_frame(points):
    """A :class:`pandas.DataFrame` of result points: the query's argument, ``value`` (the
    conservative side), ``lower``, ``upper``, ``estimate``, ``error_bound`` — floats rounded
    outward, so every column that is a bound stays one.  pandas is an optional dependency
    (``pip install pandas``)."""
    try:
        import pandas
    except ImportError:
        raise ImportError("to_pandas() needs pandas (an optional dependency): pip install pandas") from None
    return pandas.DataFrame([p.as_row() for p in points])


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
