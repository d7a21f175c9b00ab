"""The whole 2020 release (DHC pair ∘ P.L. 94-171)."""

import json
from fractions import Fraction

import mpmath

from exactdp.cli import main

#: the brackets this project certified earlier by sub-Gaussian coarsening, pair 13-13
OLD_DELTA = (mpmath.mpf("2.04926e-12"), mpmath.mpf("2.05005e-12"))
OLD_EPS = (mpmath.mpf("31.59546"), mpmath.mpf("31.59566"))


def test_pair_13_13_bracket_is_tight_and_inside_the_old_one():
    from exactdp.census.release import release_rows

    (row,) = release_rows("dhc-persons-2020", [(13, 13)], ["1e-10"])
    assert row.rho_total == Fraction(24811, 5000) + Fraction(542, 339) ** 2
    assert row.certification == "bracket"
    assert OLD_DELTA[0] <= row.delta_lower <= row.delta_upper <= OLD_DELTA[1]
    assert (row.delta_upper - row.delta_lower) / row.delta_upper <= 1e-9
    assert OLD_EPS[0] <= row.eps_lower <= row.eps_upper <= OLD_EPS[1]
    assert (row.eps_upper - row.eps_lower) / row.eps_upper <= 1e-9
    assert row.eps_upper < row.eps_bureau


def test_release_cli_json(capsys):
    assert main(["release", "--pairs", "13-13", "--delta", "1e-6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (p,) = out["points"]
    assert p["pair"] == "13-13" and p["certification"] == "bracket"
    assert mpmath.mpf(p["delta_exact_lower"]) <= mpmath.mpf(p["delta_exact_upper"]) < mpmath.mpf("1e-6")
