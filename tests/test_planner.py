"""The declared planner (exactdp/accounting/plan.py) and the one accountant class over it.

Checked here: the lattice route's fit is decided before any lattice or engine is built (the
weight bound agrees with an independent computation of the scale, and a design of thousands
of distinct decimal variances never reaches ``lattice_of`` or a ``TailEngine``); one class
answers every design; ``method=`` forces a route (numbers identical to the planner's own
choice where the route is the same, InputError naming the routes that fit otherwise); the
route and its estimate are in the diagnostics and the CLI's JSON; the ε(δ) fallback is the
planner's (absent when a route is forced).  Values are checked against the brute-force
references of ``tests/harness.py``.
"""

from __future__ import annotations

import json
import math
import random
from fractions import Fraction

import mpmath
import pytest

from exactdp.accounting import plan as plan_mod
from exactdp.accounting.accountant import ExactAccountant, delta, epsilon, tradeoff
from exactdp.accounting.lattice_free import LatticeFreeAccountant
from exactdp.accounting.lattice_route import LatticeAccountant
from exactdp.engine import tails as tails_mod
from exactdp.engine.lattice import weights_exceed
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.errors import InputError, UncertifiedError

from harness import delta_brute, epsilon_brute


def _comp(spec):
    return Composition(tuple((DiscreteGaussian(s, d), m) for s, d, m in spec))


def _max_weight(comp) -> Fraction:
    """The largest integer lattice weight, computed independently of exactdp: the smallest
    s > 0 with s·w integral for every weight is lcm(denominators)/gcd(numerators)."""
    ws = [Fraction(abs(m.shift)) / Fraction(m.sigma2) for m, _ in comp.groups if m.shift != 0]
    den = 1
    num = 0
    for w in ws:
        den = den * w.denominator // math.gcd(den, w.denominator)
        num = math.gcd(num, w.numerator)
    return max(ws) * Fraction(den, num)


_RNG = random.Random(20261206)
_DESIGNS = [
    [(f"{_RNG.randint(100, 99999) / 10 ** _RNG.randint(0, 3)}", _RNG.choice([1, 2, -3]), _RNG.randint(1, 4))
     for _ in range(_RNG.randint(1, 6))]
    for _ in range(60)
]


@pytest.mark.parametrize("limit", [2**10, 2**20, 2**40, 2**62])
def test_weight_bound_is_exact_against_an_independent_scale(limit):
    for spec in _DESIGNS:
        comp = _comp(spec)
        assert weights_exceed(comp, limit) == (_max_weight(comp) >= limit), spec


