"""A seeded fuzz of the Python API's face (issue 34): every public call, every hostile value.

The README promises that the package face raises :class:`InputError` for bad input and
:class:`UncertifiedError` for an accuracy it cannot certify — never ``ValueError``,
``TypeError``, ``ZeroDivisionError``, ``OverflowError``, ``AttributeError`` or an engine's
internal ``TooCostly``.  Each call below is made with every value of :data:`VALUES` (and a
second argument drawn with a fixed seed); it returns or raises one of the two.
"""

from __future__ import annotations

import random
import time
from decimal import Decimal
from fractions import Fraction

import pytest

import exactdp
from exactdp import (
    Composition,
    DiscreteGaussian,
    ExactAccountant,
    LatticeFreeAccountant,
    bun_steinke_epsilon,
    certify_delta,
    fraction_str,
    load_allocation,
    to_fraction,
    verify_delta,
)
from exactdp.numerics.errors import InputError, UncertifiedError

SEED = 34
VALUES = [0, 1, -1, 2, "2", "1e-10", "0.5", 0.5, float("nan"), None, True, "abc", [], ["2"], (1,), {"a": 1}, b"2",
          Fraction(1, 3), Decimal("0.1"), Decimal("nan"), 10**13, -10**13, 10**400, "1e50", "1e51", "-1e51",
          "1e-300", "1e300", "1e-301", object(), "1/0", "", "10000/11", 1j, Fraction(-1), "1e-4300", 2**63,
          "\u0661", "\u00a02", "5/2e3"]


def _comp():
    return Composition.from_sigma2(["2", "3"])


CALLS = {
    "DiscreteGaussian": lambda v, w: DiscreteGaussian(v),
    "DiscreteGaussian shift": lambda v, w: DiscreteGaussian("2", shift=v),
    "Composition": lambda v, w: Composition(v),
    "Composition count": lambda v, w: Composition(((DiscreteGaussian("2"), v),)),
    "Composition.of": lambda v, w: Composition.of(v),
    "from_sigma2": lambda v, w: Composition.from_sigma2([v]),
    "from_sigma2 shift": lambda v, w: Composition.from_sigma2(["2"], shift=v),
    "from_rhos": lambda v, w: Composition.from_rhos([v]),
    "ExactAccountant": lambda v, w: ExactAccountant(v),
    "rel_tol": lambda v, w: ExactAccountant(_comp(), rel_tol=v),
    "delta": lambda v, w: ExactAccountant(_comp()).delta([v]),
    "delta lone": lambda v, w: ExactAccountant(_comp()).delta(v),
    "epsilon": lambda v, w: ExactAccountant(_comp()).epsilon([v]),
    "tradeoff": lambda v, w: ExactAccountant(_comp()).tradeoff([v]),
    "LatticeFreeAccountant": lambda v, w: LatticeFreeAccountant(v),
    "LF delta": lambda v, w: LatticeFreeAccountant(_comp()).delta([v]),
    "LF epsilon": lambda v, w: LatticeFreeAccountant(_comp()).epsilon([v]),
    "LF tradeoff": lambda v, w: LatticeFreeAccountant(_comp()).tradeoff([v]),
    "exactdp.delta": lambda v, w: exactdp.delta(_comp(), [v]),
    "exactdp.delta design": lambda v, w: exactdp.delta(v, ["1"]),
    "exactdp.epsilon": lambda v, w: exactdp.epsilon(_comp(), [v]),
    "exactdp.tradeoff": lambda v, w: exactdp.tradeoff(_comp(), [v]),
    "bun_steinke_epsilon": lambda v, w: bun_steinke_epsilon(v, w),
    "verify_delta": lambda v, w: verify_delta(ExactAccountant(_comp()), v),
    "certify_delta": lambda v, w: certify_delta(_comp(), [v]),
    "load_allocation": lambda v, w: load_allocation(v),
    "pair_rhos": lambda v, w: load_allocation("dhc-persons-2020").pair_rhos(v, w),
    "to_fraction": lambda v, w: to_fraction(v),
    "fraction_str": lambda v, w: fraction_str(v),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("name", list(CALLS))
def test_api_returns_or_raises_the_documented_errors(name):
    rng = random.Random(f"{SEED}:{name}")
    call = CALLS[name]
    for v in VALUES:
        w = rng.choice(VALUES)
        t0 = time.perf_counter()
        try:
            call(v, w)
        except (InputError, UncertifiedError) as exc:
            assert "\n" not in str(exc), (name, v, w)
        except Exception as exc:  # noqa: BLE001 - the property under test
            pytest.fail(f"{name}({v!r:.40}, {w!r:.40}) raised {type(exc).__name__}: {exc}")
        assert time.perf_counter() - t0 < 60, (name, v)
