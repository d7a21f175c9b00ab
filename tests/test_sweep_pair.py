"""Per-pair sweep computation against the seed paper's published exact results, and
invariants of the sweep's helpers (hypothesis)."""

from __future__ import annotations

import csv
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp.census.allocations import load_allocation
from exactdp.numerics.exact import InputError
from exactdp.sweep.envelope import gdp_beta, interpolate, lower_hull
from exactdp.sweep.io import read_csv
from exactdp.sweep.pair import DEFAULT_DELTAS, SweepSettings, canonical_delta, compute_pair, tradeoff_thresholds


def _rows(text):
    lines = text.splitlines()
    head = lines[0].split(",")
    return [dict(zip(head, ln.split(","))) for ln in lines[1:]]


def test_default_deltas_are_the_seed_grid(seed002):
    # the 42 targets of the seed's curves: column delta_zcdp of its published CSV
    with open(seed002 / "exact_results" / "eps_delta_curve_path_13_to_13.csv") as fh:
        ref = [r["delta_zcdp"] for r in csv.DictReader(fh)]
    assert list(DEFAULT_DELTAS) == ref
    assert len(DEFAULT_DELTAS) == 42


@pytest.fixture(scope="module")
def dhc():
    return load_allocation("dhc-persons-2020")


@pytest.mark.parametrize("i,j", [(13, 13), (6, 6), (1, 43)])
def test_pair_matches_seed_exact_results(dhc, seed002, i, j):
    """δ_exact at the Bureau's ε agrees with the seed's 50-digit results (Su, Su & Wang,
    public repository data ``eps_delta_curve_path_{i}_to_{j}.csv``) to 1e-8 relative for
    δ ≥ 1e-14 (below that the seed's own values lose accuracy, see its notes)."""
    res = compute_pair(i, j, dhc.pair_rhos(i, j), SweepSettings(tradeoff_half=20))
    mine = {r["delta_target"]: r for r in _rows(res.curve_csv)}
    with open(seed002 / "exact_results" / f"eps_delta_curve_path_{i}_to_{j}.csv") as fh:
        ref = list(csv.DictReader(fh))
    checked = 0
    with mpmath.workdps(40):
        for r in ref:
            d = mpmath.mpf(r["delta_zcdp"])
            m = mine[r["delta_zcdp"]]
            assert abs(mpmath.mpf(m["eps_bureau"]) / mpmath.mpf(r["epsilon"]) - 1) < 1e-18
            if d < mpmath.mpf("1e-14"):
                continue
            rel = abs(mpmath.mpf(m["delta_exact"]) / mpmath.mpf(r["delta_fdp"]) - 1)
            assert rel <= 1e-8, (i, j, r["delta_zcdp"], float(rel))
            # our certified bound plus the seed's stated tolerance (Δ = 1e-35 absolute on
            # each tail, the second one multiplied by e^ε) must cover the difference
            seed_tol = mpmath.mpf("1e-35") * (1 + mpmath.exp(mpmath.mpf(r["epsilon"])))
            diff = abs(mpmath.mpf(m["delta_exact"]) - mpmath.mpf(r["delta_fdp"]))
            assert diff <= mpmath.mpf(m["delta_error_bound"]) + seed_tol, (i, j, r["delta_zcdp"])
            checked += 1
    assert checked == 28


def test_pair_epsilon_inverts_delta(dhc):
    """ε_exact(δ) must satisfy δ_exact(ε_exact) ≈ δ: checked with an independent call of
    the accountant at the reported ε (a different code path: δ(ε), not the ε search)."""
    from exactdp.accounting.accountant import ExactAccountant
    from exactdp.mechanisms import Composition

    s = SweepSettings(deltas=("1e-3", "1e-10"), tradeoff_half=10)
    rows = _rows(compute_pair(13, 13, dhc.pair_rhos(13, 13), s).curve_csv)
    acc = ExactAccountant(Composition.from_rhos(dhc.pair_rhos(13, 13)))
    for r in rows:
        up = acc.delta([Fraction(r["eps_upper"])])[0]
        lo = acc.delta([Fraction(r["eps_lower"])])[0]
        target = mpmath.mpf(r["delta_target"])
        assert up.estimate <= target * (1 + 1e-9)
        assert lo.estimate >= target * (1 - 1e-9) or Fraction(r["eps_lower"]) == Fraction(r["eps_upper"])


