"""Arb certificates of the DHC persons pairs against independent references.

* The published Su–Su–Wang results (../shared/seed002_data, via the ``seed002`` fixture):
  δ(ε) and its first term P[L > ε].  Where the published numbers are accurate (δ ≥ 5e-5
  for δ; the first term down to δ ≈ 1e-11) every enclosure must contain them; below,
  their own error (≈ 1e-37 absolute in the first term, their second term is a difference
  of O(1) quadrature sums) is larger than our enclosures, and the first term is required
  within 1e-36 absolute.
* The published trade-off tails (13-13), within their own accuracy (≈ 2e-22 absolute).
* Deep tail δ ≈ 8e-40 (ε = 46, pair 13-13): the multiprecision twin (mpmath, its own rule
  and node set) must lie inside the enclosure (up to its stated bound).
"""

from __future__ import annotations

import csv
import math
from fractions import Fraction

import mpmath
import pytest

from exactdp.census.allocations import load_allocation
from exactdp.certify import Certifier, on_conservative_side
from exactdp.mechanisms import Composition

WIDTH = 1e-15


@pytest.fixture(scope="module")
def dhc():
    return load_allocation("dhc-persons-2020")


def _rows(seed002, name):
    with (seed002 / "exact_results" / name).open() as f:
        return list(csv.DictReader(f))


def _inside(enc_lo, enc_hi, ref, tol=Fraction(0)):
    return enc_lo - tol <= ref <= enc_hi + tol


@pytest.mark.parametrize("pair", [(13, 13), (6, 6), (1, 43)])
def test_published_profiles_inside_enclosures(seed002, dhc, pair):
    cert = Certifier(Composition.from_rhos(dhc.pair_rhos(*pair)))
    rows = _rows(seed002, f"eps_delta_curve_path_{pair[0]}_to_{pair[1]}.csv")
    strict_delta = strict_first = 0
    for r in rows:
        e = Fraction(r["epsilon"])  # 50-digit decimal, read exactly
        enc = cert.delta(e)
        assert enc.relative_width <= WIDTH
        k1 = cert.lattice.delta_thresholds(e)[0]
        first = cert.tail(k1)
        assert first.relative_width <= WIDTH
        ref_d, ref_1 = Fraction(r["delta_fdp"]), Fraction(r["delta_fdp_first_term"])
        target = Fraction(r["delta_zcdp"])
        if target >= Fraction(5, 10**5):
            assert enc.contains(ref_d), (pair, r["delta_zcdp"])
            strict_delta += 1
        if target >= Fraction(1, 10**11):
            assert first.contains(ref_1), (pair, r["delta_zcdp"])
            strict_first += 1
        assert _inside(first.lower_exact, first.upper_exact, ref_1, Fraction(1, 10**36)), (pair, r["delta_zcdp"])
    assert strict_delta == 9 and strict_first == 22


def test_published_tradeoff_tails_inside_enclosures(seed002, dhc):
    """α(ζ) = P[Y > 1 + ζ], β(ζ) = P[Y > 1 − ζ], Y = W/ρ (the published convention).

    That file is accurate to ≈ 2e-22 absolute only (some of its β are negative, −2e-26):
    the enclosures must contain it within 5e-22, where it exceeds 1e-12."""
    cert = Certifier(Composition.from_rhos(dhc.pair_rhos(13, 13)))
    lat = cert.lattice
    checked = 0
    for r in _rows(seed002, "trade_off_curve_path_13_to_13.csv")[::60]:
        z = Fraction(r["zeta"])
        for sign, col in ((1, "trade_off_alpha"), (-1, "trade_off_beta")):
            enc = cert.tail(math.floor(lat.scale * lat.c * (1 + sign * z)) + 1)
            ref = Fraction(r[col])
            assert enc.relative_width <= WIDTH
            if ref > Fraction(1, 10**12):
                assert _inside(enc.lower_exact, enc.upper_exact, ref, Fraction(5, 10**22)), (r["zeta"], col)
                checked += 1
    assert checked >= 20


def test_full_chain_headline_value(dhc):
    """Issue 2's acceptance value, and the fast path on the conservative side."""
    from exactdp.accounting.accountant import ExactAccountant

    comp = Composition.from_rhos(dhc.pair_rhos(13, 13))
    enc = Certifier(comp).delta("26.3405888527")
    assert enc.relative_width < 1e-20
    assert abs(float(enc.lower_exact / Fraction("1.78319933513e-12")) - 1) < 1e-11
    fast = ExactAccountant(comp).delta(["26.3405888527"])[0]
    assert on_conservative_side("delta", fast.value, enc)
    assert enc.upper <= fast.value and fast.estimate - fast.error_bound <= enc.lower


@pytest.mark.slow
def test_deep_tail_against_multiprecision_twin(dhc):
    from exactdp.accounting.accountant import ExactAccountant
    from exactdp.accounting.verification import verify_delta

    comp = Composition.from_rhos(dhc.pair_rhos(13, 13))
    enc = Certifier(comp).delta("46")
    v = verify_delta(ExactAccountant(comp), "46", dps=40)
    with mpmath.workdps(60):
        assert v.estimate < 1e-39
        assert enc.lower - v.error_bound <= v.estimate <= enc.upper + v.error_bound
    assert enc.relative_width <= WIDTH
