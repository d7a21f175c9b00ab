"""Mixed designs (discrete Laplace, randomized response, (ε, δ) blocks, discrete Gaussians)
against the independent brute force of ``tests/mixed_brute.py``: δ(ε) in both directions,
ε(δ) and β(α), never on the wrong side, brackets ≤ 1e-9 relative."""

from __future__ import annotations

from fractions import Fraction

import mixed_brute as brute
import mpmath
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exactdp import (
    ApproxDP,
    Composition,
    DiscreteGaussian,
    DiscreteLaplace,
    ExactAccountant,
    Gaussian,
    InputError,
    Mixture,
    RandomizedResponse,
    delta,
)
from exactdp.accounting import mixed_balls

REL = mpmath.mpf("1e-9")


@pytest.fixture(autouse=True)
def _digits():
    """The comparisons below at 80 digits (mpmath's default 15 would round the slack away)."""
    with mpmath.workdps(80):
        yield


def check_delta(mix: Mixture, epsilons, atoms=None):
    atoms = atoms or brute.joint(mix.groups)
    acc = ExactAccountant(mix)
    for e, pt in zip(epsilons, acc.delta(epsilons)):
        lo, hi = brute.delta(atoms, Fraction(e))
        lo_r, hi_r = brute.delta(atoms, Fraction(e), "QP")  # the reverse direction: the same curve
        assert lo_r <= hi and lo <= hi_r, (e, lo, lo_r)
        assert pt.value >= lo, (e, pt.value, lo)  # never below the truth
        assert pt.lower <= hi, (e, pt.lower, hi)
        if hi > mpmath.mpf("1e-4000"):
            assert pt.upper - pt.lower <= REL * hi, (e, pt.lower, pt.upper)
    return acc, atoms


DESIGNS = [
    Mixture(((DiscreteLaplace("5/2", 1), 3),)),
    Mixture(((DiscreteLaplace("5/2", -2), 2), (RandomizedResponse("1/2"), 3))),
    Mixture(((RandomizedResponse("3/4", 3), 2), (ApproxDP(1, "1e-6"), 2))),
    Mixture(((DiscreteLaplace("1/1000", 1), 2), (RandomizedResponse("1/10"), 1))),  # tiny scale: ε = 1000
    Mixture(((DiscreteLaplace(40, 3), 2), (ApproxDP("1/2"), 1))),  # large scale
    Mixture(((DiscreteLaplace(2, 0), 1), (RandomizedResponse(1), 1))),  # shift 0 is no loss
    Mixture(((DiscreteLaplace("3/2", 7), 1), (RandomizedResponse(2, 4), 2))),  # larger shift, 4-ary
]
EPS = ["0", "1/3", "1", "2.5", "6", "30", "-1/2", "-3"]


@pytest.mark.parametrize("mix", DESIGNS, ids=lambda m: str(len(m.groups)))
def test_delta_of_finite_mixes(mix):
    top = sum(float(g.pure_epsilon or 0) * c for g, c in mix.others)
    check_delta(mix, EPS + [str(Fraction(top) - Fraction(1, 7)), str(Fraction(top) + 1)])


def test_delta_deep_tail_and_huge_eps():
    # 1000-ary randomized response: the top loss has mass (e/(e + 999))^120 ≈ 1e-308
    mix = Mixture(((RandomizedResponse(1, 1000), 120), (DiscreteLaplace("1/3", 2), 2)))
    top = 120 + 12
    _, atoms = check_delta(mix, ["100", "118", str(Fraction(2 * top - 1, 2)), str(Fraction(top) - Fraction(1, 10**9)),
                                 str(top), "1e6", "-50"])
    lo, _ = brute.delta(atoms, Fraction(2 * top - 1, 2))
    assert mpmath.mpf("1e-330") < lo < mpmath.mpf("1e-300")
    acc = ExactAccountant(mix)
    for d, pt in zip(["1e-200", "1e-300"], acc.epsilon(["1e-200", "1e-300"])):
        true = brute.epsilon(atoms, Fraction(d))
        slack = true * mpmath.mpf(10) ** -(brute.DPS - 10)  # the brute force's own rounding (70 digits)
        assert pt.lower - slack <= true <= pt.upper + slack and pt.upper - pt.lower <= REL * pt.upper, (d, pt, true)


