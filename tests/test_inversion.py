"""ε(δ) of many targets in one call (accounting/inversion.py) against brute force.

One call solves its targets from the largest δ down, sharing one memo of evaluated
breakpoints and starting each search from the previous answer.  Checked here: every
bracket contains the brute-force ε* of :func:`harness.epsilon_brute` (exact loss
distribution, nothing of the engine), whatever the order of the targets; a batch answers
exactly what the same targets answer one at a time; and the search asks for few points.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exactdp.accounting.accountant import ExactAccountant
from exactdp.accounting.lattice_route import piece_queries
from exactdp.engine.values import WeightedQuery
from exactdp.mechanisms import Composition, DiscreteGaussian

from harness import epsilon_brute

quarters = st.integers(min_value=1, max_value=12).map(lambda k: Fraction(k, 4))
designs = st.lists(st.tuples(quarters, st.sampled_from([1, 2, -1])), min_size=1, max_size=3)
exps = st.lists(st.integers(1, 40), min_size=2, max_size=6)
SETTINGS = settings(max_examples=12, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def _comp(mechs):
    return Composition.of(DiscreteGaussian(s, d) for s, d in mechs)


def _key(p):
    return (mpmath.nstr(p.estimate, 30), mpmath.nstr(p.lower, 30), mpmath.nstr(p.upper, 30), p.piece)


@SETTINGS
@given(designs, exps, st.booleans())
def test_batched_brackets_contain_the_brute_force_epsilon(mechs, es, reverse):
    targets = sorted({Fraction(1, 10**e) if e > 1 else Fraction(3, 4) for e in es}, reverse=reverse)
    pts = ExactAccountant(_comp(mechs)).epsilon(targets)
    for t, p in zip(targets, pts):
        ref = epsilon_brute(mechs, t)
        with mpmath.workdps(60):
            slack = mpmath.mpf(10) ** -40 * (1 + abs(ref))
            assert p.lower - slack <= ref <= p.upper + slack, (mechs, t, p, ref)


def test_a_batch_answers_what_single_queries_answer():
    comp = Composition.from_rhos([Fraction(1, 50)] * 6 + [Fraction(3, 100)] * 4)
    targets = ["1e-3", "0.9", "1e-12", "1e-3", "5e-7", "1/2", "1e-40", "3e-2"]
    batch = ExactAccountant(comp).epsilon(targets)
    singles = [ExactAccountant(comp).epsilon([t])[0] for t in targets]
    assert [_key(p) for p in batch] == [_key(p) for p in singles]
    assert _key(batch[0]) == _key(batch[3])  # a repeated target: the same answer


def test_the_search_evaluates_few_breakpoints():
    # the DHC-like regime: 42 targets from 1/2 down to 1e-21 should cost about three
    # profile evaluations each (reduced ones in the search, one full one per solve), far
    # below a bisection's ~20; every evaluation passes through _profile_values
    comp = Composition.from_rhos([Fraction(1, 40)] * 20 + [Fraction(7, 100)] * 10)
    acc = ExactAccountant(comp)
    points, batches = [], []
    orig = acc._profile_values

    def counted(eps_list, full=True, complement=True, pieces=None):
        points.extend(eps_list)
        batches.append(len(eps_list))
        return orig(eps_list, full, complement, pieces)

    acc._profile_values = counted
    targets = [f"{m}e-{e}" for e in range(1, 22) for m in (5, 1)]
    acc.epsilon(targets)
    assert len(points) <= 5 * len(targets)
    assert len(batches) <= 12  # the pieces of all targets are evaluated together


@pytest.mark.parametrize("targets", [["1e-600", "1e-5"], ["0.999", "1e-300"]])
def test_deep_and_high_targets_in_one_batch_match_singles(targets):
    comp = _comp([(Fraction(1, 2), 1), (Fraction(7, 3), 2)])
    batch = ExactAccountant(comp).epsilon(targets)
    singles = [ExactAccountant(comp).epsilon([t])[0] for t in targets]
    assert [_key(p) for p in batch] == [_key(p) for p in singles]


def test_a_staircase_profile_is_solved_by_the_split_enumeration():
    """σ² = 1/500 (shift 1) beside two ordinary groups: δ(ε) is a staircase (rare atoms of
    weight 500), the int64 method gives tails only (convolution), and the piece search
    could not pin ε (every target was refused); the exact split enumeration's certified
    bisection answers, checked against the brute-force hockey stick at both ends."""
    from harness import big_lattice_delta_brute

    design = ((Fraction(1, 500), 1, 1), (Fraction(12130437, 9999991), 2, 2), (Fraction(37186674, 9999991), 1, 3))
    comp = Composition(tuple((DiscreteGaussian(s2, d), m) for s2, d, m in design))
    targets = ["1/2", "1e-1", "1e-10", "1e-20"]
    batch = ExactAccountant(comp).epsilon(targets)
    assert [_key(p) for p in batch] == [_key(ExactAccountant(comp).epsilon([t])[0]) for t in targets]
    with mpmath.workdps(60):
        for t, p in zip(targets, batch):
            dt = mpmath.mpf(Fraction(t).numerator) / Fraction(t).denominator
            assert big_lattice_delta_brute(design, Fraction(mpmath.nstr(p.upper, 40))) <= dt
            assert big_lattice_delta_brute(design, Fraction(mpmath.nstr(p.lower, 40))) > dt
            assert p.upper - p.lower <= 1e-9 * p.upper


def test_piece_queries_are_the_dataclass_queries():
    ks = [-3, 0, 7, 10**20]
    for fb in (0.25, 1e-9):
        got = piece_queries(ks, fb)
        ref = [WeightedQuery(k + 1, -fb, 0.0, fb) for k in ks]
        assert got == ref and [hash(q) for q in got] == [hash(q) for q in ref]
        assert [q.__reduce__() for q in got] == [q.__reduce__() for q in ref]


def test_a_full_memo_is_cleared_before_its_misses_are_chosen(monkeypatch):
    """The searches' memo of loose tail values, emptied when over its size, still answers every
    threshold asked (it once dropped values it had just counted as known: a KeyError)."""
    from exactdp.accounting.lattice_route import LatticeAccountant

    monkeypatch.setattr(LatticeAccountant, "MEMO_SIZE", 3)
    comp = Composition.of([DiscreteGaussian(Fraction(5, 2), 1), DiscreteGaussian(Fraction(7, 4), -2)])
    targets = [Fraction(1, 10**e) for e in (2, 5, 9, 14)]
    small = ExactAccountant(comp).epsilon(targets)
    monkeypatch.setattr(LatticeAccountant, "MEMO_SIZE", 50_000)
    assert [_key(p) for p in small] == [_key(p) for p in ExactAccountant(comp).epsilon(targets)]
    for t, p in zip(targets, small):
        ref = epsilon_brute([(Fraction(5, 2), 1), (Fraction(7, 4), -2)], t)
        assert p.lower <= ref <= p.upper
