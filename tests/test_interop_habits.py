"""The interop adapters as dp_accounting and OpenDP users write code.

dp_accounting: float parameters taken exactly (so ``calibrate_dp_mechanism`` over a
float σ² or noise multiplier works), constructors from ρ, σ and a noise multiplier —
checked against brute-force enumeration of the privacy-loss distribution
(``tests/harness.py``, nothing of the engine).  OpenDP: the measurement chains with ``>>``
after ``make_count`` / ``make_count_by_categories``, has a ``then_`` form, and composes
through OpenDP's combinators where OpenDP allows it.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest

from harness import convolve, delta_brute, dg_pmf, epsilon_brute

dpa = pytest.importorskip("dp_accounting")

from dp_accounting import mechanism_calibration  # noqa: E402

from exactdp.interop.dp_accounting import ExactDiscreteGaussianAccountant, ExactDiscreteGaussianDpEvent  # noqa: E402
from exactdp.numerics.errors import InputError  # noqa: E402

QUERIES = 4  # small enough for the brute-force reference


def _meets(sigma2: Fraction, eps, delta) -> bool:
    """Brute force: does QUERIES × N_Z(0, sigma2), unit shifts, meet δ(ε) ≤ delta?

    The queries share σ², so the privacy loss is a function of the integer sum S of the
    noises, ℓ = (QUERIES − 2S)/(2σ²): δ(ε) = E[(1 − e^{ε−ℓ})_+] over the exact pmf of S
    (integer convolution of the discrete Gaussian pmf at 60 digits)."""
    one = dg_pmf(sigma2, 0)
    pmf = one
    for _ in range(QUERIES - 1):
        pmf = convolve(pmf, one)
    with mpmath.workdps(60):
        s2 = mpmath.mpf(sigma2.numerator) / sigma2.denominator
        e = mpmath.mpf(Fraction(eps).numerator) / Fraction(eps).denominator
        delta_exact = mpmath.fsum(p * (1 - mpmath.exp(e - (QUERIES - 2 * x) / (2 * s2)))
                                  for x, p in pmf.items() if (QUERIES - 2 * x) / (2 * s2) > e)
        return delta_exact <= mpmath.mpf(Fraction(delta).numerator) / Fraction(delta).denominator


def test_calibrate_dp_mechanism_over_a_float_variance():
    """The issue's example: dp_accounting hands the event a float (63.0, 85.06...)."""
    s2 = mechanism_calibration.calibrate_dp_mechanism(
        ExactDiscreteGaussianAccountant,
        lambda s2: dpa.SelfComposedDpEvent(ExactDiscreteGaussianDpEvent(s2), QUERIES),
        target_epsilon=2, target_delta=1e-6, tol=1e-3)
    assert isinstance(s2, float)
    exact = Fraction(s2)
    assert _meets(exact, 2, Fraction(1e-6))  # the calibrated variance meets the target...
    assert not _meets(exact * (1 - Fraction(1, 100)), 2, Fraction(1e-6))  # ...and is near the smallest


def test_calibrate_dp_mechanism_over_a_noise_multiplier():
    nm = mechanism_calibration.calibrate_dp_mechanism(
        ExactDiscreteGaussianAccountant,
        lambda nm: dpa.SelfComposedDpEvent(ExactDiscreteGaussianDpEvent.from_noise_multiplier(nm), QUERIES),
        target_epsilon=2, target_delta=1e-6, tol=1e-3)
    s2 = Fraction(nm) ** 2
    assert _meets(s2, 2, Fraction(1e-6)) and not _meets(s2 * (1 - Fraction(1, 100)), 2, Fraction(1e-6))


def test_constructors_from_rho_sigma_and_noise_multiplier():
    assert ExactDiscreteGaussianDpEvent.from_rho("11/10000").sigma2 == Fraction(10000, 22)
    assert ExactDiscreteGaussianDpEvent.from_rho(Fraction(1, 2), sensitivity=3).sigma2 == 9
    assert ExactDiscreteGaussianDpEvent.from_rho(0.5).sigma2 == 1  # a float ρ, exactly
    sigma = 1.1  # the binary float 2476979795053773/2251799813685248, squared exactly
    assert ExactDiscreteGaussianDpEvent.from_sigma(sigma).sigma2 == Fraction(sigma) ** 2
    ev = ExactDiscreteGaussianDpEvent.from_noise_multiplier(1.5, sensitivity=2)
    assert (ev.sigma2, ev.sensitivity) == (9, 2)
    for bad in (lambda: ExactDiscreteGaussianDpEvent.from_rho(0), lambda: ExactDiscreteGaussianDpEvent.from_rho(-1.0),
                lambda: ExactDiscreteGaussianDpEvent.from_sigma(math.nan),
                lambda: ExactDiscreteGaussianDpEvent.from_noise_multiplier(-0.5)):
        with pytest.raises(InputError):
            bad()


