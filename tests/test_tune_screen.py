"""The screened full check of ``exactdp tune`` (exactdp.tune.screen): its decisions against
the decisions on every pair's precise bracket (written here, from the tuner's rules), a
screened bracket against the harness's exact enumeration, and a screened run against an
unscreened one (the same tuned allocation)."""

from __future__ import annotations

import json
import random
from fractions import Fraction as F

import mpmath
import pytest
from tune_toys import ONE_QUERY

from exactdp.census.allocations import load_allocation
from exactdp.tune import Problem, tune
from exactdp.tune.evaluate import DeltaBound, Target, delta_bound
from exactdp.tune.screen import SCREEN_TOL, screened_results

from harness import BruteDesign

DELTA = F(1, 10**6)
BOUNDS = (F(1, 3), F(3))
N_TOP = 4
W = F(1, 10**6)  # the precise brackets' width bound of the synthetic cases


def _decisions(results: dict, delta: F, n_top: int):
    """What the tuner reads off a full check (search.Tuner._update_active, settle, gradient_pair):
    the violators, the n_top largest upper ends in order, the worst pair, the pairs within
    1e-3 of the largest."""
    bad = sorted(p for p, b in results.items() if b.upper > delta)
    top = sorted(results, key=lambda p: (-results[p].upper, p))[:n_top]
    worst = max(results, key=lambda p: (results[p].upper, p))
    m = max(b.upper for b in results.values())
    near = sorted(p for p, b in results.items() if b.upper * 1001 >= m * 1000)
    return bad, top, worst, near


def _case(rng: random.Random, n: int):
    """True δ of n pairs (clusters of exact ties and near-ties, some at and above the
    target), their precise brackets (≤ W wide, anywhere around δ) and loose ones (up to
    1e-3 wide, anywhere around δ)."""
    centres = [DELTA * F(rng.choice([1, 999, 1000, 1001, 500, 998, 2000]), 1000) for _ in range(4)]
    deltas = {}
    for k in range(n):
        c = rng.choice(centres)
        jitter = F(rng.choice([0, 0, 1, -1, rng.randint(-10**4, 10**4)]), 10**10)
        deltas[(k // 7, k)] = c * (1 + jitter)
    precise, coarse = {}, {}
    for p, d in deltas.items():
        a, b = F(rng.randint(0, 100), 100), F(rng.randint(0, 100), 100)
        lo, up = d * (1 - W * a / 2), d * (1 + W * b / 2)
        precise[p] = DeltaBound(lo, up, d)
        cw = F(rng.choice([1, 10, 1000, 10**5]), 10**8)
        a, b = F(rng.randint(0, 100), 100), F(rng.randint(0, 100), 100)
        coarse[p] = DeltaBound(d * (1 - cw * a), d * (1 + cw * b), d)
    return precise, coarse


@pytest.mark.parametrize("seed", range(24))
def test_screened_decisions_are_those_of_the_precise_brackets(seed):
    rng = random.Random(seed)
    precise, coarse = _case(rng, rng.choice([3, 5, 40, 120]))
    asked = []

    def ask(pairs):
        assert not set(pairs) & set(asked), "a pair asked twice"
        asked.extend(pairs)
        return {p: precise[p] for p in pairs}

    out = screened_results(coarse, ask, DELTA, N_TOP, W)
    assert set(out) == set(precise)
    for p, b in out.items():
        assert b is (precise[p] if p in asked else coarse[p])
    assert _decisions(out, DELTA, N_TOP) == _decisions(precise, DELTA, N_TOP)


def test_without_the_margin_the_decisions_can_differ():
    """The same cases with the precise width bound left out (w = 0) give other decisions
    on some seed: the margin is what makes the screen exact."""
    differ = 0
    for seed in range(24):
        rng = random.Random(seed)
        precise, coarse = _case(rng, rng.choice([3, 5, 40, 120]))
        out = screened_results(coarse, lambda ps, pr=precise: {p: pr[p] for p in ps}, DELTA, N_TOP, F(0))
        differ += _decisions(out, DELTA, N_TOP) != _decisions(precise, DELTA, N_TOP)
    assert differ > 0


@pytest.fixture(scope="module")
def one(tmp_path_factory):
    path = tmp_path_factory.mktemp("one") / "one.toml"
    path.write_text(ONE_QUERY)
    return load_allocation(path)


class _Brute(BruteDesign):
    MAX_COST = 400_000  # designs of two or three variances: a second or two


def _brute_delta(rhos, eps):
    """``(value, abs_err)`` of δ(ε) by the harness's exact enumeration."""
    mechs = {}
    for r in rhos:
        if r:
            mechs[1 / F(r)] = mechs.get(1 / F(r), 0) + 1
    return _Brute([(s2, 1, m) for s2, m in mechs.items()]).delta(eps)


def _mp(x: F):
    return mpmath.mpf(x.numerator) / x.denominator


def test_a_screened_bracket_contains_the_exact_enumeration(one):
    target = Target(DELTA, None, one.total_rho)
    with mpmath.workdps(60):
        eps = target.epsilon()(60)
        for i, j in one.pairs():
            rhos = [r * 3 for r in one.pair_rhos(i, j)]  # near the target, as a tuned design's pairs
            b = delta_bound(rhos, target, SCREEN_TOL)
            value, err = _brute_delta(rhos, eps)
            assert _mp(b.lower) - err <= value <= _mp(b.upper) + err, (i, j)
            assert b.upper - b.lower <= b.upper * 20 * F(SCREEN_TOL)  # ≤ 2·max(1e-9, 10·tol) relative


def test_a_screened_run_has_the_unscreened_result(one, tmp_path):
    runs = {}
    for screen in (SCREEN_TOL, None):
        out = tmp_path / f"run-{screen}"
        res = tune(one, DELTA, vary="level", bounds=BOUNDS, refine=2, out=out, profile=False, plots=False,
                   screen=screen)
        runs[screen] = (res, out)
    (a, out_a), (b, _) = runs[SCREEN_TOL], runs[None]
    assert a.allocation.to_toml() == b.allocation.to_toml()
    assert (a.lower, a.upper, a.pair_after) == (b.lower, b.upper, b.pair_after)
    # every screened bracket of the run contains the exact enumeration's δ
    eps = Target(DELTA, None, one.total_rho).epsilon()
    screened = 0
    for path in sorted((out_a / "trace").glob("batch-*.json")):
        rec = json.loads(path.read_text())
        if not rec["purpose"].endswith("-screen"):
            continue
        design = json.loads((out_a / "trace" / "designs" / f"{rec['design']}.json").read_text())
        alloc = Problem(one, "level", bounds=BOUNDS).allocation(
            {lev: tuple(F(v) for v in design[lev]) for lev in one.levels})
        for lab, v in rec["results"].items():
            i, j = (int(x) for x in lab.split("-"))
            value, err = _brute_delta(alloc.pair_rhos(i, j), eps(60))
            lo, up = F(v[0]), F(v[1])
            with mpmath.workdps(60):
                assert _mp(lo) - err <= value <= _mp(up) + err, lab
            screened += 1
    assert screened > 0
