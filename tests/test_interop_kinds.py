"""The new mechanism kinds where users are: dp_accounting's DpEvent trees and OpenDP's own
noise measurements, read into the Mixture written by hand (parameters mapped: dp_accounting's
noise parameter a ↔ scale 1/a, OpenDP's scale b ↔ scale b and b² ↔ σ², sensitivity ↔ shift)
and answered against the brute force of tests/kinds_reference.py."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from kinds_reference import approx_loss, dg_loss, dlap_loss, mixed_delta, rr_loss

from exactdp.kinds import ApproxDP, DiscreteLaplace, Mixture, RandomizedResponse
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.errors import InputError

from harness import float_up_reference


def _brute_up(parts, eps):
    """The brute-force δ(ε) rounded up to a float (what an adapter's float must be ≥ of)."""
    with mpmath.workdps(40):
        return mixed_delta(parts, Fraction(eps))


# ----------------------------------------------------------------------------- dp_accounting
dpa = pytest.importorskip("dp_accounting")


def _dpa():
    from dp_accounting import dp_event
    from dp_accounting.privacy_accountant import UnsupportedEventError

    from exactdp.interop.dp_accounting import (
        ExactDiscreteGaussianAccountant,
        ExactDiscreteGaussianDpEvent,
        ExactMechanismDpEvent,
    )

    return dp_event, UnsupportedEventError, ExactDiscreteGaussianAccountant, ExactDiscreteGaussianDpEvent, \
        ExactMechanismDpEvent


def test_dp_accounting_tree_maps_to_the_mixture_by_hand_and_meets_brute_force():
    dp_event, _, Accountant, DGEvent, MechEvent = _dpa()
    if not hasattr(dp_event, "DiscreteLaplaceDpEvent"):
        pytest.skip("this dp_accounting has no DiscreteLaplaceDpEvent")

    def ledger(a):
        acc = Accountant()
        acc.compose(dp_event.ComposedDpEvent([
            dp_event.SelfComposedDpEvent(dp_event.DiscreteLaplaceDpEvent(a, 2), 2),
            MechEvent(RandomizedResponse("1/2", 3)),
            dp_event.NoOpDpEvent(),
            DGEvent(4),
            dp_event.DiscreteLaplaceDpEvent(a, 0),  # sensitivity 0: no privacy loss
        ]))
        return acc.compose(MechEvent(ApproxDP("1/4", "1e-6")))

    def hand(a):
        return Mixture(((DiscreteLaplace(1 / a, 2), 2), (RandomizedResponse(Fraction(1, 2), 3), 1),
                        (DiscreteGaussian(4), 1), (ApproxDP(Fraction(1, 4), Fraction(1, 10**6)), 1)))

    # dp_accounting's float noise parameter a (pmf ∝ e^{−a|x|}) is taken exactly: scale 1/a, not 5/2
    assert ledger(0.4).composition == hand(Fraction(0.4)) and Fraction(0.4) != Fraction(2, 5)
    # a = 3/8 (a float that is the decimal): its losses share a grid with ε = 1/2, so the
    # mixed route enumerates them (0.4's binary grid would need 2e16 atoms)
    acc = ledger(0.375)
    assert acc.composition == hand(Fraction(3, 8))
    dl, dropped = dlap_loss(Fraction(8, 3), 2)
    parts = [(dl, 2), (rr_loss("1/2", 3), 1), (dg_loss(4), 1), (approx_loss("1/4", "1e-6"), 1)]
    for eps in (1, 2):
        ref = _brute_up(parts, eps)
        got = acc.get_delta(eps)
        assert got >= float(ref - 2 * dropped) and abs(got - ref) <= 1e-9 * ref
    # a δ below the floor 1e-6 of the (ε, δ) part has no finite ε
    assert acc.get_epsilon(1e-7) == math.inf


def test_dp_accounting_gaussian_event_is_the_continuous_gaussian():
    """GaussianDpEvent(σ) composes as exactdp's continuous Gaussian(σ², 1); beside a discrete
    Laplace its δ(ε) is Φ terms: δ = Σ_v p_v·δ_N(ε − v), δ_N the Gaussian mechanism's
    closed form Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) with μ = 1/σ (Balle & Wang 2018)."""
    dp_event, _, Accountant, _, _ = _dpa()
    from exactdp.kinds import Gaussian

    acc = Accountant().compose(dp_event.GaussianDpEvent(2.0), 3).compose(dp_event.DiscreteLaplaceDpEvent(0.5, 1))
    assert acc.composition == Mixture(((Gaussian(4, 1), 3), (DiscreteLaplace(2, 1), 1)))
    assert Accountant().compose(dp_event.GaussianDpEvent(0.0)).get_delta(1) == 1.0  # no noise: non-private
    dl, dropped = dlap_loss(2, 1)
    with mpmath.workdps(40):
        mu = mpmath.sqrt(3) / 2  # three σ = 2 Gaussians: one of σ = 2/√3

        def delta_n(e):
            return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)

        for eps in (1, 2):
            ref = mpmath.fsum(p * delta_n(eps - mpmath.mpf(v.numerator) / v.denominator) for v, p in dl.items())
            got = acc.get_delta(eps)
            assert got >= float(ref - 2 * dropped) and abs(got - ref) <= 1e-9 * ref


