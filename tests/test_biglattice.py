"""Designs beyond the int64 lattice: brute force, brackets, the hand-over.

References: :func:`harness.big_lattice_delta_brute` / ``big_lattice_tail_brute`` (no lattice:
all groups but the last enumerated exactly, prefix sums over the last, 60 digits), the
exact int64 engine on designs that fit it, and the issue's certified numbers.
"""

import json
import math
import random
from fractions import Fraction

import mpmath
import pytest

from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon
from exactdp.accounting.bracketed import BigLatticeAccountant
from exactdp.cli import main
from exactdp.engine.families import groups_of
from exactdp.engine.lattice import lattice_of
from exactdp.engine.resonance import first_hit, hits
from exactdp.engine.smoothed import SmoothedTails
from exactdp.mechanisms import Composition, DiscreteGaussian

from harness import big_lattice_delta_brute, big_lattice_tail_brute

#: 2–3 incommensurate variance groups (σ² = p/q with 8-digit p and prime q: scales 1e15–1e22)
DESIGNS = [
    ((Fraction(71234567, 9999991), 1, 1), (Fraction(39182731, 9999973), 1, 2)),
    ((Fraction(71234567, 9999991), 1, 1), (Fraction(39182731, 9999973), 1, 2), (Fraction(13010111, 9999937), 1, 1)),
    ((Fraction(50000017, 9999991), 2, 1), (Fraction(27182819, 9999973), -1, 3), (Fraction(111111113, 9999943), 1, 1)),
]


def _eps_grid(comp):
    """ε at which δ runs from about 1e-1 to below 1e-20 (Gaussian guide, exact rationals)."""
    c = float(comp.rho)
    return [Fraction(0)] + [Fraction(c + 2 * math.sqrt(c * math.log(1 / d))).limit_denominator(1000)
                            for d in (1e-2, 1e-7, 1e-12, 1e-17, 1e-22)]


def _comp(design):
    return Composition(tuple((DiscreteGaussian(s2, d), m) for s2, d, m in design))


def test_first_hit_and_hits_match_enumeration():
    rng = random.Random(11)
    for _ in range(2000):
        m = rng.randint(1, 150)
        a, b = rng.randint(0, 300), rng.randint(0, 300)
        lo = rng.randint(0, m - 1)
        hi = rng.randint(lo, m - 1)
        ref = next((x for x in range(2 * m + 2) if lo <= (a * x + b) % m <= hi), None)
        assert first_hit(a, b, m, lo, hi) == ref
        X = rng.randint(0, 200)
        lo2 = rng.randint(-m, m)
        hi2 = lo2 + rng.randint(0, m + 2)
        want = [x for x in range(X + 1) if any((a * x + b - k) % m == 0 for k in range(lo2, hi2 + 1))]
        assert list(hits(a, b, m, lo2, hi2, X)) == want


@pytest.mark.parametrize("design", DESIGNS)
def test_delta_against_brute_force(design):
    comp = _comp(design)
    assert lattice_of(comp).scale >= 10**15
    acc = BigLatticeAccountant(comp)
    seen = []
    eps = _eps_grid(comp)
    # the big-lattice path, and whichever accountant ExactAccountant(comp) builds
    for p, q, e in zip(acc.delta(eps), ExactAccountant(comp).delta(eps), eps):
        ref = big_lattice_delta_brute(design, e)
        seen.append(ref)
        assert p.certification == "exact"
        for pt in (p, q):
            assert pt.lower <= ref <= pt.upper, (e, ref, pt.lower, pt.upper)
            assert pt.value >= ref and (pt.value - ref) / ref <= 1e-9
    assert max(seen) > 1e-1 and min(seen) < 1e-20  # δ from 1e-1 down to 1e-20


def test_epsilon_and_tradeoff_bracket_brute_force():
    design = DESIGNS[1]
    acc = BigLatticeAccountant(_comp(design))
    for d in ("1e-3", "1e-12"):
        (ep,) = acc.epsilon([d])
        assert big_lattice_delta_brute(design, Fraction(mpmath.nstr(ep.upper, 30))) <= mpmath.mpf(d)
        assert big_lattice_delta_brute(design, Fraction(mpmath.nstr(ep.lower, 30))) > mpmath.mpf(d)
        assert (ep.upper - ep.lower) / ep.upper < 1e-9
    c = acc.c
    for x in (Fraction(1, 3), Fraction(2)):  # curve points (P(W ≥ x), P(W > 2c − x))
        (al, ah), (bl, bh) = acc.tradeoff_vertex_brackets([x])[0]
        assert al <= big_lattice_tail_brute(design, x, strict=False) <= ah
        assert bl <= big_lattice_tail_brute(design, 2 * c - x) <= bh
        alpha = Fraction(mpmath.nstr(big_lattice_tail_brute(design, x, strict=False), 30))
        (tp,) = acc.tradeoff([alpha])
        # β(α) at a curve vertex: within the bracket, up to the 30-digit α we passed
        assert tp.lower - 1e-25 <= big_lattice_tail_brute(design, 2 * c - x) <= tp.upper + 1e-25