def test_thousands_of_distinct_variances_build_no_lattice_and_no_tail_engine(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("built for a design the chosen route does not use")

    monkeypatch.setattr(plan_mod, "lattice_of", refuse)
    monkeypatch.setattr(tails_mod.TailEngine, "__init__", refuse)
    monkeypatch.setattr(tails_mod.QuadratureTails, "__init__", refuse)
    comp = Composition(tuple((DiscreteGaussian(str(Fraction(1000 + 7 * j, 13)), 1), 1) for j in range(300)))
    acc = ExactAccountant(comp)
    assert type(acc) is ExactAccountant and acc.route == "lattice-free"
    diag = acc.diagnostics()
    assert diag.route == "lattice-free" and diag.route_estimate > 0 and "2^62" in diag.route_reason


@pytest.mark.parametrize("spec, route", [
    ([("10000/11", 1, 20)], "lattice"),
    ([("1.1", 1, 1), ("2.37", 1, 1), ("3.14159", 1, 1), ("7/3", 1, 1)], "lattice-free"),
    ([("5", 0, 3)], "lattice"),  # P = Q
])
def test_one_class_for_every_design(spec, route):
    acc = ExactAccountant(_comp(spec))
    assert type(acc) is ExactAccountant
    assert acc.route == route == acc.diagnostics().route
    assert isinstance(acc.answerer, LatticeAccountant if route == "lattice" else LatticeFreeAccountant)


def test_forced_lattice_is_the_planners_own_numbers():
    comp = _comp([("3", 1, 2), ("7/2", 2, 1)])
    auto, forced = ExactAccountant(comp), ExactAccountant(comp, method="lattice")
    assert auto.route == forced.route == "lattice"
    for q, args in (("delta", ["1/2", "2"]), ("epsilon", ["1e-3", "1e-9"]), ("tradeoff", ["0.1", "0.7"])):
        a, b = getattr(auto, q)(args), getattr(forced, q)(args)
        assert [(p.estimate, p.lower, p.upper) for p in a] == [(p.estimate, p.lower, p.upper) for p in b]
    assert forced.diagnostics().route_reason == "forced by method="


def test_forced_lattice_free_contains_the_brute_force_values():
    mechs = ((Fraction(3), 1), (Fraction(7, 2), 2))
    comp = Composition.of(DiscreteGaussian(s, d) for s, d in mechs)
    acc = ExactAccountant(comp, method="lattice-free")
    assert acc.route == "lattice-free" and acc.certification == "bracket"
    (d,) = acc.delta(["1/2"])
    (e,) = acc.epsilon(["1e-4"])
    with mpmath.workdps(40):
        ref = delta_brute(mechs, Fraction(1, 2))
        assert d.lower <= ref <= d.upper and d.upper - d.lower <= 1e-9 * ref
        ref_e = epsilon_brute(mechs, Fraction(1, 10**4))
        assert e.lower <= ref_e <= e.upper and e.upper - e.lower <= 1e-9 * ref_e


def test_forcing_a_route_that_does_not_fit_names_the_ones_that_do():
    comp = Composition(tuple((DiscreteGaussian(str(Fraction(1000 + 7 * j, 13)), 1), 1) for j in range(40)))
    with pytest.raises(InputError, match="lattice-free") as exc:
        ExactAccountant(comp, method="lattice")
    assert exc.value.field == "method"
    with pytest.raises(InputError, match="auto, lattice, lattice-free"):
        ExactAccountant(_comp([("2", 1, 1)]), method="quadrature")


def test_package_functions_take_method():
    comp = _comp([("10000/11", 1, 20)])
    for fn, args in ((delta, ["1"]), (epsilon, ["1e-6"]), (tradeoff, ["0.5"])):
        res = fn(comp, args, method="lattice-free")
        assert res.diagnostics.route == "lattice-free"
        assert fn(comp, args).diagnostics.route == "lattice"


def test_the_epsilon_fallback_is_the_planners():
    comp = _comp([(Fraction(1, 500), 1, 1), (Fraction(12130437, 9999991), 2, 2)])
    auto = ExactAccountant(comp)
    assert auto.route == "lattice" and auto.answerer.fallback is not None
    alt = auto.answerer.fallback()
    assert isinstance(alt, LatticeFreeAccountant) and auto.answerer.fallback() is alt  # built once
    assert ExactAccountant(comp, method="lattice").answerer.fallback is None


def test_cli_reports_the_route(capsys):
    from exactdp.cli import main

    assert main(["delta", "--sigma2", "10000/11", "--eps", "1", "--json", "--method", "lattice-free"]) == 0
    diag = json.loads(capsys.readouterr().out)["diagnostics"]
    assert diag["route"] == "lattice-free" and float(diag["route_estimate"]) > 0
    assert main(["epsilon", "--sigma2", "10000/11", "--delta", "1e-6", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["diagnostics"]["route"] == "lattice"


def test_a_call_the_lattice_route_cannot_certify_goes_to_the_declared_fallback(monkeypatch):
    def refuse(self, values):
        raise UncertifiedError("not certified (test)")

    monkeypatch.setattr(LatticeAccountant, "delta", refuse)
    mechs = ((Fraction(3), 1), (Fraction(7, 2), 2))
    comp = Composition.of(DiscreteGaussian(s, d) for s, d in mechs)
    acc = ExactAccountant(comp)
    assert acc.route == "lattice"
    (d,) = acc.delta(["1/2"])
    assert d.certification == "bracket" and "fallback" in acc.diagnostics().route_reason
    with mpmath.workdps(40):
        ref = delta_brute(mechs, Fraction(1, 2))
        assert d.lower <= ref <= d.upper and d.upper - d.lower <= 1e-9 * ref
    with pytest.raises(UncertifiedError, match="test"):
        ExactAccountant(comp, method="lattice").delta(["1/2"])


def test_a_conditioned_engine_whose_rest_has_no_quadrature_is_costed_by_its_rest():
    """Nine two-decimal σ² in [0.5, 0.9]: the exact engine's conditioned method enumerates three
    groups and asks a convolution rest (its sub-lattice is beyond int64 phases: no quadrature)
    for every atom.  Costed at one node per atom it was chosen, and one δ took ~10 CPU-s (20 δ
    over 15 minutes); costed by the rest's own estimate it is far over the budget and the
    planner gives the design to the lattice-free route (the two-half enumeration: 20 δ + 3 ε +
    3 β in ~0.5 s, bench/designs.md)."""
    comp = Composition([(DiscreteGaussian(v), 1) for v in
                        ("0.51", "0.57", "0.62", "0.66", "0.71", "0.74", "0.79", "0.83", "0.88")])
    acc, plan = plan_mod.plan(comp)
    assert plan.route == "lattice-free", plan
    assert "conditioned" in plan.reason and "budget" in plan.reason
    with pytest.raises(ArithmeticError, match=r"conditioned-quadrature\) is estimated at [0-9.]+e\+09"):
        tails_mod.TailEngine(plan_mod.Design(comp).lattice)


def test_a_refusal_by_every_route_points_to_no_route_that_refused():
    # the fourth audit's narrow design with counts 2 (ten σ² in [1.18, 1.28], ρ ≈ 8.13): when
    # every route refuses, the message must not send the user to the lattice-free route (it
    # refused too) and must name the remedy that works, the zCDP bound at the design's ρ
    comp = Composition(tuple((DiscreteGaussian(Fraction(s)), 2)
                             for s in ("1.21", "1.28", "1.20", "1.23", "1.25", "1.27", "1.19", "1.24", "1.26", "1.18")))
    try:
        ExactAccountant(comp)
    except UncertifiedError as exc:
        assert "takes such designs" not in str(exc)
        assert "zCDP bound of ρ = 8.12934" in str(exc)