def test_epsilon_and_tradeoff_finite():
    mix = Mixture(((DiscreteLaplace("5/2", 2), 3), (RandomizedResponse("1/2", 3), 2), (ApproxDP(1, "1e-9"), 1)))
    atoms = brute.joint(mix.groups)
    acc = ExactAccountant(mix)
    assert acc.diagnostics().route == "mixed"
    for d, pt in zip(["1e-1", "1e-3", "1e-6", "2e-9"], acc.epsilon(["1e-1", "1e-3", "1e-6", "2e-9"])):
        true = brute.epsilon(atoms, Fraction(d))
        assert pt.lower <= true <= pt.upper, (d, pt, true)
        assert pt.upper - pt.lower <= REL * pt.upper
    alphas = ["0", "1e-12", "1e-3", "1/10", "1/2", "0.999", "0.999999999", "1"]
    for a, pt in zip(alphas, acc.tradeoff(alphas)):
        true = brute.beta(atoms, Fraction(a))
        slack = true * mpmath.mpf(10) ** -40 + mpmath.mpf(10) ** -60  # the brute force's own rounding
        assert pt.lower <= true + slack and true <= pt.upper + slack, (a, pt, true)
        assert pt.upper - pt.lower <= REL * max(true, mpmath.mpf("1e-300")), (a, pt, true)
    at_floor = acc.epsilon(["1e-9"])[0]  # δ reaches the (ε, δ) block's own δ at the top loss 4.4
    assert at_floor.lower <= mpmath.mpf("4.4") <= at_floor.upper
    with pytest.raises(InputError, match="delta"):
        acc.epsilon(["999999999/1000000000000000000"])  # below the floor


def test_snapped_searches_against_brute_force(monkeypatch):
    """ε(δ) and β(α) through the δ_G oracle, where the finite loss's grid (1/5) is coarser than the
    design's kinks (with the discrete Gaussian's): the searches' estimates snapped to the grid (shared
    δ_G thresholds, then the kinks' grid for β) still give brackets around the brute force."""
    monkeypatch.setattr(mixed_balls, "WINDOW_ATOMS", 0)
    mix = Mixture(((DiscreteLaplace(5, 1), 3), (RandomizedResponse("1/2"), 1), (DiscreteGaussian(3), 1)))
    acc, atoms = check_delta(mix, ["0", "1", "2"])
    assert acc.method == "finite-loss+lattice"
    for d, pt in zip(["1e-2", "1e-4"], acc.epsilon(["1e-2", "1e-4"])):
        true = brute.epsilon(atoms, Fraction(d))
        assert pt.lower <= true <= pt.upper, (d, pt, true)
        assert pt.upper - pt.lower <= REL * pt.upper
    for a, pt in zip(["1e-6", "1e-3", "1/10", "1/2", "9/10"], acc.tradeoff(["1e-6", "1e-3", "1/10", "1/2", "9/10"])):
        true = brute.beta(atoms, Fraction(a))
        assert pt.lower <= true <= pt.upper, (a, pt, true)
        assert pt.upper - pt.lower <= REL * true


@pytest.mark.parametrize("windows,oracle", [(True, ""), (False, "lattice"), (False, "lattice-free")],
                         ids=["windows", "oracle", "oracle-lattice-free"])
def test_mixed_with_discrete_gaussians(windows, oracle, monkeypatch):
    """Both ways of composing the discrete Gaussians: as windows in the finite composition,
    and (forced) through the Gaussian part's own route as the δ_G oracle (the lattice route,
    or, forced, the lattice-free one the mixed route prefers where the lattice engine is costly)."""
    if not windows:
        monkeypatch.setattr(mixed_balls, "WINDOW_ATOMS", 0)
    if oracle == "lattice-free":
        monkeypatch.setattr(mixed_balls, "ORACLE_FREE_RATIO", -1)
    mix = Mixture(((DiscreteLaplace("5/2", 1), 2), (RandomizedResponse("1/2"), 1),
                   (DiscreteGaussian(2), 2), (ApproxDP("1/4", "1e-7"), 1)))
    acc, atoms = check_delta(mix, ["0", "1", "3", "7", "12", "-1"])
    assert acc.diagnostics().route == "mixed"
    assert acc.method == ("finite-loss+" + oracle if oracle else "finite-loss")
    for d, pt in zip(["1e-2", "1e-5"], acc.epsilon(["1e-2", "1e-5"])):
        true = brute.epsilon(atoms, Fraction(d))
        assert pt.lower <= true <= pt.upper, (d, pt, true)
        assert pt.upper - pt.lower <= REL * pt.upper
    for a, pt in zip(["1e-6", "1/10", "0.9"], acc.tradeoff(["1e-6", "1/10", "0.9"])):
        true = brute.beta(atoms, Fraction(a))
        assert pt.lower <= true <= pt.upper, (a, pt, true)
        assert pt.upper - pt.lower <= REL * true


