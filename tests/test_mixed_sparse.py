"""The sparse composition of the finite loss (grids beyond ``MAX_ATOMS`` with few atoms, issue
"Every mechanism a DP library user composes"): δ(ε), ε(δ) and β(α) against the exact enumeration
of ``tests/mixed_brute.py`` (70 digits, nothing of the engine), on a design of 8·10⁶ grid points
and on random designs with the sparse path forced."""

from __future__ import annotations

from fractions import Fraction
from unittest import mock

import mixed_brute as brute
import mpmath
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exactdp import ApproxDP, DiscreteLaplace, ExactAccountant, Mixture, RandomizedResponse
from exactdp.engine import finite_loss
from exactdp.numerics.errors import UncertifiedError

REL = mpmath.mpf("1e-9")


def _check(mix, atoms, acc, epsilons, deltas, alphas) -> None:
    with mpmath.workdps(80):
        for e, pt in zip(epsilons, acc.delta(epsilons)):
            lo, hi = brute.delta(atoms, Fraction(e))
            assert pt.upper >= lo and pt.lower <= hi, (e, pt, lo, hi)  # (the truth lies in [lo, hi])
            assert pt.upper - pt.lower <= REL * pt.upper, (e, pt)
        for d, pt in zip(deltas, acc.epsilon(deltas)):
            true = brute.epsilon(atoms, Fraction(d))
            assert pt.reported_side == "upper" and pt.lower <= true <= pt.upper, (d, pt, true)
            assert pt.upper - pt.lower <= REL * max(pt.upper, mpmath.mpf(1e-300)), (d, pt)
        for a, pt in zip(alphas, acc.tradeoff(alphas)):
            true = brute.beta(atoms, Fraction(a))
            slack = true * mpmath.mpf(10) ** -40 + mpmath.mpf(10) ** -60
            assert pt.reported_side == "lower" and pt.lower <= true + slack and true <= pt.upper + slack, (a, pt, true)
            assert pt.upper - pt.lower <= REL * max(true, mpmath.mpf("1e-300")) + slack, (a, pt)


def test_eight_million_grid_points_with_few_atoms():
    mix = Mixture(((DiscreteLaplace("1/1000", 8), 1), (RandomizedResponse("1/1000"), 2),
                   (ApproxDP("1/3", "1e-301"), 1)))
    acc = ExactAccountant(mix)
    fin = acc.finite
    assert fin.size > 8 * 10**6 > finite_loss.MAX_ATOMS and fin.sparse
    assert len(fin.atoms(128)[0]) == 9 * 3 * 2  # (DLap: 9 loss values; RR twice: 3; the block: ±1/3)
    _check(mix, brute.joint(mix.groups), acc, ["0", "1/3", "7999", "8000", "16001/2"],
           ["1e-3", "1e-9", "1e-300"], ["0", "1e-300", "1e-3", "1/2", "0.999999999999", "1"])


def test_refused_when_neither_dense_nor_sparse_fits():
    mix = Mixture(((DiscreteLaplace("1/1000", 8), 3), (DiscreteLaplace("1/997", 1), 40),
                   (RandomizedResponse("1/999"), 500)))
    with pytest.raises(UncertifiedError, match="grid atoms"):
        ExactAccountant(mix)


KIND = st.one_of(
    st.builds(DiscreteLaplace, st.sampled_from(["1/300", "1/7", "3/2", "40"]), st.integers(-6, 6)),
    st.builds(RandomizedResponse, st.sampled_from(["1/1000", "1/3", "2", "9"]), st.integers(2, 6)),
    st.builds(ApproxDP, st.sampled_from(["1/100", "1", "4"]), st.sampled_from(["0", "1e-6"])),
)


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(KIND, st.integers(1, 3)), min_size=1, max_size=3),
       st.lists(st.sampled_from(["0", "1/1000", "1/2", "3", "40"]), min_size=1, max_size=2, unique=True),
       st.lists(st.sampled_from(["1e-1", "1e-9", "1e-300"]), min_size=1, max_size=2, unique=True),
       st.lists(st.sampled_from(["0", "1e-300", "1e-3", "1/2", "0.999999999999", "1"]), min_size=1, max_size=2,
                unique=True))
def test_random_designs_on_the_sparse_path(groups, epsilons, deltas, alphas):
    mix = Mixture(tuple(groups))
    with mock.patch.object(finite_loss, "_SPARSE_GAIN", 0):  # (the sparse path wherever its bound fits)
        acc = ExactAccountant(mix)
    assert acc.finite.sparse
    atoms = brute.joint(mix.groups)
    floor = sum((p for k, (p, _) in atoms[0].items() if k == brute.INF), mpmath.mpf(0))
    deltas = [d for d in deltas if mpmath.mpf(d) > floor * (1 + mpmath.mpf(10) ** -30)]
    _check(mix, atoms, acc, epsilons, deltas, alphas)
