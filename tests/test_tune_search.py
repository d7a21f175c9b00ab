"""exactdp tune's optimiser on small allocations: against exhaustive grid search, with the
constraint checked by brute force (tests/harness.py, nothing of the engine), the uniform
objective against ``calibrate_release``, and the counterexample to monotonicity that makes
the tuner certify every design exactly as reported."""

from __future__ import annotations

import itertools
from fractions import Fraction as F

import mpmath
import pytest
from tune_toys import ONE_QUERY, TWO_LEVELS

from exactdp.census.allocations import load_allocation
from exactdp.tune import Problem, tune
from exactdp.tune.evaluate import Target, delta_bound
from exactdp.tune.grid import Grid, default_grid

from harness import BruteDesign, single_delta

TOY = TWO_LEVELS
DELTA = F(1, 10**6)
BOUNDS = (F(1, 3), F(3))


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    path = tmp_path_factory.mktemp("toy") / "toy.toml"
    path.write_text(TOY)
    return load_allocation(path)


@pytest.fixture(scope="module")
def one(tmp_path_factory):
    """One query per level: few distinct variances per pair, so brute force stays cheap."""
    path = tmp_path_factory.mktemp("one") / "one.toml"
    path.write_text(ONE_QUERY)
    return load_allocation(path)


def _bureau_eps_mp(rho: F, delta: F):
    """ε_BS = ρ + 2 sqrt(ρ ln(1/δ)) at 110 digits (independent of exactdp)."""
    with mpmath.workdps(110):
        r = mpmath.mpf(rho.numerator) / rho.denominator
        return r + 2 * mpmath.sqrt(r * mpmath.log(mpmath.mpf(delta.denominator) / delta.numerator))


class _Brute(BruteDesign):
    MAX_COST = 400_000  # designs of two or three variances: a second or two


def _brute_delta(rhos, eps):
    """``(value, abs_err)`` of δ(ε) by the harness's exact enumeration."""
    mechs = {}
    for r in rhos:
        mechs[1 / F(r)] = mechs.get(1 / F(r), 0) + 1
    return _Brute([(s2, 1, m) for s2, m in mechs.items()]).delta(eps)


def _exhaustive(prob, grid, target, step=F(1, 4)):
    """The best feasible design of the grid (every pair certified by the engine): budget
    multipliers ``k·step`` inside the bounds for every group."""
    best, seen = None, set()
    lo, hi = 1 / prob.bounds[1], 1 / prob.bounds[0]
    values = [step * k for k in range(1, int(hi / step) + 1) if step * k >= lo]
    for rs in itertools.product(values, repeat=len(prob.groups)):
        d = grid.snap(prob, list(rs))
        if d is None:
            continue
        key = tuple(d[lev] for lev in prob.alloc.levels)
        if key in seen:
            continue
        seen.add(key)
        alloc = prob.allocation(d)
        if all(delta_bound(alloc.pair_rhos(i, j), target).upper <= target.delta for i, j in alloc.pairs()):
            obj = prob.objective_value(d)
            best = obj if best is None or obj < best else best
    return best, len(seen)


#: a coarse grid for the toy: cells in Z/32, changed proportions of a level in Z/24
TOY_GRID = Grid(F(1, 32), 24)


@pytest.mark.parametrize("vary", ["level", "query"])
def test_optimiser_is_at_least_as_good_as_exhaustive_grid_search(toy, tmp_path, vary):
    res = tune(toy, DELTA, vary=vary, bounds=BOUNDS, grid=TOY_GRID, out=tmp_path / "run", profile=False,
               plots=False)
    prob = Problem(toy, vary, bounds=BOUNDS)
    best, n = _exhaustive(prob, TOY_GRID, Target(DELTA, None, toy.total_rho))
    assert n > 60
    # the tuner searches the grid's shapes and scales them continuously: never worse than the grid's best
    assert res.objective_after <= best < res.objective_before
    assert res.upper <= DELTA
    for m in prob.multipliers({lev: res.allocation.base[lev] for lev in toy.levels}):
        assert BOUNDS[0] <= m <= BOUNDS[1]