def test_smoothed_brackets_contain_brute_force_tails():
    """The lattice-free path, forced at a coarse resolution (so its resonance count stays
    small), against the brute-force tails: both P(W > t) and P(W ≥ t) lie in each bracket."""
    design = ((Fraction(71234567, 9999991), 1, 12), (Fraction(39182731, 9999973), 1, 12))
    st = SmoothedTails(groups_of(_comp(design)), resolution=2e-4)
    assert st.n_windows > 1  # genuine resonances besides u = 0 are found and used
    ts = [Fraction(-1), Fraction(1, 7), Fraction(1), Fraction(3), Fraction(5)]
    for t, (lo, hi) in zip(ts, st.brackets([mpmath.mpf(t.numerator) / t.denominator for t in ts])):
        for strict in (True, False):
            assert lo <= big_lattice_tail_brute(design, t, strict) <= hi, (t, strict)


def test_smoothed_against_the_int64_engine_with_lattice_resonances():
    """pl94-units fits the int64 lattice: the exact engine is the reference; at this
    resolution the smoothed rule must use the lattice's periodic resonances to be right."""
    from exactdp.census.designs import composition_for_allocation

    comp = composition_for_allocation("pl94-units-2020", 1, 1)
    exact = ExactAccountant(comp)
    st = SmoothedTails(groups_of(comp), resolution=2e-5)
    assert st.n_windows > 5
    for x in (Fraction(1, 3), Fraction(5), Fraction(12), Fraction(-2)):
        tv = exact.engine.tails([exact.lattice.threshold_above(x)])[0]
        ref = mpmath.exp(tv.log_value)
        (lo, hi), = st.brackets([mpmath.mpf(x.numerator) / x.denominator])
        assert lo <= ref * (1 + tv.rel_error) and ref * (1 - tv.rel_error) <= hi


def test_pl94_persons_is_bracketed_and_tight():
    from exactdp.census.designs import composition_for_allocation

    comp = composition_for_allocation("pl94-persons-2020", 1, 1)
    acc = ExactAccountant(comp)
    assert acc.certification == "bracket"
    deltas = ["1e-2", "1e-10", "1e-21"]
    dps = acc.delta([bun_steinke_epsilon(comp.rho, d) for d in deltas])
    eps = acc.epsilon(deltas)
    for d, p, e in zip(deltas, dps, eps):
        assert p.certification == "bracket" and 0 < p.lower <= p.upper < mpmath.mpf(d)
        assert (p.upper - p.lower) / p.upper <= 1e-9
        assert (e.upper - e.lower) / e.upper <= 1e-9 and e.upper < p.epsilon


def test_float_sigma_from_another_library():
    """σ as binary floats (dp_accounting style): taken exactly; no OverflowError."""
    comp = Composition(((DiscreteGaussian(Fraction(1.1) ** 2), 12), (DiscreteGaussian(Fraction(3.7) ** 2), 3)))
    acc = ExactAccountant(comp)
    (p,) = acc.delta([Fraction(4)])
    ref = big_lattice_delta_brute(((Fraction(1.1) ** 2, 1, 12), (Fraction(3.7) ** 2, 1, 3)), Fraction(4))
    assert p.lower <= ref <= p.upper and (p.upper - p.lower) / ref < 1e-9


@pytest.mark.parametrize("argv", [
    ["delta", "--sigma2", "121/100", "--sigma2", "12148/25", "--sigma2", "121481/100", "--eps", "1"],
    ["delta", "--sigma2", "1214.81x4", "--sigma2", "2429.62x3", "--sigma2", "485.92x2", "--sigma2", "19.66",
     "--sigma2", "1.21", "--eps", "5"],
])
def test_refused_designs_now_answer(argv, capsys):
    assert main(argv + ["--json"]) == 0
    (pt,) = json.loads(capsys.readouterr().out)["points"]
    assert 0 < mpmath.mpf(pt["delta"]) < 1
    assert mpmath.mpf(pt["error_bound"]) < 1e-9 * mpmath.mpf(pt["delta"])


