"""exactdp tune's model: the spine rule, the groups and weights, the grid of designs.

Every expected value here is computed in the test from the allocation's own numbers
(exact Fractions), never read back from exactdp.tune."""

from __future__ import annotations

from fractions import Fraction as F

import pytest
from tune_toys import THREE_LEVELS

from exactdp.census.allocations import Allocation, builtin_allocations, load_allocation
from exactdp.numerics.exact import InputError
from exactdp.tune.grid import Grid, default_grid
from exactdp.tune.problem import Problem, read_weights
from exactdp.tune.spine import Spine

TOY = THREE_LEVELS


@pytest.fixture
def toy(tmp_path):
    path = tmp_path / "toy.toml"
    path.write_text(TOY)
    return load_allocation(path)


@pytest.mark.parametrize("name", builtin_allocations())
def test_spine_rebuilds_every_builtin_unchanged(name):
    alloc = load_allocation(name)
    back = Spine.of(alloc).rebuild(alloc, dict(alloc.base), name=alloc.name, description=alloc.description,
                                   provenance=dict(alloc.provenance))
    assert back.paths == alloc.paths


def test_spine_reads_the_bypass_of_each_path(toy):
    spine = Spine.of(toy)
    # path 2: A absorbed B ((3/8 + 1/4) / (3/8) = 5/3); path 3: C absorbed B; path 4: A absorbed B and C
    assert dict(spine.absorbed[1]) == {0: (0, 1), 2: (2,)}
    assert dict(spine.absorbed[2]) == {0: (0,), 2: (2, 1)}
    assert dict(spine.absorbed[3]) == {0: (0, 1, 2)}
    assert spine.has_receivers


def test_spine_rebuild_moves_the_changed_totals_and_keeps_equal_path_totals(toy):
    spine = Spine.of(toy)
    base = {"A": (F(1, 4), F(1, 4)), "B": (F(1, 8), F(3, 8)), "C": (F(1, 16), F(3, 16))}
    new = spine.rebuild(toy, base, name="t", description="d", provenance={"source": "s"})
    tA, tB, tC = F(1, 2), F(1, 2), F(1, 4)
    assert new.paths[1] == ((tA + tB) / tA, 0, 1)
    assert new.paths[2] == (1, 0, (tC + tB) / tC)
    assert new.paths[3] == ((tA + tB + tC) / tA, 0, 0)
    assert all(sum(sum(v) for v in new.path_table(k).values()) == tA + tB + tC for k in range(1, 5))
    # B's second query grew but its first query's share of A's row on path 2 fell: a shortfall there
    falls = spine.path_shortfalls(toy, new)
    assert all(ratio < 1 for *_, ratio in falls)
    old_a_y, new_a_y = toy.path_table(2)["A"][1], new.path_table(2)["A"][1]
    assert new_a_y >= old_a_y


@pytest.mark.parametrize("base", [
    {"A": (F(1, 4), F(1, 4)), "B": (F(1, 8), F(3, 8)), "C": (F(1, 16), F(3, 16))},
    {"A": (F(1, 5), F(2, 7)), "B": (F(1, 3), F(1, 9)), "C": (F(1, 16), F(5, 16))},
    {"A": (F(3, 8), F(1, 8)), "B": (F(1, 4), F(1, 4)), "C": (F(1, 8), F(1, 8))},  # the input's proportions
])
def test_least_ratios_are_the_least_path_ratios(toy, base):
    """The ``--no-worse`` check's least ratio per cell: every path's ρ'_klq/ρ_klq enumerated
    here from the paths' multipliers (the spine rule's sums written out) and the tables."""
    spine = Spine.of(toy)
    totals = {lev: sum(base[lev]) for lev in toy.levels}
    levels = list(toy.levels)
    want: dict = {}
    for old_m, absorbed in zip(toy.paths, spine.absorbed):
        new_m = [F(0)] * len(levels)
        for x, ys in absorbed:
            new_m[x] = sum(totals[levels[y]] for y in ys) / totals[levels[x]]
        for x, lev in enumerate(levels):
            for q, (a, b) in enumerate(zip(toy.base[lev], base[lev])):
                before, after = old_m[x] * a, new_m[x] * b
                if after < before:
                    want[x, q] = min(want.get((x, q), F(1)), after / before)
    got = spine.least_ratios(toy, base)
    assert got == want
    new = spine.rebuild(toy, base, name="t", description="d", provenance={"source": "s"})
    assert {(levels.index(lev), q) for _, lev, q, _ in spine.path_shortfalls(toy, new)} == set(want)
    with pytest.raises(InputError, match="cannot be emptied"):
        spine.least_ratios(toy, {**base, "A": (F(0), F(0))})


