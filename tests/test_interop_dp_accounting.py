"""exactdp as a dp_accounting PrivacyAccountant: the CLI's certified numbers through
dp_accounting's API, brute-force references for the ledger arithmetic, refusals,
calibration with dp_accounting's own calibrate_dp_mechanism."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import attr
import mpmath
import pytest

from harness import delta_brute, float_up_reference, gaussian_delta_reference

dpa = pytest.importorskip("dp_accounting")

from dp_accounting import dp_event, mechanism_calibration  # noqa: E402
from dp_accounting.privacy_accountant import NeighboringRelation, UnsupportedEventError  # noqa: E402

from exactdp.cli import main  # noqa: E402
from exactdp.interop.dp_accounting import ExactDiscreteGaussianAccountant, ExactDiscreteGaussianDpEvent  # noqa: E402
from exactdp.numerics.errors import InputError, UncertifiedError  # noqa: E402

DESIGN = ["--sigma2", "10000/11x20", "--sigma2", "2.5025"]


def _cli(capsys, argv) -> dict:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)["points"][0]


def _headline_accountant():
    acc = ExactDiscreteGaussianAccountant()
    acc.compose(dpa.SelfComposedDpEvent(ExactDiscreteGaussianDpEvent("10000/11"), 20))
    acc.compose(ExactDiscreteGaussianDpEvent("2.5025"))
    return acc


def test_headline_design_gives_the_cli_certified_values(capsys):
    cli_eps = _cli(capsys, ["epsilon", *DESIGN, "--delta", "1e-10", "--json"])["epsilon"]
    cli_delta = _cli(capsys, ["delta", *DESIGN, "--eps", "5", "--json"])["delta"]
    acc = _headline_accountant()
    # the conservative value, rounded outward to a float, whatever was asked before
    assert acc.get_delta(5) == float_up_reference(cli_delta)
    assert acc.get_epsilon(1e-10) == float_up_reference(cli_eps)
    assert acc.get_delta(5.0) == float_up_reference(cli_delta)
    # the same design written as one ComposedDpEvent and with count= gives the same floats
    other = ExactDiscreteGaussianAccountant().compose(dpa.ComposedDpEvent(
        [ExactDiscreteGaussianDpEvent("2.5025"), dpa.NoOpDpEvent()]
    )).compose(ExactDiscreteGaussianDpEvent(Fraction(10000, 11)), count=20)
    assert other.get_epsilon(1e-10) == acc.get_epsilon(1e-10)
    assert other.get_delta(5) == acc.get_delta(5)
    assert acc.composition.size == 21 and acc.composition.rho == Fraction(211011, 1001000)


def test_ledger_arithmetic_against_brute_force():
    """Nested counts, sensitivities and no-ops against exact enumeration (tests/harness.py)."""
    acc = ExactDiscreteGaussianAccountant(NeighboringRelation.REPLACE_ONE)
    acc.compose(dpa.SelfComposedDpEvent(dpa.ComposedDpEvent([
        ExactDiscreteGaussianDpEvent("3/2"), dpa.NoOpDpEvent(), ExactDiscreteGaussianDpEvent(4, sensitivity=0)]), 2))
    acc.compose(ExactDiscreteGaussianDpEvent("7/3", sensitivity=2))
    mechs = [(Fraction(3, 2), 1), (Fraction(3, 2), 1), (Fraction(7, 3), 2)]
    for eps in (0.0, 0.5, 1.5, 3.0):
        exact = delta_brute(mechs, Fraction(eps))
        got = acc.get_delta(eps)
        assert float(exact) <= got <= float(exact) * (1 + 1e-8), eps
    for target in (1e-2, 1e-6, 1e-12):
        eps = acc.get_epsilon(target)
        assert delta_brute(mechs, Fraction(eps)) <= Fraction(target)  # certified
        assert delta_brute(mechs, Fraction(eps) - Fraction(1, 10**6)) > Fraction(target)  # and tight


def test_dp_accounting_discrete_gaussian_event_float_sigma_taken_exactly(monkeypatch):
    """dp_accounting's own DiscreteGaussianDpEvent(sigma, sensitivity, dimension): newer
    releases have it; on older ones a stand-in with upstream's fields exercises the path."""
    cls = getattr(dp_event, "DiscreteGaussianDpEvent", None)
    if cls is None:
        @attr.s(frozen=True, slots=True, auto_attribs=True)
        class DiscreteGaussianDpEvent(dp_event.DpEvent):
            sigma: float
            sensitivity: float = 1.0
            dimension: int | None = None

        monkeypatch.setattr(dp_event, "DiscreteGaussianDpEvent", DiscreteGaussianDpEvent, raising=False)
        cls = DiscreteGaussianDpEvent
    sigma = 1.1  # the binary float 2476979795053773/2251799813685248, squared exactly
    theirs = ExactDiscreteGaussianAccountant().compose(cls(sigma=sigma, sensitivity=2.0, dimension=1))
    ours = ExactDiscreteGaussianAccountant().compose(ExactDiscreteGaussianDpEvent(Fraction(sigma) ** 2, 2))
    assert theirs.get_delta(1) == ours.get_delta(1) > 0
    assert theirs.composition == ours.composition
    # sensitivity 1: any dimension (integer vectors of L2 norm <= 1 are unit vectors)
    assert ExactDiscreteGaussianAccountant().supports(cls(sigma=3.0))
    acc = ExactDiscreteGaussianAccountant()
    for bad in (cls(sigma=3.0, sensitivity=2.0), cls(sigma=3.0, sensitivity=1.5, dimension=1),
                cls(sigma=math.nan, dimension=1)):
        assert not acc.supports(bad)
    assert ExactDiscreteGaussianAccountant().compose(cls(sigma=0.0, dimension=1)).get_epsilon(0.5) == math.inf