def test_verify_twin_refuses_cleanly():
    argv = ["delta", "--sigma2", "121/100", "--sigma2", "12148/25", "--sigma2", "121481/100", "--eps", "1", "--verify"]
    assert main(argv) == 3


def test_exact_and_bracket_flags():
    from exactdp.census.designs import release_composition

    exact = BigLatticeAccountant(_comp(DESIGNS[0]))
    assert exact.certification == "exact" and exact.method.startswith("split")
    smooth = BigLatticeAccountant(release_composition("dhc-persons-2020", 13, 13))
    assert smooth.certification == "bracket" and smooth.method == "smoothed-inversion"
    for acc in (exact, smooth):
        (p,) = acc.delta([Fraction(3)])
        (e,) = acc.epsilon(["1e-8"])
        (t,) = acc.tradeoff(["1/10"])
        assert p.certification == e.certification == t.certification == acc.certification
        assert p.lower <= p.estimate <= p.upper and e.lower <= e.upper and t.lower <= t.upper


def test_sweep_with_pl94_runs(tmp_path, capsys):
    """The whole-release sweep (formerly refused): release.csv rows are certified brackets."""
    import csv

    out = tmp_path / "r"
    argv = ["sweep", "--out", str(out), "--quiet", "--no-plots", "--pairs", "13-13", "--with-pl94", "13-13",
            "--only-deltas", "--deltas", "1e-10", "--jobs", "1"]
    assert main(argv) == 0
    with open(out / "release.csv") as fh:
        (row,) = list(csv.DictReader(fh))
    assert row["path_i"] == row["path_j"] == "13" and row["delta_target"] == "1e-10"
    lo = mpmath.mpf(row["delta_exact"]) - mpmath.mpf(row["delta_error_bound"])
    assert OLD_BRACKET[0] <= lo <= mpmath.mpf(row["delta_upper"]) <= OLD_BRACKET[1]


#: the brackets certified by the earlier sub-Gaussian coarsening for the whole release, pair 13-13, δ = 1e-10
OLD_BRACKET = (mpmath.mpf("2.04926e-12"), mpmath.mpf("2.05005e-12"))


# --- exact trade-off, deep δ, tilted split, refusals ---------------------------------------

#: designs for the loss-distribution brute force of the trade-off (P and Q enumerated
#: separately, no likelihood-ratio identity): big atoms (σ² = 1.21), and a scale ≥ 1e15
TRADEOFF_DESIGNS = [
    ((Fraction(121, 100), 1, 1), (Fraction(71234567, 9999991), 1, 1)),
    ((Fraction(71234567, 9999991), 1, 1), (Fraction(39182731, 9999973), 1, 1)),
]
ALPHAS = ["1e-9", "1e-4", "1/20", "3/10", "1/2", "9/10", "999999/1000000"]


@pytest.mark.parametrize("design", TRADEOFF_DESIGNS)
def test_tradeoff_exact_against_loss_distribution_brute_force(design):
    """β(α) between vertices (randomised NP test at an atom of any size) on the split path:
    certified, ≤ 1e-9 relative wide, containing the brute-force value."""
    from harness import tradeoff_brute

    mechs = [(s2, d) for s2, d, m in design for _ in range(m)]
    comp = _comp(design)
    assert lattice_of(comp).scale >= 10**9
    acc = BigLatticeAccountant(comp)
    assert acc.certification == "exact"
    for a, tp in zip(ALPHAS, acc.tradeoff(ALPHAS)):
        ref = tradeoff_brute(mechs, Fraction(a))
        assert tp.lower <= ref <= tp.upper, (a, tp.lower, ref, tp.upper)
        assert (tp.upper - tp.lower) <= 1e-9 * ref, (a, float((tp.upper - tp.lower) / ref))


