"""Decimal designs whose exact lattice fits int64 but whose rule would need ~1e10 evaluations.

``exactdp delta --sigma2 1.1 --sigma2 2.37 --sigma2 3.14159 --sigma2 7/3 --eps 1/2`` did not
answer within 5 minutes (the conditioned rule's estimated cost was 1.3e10; the lattice scale
5.7e9), and three of those mechanisms hung in the sieve (~1e9 candidate nodes).  Now the
engine refuses such a plan (``LatticeTooLarge``) and the accountant hands the design to the
lattice-free one, which answers in seconds.  The reference is the exact enumeration of
``tests/harness.py`` (``big_lattice_delta_brute``: atoms keyed by exact rationals, no
lattice, nothing of the engine).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from exactdp.accounting.accountant import ExactAccountant
from exactdp.accounting.lattice_free import LatticeFreeAccountant
from exactdp.census.allocations import load_allocation
from exactdp.engine.lattice import lattice_of
from exactdp.engine.quadrature import QuadratureTails
from exactdp.mechanisms import Composition
from exactdp.numerics.errors import LatticeTooLarge

from harness import big_lattice_delta_brute

FOUR = [Fraction("1.1"), Fraction("2.37"), Fraction("3.14159"), Fraction(7, 3)]


def _inside(point, ref):
    with mpmath.workdps(40):
        lo = point.value - 2 * point.error_bound if hasattr(point, "value") else point.lower
        hi = point.value if hasattr(point, "value") else point.upper
        return lo <= ref <= hi


def test_costly_decimal_design_goes_to_the_lattice_free_accountant():
    acc = ExactAccountant(Composition.from_sigma2(FOUR))
    assert acc.route == "lattice-free" and isinstance(acc.answerer, LatticeFreeAccountant)
    eps = Fraction(1, 2)
    (point,) = acc.delta([eps])
    ref = big_lattice_delta_brute(tuple((s, 1, 1) for s in FOUR), eps)
    assert _inside(point, ref), (point, mpmath.nstr(ref, 25))


def test_sieve_of_a_billion_candidates_is_refused_and_another_rule_answers():
    three = FOUR[:3]
    with pytest.raises(LatticeTooLarge, match="candidate nodes"):
        QuadratureTails(lattice_of(Composition.from_sigma2(three)))
    eps = Fraction(1, 2)
    (point,) = ExactAccountant(Composition.from_sigma2(three)).delta([eps])
    ref = big_lattice_delta_brute(tuple((s, 1, 1) for s in three), eps)
    assert _inside(point, ref), (point, mpmath.nstr(ref, 25))


def test_no_dhc_pair_reaches_the_budget():
    alloc = load_allocation("dhc-persons-2020")
    for i, j in [(6, 10), (6, 31), (6, 6), (9, 43), (13, 13)]:  # the costliest and widest
        assert ExactAccountant(Composition.from_rhos(alloc.pair_rhos(i, j))).route == "lattice"