def test_spine_refuses_multipliers_it_cannot_read(toy):
    bad = Allocation("bad", "d", {"source": "s"}, toy.levels, toy.queries, dict(toy.base),
                     ((1, 1, 1), (2, 0, F(1, 2))))
    with pytest.raises(InputError, match="spine rule"):
        Spine.of(bad)


def test_weights_file_product_rule_and_overrides(toy, tmp_path):
    path = tmp_path / "w.toml"
    path.write_text('[levels]\nA = "2"\n[queries]\ny = "1/3"\n[cells.C]\nx = 5\n')
    w = read_weights(path, toy)
    assert w[("A", "y")] == F(2, 3) and w[("A", "x")] == 2 and w[("B", "y")] == F(1, 3)
    assert w[("C", "x")] == 5 and w[("C", "y")] == F(1, 3)
    prob = Problem(toy, "cell", weights=w)
    expected = sum(w[(lev, q)] / toy.base[lev][k] for lev in toy.levels for k, q in enumerate(toy.queries))
    assert prob.objective_value(prob.input_design()) == expected


@pytest.mark.parametrize("text, match", [
    ('[levels]\nA = 0.5\n', "inexact"),
    ('[levels]\nZ = "1"\n', "unknown name"),
    ('[queries]\nx = "-1"\n', ">= 0"),
    ('[cells.A]\nq = "1"\n', "unknown query"),
    ('[other]\n', "unknown key"),
])
def test_weights_file_errors_name_the_field(toy, tmp_path, text, match):
    path = tmp_path / "w.toml"
    path.write_text(text)
    with pytest.raises(InputError, match=match):
        read_weights(path, toy)


def test_groups_per_mode(toy):
    assert [g for g, _ in Problem(toy, "level").groups] == ["A", "B", "C"]
    assert [g for g, _ in Problem(toy, "query").groups] == ["x", "y"]
    assert len(Problem(toy, "cell").groups) == 6
    with pytest.raises(InputError):
        Problem(toy, "path")
    with pytest.raises(InputError, match="lower <= 1 <= upper"):
        Problem(toy, bounds=(F(2), F(3)))


def test_shape_is_the_water_filling_optimum_of_the_proxy(toy):
    """Σ V_g/r_g subject to Σ a_g r_g = R: r_g ∝ sqrt(V_g/a_g) (Lagrange), checked against a
    brute scan of the two-group problem's one free direction."""
    prob = Problem(toy, "query", bounds=(F(1, 1000), F(1000)))
    V, a = prob.group_sums()
    budget = 1.5 * sum(a)
    r = prob.shape(budget)
    assert abs(sum(x * y for x, y in zip(a, r)) - budget) < 1e-9 * budget
    best = min((V[0] / t + V[1] / ((budget - a[0] * t) / a[1]), t)
               for t in [k * budget / a[0] / 20000 for k in range(1, 20000)])
    assert abs(r[0] - best[1]) < 2e-3 * r[0]


def test_grid_designs_lie_on_the_grid_and_keep_bounds(toy):
    for vary in ("level", "query", "cell"):
        prob = Problem(toy, vary, bounds=(F(1, 4), F(4)), no_worse=False)
        grid = default_grid(prob, refine=4)
        n = len(prob.groups)
        for scale in (0.5, 1.0, 1.7, 3.9):
            d = grid.snap(prob, [scale * (1 + 0.1 * g) for g in range(n)])
            assert d is not None
            for m in prob.multipliers(d):
                assert F(1, 4) <= m <= 4
            if vary == "level":  # one exact multiplier per level, cells on the grid
                for lev in toy.levels:
                    ms = {toy.base[lev][q] / d[lev][q] for q in range(2)}
                    assert len(ms) == 1
                    assert all((v / grid.quantum).denominator == 1 for v in d[lev])
            else:  # receivers: level totals on the grid, proportions in Z/M
                for lev in toy.levels:
                    t = sum(d[lev])
                    assert (t / grid.quantum).denominator == 1
                    assert all((v / t * grid.share_den).denominator == 1 for v in d[lev])


def test_grid_no_worse_holds_on_every_path(toy):
    prob = Problem(toy, "query", no_worse=True)
    grid = Grid(F(1, 64), 1000)
    d = grid.snap(prob, [1.0, 1.6])
    tuned = prob.allocation(d)
    for k in range(1, toy.n_paths + 1):
        for lev in toy.levels:
            assert all(b >= a for a, b in zip(toy.path_table(k)[lev], tuned.path_table(k)[lev]))
