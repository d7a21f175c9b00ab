"""Privacy accounting on the engine: δ(ε), ε(δ), the trade-off curve, with certified bounds.

* :mod:`exactdp.accounting.base` — the :class:`Accountant` interface and the shared input checks;
* :mod:`exactdp.accounting.accountant` — :class:`ExactAccountant` and the functions
  :func:`delta`, :func:`epsilon`, :func:`tradeoff`;
* :mod:`exactdp.accounting.results` — the result types (one vocabulary: ``estimate``,
  ``error_bound``, ``value`` (the conservative side), ``lower``, ``upper``);
* :mod:`exactdp.accounting.verification` — the multiprecision verification twin;
* :mod:`exactdp.accounting.lattice_free` — any design, whatever its lattice (certified
  brackets), :class:`LatticeFreeAccountant`, with :mod:`~exactdp.accounting.profile_search`
  (ε(δ)) and :mod:`~exactdp.accounting.dual_tradeoff` (β(α) by convex duality).
"""

from __future__ import annotations

from exactdp.numerics.lazy import lazy_names

#: public name → the module that defines it (loaded on first use, PEP 562: a query that
#: needs only the exact accountant does not import the lattice-free one or the verification twin)
_NAMES = {
    **{n: "exactdp.accounting.accountant" for n in
       ("ExactAccountant", "bun_steinke_epsilon", "delta", "epsilon", "tradeoff")},
    "Accountant": "exactdp.accounting.base",
    "LatticeFreeAccountant": "exactdp.accounting.lattice_free",
    "as_real": "exactdp.numerics.exact",
    **{n: "exactdp.accounting.results" for n in
       ("AccountingResult", "DeltaPoint", "Diagnostics", "EpsilonPoint", "TradeoffPoint", "BracketedDelta",
        "BracketedEpsilon", "BracketedTradeoff")},
    **{n: "exactdp.accounting.verification" for n in ("VerifiedDelta", "VerifiedTail", "verify_delta", "verify_tail")},
}

__all__ = [
    "Accountant", "ExactAccountant", "delta", "epsilon", "tradeoff", "bun_steinke_epsilon", "as_real",
    "AccountingResult", "DeltaPoint", "EpsilonPoint", "TradeoffPoint", "Diagnostics",
    "LatticeFreeAccountant", "BracketedDelta", "BracketedEpsilon", "BracketedTradeoff",
    "VerifiedDelta", "VerifiedTail", "verify_delta", "verify_tail",
]

__getattr__, __dir__ = lazy_names(__name__, _NAMES)
