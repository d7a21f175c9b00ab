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

from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon, delta, epsilon, tradeoff
from exactdp.accounting.base import Accountant
from exactdp.accounting.bracketed import BigLatticeAccountant
from exactdp.accounting.coarsened import CoarsenedAccountant, DeltaBracket
from exactdp.numerics.exact import as_real
from exactdp.accounting.results import AccountingResult, DeltaPoint, Diagnostics, EpsilonPoint, TradeoffPoint
from exactdp.accounting.verification import VerifiedDelta, VerifiedTail, verify_delta, verify_tail

__all__ = [
    "Accountant", "ExactAccountant", "delta", "epsilon", "tradeoff", "bun_steinke_epsilon", "as_real",
    "AccountingResult", "DeltaPoint", "EpsilonPoint", "TradeoffPoint", "Diagnostics",
    "BigLatticeAccountant", "CoarsenedAccountant", "DeltaBracket",
    "VerifiedDelta", "VerifiedTail", "verify_delta", "verify_tail",
]