def test_face_and_validation():
    assert Gaussian(2, "3/2").rho == Fraction(9, 16)
    with pytest.raises(InputError, match="sigma2"):
        Gaussian(0)
    mix = Mixture.with_gaussians(Composition.from_sigma2(["4"]), [(DiscreteLaplace(3), 2)])
    assert mix.gaussians == Composition.from_sigma2(["4"]) and len(mix.others) == 1
    assert (mix + Composition.from_sigma2(["4"])).size == 4
    assert Mixture.of([RandomizedResponse(1), RandomizedResponse(1)]).groups == ((RandomizedResponse(1), 2),)
    assert delta(Mixture(((RandomizedResponse(1), 1),)), ["1"])[0].value == 0
    dg_only = ExactAccountant(Mixture(((DiscreteGaussian(4), 2),)))
    assert dg_only.route in ("lattice", "lattice-free")
    for bad, field in [(lambda: DiscreteLaplace(0), "scale"), (lambda: DiscreteLaplace(0.5), "scale"),
                       (lambda: RandomizedResponse(1, 1), "k"), (lambda: RandomizedResponse(-1), "epsilon"),
                       (lambda: ApproxDP(1, 1), "delta"), (lambda: ApproxDP(-1), "epsilon"),
                       (lambda: Mixture(((DiscreteLaplace(1), -1),)), "count"), (lambda: Mixture(()), "mechanisms"),
                       (lambda: Mixture((("x", 1),)), "mechanism"),
                       (lambda: ExactAccountant(Mixture(((DiscreteLaplace(1), 1),)), method="lattice"), "method")]:
        with pytest.raises(InputError, match=field):
            bad()


KIND = st.one_of(
    st.builds(DiscreteLaplace, st.sampled_from(["1/2", "1", "5/2", "7/3", "10"]), st.integers(-3, 3)),
    st.builds(RandomizedResponse, st.sampled_from(["1/10", "1/2", "1", "3/2"]), st.integers(2, 4)),
    st.builds(ApproxDP, st.sampled_from(["0", "1/5", "1"]), st.sampled_from(["0", "1e-8", "1/1000"])),
)


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(KIND, st.integers(1, 3)), min_size=1, max_size=3),
       st.lists(st.fractions(Fraction(-3), Fraction(12), max_denominator=50), min_size=1, max_size=3))
def test_property_finite_mixes(groups, epsilons):
    check_delta(Mixture(tuple(groups)), [str(e) for e in epsilons])


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.builds(DiscreteGaussian, st.sampled_from(["1/2", "1", "2", "7/3", "4"]), st.integers(-2, 2)),
       st.lists(st.tuples(KIND, st.integers(1, 2)), min_size=1, max_size=2),
       st.lists(st.fractions(Fraction(-2), Fraction(8), max_denominator=30), min_size=1, max_size=3))
def test_property_discrete_gaussian_beside_kinds(dg, groups, epsilons):
    """Discrete Gaussians as windows on the common grid of the other kinds (the grid must hold
    every loss value: a step too coarse would move atoms)."""
    check_delta(Mixture(((dg, 1), *groups)), [str(e) for e in epsilons])


