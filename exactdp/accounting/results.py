"""Result objects: frozen, each value with its certified error bound and diagnostics.

One bracket type: every point is a :class:`Bracket` — ``lower`` ≤ truth ≤ ``upper``
(certified), an ``estimate`` inside, and the *reported side* ``value``, the conservative
end (``upper`` for δ and ε, ``lower`` for the trade-off β).  Conversions to float and
Decimal round outward (up for an upper end, down for a lower end), so a converted bound is
still a bound.  :class:`DeltaPoint`, :class:`EpsilonPoint` and :class:`TradeoffPoint` (and
their ``Bracketed*`` forms) are thin names over it: they store either ``(estimate,
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
from decimal import Decimal

import mpmath

from exactdp.numerics.directed import directed_decimal, directed_float
from exactdp.numerics.precision import DPS_RESULT

#: digits of the arithmetic of the derived properties (value, lower, upper): the global
#: mpmath precision (15 digits by default) would round bounds to the unsafe side
_DPS = DPS_RESULT + 10

__all__ = ["Bracket", "centred", "Diagnostics", "DeltaPoint", "EpsilonPoint", "TradeoffPoint", "AccountingResult",
           "BracketedDelta", "BracketedEpsilon", "BracketedTradeoff", "points_frame"]


class Bracket:
    """One certified bracket ``lower ≤ truth ≤ upper`` with an ``estimate`` inside and a
    reported side (the module notes); also what a point is in a notebook: a number (its
    conservative ``value``), a row, a cell.

    A subclass provides ``lower``, ``upper``, ``estimate``, ``value`` (the end named by
    :attr:`reported_side`) and ``error_bound``, as stored fields or properties.
    ``float(point)`` and ``point.to_decimal()`` give the certified conservative side rounded
    outward (up for δ and ε, whose ``value`` is an upper bound; down for β, a lower bound),
    so the converted number is still a bound.  ``_repr_html_`` / ``_repr_markdown_`` show
    the value with its bracket.
    """

    #: the conservative side is the upper end (δ, ε) or the lower end (β)
    _UPPER = True
    _ARG = ""
    _NAME = ""

    @property
    def reported_side(self) -> str:
        """``"upper"`` (δ, ε: ``value`` is an upper bound) or ``"lower"`` (β)."""
        return "upper" if self._UPPER else "lower"

    @property
    def width(self) -> mpmath.mpf:
        """``upper − lower``, exactly (no rounding)."""
        return mpmath.fsub(self.upper, self.lower, exact=True)  # type: ignore[attr-defined]

    @property
    def half_width(self) -> mpmath.mpf:
        """``max(upper − estimate, estimate − lower)``, exactly: the tightest bound on
        ``|estimate − truth|`` the bracket gives (``error_bound`` for δ and β, unless an end
        was clipped to [0, 1])."""
        lo, est, up = self.lower, self.estimate, self.upper  # type: ignore[attr-defined]
        return max(mpmath.fsub(up, est, exact=True), mpmath.fsub(est, lo, exact=True))

    def __float__(self) -> float:
        return directed_float(self.value, self._UPPER)  # type: ignore[attr-defined]

    def to_decimal(self, digits: int = 20, side: str = "value") -> Decimal:
        """The point's ``value`` (or ``"lower"`` / ``"upper"``) as a :class:`~decimal.Decimal`
        of ``digits`` significant digits, rounded outward (so it stays a bound)."""
        if side not in ("value", "lower", "upper"):
            raise ValueError(f"side must be 'value', 'lower' or 'upper', not {side!r}")
        up = self._UPPER if side == "value" else side == "upper"
        return directed_decimal(getattr(self, side), up, digits)

    def as_row(self) -> dict:
        """One row: the query's argument, ``value``, ``lower``, ``upper``, ``estimate`` and
        ``error_bound`` as floats rounded outward (``value`` on its conservative side)."""
        return {self._ARG: float(getattr(self, self._ARG)), "value": float(self),
                "lower": directed_float(self.lower, False), "upper": directed_float(self.upper, True),  # type: ignore
                "estimate": float(self.estimate), "error_bound": directed_float(self.error_bound, True)}  # type: ignore

    def _cells(self) -> tuple[str, str, str]:
        arg = mpmath.nstr(getattr(self, self._ARG), 12)
        val = str(self.to_decimal(12))
        bracket = f"[{self.to_decimal(12, 'lower')}, {self.to_decimal(12, 'upper')}]"
        return arg, val, bracket

    def _repr_markdown_(self) -> str:
        arg, val, bracket = self._cells()
        rel = "≤" if self._UPPER else "≥"
        return f"{self._NAME}({self._ARG} = {arg}) {rel} **{val}** (certified bracket {bracket})"

    def _repr_html_(self) -> str:
        arg, val, bracket = self._cells()
        rel = "≤" if self._UPPER else "≥"
        return (f"<span class='exactdp-point'>{html.escape(self._NAME)}({html.escape(self._ARG)} = {arg}) "
                f"{rel} <b>{val}</b> <small>certified bracket {bracket}</small></span>")


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

    ``value`` is the conservative upper bound ``estimate + error_bound``.
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
            return self.upper - self.lower


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
