"""Calibration inside a mixed design (exactdp.calibration.mixed): the deployed rescaling of
one kind meets the target by the brute force of tests/kinds_reference.py, the certified
infeasible end misses it, and the other groups are untouched."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from kinds_reference import dg_loss, dlap_loss, mixed_delta, rr_loss

from exactdp.calibration.mixed import calibrate_kind, scaled
from exactdp.kinds import DiscreteLaplace, Mixture, RandomizedResponse
from exactdp.mechanisms import DiscreteGaussian
from exactdp.numerics.errors import InputError

DESIGN = Mixture(((DiscreteLaplace(Fraction(5, 2)), 6), (RandomizedResponse(Fraction(1, 2)), 1),
                  (DiscreteGaussian(4), 2)))
EPS, DELTA = Fraction(4), Fraction(1, 10**4)


def _brute(design):
    parts = []
    dropped = 0
    for m, n in design.groups:
        if isinstance(m, DiscreteLaplace):
            dist, drop = dlap_loss(m.scale, m.shift)
            parts.append((dist, n))
            dropped += n * drop
        elif isinstance(m, RandomizedResponse):
            parts.append((rr_loss(m.epsilon, m.k), n))
        else:
            parts.append((dg_loss(m.sigma2, m.shift), n))
    with mpmath.workdps(40):
        return mixed_delta(parts, EPS), dropped


@pytest.mark.parametrize("kind", ["discrete_laplace", "discrete_gaussian"])
def test_deployed_scale_meets_the_target_by_brute_force(kind):
    res = calibrate_kind(DESIGN, DELTA, EPS, kind=kind, width="1/200")
    assert res.lower < res.upper and res.error_bound <= Fraction(1, 200)
    deployed, infeasible = scaled(DESIGN, kind, res.upper), scaled(DESIGN, kind, res.lower)
    ok, drop = _brute(deployed)
    bad, _ = _brute(infeasible)
    assert ok + 2 * drop <= mpmath.mpf(DELTA.numerator) / DELTA.denominator < bad
    assert res.delta_at_scale >= ok  # the certified upper bound at the deployed scale
    moved = DiscreteLaplace if kind == "discrete_laplace" else DiscreteGaussian
    assert [g for g in deployed.groups if not isinstance(g[0], moved)] == \
        [g for g in DESIGN.groups if not isinstance(g[0], moved)]


def test_refusals():
    with pytest.raises(InputError, match="eps"):
        calibrate_kind(DESIGN, DELTA, None)
    with pytest.raises(InputError, match="kind"):
        calibrate_kind(Mixture(((RandomizedResponse(1), 2),)), DELTA, EPS)
    with pytest.raises(InputError, match="kind"):
        calibrate_kind(DESIGN, DELTA, EPS, kind="randomized_response")


def test_cli_calibrates_the_mixed_design_like_the_api(capsys):
    import json

    from exactdp.cli import main

    argv = ["calibrate", "--dlaplace", "5/2x6", "--rr", "1/2", "--sigma2", "4x2", "--eps", "4", "--delta", "1e-4",
            "--width", "1/200", "--json"]
    assert main(argv) == 0
    point = json.loads(capsys.readouterr().out)["points"][0]
    res = calibrate_kind(DESIGN, DELTA, EPS, kind="discrete_laplace", width="1/200")
    assert point["scale"] == f"{res.upper.numerator}/{res.upper.denominator}" and "discrete_laplace" in point["scope"]
    assert main(argv[:-1] + ["--kind", "discrete_laplace", "--allocation", "dhc-2020"]) == 2  # one design only
    assert main(["calibrate", "--dlaplace", "2", "--delta", "1e-4"]) == 2  # no explicit --eps
    assert "--eps" in capsys.readouterr().err