def test_dp_accounting_pure_ledger_edges():
    dp_event, _, Accountant, _, MechEvent = _dpa()
    acc = Accountant().compose(MechEvent(DiscreteLaplace("5/2", 1)), 365)
    assert acc.composition == Mixture(((DiscreteLaplace(Fraction(5, 2)), 365),))
    assert acc.get_epsilon(0) == float_up_reference(Fraction(365 * 2, 5))  # pure DP: ε(0) = Σ ε_i, exactly
    assert acc.get_delta(146) == 0.0 and acc.get_delta(145) > 0
    # the same count of daily releases as dp_accounting's own event, a = 0.4 binary: ε(0) = 365·2·a
    own = Accountant().compose(dp_event.DiscreteLaplaceDpEvent(0.4, 2), 365)
    assert own.get_epsilon(0) == float_up_reference(365 * 2 * Fraction(0.4))


def test_dp_accounting_refuses_what_it_cannot_account_exactly():
    dp_event, Unsupported, Accountant, _, MechEvent = _dpa()
    acc = Accountant().compose(MechEvent(DiscreteLaplace(2)))
    event = dp_event.PoissonSampledDpEvent(0.5, dp_event.GaussianDpEvent(1.0))
    assert not acc.supports(event)
    with pytest.raises(Unsupported, match="subsampled"):
        acc.compose(event)
    with pytest.raises(InputError, match="mechanism"):
        MechEvent("not a mechanism")


