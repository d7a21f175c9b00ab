"""exactdp: exact, certified privacy accounting for discrete Gaussian compositions.

The package face — everything a user needs; the layers below are described in the
README's Layout section.  Names are loaded on first use (PEP 562), so ``import exactdp``
and the CLI start without compiling or loading any kernel they do not need (and without
reading the package metadata until ``__version__`` is asked for).

>>> from exactdp import Composition, ExactAccountant
>>> acc = ExactAccountant(Composition.from_sigma2(["10000/11"] * 20))
>>> p = acc.delta(["1"])[0]
>>> p.value >= p.estimate
True
"""

from __future__ import annotations

from exactdp.numerics.lazy import lazy_names

#: public name → the module that defines it
_FACE = {
    "DiscreteGaussian": "exactdp.mechanisms",
    "Composition": "exactdp.mechanisms",
    "ExactAccountant": "exactdp.accounting.accountant",
    "delta": "exactdp.accounting.accountant",
    "epsilon": "exactdp.accounting.accountant",
    "tradeoff": "exactdp.accounting.accountant",
    "bun_steinke_epsilon": "exactdp.accounting.accountant",
    "verify_delta": "exactdp.accounting.verification",
    "CoarsenedAccountant": "exactdp.accounting.coarsened",
    "BigLatticeAccountant": "exactdp.accounting.bracketed",
    "DeltaBracket": "exactdp.accounting.coarsened",
    "AccountingResult": "exactdp.accounting.results",
    "DeltaPoint": "exactdp.accounting.results",
    "EpsilonPoint": "exactdp.accounting.results",
    "TradeoffPoint": "exactdp.accounting.results",
    "Diagnostics": "exactdp.accounting.results",
    "InputError": "exactdp.numerics.errors",
    "UncertifiedError": "exactdp.numerics.errors",
    "LatticeTooLarge": "exactdp.numerics.errors",
    "to_fraction": "exactdp.numerics.exact",
    "fraction_str": "exactdp.numerics.exact",
    "certify_delta": "exactdp.certify.queries",
    "certify_epsilon": "exactdp.certify.queries",
    "certify_tradeoff": "exactdp.certify.queries",
    "Certifier": "exactdp.certify.queries",
    "Enclosure": "exactdp.certify.result",
    "load_allocation": "exactdp.census.allocations",
    "Allocation": "exactdp.census.allocations",
}

__all__ = ["__version__", *_FACE]

__getattr__, __dir__ = lazy_names(__name__, {"__version__": "exactdp._version", **_FACE})