def test_from_rho_gives_the_rho_it_was_built_from():
    """zCDP of a discrete Gaussian with shift Δ is Δ²/(2σ²); the accountant's ε(δ) is at
    most the Bun–Steinke bound of that ρ and equals the brute-force ε to its bracket."""
    rho = Fraction(1, 8)
    acc = ExactDiscreteGaussianAccountant().compose(ExactDiscreteGaussianDpEvent.from_rho(rho), QUERIES)
    total = QUERIES * rho
    eps = acc.get_epsilon(1e-8)
    assert eps <= float(total) + 2 * math.sqrt(float(total) * math.log(1e8))
    brute = float(epsilon_brute([(Fraction(1, 2) / rho, 1)] * QUERIES, Fraction(1e-8)))
    assert brute <= eps <= brute * (1 + 1e-8)


# ----------------------------------------------------------------------------- OpenDP
S2 = "9"  # small enough for the brute-force loss distributions


@pytest.fixture
def dp(opendp):  # (conftest's OpenDP prelude, features enabled)
    return opendp


def _brute_max(patterns, eps) -> Fraction:
    """Brute-force δ(ε) of the worst of the shift patterns (each a multiset of shifts)."""
    return max(Fraction(str(delta_brute([(Fraction(S2), s) for s in p], Fraction(eps)))) for p in patterns)


def _within(got: float, exact: Fraction) -> bool:
    """A certified float: at or above the exact δ, and within the engine's 1e-9."""
    return exact <= Fraction(got) <= exact * (1 + Fraction(1, 10**8))


def test_chains_after_make_count(dp):
    from exactdp.interop.opendp import make_exact_discrete_gaussian, then_exact_discrete_gaussian

    count = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance())
    m = count >> then_exact_discrete_gaussian(sigma2=S2)
    assert str(m.input_domain) == "VectorDomain(AtomDomain(T=String))"
    assert str(m.output_measure) == "SmoothedMaxDivergence"
    for d_in, eps in ((1, 0.5), (2, 1.0)):
        assert _within(m.map(d_in).delta(eps), _brute_max([(d_in,)], eps))
    assert m.map(0).delta(0.1) == 0
    noisy = m(["x"] * 1000)
    assert isinstance(noisy, int) and abs(noisy - 1000) < 60  # σ = 3: 20 standard deviations
    # the make_ form on the count's output space is the same measurement
    same = make_exact_discrete_gaussian(count.output_domain, count.output_metric, S2)
    assert (count >> same).map(1).delta(0.5) == m.map(1).delta(0.5)


@pytest.mark.parametrize("metric, patterns", [("L1", {1: [(1,)], 2: [(2,), (1, 1)]}),
                                              ("L2", {1: [(1,)], 2: [(2,), (1, 1, 1, 1)]})])
def test_chains_after_make_count_by_categories(dp, metric, patterns):
    from exactdp.interop.opendp import then_exact_discrete_gaussian

    cats = dp.t.make_count_by_categories(dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance(),
                                         categories=["a", "b", "c"], MO=getattr(dp, f"{metric}Distance")[int])
    m = cats >> then_exact_discrete_gaussian(sigma2=S2)
    for d_in, worst in patterns.items():
        assert _within(m.map(d_in).delta(0.7), _brute_max(worst, 0.7))
    out = m(["a", "b", "z"] * 10)
    assert len(out) == 4 and all(isinstance(v, int) for v in out)  # 3 categories + the null one


def test_composition_through_opendp(dp):
    """OpenDP 0.16 has no composition rule for privacy profiles: the limit, as documented;
    fixing δ first composes (basic composition: ε and δ add, a valid but looser bound)."""
    from exactdp.interop.opendp import then_exact_discrete_gaussian

    count = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance())
    m1 = count >> then_exact_discrete_gaussian(sigma2=S2)
    m2 = count >> then_exact_discrete_gaussian(sigma2="16")
    with pytest.raises(dp.OpenDPException, match="SmoothedMaxDivergence"):
        dp.c.make_composition([m1, m2])
    composed = dp.c.make_composition([dp.c.make_fix_delta(m1, 1e-6), dp.c.make_fix_delta(m2, 1e-6)])
    eps, delta = composed.map(1)
    assert delta == pytest.approx(2e-6)
    exact = epsilon_brute([(Fraction(S2), 1)], Fraction(1e-6)) + epsilon_brute([(Fraction(16), 1)], Fraction(1e-6))
    assert eps >= float(exact)  # each ε is certified at its δ, so their sum is too
    assert len(composed(["x"] * 5)) == 2


def test_unsupported_spaces_are_refused(dp):
    from exactdp.interop.opendp import make_exact_discrete_gaussian, then_exact_discrete_gaussian

    floats = dp.t.make_sum(dp.vector_domain(dp.atom_domain(bounds=(0.0, 1.0))), dp.symmetric_distance())
    with pytest.raises(InputError, match="integer"):
        floats >> then_exact_discrete_gaussian(sigma2=S2)
    with pytest.raises(InputError, match="binary float"):
        make_exact_discrete_gaussian(dp.atom_domain(T="i32"), dp.absolute_distance(T="i32"), 0.5)