def test_every_pair_of_the_result_meets_the_target_by_brute_force(one, tmp_path):
    alloc = one
    res = tune(alloc, DELTA, vary="level", bounds=BOUNDS, refine=4, out=tmp_path / "run", profile=False,
               plots=False)
    prob = Problem(alloc, "level", bounds=BOUNDS)
    best, _ = _exhaustive(prob, default_grid(prob, refine=4), Target(DELTA, None, alloc.total_rho))
    assert res.objective_after <= best
    eps = _bureau_eps_mp(alloc.total_rho, DELTA)
    for i, j in res.allocation.pairs():
        value, err = _brute_delta(res.allocation.pair_rhos(i, j), eps)
        with mpmath.workdps(110):
            assert value + err <= mpmath.mpf(DELTA.numerator) / DELTA.denominator, (i, j, value)
    # the engine's reported maximum and the Arb enclosure contain the brute-force value
    i, j = res.pair_after
    value, err = _brute_delta(res.allocation.pair_rhos(i, j), eps)
    with mpmath.workdps(110):
        def mp(x):
            return mpmath.mpf(x.numerator) / x.denominator

        assert mp(res.lower) - err <= value <= mp(res.upper) + err
        assert mp(res.certificate.lower_exact) - err <= value <= mp(res.certificate.upper_exact) + err
        assert value > mp(DELTA * F(999, 1000))  # the target is nearly attained: the search went to the boundary


def test_no_worse_keeps_every_path_and_meets_the_target(toy, tmp_path):
    res = tune(toy, DELTA, vary="query", no_worse=True, grid=TOY_GRID, out=tmp_path / "nw", profile=False,
               plots=False)
    for k in range(1, toy.n_paths + 1):
        for lev in toy.levels:
            assert all(b >= a for a, b in zip(toy.path_table(k)[lev], res.allocation.path_table(k)[lev]))
    assert res.upper <= DELTA and res.objective_after < res.objective_before


def test_uniform_objective_is_the_calibration(toy, tmp_path):
    """The special case: one multiplier for every cell is what ``calibrate_release`` brackets."""
    from exactdp.calibration.calibrate import calibrate_release

    res = tune(toy, DELTA, objective="uniform", out=tmp_path / "u", profile=False, plots=False)
    cal = calibrate_release(toy, DELTA)
    m = res.objective_after  # the variance multiplier of every cell
    ms = set(Problem(toy).multipliers({lev: res.allocation.base[lev] for lev in toy.levels}))
    assert ms == {m}
    assert cal.lower < m and F(res.result["stages"][0]["x_infeasible"]) < cal.upper
    assert abs(m - cal.upper) < F(1, 10**5)


def test_explicit_eps_and_an_infeasible_no_worse_are_handled(one, tmp_path):
    from exactdp.numerics.exact import InputError

    # at ε = 1 the input misses δ = 1e-6 by far: no Pareto improvement can exist
    with pytest.raises(InputError, match="does not meet the target"):
        tune(one, DELTA, eps="1", no_worse=True, out=tmp_path / "x", profile=False, plots=False)
    # without --no-worse the tuner adds noise until the target holds
    res = tune(one, F(1, 10), eps="3", vary="level", out=tmp_path / "y", profile=False, plots=False)
    assert res.upper <= F(1, 10)
    for i, j in res.allocation.pairs():
        value, err = _brute_delta(res.allocation.pair_rhos(i, j), F(3))
        with mpmath.workdps(110):
            assert value + err <= mpmath.mpf(1) / 10


def test_a_larger_variance_can_increase_delta():
    """Why no design is ever certified through a neighbouring one: for one discrete Gaussian
    (unit shift) at ε = 5, δ grows from σ² = 1/10 to 11/100 (brute-force sums).  The atom
    x = 0 leaves the loss region when 1/(2σ²) drops below ε, and the atom x = −1 gains mass."""
    with mpmath.workdps(60):
        d1 = single_delta(F(1, 10), 1, F(5))
        d2 = single_delta(F(11, 100), 1, F(5))
    assert d2 > d1 * F(3, 2)
    # the same inside a composition of three (ε = 15: every loss atom with all x_i = 0 leaves
    # the region, those with one x_i = −1 gain mass), certified by the engine and by brute force
    lo = delta_bound([F(10)] * 3, Target(F(1, 2), F(15)))
    hi = delta_bound([F(100, 11)] * 3, Target(F(1, 2), F(15)))
    assert hi.lower > lo.upper * F(3, 2)
    b_lo, e_lo = _brute_delta([F(10)] * 3, F(15))
    b_hi, e_hi = _brute_delta([F(100, 11)] * 3, F(15))
    with mpmath.workdps(110):
        assert b_hi - e_hi > (b_lo + e_lo) * mpmath.mpf(3) / 2