def test_tradeoff_smoothed_brackets_contain_exact_values():
    """The smoothed path's trade-off brackets (coarse resolution, so wide) contain β(α) of
    the exact split path (itself checked against the loss-distribution brute force above;
    the smoothed tails against brute force in test_smoothed_brackets_contain_brute_force_tails)."""
    design = ((Fraction(71234567, 99999), 1, 2), (Fraction(39182731, 99997), 1, 3))
    comp = _comp(design)
    smooth = BigLatticeAccountant(comp, method="smoothed", resolution=1e-5)
    exact = BigLatticeAccountant(comp, method="split")
    alphas = ALPHAS[1:-1]
    for a, tp, te in zip(alphas, smooth.tradeoff(alphas), exact.tradeoff(alphas)):
        assert tp.certification == "bracket" and te.certification == "exact"
        assert tp.lower <= te.upper and te.lower <= tp.upper, (a, tp.lower, te.lower, tp.upper)
        assert (te.upper - te.lower) <= 1e-9 * te.upper


def test_pl94_tradeoff_and_deep_delta_within_1e9():
    """P.L. 94-171 persons: trade-off and δ down to 1e-100 each ≤ 1e-9 relative wide, ε(δ) too."""
    from exactdp.census.designs import composition_for_allocation

    comp = composition_for_allocation("pl94-persons-2020", 1, 1)
    acc = BigLatticeAccountant(comp)
    for tp in acc.tradeoff(["1e-12", "1e-3", "1/2", "9/10"]):
        assert 0 < tp.lower <= tp.upper and (tp.upper - tp.lower) <= 1e-9 * tp.upper
    deltas = ["1e-30", "1e-40", "1e-100"]
    for d, p, e in zip(deltas, acc.delta([bun_steinke_epsilon(comp.rho, d) for d in deltas]), acc.epsilon(deltas)):
        assert 0 < p.lower <= p.upper < mpmath.mpf(d) and (p.upper - p.lower) <= 1e-9 * p.upper
        assert (e.upper - e.lower) <= 1e-9 * e.upper


def test_smoothed_deep_delta_against_the_int64_engine():
    """pl94-units fits the int64 lattice: the exact engine certifies δ at 1e-40 and 1e-100;
    the smoothed brackets (lattice-free, coarse) contain it."""
    from exactdp.census.designs import composition_for_allocation

    comp = composition_for_allocation("pl94-units-2020", 1, 1)
    exact = ExactAccountant(comp)
    acc = BigLatticeAccountant(comp, method="smoothed", resolution=2e-5)  # resonances of its lattice
    es = [bun_steinke_epsilon(comp.rho, d) for d in ("1e-40", "1e-100")]
    for ref, p in zip(exact.delta(es), acc.delta(es)):
        assert p.lower <= ref.value and ref.value - 2 * ref.error_bound <= p.upper


def test_split_deep_tails_against_brute_force():
    """The tilted windows follow the tail: δ at 1e-30 on the exact path, against brute force."""
    design = DESIGNS[2]
    comp = _comp(design)
    acc = BigLatticeAccountant(comp)
    c = float(comp.rho)
    e = Fraction(c + 2 * math.sqrt(c * math.log(1e30))).limit_denominator(1000)
    (p,) = acc.delta([e])
    ref = big_lattice_delta_brute(design, e)
    assert ref < 1e-25 and p.lower <= ref <= p.upper and (p.upper - p.lower) <= 1e-9 * ref


# --- batch independence, meet in the middle -----------------------------------------------

def test_batch_spanning_a_wide_tilt_range_stays_tight():
    """δ at ε = 0, mid, deep and far beyond the support in one batch: each point as tight
    as alone (the windows are chosen per tilt range), nothing raised far out."""
    design = ((Fraction(20446914, 999983), -1, 3), (Fraction(7710904, 9999991), 3, 3))
    acc = BigLatticeAccountant(_comp(design))
    c = float(acc.c)
    mid = Fraction(c + 2 * math.sqrt(c * math.log(1e12))).limit_denominator(1000)
    batch = acc.delta([Fraction(0), mid, Fraction(10**6)])
    for e, p in zip((Fraction(0), mid), batch):
        ref = big_lattice_delta_brute(design, e)
        assert p.lower <= ref <= p.upper and (p.upper - p.lower) <= 1e-9 * ref, (e, p.lower, ref, p.upper)
    assert batch[2].lower == 0 and batch[2].upper < 1e-290  # beyond every truncated support


