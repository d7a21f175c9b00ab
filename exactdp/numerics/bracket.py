"""The one bracket type: a certified ``lower ≤ truth ≤ upper`` with an estimate inside and a
reported side.

Every number exactdp reports with a guarantee is a :class:`Bracket` — the accountant's δ, ε
and β points, the Arb certificates' enclosures, the conversions' (ε, δ) points, the
calibrations' scale, the product tables' rows, the tuner's δ — and uses one vocabulary
(python-flint's ``arb``: ``mid``/``rad``/``lower``/``upper``/``contains``, plus the
conservative side):

``lower``, ``upper``
    Certified ends: the exact value lies in ``[lower, upper]``.
``estimate``
    The engine's best value, inside the bracket (``mid`` is an alias).
``value``
    The *reported side*, the conservative end: ``upper`` for anything that is an upper bound
    (δ, ε, a risk, a tail), ``lower`` for a lower bound (β, a calibrated scale).
    :attr:`Bracket.reported_side` names it.
``error_bound``
    One meaning everywhere: a certified bound on ``|estimate − truth|`` (``rad`` is an
    alias).  It is at least :attr:`Bracket.half_width`; for the δ and β points it is the
    half-width itself, for ε the full width (a valid bound, kept so that no printed number
    changed when the types were unified).
``width``, ``half_width``
    ``upper − lower`` and ``max(upper − estimate, estimate − lower)``, exactly.

Ends may be :class:`mpmath.mpf` (so that δ far below 1e-308 is representable) or exact
:class:`~fractions.Fraction` s; widths are exact in either case.  Conversions to float and
Decimal round outward (up for an upper end, down for a lower end), so a converted bound is
still a bound.  A subclass provides ``lower``, ``upper``, ``estimate``, ``value`` and
``error_bound`` as stored fields or properties, and sets ``_UPPER`` (or overrides
:attr:`reported_side`).  Records that carry several numbers under one shared
``error_bound`` (the risk module's rows) are not brackets; their docstrings say which
fields the bound covers.
"""

from __future__ import annotations

import html
from decimal import Decimal
from fractions import Fraction

import mpmath

from exactdp.numerics.directed import directed_decimal, directed_float, exact_ratio

__all__ = ["Bracket", "CentredBracket", "RationalBracket", "exact_difference"]


def exact_difference(a, b):
    """``a − b`` without rounding: an :class:`mpmath.mpf` when both are ``mpf``, else a
    :class:`~fractions.Fraction` (ints, Fractions, and mixed operands taken exactly)."""
    if isinstance(a, mpmath.mpf) and isinstance(b, mpmath.mpf):
        return mpmath.fsub(a, b, exact=True)
    return Fraction(*exact_ratio(a)) - Fraction(*exact_ratio(b))


def _exact_le(a, b) -> bool:
    return Fraction(*exact_ratio(a)) <= Fraction(*exact_ratio(b))


