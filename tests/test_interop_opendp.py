"""exactdp as an OpenDP measurement: the privacy map's profile is the CLI's certified δ,
brute-force references for shifts and input distances, the exact release."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest

from harness import delta_brute, float_up_reference

dp = pytest.importorskip("opendp.prelude")

from exactdp.cli import main  # noqa: E402
from exactdp.interop.opendp import make_exact_measurement  # noqa: E402
from exactdp.numerics.errors import InputError  # noqa: E402


@pytest.fixture
def features():
    dp.enable_features("contrib", "honest-but-curious")
    yield
    dp.disable_features("contrib", "honest-but-curious")


def test_features_must_be_enabled_by_the_user():
    with pytest.raises(dp.OpenDPException, match="honest-but-curious"):
        make_exact_measurement(["10000/11"])


def test_profile_gives_the_cli_delta(features, capsys):
    assert main(["delta", "--sigma2", "10000/11x20", "--sigma2", "2.5025", "--eps", "5", "--json"]) == 0
    cli_delta = json.loads(capsys.readouterr().out)["points"][0]["delta"]
    m = make_exact_measurement(sigma2=["10000/11"] * 20 + ["2.5025"])
    assert str(m.input_metric) == "LInfDistance(T=i64)"
    assert str(m.output_measure) == "SmoothedMaxDivergence"
    profile = m.map(1)
    assert profile.delta(5.0) == float_up_reference(cli_delta)
    assert profile.delta(5) == profile.delta(5.0)
    # OpenDP's own inversion of the curve stays on the safe side of the exact ε(δ)
    eps = profile.epsilon(1e-10)
    assert main(["delta", "--sigma2", "10000/11x20", "--sigma2", "2.5025", "--eps", repr(eps), "--json"]) == 0
    assert Fraction(json.loads(capsys.readouterr().out)["points"][0]["delta"]) <= Fraction(1e-10)


def test_shifts_and_input_distances_against_brute_force(features):
    m = make_exact_measurement(["3/2", 4], shifts=[2, -1])
    assert "ShiftScaledLInfDistance(shifts=[2, 1])" in str(m.input_metric)
    for d_in, mechs in ((1, [(Fraction(3, 2), 2), (Fraction(4), 1)]), (2, [(Fraction(3, 2), 4), (Fraction(4), 2)])):
        for eps in (0.0, 1.0, 2.5):
            exact = delta_brute(mechs, Fraction(eps))
            assert float(exact) <= m.map(d_in).delta(eps) <= float(exact) * (1 + 1e-8)
    assert m.map(0).delta(0.0) == 0.0
    with pytest.raises(dp.OpenDPException, match="d_in"):
        m.map(-1)
    with pytest.raises(dp.OpenDPException, match="epsilon"):
        m.map(1).delta(-1.0)
    assert m.map(1).delta(math.inf) == 0.0


def test_release_adds_exact_discrete_gaussian_noise(features):
    # σ² = 1/1000: Pr[Z ≠ 0] ≈ 2e-217, so the release is the input itself
    m = make_exact_measurement(["1/1000", "1/1000", "1/1000"])
    assert m([5, -7, 2**40]) == [5, -7, 2**40]
    wide = make_exact_measurement(["10000/11"] * 4)
    out = wide([0, 0, 0, 0])
    assert len(out) == 4 and all(isinstance(v, int) for v in out)
    with pytest.raises(InputError):
        make_exact_measurement([0.5])
    with pytest.raises(InputError):
        make_exact_measurement(["1/2", "1/3"], shifts=[1])
