"""OpenDP's randomized response (``make_randomized_response(categories, prob)``,
``make_randomized_response_bool(prob)``) read back exactly as
:class:`~exactdp.kinds.RandomizedResponseNoise`, against an independent reference written here:
the n-fold product of OpenDP's own output distributions (the true category with probability
prob, each other one with ``(1 − prob)/(k − 1)``; inputs 0 and 1), the float prob taken as the
binary rational it is, ``δ(ε) = Σ (P − e^ε Q)₊`` over the joint outputs in mpmath at 70 digits.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath
import pytest

from exactdp import ExactAccountant
from exactdp.kinds import Mixture, RandomizedResponseNoise
from exactdp.numerics.errors import InputError

DPS = 70


@pytest.fixture
def dp(opendp):  # (conftest's OpenDP prelude, features enabled)
    return opendp


def _ref_delta(prob: float, k: int, n: int, eps: Fraction) -> mpmath.mpf:
    pr = Fraction(prob)
    other = (1 - pr) / (k - 1)
    p_out = [pr] + [other] * (k - 1)  # input 0
    q_out = [other, pr] + [other] * (k - 2)  # input 1
    with mpmath.workdps(DPS):
        e = mpmath.exp(mpmath.mpf(eps.numerator) / eps.denominator)
        s = mpmath.mpf(0)
        for outs in itertools.product(range(k), repeat=n):
            pj = qj = Fraction(1)
            for j in outs:
                pj *= p_out[j]
                qj *= q_out[j]
            d = mpmath.mpf(pj.numerator) / pj.denominator - e * mpmath.mpf(qj.numerator) / qj.denominator
            s += max(d, 0)
        return s


@pytest.mark.parametrize("k,prob,n", [(2, 0.75, 3), (3, 0.6, 2), (5, 0.999, 2), (4, 0.25 + 2.0**-40, 2)])
def test_opendp_randomized_response_against_its_outputs(dp, k, prob, n):
    from exactdp.interop.opendp_measurements import design_of

    m = dp.m.make_randomized_response_bool(prob) if k == 2 and n == 3 else \
        dp.m.make_randomized_response([f"c{i}" for i in range(k)], prob)
    one = design_of(m)
    assert one == Mixture(((RandomizedResponseNoise(k * (1 - Fraction(prob)) / (k - 1), k), 1),))
    design = design_of([m] * n)
    acc = ExactAccountant(design)
    e1 = Fraction(m.map(1))  # OpenDP's ε = log(prob(k − 1)/(1 − prob)), rounded by OpenDP
    epss = [Fraction(0), Fraction(1, 10**6), e1 / 2, e1 * (1 - Fraction(1, 10**9)), n * e1 * (1 + Fraction(1, 10**9))]
    for eps, got in zip(epss, acc.delta(epss)):
        ref = _ref_delta(prob, k, n, eps)
        with mpmath.workdps(DPS):
            assert got.estimate - got.error_bound <= ref <= got.estimate + got.error_bound, (eps, got, ref)
            assert 2 * got.error_bound <= 1e-9 * ref + mpmath.mpf(10) ** -300
    assert acc.delta([epss[-1]])[0].estimate == 0  # pure n·ε beyond OpenDP's own bound
    assert design_of(m, 0) is None and design_of(m, 3) == one  # (the discrete metric: any d ≥ 1 is one change)


def test_opendp_randomized_response_refusals(dp):
    from exactdp.interop.opendp_measurements import _randomized_response

    with pytest.raises(InputError, match="prob"):
        _randomized_response("make_randomized_response", {"categories": ["a", "b", "c"], "prob": 0.2}, 1)
    with pytest.raises(InputError, match="prob"):
        _randomized_response("make_randomized_response_bool", {"prob": 1.0}, 1)
    with pytest.raises(InputError, match="categories"):
        _randomized_response("make_randomized_response", {"categories": None, "prob": 0.5}, 1)
    with pytest.raises(InputError, match="d_in"):
        _randomized_response("make_randomized_response_bool", {"prob": 0.75}, Fraction(1, 2))