def test_sorted_split_against_brute_force():
    """The meet-in-the-middle engine, forced on a 3-group design: tails at thresholds that
    are exact atom sums (ties settled exactly, both strictnesses) and δ from 1e-1 to 1e-22."""
    from exactdp.engine.split_sorted import SortedSplitTails

    design = DESIGNS[0]
    groups = groups_of(_comp(design))
    st = SortedSplitTails(groups)
    w = [g.weight for g in groups]
    ties = [3 * w[0] - 2 * w[-1], 5 * w[-1], 4 * w[0] + w[-1]]
    ts = [Fraction(1, 3), Fraction(-2), Fraction(7), Fraction(0)] + ties + [-x for x in ties]
    for strict in (True, False):
        for t, (lo, hi) in zip(ts, st.intervals(ts, strict)):
            ref = big_lattice_tail_brute(design, t, strict)
            assert lo <= ref <= hi and hi - lo <= 1e-9 * ref, (t, strict, lo, ref, hi)
    acc = BigLatticeAccountant(_comp(design), method="split")
    acc.tails, acc.method = st, st.method
    for e, p in zip(_eps_grid(acc.composition), acc.delta(_eps_grid(acc.composition))):
        ref = big_lattice_delta_brute(design, e)
        assert p.lower <= ref <= p.upper and (p.upper - p.lower) <= 1e-9 * ref, (e, p.lower, ref, p.upper)


def test_five_incommensurate_groups_are_exact():
    """Five incommensurate groups (formerly refused by every engine): exact by meeting in
    the middle, inside the independent smoothed brackets, ≤ 1e-9 relative wide."""
    design = DESIGNS[1] + ((Fraction(50000017, 9999943), 2, 1), (Fraction(27182819, 9999929), -1, 3))
    comp = _comp(design)
    acc = BigLatticeAccountant(comp)
    assert acc.certification == "exact" and acc.method == "split-sorted"
    smooth = BigLatticeAccountant(comp, method="smoothed", resolution=1e-2)
    es = [Fraction(0), Fraction(2), Fraction(9)]
    for p, q in zip(acc.delta(es), smooth.delta(es)):
        assert q.lower <= p.lower <= p.upper <= q.upper and (p.upper - p.lower) <= 1e-9 * p.upper
    (ep,) = acc.epsilon(["1e-10"])
    assert (ep.upper - ep.lower) <= 1e-9 * ep.upper
    (lo_d,), (hi_d,) = (acc.delta([Fraction(mpmath.nstr(x, 40))]) for x in (ep.lower, ep.upper))
    assert hi_d.upper <= mpmath.mpf("1e-10") < lo_d.lower


#: a near-deterministic mechanism (σ² = 1/500, weight 500: rare atoms carry δ) beside two
#: ordinary groups; and σ² ≈ 0.025 with shift 2, whose δ(ε) is a staircase
TINY_DESIGNS = [
    ((Fraction(1, 500), 1, 1), (Fraction(12130437, 9999991), 2, 2), (Fraction(37186674, 9999991), 1, 3)),
    ((Fraction(48496852, 9999991), -2, 1), (Fraction(252, 9973), 2, 3)),
]


@pytest.mark.parametrize("design", TINY_DESIGNS)
def test_tiny_sigma2_groups_stay_tight(design):
    """Tiny-σ² groups become shifted thresholds (their huge mgf no longer spoils the window
    bound) and ε(δ) is settled by certified bisection on a staircase δ(ε): δ and ε(δ)
    within brute force, each ≤ 1e-9 relative wide."""
    acc = BigLatticeAccountant(_comp(design))
    assert acc.certification == "exact"
    c = acc.c
    es = [Fraction(0), c - 3, c + Fraction(9, 4), c + 26]
    for e, p in zip(es, acc.delta(es)):
        ref = big_lattice_delta_brute(design, e)
        assert p.lower <= ref <= p.upper and (p.upper - p.lower) <= 1e-9 * ref, (e, p.lower, ref, p.upper)
    for d, ep in zip(("1e-3", "1e-10"), acc.epsilon(["1e-3", "1e-10"])):
        assert (ep.upper - ep.lower) <= 1e-9 * ep.upper
        assert big_lattice_delta_brute(design, Fraction(mpmath.nstr(ep.upper, 40))) <= mpmath.mpf(d)
        assert big_lattice_delta_brute(design, Fraction(mpmath.nstr(ep.lower, 40))) > mpmath.mpf(d)