def test_dp_accounting_randomized_response_event():
    """dp_accounting's RandomizedResponseDpEvent(p, k), p taken exactly: δ against the closed
    form ``(q1 − e^ε q2)₊`` of one event (ε ≥ 0) and the ledger beside a discrete Laplace
    against the enumeration of tests/test_rr_noise.py."""
    dp_event, Unsupported, ExactAccountant, _, MechEvent = _dpa()
    from dp_accounting import NeighboringRelation
    if not hasattr(dp_event, "RandomizedResponseDpEvent"):
        pytest.skip("this dp_accounting has no RandomizedResponseDpEvent")
    from test_rr_noise import ref_delta

    from exactdp.kinds import RandomizedResponseNoise

    def Accountant():  # dp_accounting defines the event for REPLACE_ONE (its swap-the-bucket pair)
        return ExactAccountant(NeighboringRelation.REPLACE_ONE)

    with pytest.raises(Unsupported, match="REPLACE_ONE"):  # as dp_accounting does under add/remove
        ExactAccountant().compose(dp_event.RandomizedResponseDpEvent(0.3, 4))

    p, k = Fraction(0.3), 4
    one = Accountant().compose(dp_event.RandomizedResponseDpEvent(0.3, 4))
    assert one.composition == Mixture(((RandomizedResponseNoise(p, k), 1),))
    with mpmath.workdps(60):
        q1, q2 = mpmath.mpf(1 - p + p / k), mpmath.mpf(p / k)
        for eps in (0.0, 0.5, 1.5):
            ref = max(mpmath.mpf(0), q1 - mpmath.exp(mpmath.mpf(eps)) * q2)
            got = one.get_delta(eps)
            assert got >= ref * (1 - 1e-15) and abs(got - ref) <= 1e-9 * ref + 1e-300
    acc = Accountant().compose(dp_event.RandomizedResponseDpEvent(0.3, 4), 3).compose(MechEvent(DiscreteLaplace(2)))
    lo, hi = ref_delta([(p, k, 3)], ((DiscreteLaplace(2), 1),), Fraction(1))
    got = acc.get_delta(1.0)
    assert got >= hi * (1 - 1e-15) and got - lo <= 1e-9 * hi
    e = acc.get_epsilon(1e-4)  # the certified upper end: δ(e) ≤ 1e-4 by the reference
    assert ref_delta([(p, k, 3)], ((DiscreteLaplace(2), 1),), Fraction(e))[1] <= mpmath.mpf(Fraction(1e-4))
    assert ref_delta([(p, k, 3)], ((DiscreteLaplace(2), 1),), Fraction(e) * (1 - Fraction(1, 10**8)))[0] > \
        mpmath.mpf(Fraction(1e-4))
    noop = Accountant().compose(dp_event.RandomizedResponseDpEvent(1.0, 4)).compose(MechEvent(DiscreteLaplace(2)))
    assert noop.composition == Mixture(((DiscreteLaplace(2), 1),))  # p = 1: the output ignores the input
    assert Accountant().compose(dp_event.RandomizedResponseDpEvent(0.0, 2)).get_epsilon(0.1) == float("inf")


# ----------------------------------------------------------------------------- OpenDP
def test_opendp_measurements_map_to_the_design_by_hand(opendp):
    dp = opendp
    from exactdp.interop.opendp_measurements import design_of, designs_of

    count = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance())
    lap = count >> dp.m.then_laplace(scale=2.5)
    gauss = count >> dp.m.then_gaussian(scale=1.5)
    assert design_of(lap) == Mixture(((DiscreteLaplace(Fraction(5, 2), 1), 1),))
    assert design_of(gauss) == Composition(((DiscreteGaussian(Fraction(9, 4), 1), 1),))  # σ² = scale²
    assert design_of([lap, gauss, lap], d_in=3) == Mixture(((DiscreteLaplace(Fraction(5, 2), 3), 2),
                                                            (DiscreteGaussian(Fraction(9, 4), 3), 1)))
    assert design_of(lap >> (lambda x: x + 1)) == design_of(lap)  # post-processing
    geo = dp.m.make_geometric(dp.atom_domain(T=int), dp.absolute_distance(T=int), scale=0.1)
    assert design_of(geo) == Mixture(((DiscreteLaplace(Fraction(0.1), 1), 1),))  # the float, exactly
    by_cat = dp.t.make_count_by_categories(dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance(),
                                           categories=["a", "b"]) >> dp.m.then_laplace(scale=2.0)
    # L1 at distance 2: one count moved by 2 dominates two counts moved by 1 each (opendp_laplace_ball)
    assert designs_of(by_cat, 2) == (Mixture(((DiscreteLaplace(2, 2), 1),)),)
    assert designs_of(lap, 0) == (None,)


def test_opendp_refusals_name_the_measurement(opendp):
    dp = opendp
    from exactdp.interop.opendp_measurements import design_of

    floats = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    with pytest.raises(InputError, match="^k=-6: .*worst-case shift patterns"):  # (fewer: read back,
        design_of(dp.m.make_gaussian(dp.vector_domain(dp.atom_domain(T=float, nan=False), size=3),  # tests/
                                     dp.l2_distance(T=float), scale=2.0, k=-6))  # test_opendp_grid*.py)
    from exactdp.kinds import Laplace

    # (the float Laplace on vectors with l1_distance, refused before, is one coordinate moved by d_in)
    assert design_of(dp.m.make_laplace(floats, dp.l1_distance(T=float), scale=2.0)) == Mixture(((Laplace(2, 1), 1),))
    with pytest.raises(InputError, match="integer"):
        design_of(dp.m.make_geometric(dp.atom_domain(T=int), dp.absolute_distance(T=int), scale=2.0), d_in=0.5)
    with pytest.raises(InputError, match="recipe"):
        design_of("not a measurement")