def test_tradeoff_vertices_match_seed_midpoint(dhc, seed002):
    """At ζ0 = 0 the seed's (13,13) curve has α = β = P[Y > 1] = 0.0576089905…; the
    randomised Neyman–Pearson curve passes through (P[Y ≥ 1], P[Y > 1]) and its mirror,
    i.e. our vertices k = K/2 + 1 and K/2 (see ../shared/notes/dhc_model.md, 'lattice atoms')."""
    res = compute_pair(13, 13, dhc.pair_rhos(13, 13), SweepSettings(deltas=("1e-5",), tradeoff_half=10))
    rows = read_csv_text(res.tradeoff_csv)
    with open(seed002 / "exact_results" / "trade_off_curve_path_13_to_13.csv") as fh:
        ref = [r for r in csv.DictReader(fh) if mpmath.mpf(r["zeta"]) == 0][0]
    K = 99244  # 2·ρ·scale = 2·(24811/5000)·10000 for the full chain
    by_k = {int(r["threshold"]): r for r in rows}
    mid_hi, mid_lo = by_k[K // 2 + 1], by_k[K // 2]
    with mpmath.workdps(30):
        p_gt = mpmath.mpf(ref["trade_off_alpha"])
        assert abs(mpmath.mpf(mid_hi["alpha"]) / p_gt - 1) < 1e-9  # P[S ≥ K/2+1] = P[Y > 1]
        assert abs(mpmath.mpf(mid_hi["beta"]) - mpmath.mpf(mid_lo["alpha"])) < 1e-20  # symmetry
        assert mpmath.mpf(mid_lo["alpha"]) > p_gt  # one lattice atom above


def read_csv_text(text):
    return _rows(text)


def test_settings_validation():
    with pytest.raises(InputError, match="delta"):
        SweepSettings(deltas=(0.1,))  # a binary float is refused
    with pytest.raises(InputError, match="delta"):
        SweepSettings(deltas=("1.5",))
    with pytest.raises(InputError, match="tradeoff_half"):
        SweepSettings(tradeoff_half=1)
    s = SweepSettings(deltas=("1e-10", "0.5", "1E-40", "5e-1"))
    assert s.deltas == ("5e-1", "1e-10", "1e-40")
    assert SweepSettings.from_dict(s.as_dict()) == s


@given(st.integers(1, 10**6), st.integers(-60, -1))
def test_canonical_delta_roundtrip(m, e):
    value = Fraction(m) * Fraction(10) ** e
    if value >= 1:
        return
    from exactdp.numerics.exact import to_fraction

    text = canonical_delta(value)
    assert to_fraction(text) == value
    assert canonical_delta(text) == text  # idempotent


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 10**7), st.integers(2, 30))
def test_tradeoff_thresholds_symmetric(K, half):
    from exactdp.engine.lattice import LatticeSum

    lat = LatticeSum(weights=(1,), counts=(4,), sigma2=(Fraction(K * K, 7),), scale=Fraction(1), c=Fraction(K, 2),
                     shift=K)
    ks = tradeoff_thresholds(lat, half, "1e-20")
    assert ks == sorted(ks)
    assert set(ks) == {K + 1 - k for k in ks}  # (α_k, β_k) ↦ (β_k, α_k)
    assert len(ks) >= half


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 1000)), min_size=2, max_size=40,
                unique_by=lambda p: p[0]))
def test_lower_hull_is_below_all_points(pts):
    pts = sorted((Fraction(x), Fraction(y)) for x, y in pts)
    hull = lower_hull(pts)
    assert hull[0] == 0 and hull[-1] == len(pts) - 1
    for a, b in zip(hull, hull[1:]):
        (x0, y0), (x1, y1) = pts[a], pts[b]
        for x, y in pts:
            if x0 <= x <= x1:
                assert y >= y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def test_interpolation_of_exact_gaussian_vertices():
    """Chords of a convex curve lie above it, and the reported gap covers the distance:
    vertices sampled from the μ-GDP curve (closed form Φ(Φ⁻¹(1−α) − μ))."""
    mu = mpmath.mpf(3)
    with mpmath.workdps(30):
        A = [mpmath.ncdf(-z) for z in [x / mpmath.mpf(4) for x in range(40, -41, -1)]]
        B = [gdp_beta(a, mu) for a in A]
        zero = [mpmath.mpf(0)] * len(A)
        for t in ("0.003", "0.2", "0.61"):
            a = mpmath.mpf(t)
            b, err, gap = interpolate((A, B, zero, zero), a)
            true = gdp_beta(a, mu)
            assert b >= true
            assert b - true <= gap
            assert err == 0