class Bracket:
    """One certified bracket ``lower ≤ truth ≤ upper`` with an ``estimate`` inside and a
    reported side (the module notes); also what a point is in a notebook: a number (its
    conservative ``value``), a row, a cell.

    ``float(point)`` and ``point.to_decimal()`` give the certified conservative side rounded
    outward (up for an upper bound, down for a lower bound), so the converted number is still
    a bound.  ``_repr_html_`` / ``_repr_markdown_`` show the value with its bracket.
    """

    #: the conservative side is the upper end (δ, ε) or the lower end (β)
    _UPPER = True
    #: the name of the field holding the query's argument (``"epsilon"`` for δ(ε)), "" if none
    _ARG = ""
    #: the symbol of the number, for display
    _NAME = ""

    @property
    def reported_side(self) -> str:
        """``"upper"`` (``value`` is an upper bound: δ, ε) or ``"lower"`` (β)."""
        return "upper" if self._UPPER else "lower"

    @property
    def mid(self):
        """The estimate (python-flint ``arb`` vocabulary)."""
        return self.estimate

    @property
    def rad(self):
        """The error bound: ``|mid − truth| ≤ rad`` (python-flint ``arb`` vocabulary)."""
        return self.error_bound

    @property
    def width(self):
        """``upper − lower``, exactly (no rounding)."""
        return exact_difference(self.upper, self.lower)

    @property
    def half_width(self):
        """``max(upper − estimate, estimate − lower)``, exactly: the tightest bound on
        ``|estimate − truth|`` the bracket gives (``error_bound`` for δ and β, unless an end
        was clipped to [0, 1])."""
        lo, est, up = self.lower, self.estimate, self.upper
        return max(exact_difference(up, est), exact_difference(est, lo))

    def contains(self, x) -> bool:
        """Whether ``x`` (an int, Fraction, mpmath number or float, taken exactly) lies in
        ``[lower, upper]``."""
        return _exact_le(self.lower, x) and _exact_le(x, self.upper)  # type: ignore[attr-defined]

    def __float__(self) -> float:
        return directed_float(self.value, self._UPPER)  # type: ignore[attr-defined]

    def to_decimal(self, digits: int = 20, side: str = "value") -> Decimal:
        """The point's ``value`` (or ``"lower"`` / ``"upper"``) as a :class:`~decimal.Decimal`
        of ``digits`` significant digits, rounded outward (so it stays a bound)."""
        if side not in ("value", "lower", "upper"):
            raise ValueError(f"side must be 'value', 'lower' or 'upper', not {side!r}")
        up = self._UPPER if side == "value" else side == "upper"
        return directed_decimal(getattr(self, side), up, digits)

    def _argument(self):
        return getattr(self, self._ARG) if self._ARG else None

    def as_row(self) -> dict:
        """One row: the query's argument, ``value``, ``lower``, ``upper``, ``estimate`` and
        ``error_bound`` as floats rounded outward (``value`` on its conservative side)."""
        row = {self._ARG: float(self._argument())} if self._ARG else {}
        row.update({"value": float(self),
                    "lower": directed_float(self.lower, False), "upper": directed_float(self.upper, True),  # type: ignore
                    "estimate": float(self.estimate), "error_bound": directed_float(self.error_bound, True)})  # type: ignore
        return row

    def _cells(self) -> tuple[str, str, str]:
        arg = mpmath.nstr(mpmath.mpf(self._argument()), 12) if self._ARG else ""
        val = str(self.to_decimal(12))
        bracket = f"[{self.to_decimal(12, 'lower')}, {self.to_decimal(12, 'upper')}]"
        return arg, val, bracket

    def _label(self, arg: str) -> str:
        return f"{self._NAME}({self._ARG} = {arg})" if self._ARG else self._NAME

    def _repr_markdown_(self) -> str:
        arg, val, bracket = self._cells()
        rel = "≤" if self._UPPER else "≥"
        return f"{self._label(arg)} {rel} **{val}** (certified bracket {bracket})"

    def _repr_html_(self) -> str:
        arg, val, bracket = self._cells()
        rel = "≤" if self._UPPER else "≥"
        return (f"<span class='exactdp-point'>{html.escape(self._label(arg))} "
                f"{rel} <b>{val}</b> <small>certified bracket {bracket}</small></span>")


class CentredBracket(Bracket):
    """A bracket given as ``estimate ± error_bound``, clipped to ``[0, _CAP]`` (``_CAP`` 1 for
    a probability, None for an unbounded ratio), reporting its upper end: the records of the
    disclosure-risk modules, whose number is an attacker's probability or risk (larger is
    worse).  A subclass names its estimate (a field or a property ``estimate``)."""

    _CAP: int | None = None

    @property
    def lower(self) -> mpmath.mpf:
        low = mpmath.fsub(self.estimate, self.error_bound, exact=True)  # type: ignore[attr-defined]
        return max(low, mpmath.mpf(0))

    @property
    def upper(self) -> mpmath.mpf:
        up = mpmath.fadd(self.estimate, self.error_bound, exact=True)  # type: ignore[attr-defined]
        return up if self._CAP is None else min(up, mpmath.mpf(self._CAP))

    @property
    def value(self) -> mpmath.mpf:
        return self.upper


class RationalBracket(Bracket):
    """A bracket of exact rationals ``lower ≤ estimate ≤ upper`` (fields of the subclass),
    reporting its upper end, ``error_bound`` its half-width: the fast paths' brackets that
    decisions compare exactly (the headline's per-pair brackets, the tuner's δ)."""

    @property
    def value(self):
        return self.upper

    @property
    def error_bound(self):
        return self.half_width