@pytest.mark.parametrize("groups", [
    ((Gaussian(4), 1),),
    ((Gaussian("1/3", "5/2"), 2), (DiscreteLaplace("5/2", 1), 2), (RandomizedResponse("1/2"), 1),
     (ApproxDP("1/4", "1e-7"), 1)),
    ((Gaussian(50), 3), (DiscreteGaussian(2), 1), (RandomizedResponse(1, 3), 2)),
], ids=["alone", "beside-finite", "beside-discrete-gaussian"])
def test_continuous_gaussian(groups):
    mix = Mixture(groups)
    mu = sum((m.rho * c for m, c in mix.continuous), Fraction(0))
    finite = tuple((m, c) for m, c in mix.groups if not isinstance(m, Gaussian))
    atoms = brute.joint(finite)
    acc = ExactAccountant(mix)
    eps = ["0", "1/2", "2", "6", "-1"]
    for e, pt in zip(eps, acc.delta(eps)):
        lo, hi = brute.delta_gaussian(atoms, Fraction(e), mu)
        assert pt.value >= lo and pt.lower <= hi, (e, pt, lo)
        assert pt.upper - pt.lower <= REL * hi
    for a, pt in zip(["1/10", "1/2"], acc.tradeoff(["1/10", "1/2"])):
        assert pt.upper - pt.lower <= REL * pt.upper
        # β(α) ≥ 1 − δ(ε) − e^ε α at every ε: the brute force's δ at a few ε bounds β from below
        for e in ("0", "1/2", "1", "2"):
            _, hi = brute.delta_gaussian(atoms, Fraction(e), mu)
            assert pt.upper >= 1 - hi - mpmath.exp(mpmath.mpf(Fraction(e).numerator) / Fraction(e).denominator) * \
                mpmath.mpf(Fraction(a).numerator) / Fraction(a).denominator
    for d, pt in zip(["1e-3"], acc.epsilon(["1e-3"])):
        lo_hi = brute.delta_gaussian(atoms, Fraction(*map(int, pt.upper.as_integer_ratio())), mu)
        assert lo_hi[0] <= Fraction(d) * (1 + mpmath.mpf(10) ** -30), (d, pt)  # δ(upper) ≤ target
        below = brute.delta_gaussian(atoms, Fraction(*map(int, pt.lower.as_integer_ratio())), mu)
        assert below[1] >= Fraction(d) * (1 - mpmath.mpf(10) ** -30), (d, pt)  # δ(lower) ≥ target


def test_directed_ends_keep_their_side_at_any_context_precision():
    """The ε(δ)/β ends are rounded up/down at 200 bits and kept there: re-rounding them to the
    context's 53 bits to nearest put an upper end 1/3 below 1/3 (a wrong side by one ulp)."""
    from fractions import Fraction

    import mpmath

    from exactdp.accounting.mixed_queries import _mpf

    for x in (Fraction(1, 3), Fraction(2, 3), Fraction(10**30 + 1, 7), Fraction(1, 10**300 + 9)):
        with mpmath.workprec(53):
            up, down = _mpf(x, True), _mpf(x, False)
        up_q = Fraction(int(up.man_exp[0])) * Fraction(2) ** int(up.man_exp[1])
        down_q = Fraction(int(down.man_exp[0])) * Fraction(2) ** int(down.man_exp[1])
        assert down_q <= x <= up_q


@pytest.mark.parametrize("oracle", ["lattice", "lattice-free"])
def test_oracle_pruning_keeps_the_rest_on_the_upper_side(oracle, monkeypatch):
    """Atoms pruned by the certified zCDP rest bound (fewer δ_G evaluations than atoms × ε):
    δ still brackets the brute force, with the rest on the upper end."""
    monkeypatch.setattr(mixed_balls, "WINDOW_ATOMS", 0)
    if oracle == "lattice-free":
        monkeypatch.setattr(mixed_balls, "ORACLE_FREE_RATIO", -1)
    mix = Mixture(((DiscreteLaplace("5/2", 1), 5), (RandomizedResponse("1/2"), 3), (DiscreteGaussian(2), 2)))
    eps = ["1/2", "3", "8", "14"]
    acc, _ = check_delta(mix, eps)
    assert acc.method == "finite-loss+" + oracle
    answerer = acc.answerer
    assert answerer.evaluations < len(eps) * answerer.finite.size, (answerer.evaluations, answerer.finite.size)


@pytest.mark.parametrize("oracle", ["lattice", "lattice-free"])
def test_oracle_reflection_without_the_deep_tail(oracle, monkeypatch):
    """δ_G at thresholds t < −ρ taken as ``1 − e^t + e^t·[0, zCDP bound of δ_G(−t)]`` where that
    term is negligible (no oracle call): δ still brackets the brute force."""
    monkeypatch.setattr(mixed_balls, "WINDOW_ATOMS", 0)
    if oracle == "lattice-free":
        monkeypatch.setattr(mixed_balls, "ORACLE_FREE_RATIO", -1)
    mix = Mixture(((DiscreteLaplace("1/2", 1), 3), (RandomizedResponse("3/2"), 2), (DiscreteGaussian(40), 1)))
    eps = ["0", "1/3", "2", "5"]
    acc, _ = check_delta(mix, eps)
    assert acc.method == "finite-loss+" + oracle
    answerer = acc.answerer
    asked = list(answerer._g_cache)  # (every threshold with a ball: reflected, mirrored or asked)
    assert answerer.evaluations < len(asked), (answerer.evaluations, len(asked))  # some by reflection alone