@pytest.mark.parametrize("event", [
    dpa.PoissonSampledDpEvent(0.01, ExactDiscreteGaussianDpEvent("10000/11")),
    dpa.SampledWithReplacementDpEvent(1000, 10, ExactDiscreteGaussianDpEvent(4)),
    dpa.SampledWithoutReplacementDpEvent(1000, 10, ExactDiscreteGaussianDpEvent(4)),
    dpa.ZCDpEvent(0.1),
    dpa.UnsupportedDpEvent(),
    dpa.ComposedDpEvent([ExactDiscreteGaussianDpEvent(4), dpa.PoissonSampledDpEvent(0.5, dpa.GaussianDpEvent(1.0))]),
    dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.5, ExactDiscreteGaussianDpEvent(4)), 3),
])
def test_unsupported_events_are_refused_and_leave_the_state_alone(event):
    acc = ExactDiscreteGaussianAccountant().compose(ExactDiscreteGaussianDpEvent(9))
    before = (acc.get_delta(1), acc.ledger)
    assert not acc.supports(event)
    with pytest.raises(UnsupportedEventError, match="not supported"):
        acc.compose(event)
    assert (acc.get_delta(1), acc.ledger) == before


def test_edges_noop_nonprivate_and_extreme_targets():
    empty = ExactDiscreteGaussianAccountant()
    assert empty.get_epsilon(1e-10) == 0.0 and empty.get_delta(0) == 0.0
    nonpriv = ExactDiscreteGaussianAccountant().compose(dpa.NonPrivateDpEvent())
    assert nonpriv.get_epsilon(1e-3) == math.inf and nonpriv.get_delta(100) == 1.0 and nonpriv.get_epsilon(1) == 0.0
    tiny = ExactDiscreteGaussianAccountant().compose(ExactDiscreteGaussianDpEvent("1/1000"))  # tiny σ²
    assert tiny.get_epsilon(0) == math.inf          # a discrete Gaussian is not pure DP
    assert tiny.get_delta(math.inf) == 0.0
    assert tiny.get_epsilon(1.0) == 0.0
    for eps in (1.0, 1000.0):                       # a certified float or a refusal, never NaN
        try:
            assert 0 <= tiny.get_delta(eps) <= 1
        except UncertifiedError:
            pass
    big = ExactDiscreteGaussianAccountant().compose(ExactDiscreteGaussianDpEvent(10**7), 3)  # huge σ²
    ref = gaussian_delta_reference(mpmath.sqrt(mpmath.mpf(3) / 10**7), "0.001")  # the continuous limit
    assert abs(big.get_delta(1e-3) / ref - 1) < 1e-4
    assert 0 < big.get_delta(1e300) == math.ulp(0.0)  # below every float, never 0
    acc = _headline_accountant()
    rho = 211011 / 1001000
    assert 0 < acc.get_epsilon(1e-300) <= rho + 2 * math.sqrt(rho * math.log(1e300))  # ≤ the zCDP bound
    with pytest.raises(InputError):
        big.get_delta(-1.0)
    with pytest.raises(InputError):
        big.get_epsilon(math.nan)


def test_event_construction_is_exact():
    # dp_accounting's boundary: a float is the binary rational it is (not a decimal)
    assert ExactDiscreteGaussianDpEvent(0.1).sigma2 == Fraction(3602879701896397, 36028797018963968)
    assert ExactDiscreteGaussianDpEvent(63.0).sigma2 == 63
    for bad in (math.nan, math.inf, -1.0):
        with pytest.raises(InputError):
            ExactDiscreteGaussianDpEvent(bad)
    with pytest.raises(InputError):
        ExactDiscreteGaussianDpEvent("1/2", sensitivity=-1)
    with pytest.raises(InputError):
        ExactDiscreteGaussianDpEvent("1/2", sensitivity=1.5)
    with pytest.raises(InputError):
        ExactDiscreteGaussianAccountant("ADD_OR_REMOVE_ONE")
    ev = ExactDiscreteGaussianDpEvent(Fraction(0.1), sensitivity=3)
    assert ev.sigma2 == Fraction(3602879701896397, 36028797018963968)
    assert dp_event.DpEvent.from_named_tuple(ev.to_named_tuple()) == ev
    assert ExactDiscreteGaussianDpEvent("0.0011") == ExactDiscreteGaussianDpEvent("11/10000")


def test_calibrate_dp_mechanism_unchanged(capsys):
    """dp_accounting's calibration with its default bracket search: the σ² of 20 unit-shift
    queries meeting ε ≤ 3 at δ = 1e-10, checked by the CLI (certified), and near-optimal."""
    def event(s2):
        return dpa.SelfComposedDpEvent(ExactDiscreteGaussianDpEvent(Fraction(s2)), 20)

    s2 = mechanism_calibration.calibrate_dp_mechanism(
        ExactDiscreteGaussianAccountant, event, target_epsilon=3, target_delta=1e-10, tol=1e-4)
    exact = Fraction(s2)
    spec = f"{exact.numerator}/{exact.denominator}x20"
    at = _cli(capsys, ["epsilon", "--sigma2", spec, "--delta", "1e-10", "--json"])
    assert Fraction(at["epsilon"]) <= 3
    below = exact - Fraction(1, 10**3)
    spec = f"{below.numerator}/{below.denominator}x20"
    assert Fraction(_cli(capsys, ["epsilon", "--sigma2", spec, "--delta", "1e-10", "--json"])["epsilon_lower"]) > 3
