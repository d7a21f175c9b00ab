"""Coarsened brackets (exactdp.accounting.coarsened) and the whole-release command."""

import json
from fractions import Fraction

import mpmath
import pytest

from harness import delta_brute
from exactdp.cli import main
from exactdp.accounting.coarsened import CoarsenedAccountant
from exactdp.mechanisms import Composition, DiscreteGaussian

MECHS = [(Fraction(2), 1), (Fraction(9, 2), 1), (Fraction(6, 5), 1), (Fraction(11, 7), 1), (Fraction(13, 3), 2)]


@pytest.mark.parametrize("grid", [Fraction(1, 50), Fraction(1, 1000)])
def test_bracket_contains_brute_force(grid):
    comp = Composition.of(DiscreteGaussian(s, d) for s, d in MECHS)
    acc = CoarsenedAccountant(comp, grid=grid)
    assert acc.tau > 0  # the weights 5/6, 7/11, 3/13 do not sit on the grid: real rounding
    for e in (Fraction(1, 2), Fraction(2), Fraction(5)):
        ref = delta_brute(MECHS, e)
        b = acc.delta([e])[0]
        assert b.lower <= ref <= b.upper, (grid, e)


def test_finer_grid_narrows_the_bracket():
    comp = Composition.of(DiscreteGaussian(s, d) for s, d in MECHS)
    widths = [CoarsenedAccountant(comp, grid=g).delta([Fraction(2)])[0].relative_width
              for g in (Fraction(1, 100), Fraction(1, 10000))]
    assert widths[1] < widths[0] / 20  # τ ∝ grid


def test_whole_release_rows_are_consistent():
    from exactdp.census.release import release_rows

    (row,) = release_rows("dhc-persons-2020", [(13, 13)], ["1e-10"])
    assert row.rho_total == Fraction(24811, 5000) + Fraction(542, 339) ** 2
    assert 0 < row.delta_lower <= row.delta_upper < mpmath.mpf("1e-10")
    assert (row.delta_upper - row.delta_lower) / row.delta_upper < 1e-3
    assert row.eps_lower <= row.eps_upper < row.eps_bureau


def test_release_cli_json(capsys):
    assert main(["release", "--pairs", "13-13", "--delta", "1e-6", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (p,) = out["points"]
    assert p["pair"] == "13-13"
    assert mpmath.mpf(p["delta_exact_lower"]) <= mpmath.mpf(p["delta_exact_upper"]) < mpmath.mpf("1e-6")