@pytest.mark.parametrize("method", ["auto", "smoothed"])
def test_negative_epsilon_against_brute_force(method):
    """δ(ε) for ε < 0 (= 1 − e^ε + e^ε δ(−ε)), on both big-lattice paths, against the
    brute-force hockey stick ``P[W > ε − c] − e^ε P[W > ε + c]`` at the same ε."""
    design = DESIGNS[0] if method == "auto" else ((Fraction(71234567, 9999991), 1, 12),
                                                  (Fraction(39182731, 9999973), 1, 12))
    # the smoothed path at a coarse fixed resolution (its resonance count stays small)
    acc = BigLatticeAccountant(_comp(design), method=method, resolution=None if method == "auto" else 2e-4)
    eps = [Fraction(-1, 1000), Fraction(-1, 2), Fraction(-3), lambda dps: -mpmath.sqrt(2)]
    for p, e in zip(acc.delta(eps), eps):
        ref = big_lattice_delta_brute(design, e if isinstance(e, Fraction) else Fraction(mpmath.nstr(e(40), 35)))
        slack = 0 if isinstance(e, Fraction) else mpmath.mpf(10) ** -30
        assert p.lower - slack <= ref <= p.upper + slack, (method, e, p.lower, ref, p.upper)
        assert p.upper - p.lower <= (2e-9 if method == "auto" else 1e-2) * ref
        assert 0 <= p.second_term <= p.first_term <= 1


def test_a_useless_bracket_is_refused_not_reported():
    """P.L. 94-171 with a σ² = 1/1000 mechanism: the smoothed path can only say δ ∈ [0, 1]
    at ε = 5 (the truth is ≈ 1 − e^{−495}); that is refused (exit 3), not printed."""
    from exactdp.census.allocations import load_allocation
    from exactdp.numerics.errors import UncertifiedError

    base = Composition.from_rhos(load_allocation("pl94-persons-2020").pair_rhos(1, 1))
    comp = Composition(tuple(base.groups) + ((DiscreteGaussian(Fraction(1, 1000), 1), 1),))
    acc = BigLatticeAccountant(comp)
    with pytest.raises(UncertifiedError, match="brackets it only in"):
        acc.delta(["5"])


def test_beyond_the_floor_the_zcdp_bound_caps_delta_and_epsilon():
    """Far beyond the enumeration's e^-690 floor δ is still bounded: by ρ-zCDP,
    δ(ε) ≤ exp(−(ε−ρ)²/(4ρ)) (reported as [0, that]); ε(δ) ≤ ρ + 2 sqrt(ρ log(1/δ)) caps
    ε, but what is not pinned to 1e-6 (ε at δ = 1e-300, 1e-600 here: [60, 110] and
    [0, 154]; they used to be printed as [60, 1.6e119] and [0, 4.6e119]) is refused."""
    from exactdp.numerics.errors import UncertifiedError

    design = ((Fraction(71234567, 9999991), 5, 1), (Fraction(39182731, 9999973), -3, 2))
    comp = _comp(design)
    acc = BigLatticeAccountant(comp)
    (p,) = acc.delta(["1000"])
    (q,) = acc.epsilon(["1e-30"])  # (the brute force truncates at mass 1e-70: e^ε·1e-70 ≪ 1e-30)
    with mpmath.workdps(60):
        rho = mpmath.mpf(comp.rho.numerator) / comp.rho.denominator
        zc = mpmath.exp(-((1000 - rho) ** 2) / (4 * rho))
        assert p.lower == 0 and zc <= p.upper <= zc * (1 + mpmath.mpf(10) ** -20)
        ref = big_lattice_delta_brute(design, Fraction(mpmath.nstr(q.upper, 30)))
        assert ref <= mpmath.mpf("1e-30") < big_lattice_delta_brute(design, Fraction(mpmath.nstr(q.lower, 30)))
    for d in ("1e-300", "1e-600"):
        with pytest.raises(UncertifiedError, match="beyond its resolution"):
            acc.epsilon([d])


def test_split_numbers_do_not_depend_on_the_batch_or_history():
    """The split enumeration's window set is a function of the threshold's own tilt (a
    canonical bucket) and the kernel a function of the set: δ(5) alone, in a batch with
    other ε, and after other queries give the same digits (they differed by 2e-11)."""
    comp = Composition.from_sigma2(["1214.81"] * 4 + ["2429.62"] * 3 + ["485.92"] * 2 + ["19.66", "1.21"])

    def at5(acc, batch):
        return [(str(p.lower), str(p.upper)) for p in acc.delta(batch) if p.epsilon == 5][0]

    alone = at5(BigLatticeAccountant(comp), ["5"])
    assert at5(BigLatticeAccountant(comp), ["1", "5", "1000"]) == alone
    used = BigLatticeAccountant(comp)
    used.epsilon(["1e-3", "1e-12"])
    used.delta(["0", "20"])
    assert at5(used, ["5"]) == alone
