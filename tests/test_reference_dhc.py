"""DHC persons pairs against the published exact results (../shared/seed002_data).

The σ² lists come from our allocation data (tested separately against the 43 path CSVs);
the reference δ values are the Su–Su–Wang 50-digit computations.  Those lose accuracy
below δ ≈ 1e-14 (their second term is a difference of O(1) quadrature sums), so the
comparison stops there; below, the multiprecision twin is the reference.
"""

import csv
import math
from fractions import Fraction

import mpmath
import pytest

from exactdp.accounting.accountant import ExactAccountant
from exactdp.census.allocations import load_allocation
from exactdp.mechanisms import Composition


@pytest.fixture(scope="module")
def dhc():
    return load_allocation("dhc-persons-2020")


def _rows(seed002, i, j):
    path = seed002 / "exact_results" / f"eps_delta_curve_path_{i}_to_{j}.csv"
    with path.open() as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("pair", [(13, 13), (6, 6), (1, 43)])
def test_pairs_match_published_results(seed002, dhc, pair):
    acc = ExactAccountant(Composition.from_rhos(dhc.pair_rhos(*pair)))
    rows = _rows(seed002, *pair)
    eps = [r["epsilon"] for r in rows]  # 50-digit decimal strings, read exactly
    pts = acc.delta(eps)
    compared = 0
    for r, p in zip(rows, pts):
        ref = mpmath.mpf(r["delta_fdp"])
        assert p.relative_error < 1e-9
        if ref >= 1e-14:
            assert abs(p.estimate / ref - 1) < 1e-8, (pair, r["delta_zcdp"])
            compared += 1
        # the first term is accurate in the reference at every δ
        ref1 = mpmath.mpf(r["delta_fdp_first_term"])
        assert abs(p.first_term / ref1 - 1) < 1e-8
    assert compared >= 20


def test_full_chain_headline_value(dhc):
    """δ at ε = 26.3405888527 for the full-chain pair (issue 2's acceptance value)."""
    acc = ExactAccountant(Composition.from_rhos(dhc.pair_rhos(13, 13)))
    assert acc.rho == Fraction(24811, 5000)
    p = acc.delta(["26.3405888527"])[0]
    assert abs(p.estimate / mpmath.mpf("1.78319933513e-12") - 1) < 1e-10
    assert p.relative_error < 1e-9


def test_tradeoff_tails_match_published_curve(seed002, dhc):
    """α(ζ) = P[Y > 1 + ζ], β(ζ) = P[Y > 1 − ζ] with Y = W/ρ (their convention)."""
    acc = ExactAccountant(Composition.from_rhos(dhc.pair_rhos(13, 13)))
    lat = acc.lattice
    with (seed002 / "exact_results" / "trade_off_curve_path_13_to_13.csv").open() as f:
        rows = list(csv.DictReader(f))
    for r in rows[::40]:
        z = Fraction(r["zeta"])
        ka = math.floor(lat.scale * lat.c * (1 + z)) + 1
        kb = math.floor(lat.scale * lat.c * (1 - z)) + 1
        ta, tb = acc.engine.tails([ka, kb])
        ra, rb = mpmath.mpf(r["trade_off_alpha"]), mpmath.mpf(r["trade_off_beta"])
        for t, ref in ((ta, ra), (tb, rb)):
            if ref > 1e-14:
                assert abs(mpmath.exp(t.log_value) / ref - 1) < 1e-8, r["zeta"]


def test_far_tail_against_multiprecision_twin(dhc):
    """δ ≈ 1e-35 and below: fast path vs the 60-digit twin on a finer rule."""
    from exactdp.accounting.verification import verify_delta

    acc = ExactAccountant(Composition.from_rhos(dhc.pair_rhos(13, 13)))
    v = verify_delta(acc, "46")
    assert v.estimate < 1e-35
    assert v.agrees
    assert abs(v.fast_value / v.estimate - 1) < 1e-9
