"""The engine's value vocabulary: a certified tail (or hockey-stick sum) and its query.

:class:`TailValue` is what every method of :class:`~exactdp.engine.tails.TailEngine`
returns, :class:`WeightedQuery` what it is asked; :func:`certified` decides whether a
value meets a relative accuracy (finite log, finite bound ≤ the tolerance).
:func:`tail_value` builds a TailValue straight from its fields' tuple (the engine makes
~2000 of them per DHC pair); :func:`tail_query` a plain tail's query without the frozen
dataclass's per-field ``object.__setattr__``, :func:`tail_queries` many, :func:`query_key`
is a query's field tuple (hashed and compared in C: the engine's dict key).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING

import mpmath

__all__ = ["TailValue", "WeightedQuery", "tail_value", "tail_query", "tail_queries", "query_key", "tol_for",
           "certified"]


_tnew = tuple.__new__
_TV_FIELDS = ("threshold", "log_value", "rel_error", "method", "nodes_kept", "nodes_total", "lam")


class TailValue(tuple):
    """A tail probability (or hockey-stick sum) with a certified relative error bound.

    ``|estimate − truth| ≤ rel_error · estimate`` where ``estimate = exp(log_value)``;
    ``log_value`` is a float, or an :class:`mpmath.mpf` when |log| ≥ 10⁴ (a float could
    not carry it to relative accuracy).

    Immutable, with the fields ``threshold, log_value, rel_error, method, nodes_kept,
    nodes_total, lam``; equal (and hashed) as the tuple of its fields, equal only to another
    TailValue, pickled by its fields.  A tuple underneath: building one costs a tuple's
    allocation (the engine makes ~2000 a DHC pair), not a frozen dataclass's seven
    ``object.__setattr__``.

    Examples
    --------
    >>> from exactdp.engine.values import TailValue
    >>> tv = TailValue(3, -2.0, 1e-12, "tilted-trapezoid", 10, 12, 0.5)
    >>> tv.threshold, tv.rel_error, tv == TailValue(3, -2.0, 1e-12, "tilted-trapezoid", 10, 12, 0.5)
    (3, 1e-12, True)
    >>> tv == (3, -2.0, 1e-12, "tilted-trapezoid", 10, 12, 0.5)
    False
    """

    __slots__ = ()
    __match_args__ = ("threshold", "log_value", "rel_error", "method", "nodes_kept", "nodes_total", "lam")
    _fields = _TV_FIELDS

    if TYPE_CHECKING:
        threshold: int
        log_value: float | mpmath.mpf
        rel_error: float
        method: str
        nodes_kept: int
        nodes_total: int
        lam: float
    else:
        threshold = property(itemgetter(0), doc="The threshold k of P(S ≥ k) (or of the weighted sum).")
        log_value = property(itemgetter(1), doc="The log of the estimate (float, or mpf when |log| ≥ 10⁴).")
        rel_error = property(itemgetter(2), doc="The certified relative error bound of the estimate.")
        method = property(itemgetter(3), doc="The method that computed it.")
        nodes_kept = property(itemgetter(4), doc="Quadrature nodes kept.")
        nodes_total = property(itemgetter(5), doc="Quadrature nodes in all.")
        lam = property(itemgetter(6), doc="The tilt λ used.")

    def __new__(cls, threshold: int, log_value, rel_error: float, method: str, nodes_kept: int,
                nodes_total: int, lam: float) -> TailValue:
        return _tnew(cls, (threshold, log_value, rel_error, method, nodes_kept, nodes_total, lam))

    def __getnewargs__(self) -> tuple:
        return tuple(self)

    def __eq__(self, other) -> bool:
        if other.__class__ is self.__class__:
            return tuple.__eq__(self, other)
        return False if isinstance(other, tuple) else NotImplemented  # a tuple would compare as one

    def __ne__(self, other) -> bool:
        if other.__class__ is self.__class__:
            return tuple.__ne__(self, other)
        return True if isinstance(other, tuple) else NotImplemented

    __hash__ = tuple.__hash__  # the hash of the field tuple, as the frozen dataclass's

    def _no_order(self, other):
        return NotImplemented

    __lt__ = __le__ = __gt__ = __ge__ = _no_order

    def __repr__(self) -> str:
        return "TailValue(" + ", ".join(f"{n}={v!r}" for n, v in zip(_TV_FIELDS, self)) + ")"

    @property
    def value(self) -> float:
        return math.exp(float(self[1]))

    @property
    def log_mp(self):
        """The log of the estimate as an mpmath number (at its full stored precision)."""
        v = self[1]
        return v if isinstance(v, mpmath.mpf) else mpmath.mpf(v)


@dataclass(frozen=True)
class WeightedQuery:
    """``Σ_{s≥k} P(S = s)(1 − e^{x0 − β(s−k)})`` with ``x0 < 0 ≤ x1 = x0 + β`` (floats
    rounded from exact values; β > 0).  ``x0 = −inf`` is the plain tail P(S ≥ k)."""

    threshold: int
    x0: float
    x1: float
    beta: float

    def __hash__(self):
        # the dataclass hash (of the field tuple), computed once: a query is a dict key
        # some 15 times on its way through the engine
        try:
            return self.__dict__["_hash"]
        except KeyError:
            h = hash((self.threshold, self.x0, self.x1, self.beta))
            object.__setattr__(self, "_hash", h)
            return h

    def __reduce__(self):  # the fields only (no cached hash in a pickle)
        return WeightedQuery, (self.threshold, self.x0, self.x1, self.beta)


def tail_value(threshold: int, log_value, rel_error: float, method: str, nodes_kept: int, nodes_total: int,
               lam: float, _tnew=_tnew) -> TailValue:
    """``TailValue(threshold, ...)``, the same object, without the call through ``__new__``."""
    return _tnew(TailValue, (threshold, log_value, rel_error, method, nodes_kept, nodes_total, lam))


def tail_query(threshold: int, _new=object.__new__) -> WeightedQuery:
    """``WeightedQuery(threshold, −inf, 0.0, 1.0)`` (the plain tail P(S ≥ threshold)), the
    same object (its fields set in its ``__dict__`` directly, not by one frozen
    ``__setattr__`` each)."""
    q = _new(WeightedQuery)
    d = q.__dict__
    d["threshold"] = threshold
    d["x0"] = -math.inf
    d["x1"] = 0.0
    d["beta"] = 1.0
    return q


def tail_queries(thresholds, _new=object.__new__) -> list:
    """:func:`tail_query` of each threshold (a list, in order)."""
    out: list[WeightedQuery] = []
    ap = out.append
    inf = -math.inf
    for s in thresholds:
        q = _new(WeightedQuery)
        d = q.__dict__
        d["threshold"] = s
        d["x0"] = inf
        d["x1"] = 0.0
        d["beta"] = 1.0
        ap(q)
    return out


def query_key(q: WeightedQuery) -> tuple:
    """The query's fields ``(threshold, x0, x1, β)``: equal exactly when the queries are."""
    return (q.threshold, q.x0, q.x1, q.beta)


def tol_for(rel_tol: float, log_value) -> float:
    """The accuracy a tail must be certified to: ``rel_tol``; a non-finite log is never
    certified (0)."""
    if isinstance(log_value, float):
        ok = math.isfinite(log_value)
    else:
        try:
            ok = mpmath.isfinite(log_value)
        except (TypeError, ValueError):
            ok = False
    return float(rel_tol) if ok else 0.0


def certified(tv: TailValue | None, rel_tol: float) -> bool:
    """Whether a value is certified to ``rel_tol`` (finite log, finite bound ≤ rel_tol)."""
    if tv is None:
        return False
    e, lv = tv.rel_error, tv.log_value
    if type(lv) is float:  # the common case of tol_for, inline
        return math.isfinite(e) and e <= (float(rel_tol) if math.isfinite(lv) else 0.0)
    return math.isfinite(e) and e <= tol_for(rel_tol, lv)
