"""exactdp: exact, certified privacy accounting for discrete Gaussian compositions.

The package face — everything a user needs; the layers below are described in the
README's Layout section.  Names are loaded on first use (PEP 562), so ``import exactdp``
and the CLI start without compiling or loading any kernel they do not need (and without
reading the package metadata until ``__version__`` is asked for).  Type checkers see the
same names with their real types (the ``TYPE_CHECKING`` imports below, kept equal to
``_FACE`` by ``tests/test_face_typing.py``).

>>> from exactdp import Composition, ExactAccountant
>>> acc = ExactAccountant(Composition.from_sigma2(["10000/11"] * 20))
>>> p = acc.delta(["1"])[0]
>>> p.value >= p.estimate
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from exactdp.numerics.lazy import lazy_names

if TYPE_CHECKING:
    __version__: str  # what type checkers see: the same names as _FACE, with their real types
    from exactdp.accounting.accountant import ExactAccountant as ExactAccountant
    from exactdp.accounting.accountant import bun_steinke_epsilon as bun_steinke_epsilon
    from exactdp.accounting.accountant import delta as delta
    from exactdp.accounting.accountant import epsilon as epsilon
    from exactdp.accounting.accountant import tradeoff as tradeoff
    from exactdp.accounting.lattice_free import LatticeFreeAccountant as LatticeFreeAccountant
    from exactdp.accounting.results import AccountingResult as AccountingResult
    from exactdp.accounting.results import DeltaPoint as DeltaPoint
    from exactdp.accounting.results import Diagnostics as Diagnostics
    from exactdp.accounting.results import EpsilonPoint as EpsilonPoint
    from exactdp.accounting.results import TradeoffPoint as TradeoffPoint
    from exactdp.accounting.verification import verify_delta as verify_delta
    from exactdp.calibration.deploy import Calibration as Calibration
    from exactdp.calibration.deploy import calibrate as calibrate
    from exactdp.census.allocations import Allocation as Allocation
    from exactdp.census.allocations import load_allocation as load_allocation
    from exactdp.certify.queries import Certifier as Certifier
    from exactdp.certify.queries import certify_delta as certify_delta
    from exactdp.certify.queries import certify_epsilon as certify_epsilon
    from exactdp.certify.queries import certify_tradeoff as certify_tradeoff
    from exactdp.certify.result import Enclosure as Enclosure
    from exactdp.kinds.approx_dp import ApproxDP as ApproxDP
    from exactdp.kinds.discrete_laplace import DiscreteLaplace as DiscreteLaplace
    from exactdp.kinds.gaussian import Gaussian as Gaussian
    from exactdp.kinds.laplace import Laplace as Laplace
    from exactdp.kinds.mixture import Mixture as Mixture
    from exactdp.kinds.randomized_response import RandomizedResponse as RandomizedResponse
    from exactdp.mechanisms import Composition as Composition
    from exactdp.mechanisms import DiscreteGaussian as DiscreteGaussian
    from exactdp.numerics.bracket import Bracket as Bracket
    from exactdp.numerics.errors import InputError as InputError
    from exactdp.numerics.errors import UncertifiedError as UncertifiedError
    from exactdp.numerics.exact import fraction_str as fraction_str
    from exactdp.numerics.exact import to_fraction as to_fraction

#: public name → the module that defines it (0.1.0: the deprecated aliases
#: ``CoarsenedAccountant``, ``DeltaBracket`` and ``BigLatticeAccountant`` are gone — the
#: lattice-free route is :class:`LatticeFreeAccountant` — and the engine's internal signal
#: ``LatticeTooLarge`` is not on the face)
_FACE = {
    "DiscreteGaussian": "exactdp.mechanisms",
    "Composition": "exactdp.mechanisms",
    "DiscreteLaplace": "exactdp.kinds.discrete_laplace",
    "RandomizedResponse": "exactdp.kinds.randomized_response",
    "ApproxDP": "exactdp.kinds.approx_dp",
    "Gaussian": "exactdp.kinds.gaussian",
    "Laplace": "exactdp.kinds.laplace",
    "Mixture": "exactdp.kinds.mixture",
    "ExactAccountant": "exactdp.accounting.accountant",
    "delta": "exactdp.accounting.accountant",
    "epsilon": "exactdp.accounting.accountant",
    "tradeoff": "exactdp.accounting.accountant",
    "bun_steinke_epsilon": "exactdp.accounting.accountant",
    "verify_delta": "exactdp.accounting.verification",
    "LatticeFreeAccountant": "exactdp.accounting.lattice_free",
    "AccountingResult": "exactdp.accounting.results",
    "DeltaPoint": "exactdp.accounting.results",
    "EpsilonPoint": "exactdp.accounting.results",
    "TradeoffPoint": "exactdp.accounting.results",
    "Diagnostics": "exactdp.accounting.results",
    "Bracket": "exactdp.numerics.bracket",
    "InputError": "exactdp.numerics.errors",
    "UncertifiedError": "exactdp.numerics.errors",
    "to_fraction": "exactdp.numerics.exact",
    "fraction_str": "exactdp.numerics.exact",
    "certify_delta": "exactdp.certify.queries",
    "certify_epsilon": "exactdp.certify.queries",
    "certify_tradeoff": "exactdp.certify.queries",
    "Certifier": "exactdp.certify.queries",
    "Enclosure": "exactdp.certify.result",
    "load_allocation": "exactdp.census.allocations",
    "Allocation": "exactdp.census.allocations",
    "calibrate": "exactdp.calibration.deploy",
    "Calibration": "exactdp.calibration.deploy",
}

__all__ = ["__version__", *_FACE]

__getattr__, __dir__ = lazy_names(__name__, {"__version__": "exactdp._version", **_FACE})