def test_read_csv_roundtrip(tmp_path):
    p = tmp_path / "x.csv"
    p.write_text("a,b\n1,2\n3,4\n")
    assert read_csv(p) == [{"a": "1", "b": "2"}, {"a": "3", "b": "4"}]


@given(st.floats(min_value=0, max_value=1e300, allow_nan=False, allow_infinity=False))
def test_fmt_bound_rounds_up(x):
    from exactdp.sweep.pair import fmt_bound

    text = fmt_bound(x)
    value = Fraction(text)
    assert value >= Fraction(x)  # exact comparison: the printed bound is still a bound
    assert value <= Fraction(x) * Fraction(1011, 1000) or x == 0


def test_a_negative_epsilon_row_has_a_finite_relative_width():
    """A weak design (ρ = 1/200: δ(0) < 1/2, so ε(1/2) < 0) used to report the worst ε
    bracket as inf (the width was divided only by a positive estimate)."""
    from exactdp.sweep.pair import SweepSettings, compute_pair

    res = compute_pair(1, 1, [Fraction(1, 100)], SweepSettings(deltas=("5e-1", "1e-10")))
    first = res.curve_csv.splitlines()[1].split(",")
    assert first[-3].startswith("-")  # eps_exact at δ = 1/2 is negative
    assert res.diagnostics["worst_eps_rel_width"] < 1e-9


def test_bureau_epsilons_shared_across_pairs_against_enumeration():
    """The Bureau's ε callables are kept per worker (``_bureau_epsilons``): a pair computed
    after another of the same total ρ prints the same bytes as computed first, and its δ
    rows agree with the exact enumeration (``tests/harness.BruteDesign``) at
    ε = ρ + 2 sqrt(ρ ln(1/δ)) recomputed here at 60 digits (ρ = Σ 1/(2σ²), σ² = 1/ρ_entry)."""
    from exactdp.sweep import pair as pair_mod

    from harness import BruteDesign

    s = SweepSettings(deltas=("1e-1", "1e-3", "1e-7"), tradeoff_half=10)
    rhos_a = [Fraction(1, 4), Fraction(1, 4)]
    rhos_b = [Fraction(1, 8), Fraction(3, 8)]  # the same total (σ² = 1/ρ each: zCDP ρ = 1/4)
    pair_mod._bureau_epsilons.cache_clear()
    fresh = compute_pair(1, 2, rhos_b, s)
    pair_mod._bureau_epsilons.cache_clear()
    compute_pair(1, 1, rhos_a, s)
    after = compute_pair(1, 2, rhos_b, s)
    assert pair_mod._bureau_epsilons.cache_info().hits >= 1
    assert (after.curve_csv, after.tradeoff_csv, after.grid_csv) == (fresh.curve_csv, fresh.tradeoff_csv,
                                                                    fresh.grid_csv)
    brute = BruteDesign([(1 / r, 1, 1) for r in rhos_b])
    with mpmath.workdps(60):
        rho = mpmath.mpf(1) / 4
        for r in _rows(after.curve_csv):
            eps = rho + 2 * mpmath.sqrt(rho * mpmath.log(1 / mpmath.mpf(r["delta_target"])))
            assert abs(mpmath.mpf(r["eps_bureau"]) / eps - 1) < mpmath.mpf(10) ** -18
            ref, ref_err = brute.delta(eps)
            diff = abs(mpmath.mpf(r["delta_exact"]) - ref)
            assert diff <= mpmath.mpf(r["delta_error_bound"]) * (1 + mpmath.mpf(10) ** -15) + ref_err, r
