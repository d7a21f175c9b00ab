"""Every bracket is a function of the design and the query, never of the queries before it.

The trade-off batch lowers the smoothed inversion's target for a while
(:func:`exactdp.accounting.tradeoff_batch.oracle_width`): a level first built then must get
the same node set as when built at the ordinary target (its sieve's kernel tilt Λ is fixed by
the construction target), and a point whose level is beyond the budget must be answered by
the same coarser level whatever was built before.  Checks, on fresh profiles / accountants:

* the four-group analogue of ``test_narrow_range_designs`` (three-decimal σ² in [10, 11])
  under the wide budget: ``D(x)`` asked first, and asked after a batch at a lowered target,
  gives bit-identical log brackets, each containing the meet-in-the-middle enumeration
  (mpmath, 40 digits) of that test;
* ten three-decimal σ² near 5 through the public accountant: δ(ε) asked first and δ(ε)
  asked after β(1e-9) are identical exact brackets, and so are β(1e-9) asked first and
  β(1e-9) asked after δ(ε).
"""

from __future__ import annotations

from fractions import Fraction as F
from types import SimpleNamespace

import mpmath
import numpy as np
from test_narrow_range_designs import FOUR, _brute_profile, _design

from exactdp.accounting.accountant import ExactAccountant
from exactdp.accounting.tradeoff_batch import oracle_width
from exactdp.engine.families import groups_of
from exactdp.engine.fine_profile import FineProfile

NEAR5 = [f"{5 + 0.1 * j + 0.001 * (j * j % 7):.3f}" for j in range(10)]


def test_wide_profile_brackets_do_not_depend_on_an_earlier_lowered_target():
    groups = groups_of(_design(FOUR))
    first = FineProfile.wide(groups)
    sd = first.sd
    xs = np.array([2.5 * sd, 6.5 * sd])  # 6.5 sd: its second refinement is beyond the node budget
    lo1, hi1 = first.log_brackets(xs)
    later = FineProfile.wide(groups)
    with oracle_width(SimpleNamespace(profile=SimpleNamespace(rest=later)), later.target / 13):
        later.log_brackets(np.array([k * 0.485 * sd for k in range(1, 14, 2)]))  # builds finer levels
    assert later.target == first.target
    lo2, hi2 = later.log_brackets(xs)
    assert lo1.tolist() == lo2.tolist() and hi1.tolist() == hi2.tolist(), (lo1 - lo2, hi1 - hi2)
    ref = _brute_profile(tuple(FOUR), tuple(xs.tolist()))
    with mpmath.workdps(40):
        for l, u, (d, om) in zip(lo1, hi1, ref):
            assert om < mpmath.mpf(10) ** -15 * d
            assert mpmath.exp(mpmath.mpf(float(l))) <= d + om and d <= mpmath.exp(mpmath.mpf(float(u)))


def test_delta_after_a_tradeoff_query_equals_delta_asked_first():
    comp = _design(NEAR5)
    eps = [F(31, 2), F(17), F(37, 2), F(20)]
    fresh = ExactAccountant(comp)
    assert fresh.diagnostics().method == "smoothed-inversion"
    first = fresh.delta(eps)
    acc = ExactAccountant(comp)
    beta = acc.tradeoff([F(1, 10**9)])[0]
    assert 0 < beta.lower <= beta.upper <= 1
    after = acc.delta(eps)
    for e, a, b in zip(eps, first, after):
        assert 0 < a.lower <= a.upper and a.upper - a.lower <= mpmath.mpf("1e-9") * a.upper
        assert (a.lower, a.upper) == (b.lower, b.upper), (e, a, b)
    late = fresh.tradeoff([F(1, 10**9)])[0]  # β after δ equals β asked first
    assert (late.lower, late.upper) == (beta.lower, beta.upper), (late, beta)