def test_opendp_exact_composition_meets_brute_force_and_the_pure_bound(opendp):
    dp = opendp
    from exactdp.interop.opendp_measurements import make_exact_composition

    count = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance())
    lap = count >> dp.m.then_laplace(scale=2.5)
    gauss = count >> dp.m.then_gaussian(scale=2.0)
    m = make_exact_composition([lap, lap, gauss])
    release = m(["a", "b", "c"])
    assert len(release) == 3 and all(isinstance(v, int) for v in release)
    dl, dropped = dlap_loss("5/2", 1)
    ref = _brute_up([(dl, 2), (dg_loss(4), 1)], 1)
    got = m.map(1).delta(1.0)
    assert got >= float(ref - 2 * dropped) and abs(got - ref) <= 1e-9 * ref
    # without the Gaussian the pure ε OpenDP itself reports (basic composition, 2/2.5) is where δ reaches 0
    pure = make_exact_composition([lap, lap])
    eps_opendp = dp.c.make_composition([lap, lap]).map(1)
    assert pure.map(1).delta(eps_opendp) == 0.0 and pure.map(1).delta(0.5) > 0


def test_opendp_float_laplace_and_gaussian_are_the_continuous_kinds(opendp):
    """OpenDP's Laplace and Gaussian on floats are exactdp's continuous Laplace / Gaussian of the
    same scale (the float taken exactly), the shift the input distance; δ(ε) of the exact
    composition against closed forms: one Laplace ``max(0, 1 − e^{(ε − Δ/b)/2})``, one
    Gaussian ``Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)`` with μ = Δ/b; OpenDP's own maps (ε = Δ/b,
    ρ = Δ²/(2b²)) are the exact design's pure ε and ρ."""
    dp = opendp
    import mpmath

    from exactdp.interop.opendp_measurements import design_of, make_exact_composition
    from exactdp.kinds import Gaussian, Laplace

    atom = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    lap = dp.m.make_laplace(*atom, scale=0.3)
    assert design_of(lap) == Mixture(((Laplace(Fraction(0.3), 1), 1),))  # 0.3's binary value, exactly
    assert design_of(lap, 0.5).pure_epsilon == Fraction(1, 2) / Fraction(0.3)
    _up_to_an_ulp(lap.map(1.0), 1 / Fraction(0.3))  # OpenDP's ε = Δ/b, rounded up to a float
    vec = dp.vector_domain(dp.atom_domain(T=float, nan=False))
    gauss = dp.m.make_gaussian(vec, dp.l2_distance(T=float), scale=1.5)
    assert design_of(gauss, 2) == Mixture(((Gaussian(Fraction(9, 4), 2), 1),))
    _up_to_an_ulp(gauss.map(2.0), design_of(gauss, 2).groups[0][0].rho)  # OpenDP's ρ = Δ²/(2b²) = 8/9, rounded up
    for m, delta in ((lap, lambda e, d: max(mpmath.mpf(0), -mpmath.expm1((e - d / mpmath.mpf(Fraction(0.3))) / 2))),
                     (gauss, lambda e, d: mpmath.ncdf(d / 3 - e * 3 / (2 * d)) -
                      mpmath.exp(e) * mpmath.ncdf(-d / 3 - e * 3 / (2 * d)))):
        exact = make_exact_composition([m])
        for d_in in (1, 2.5):
            for e in (0.0, 0.5, 2.0, 3.0):
                with mpmath.workdps(40):
                    ref = delta(mpmath.mpf(e), mpmath.mpf(d_in))
                got = exact.map(d_in).delta(e)
                assert got >= ref and got <= ref * (1 + 1e-9) + 1e-300, (m, d_in, e, got, ref)


def _up_to_an_ulp(x: float, exact: Fraction) -> None:
    import math

    assert exact <= Fraction(x) <= Fraction(math.nextafter(float(exact), math.inf)), (x, exact)
