"""Privacy accounting on the engine: δ(ε), ε(δ), the trade-off curve, with certified bounds.

* :mod:`exactdp.accounting.base` — the :class:`Accountant` interface and the shared input checks;
* :mod:`exactdp.accounting.accountant` — :class:`ExactAccountant` and the functions
  :func:`delta`, :func:`epsilon`, :func:`tradeoff`;
* :mod:`exactdp.accounting.results` — the result types (one vocabulary: ``estimate``,
  ``error_bound``, ``value`` (the conservative side), ``lower``, ``upper``);
* :mod:`exactdp.accounting.verification` — the multiprecision verification twin;
* :mod:`exactdp.accounting.bracketed` — designs beyond the int64 lattice (exact split
  enumeration or certified smoothed brackets), :class:`BigLatticeAccountant`;
* :mod:`exactdp.accounting.coarsened` — deprecated alias of the bracketed accountant.
"""

from __future__ import annotations

from exactdp.numerics.lazy import lazy_names

#: public name → the module that defines it (loaded on first use, PEP 562: a query that
#: needs only the exact accountant does not import the bracketed one or the verification twin)
_NAMES = {
    **{n: "exactdp.accounting.accountant" for n in
       ("ExactAccountant", "bun_steinke_epsilon", "delta", "epsilon", "tradeoff")},
    "Accountant": "exactdp.accounting.base",
    "BigLatticeAccountant": "exactdp.accounting.bracketed",
    "CoarsenedAccountant": "exactdp.accounting.coarsened",
    "DeltaBracket": "exactdp.accounting.coarsened",
    "as_real": "exactdp.numerics.exact",
    **{n: "exactdp.accounting.results" for n in
       ("AccountingResult", "DeltaPoint", "Diagnostics", "EpsilonPoint", "TradeoffPoint")},
    **{n: "exactdp.accounting.verification" for n in ("VerifiedDelta", "VerifiedTail", "verify_delta", "verify_tail")},
}

__all__ = [
    "Accountant", "ExactAccountant", "delta", "epsilon", "tradeoff", "bun_steinke_epsilon", "as_real",
    "AccountingResult", "DeltaPoint", "EpsilonPoint", "TradeoffPoint", "Diagnostics",
    "BigLatticeAccountant", "CoarsenedAccountant", "DeltaBracket",
    "VerifiedDelta", "VerifiedTail", "verify_delta", "verify_tail",
]

__getattr__, __dir__ = lazy_names(__name__, _NAMES)
