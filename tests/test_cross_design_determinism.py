"""A design's certified answers do not depend on what the process computed before.

The engine keeps module-level caches across accountants (group pmfs, node tables, dg tables,
per-group atom factors, log peaks, …) so that a sweep's or a tuner's designs share their
groups.  The promise: what a query gets depends only on the design and the query, bit for
bit — never on which other design filled a cache first.  Checked here on two small designs
that share their σ² values with other counts and shifts (the case a too-loosely keyed cache
would answer with another design's object), on the default route and on the grouped tilted
halves (the route of the bench's clumpy designs):

* design B computed after design A (and A, B, A, B again, as a sweep worker would) gives
  brackets bit-identical to B computed alone in a fresh interpreter;
* B's δ(ε), ε(δ) and β(α) brackets contain the exact values of a brute-force enumeration
  of the loss distribution (``tests/harness.py``: mpmath, 60 digits, nothing of the engine).

The check can fail: keying :func:`exactdp.engine.convolution.group_pmf`'s cache by σ² alone
(dropping the count) breaks the default route's bits here, and keying
``exactdp.engine.tilted_atoms._log_peak`` by σ² alone breaks the grouped halves' (A has
1.21 ×3 and 1.26 ×2 where B has 1.21 ×2 and 1.26 ×1).
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from fractions import Fraction as F

import pytest

from harness import delta_brute, epsilon_brute, tradeoff_brute

#: (σ², shift, count): the same σ² in both designs, with other counts and shifts
A = (("1.21", 1, 3), ("1.26", 3, 2))
B = (("1.21", 2, 2), ("1.26", 1, 1), ("1.18", 1, 1))

DELTA_EPS = ("0", "2", "9/2", "20", "45")
EPS_DELTAS = ("1e-2", "1e-8", "1e-30")
ALPHAS = ("1e-12", "0.3", "0.999999")


def answers(design, grouped):
    """The answers of a design, run here and (its source) in a fresh interpreter: every bracket's
    end points as their exact mpf bits ``(sign, mantissa, exponent)``; ``grouped`` sends the
    design to the grouped tilted halves."""
    from fractions import Fraction

    from exactdp.accounting import lattice_free
    from exactdp.accounting.accountant import ExactAccountant
    from exactdp.engine.halves import HalvesProfile
    from exactdp.mechanisms import Composition, DiscreteGaussian

    comp = Composition(tuple((DiscreteGaussian(Fraction(s2), d), m) for s2, d, m in design))
    if grouped:
        keep = lattice_free.profile_for
        lattice_free.profile_for = lambda groups, wide=True: HalvesProfile(groups, grouped=True)
        try:
            acc = ExactAccountant(comp, method="lattice-free")
        finally:
            lattice_free.profile_for = keep
        assert acc.method == "halves-enumeration" and acc.profile.grouped
    else:
        acc = ExactAccountant(comp)
    out = []
    for xs in (acc.delta(list(DELTA_EPS)), acc.epsilon(list(EPS_DELTAS)), acc.tradeoff(list(ALPHAS))):
        out.append([[[v._mpf_[0], str(v._mpf_[1]), v._mpf_[2]] for v in (x.lower, x.upper)]
                    for x in xs])
    return out


def _alone(design, grouped: bool) -> list:
    """``answers(design, grouped)`` in a new interpreter (no cache filled by anything else)."""
    script = (f"import json\nDELTA_EPS, EPS_DELTAS, ALPHAS = {DELTA_EPS!r}, {EPS_DELTAS!r}, {ALPHAS!r}\n"
              f"{inspect.getsource(answers)}\nprint(json.dumps(answers({design!r}, {grouped!r})))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


@pytest.fixture(scope="module", params=[False, True], ids=["default-route", "grouped-halves"])
def runs(request):
    """B after A, and B again after A once more (a sweep worker's order), in this process."""
    grouped = request.param
    answers(A, grouped)
    first = answers(B, grouped)
    answers(A, grouped)
    again = answers(B, grouped)
    return grouped, first, again


def test_answers_do_not_depend_on_the_designs_computed_before(runs):
    grouped, first, again = runs
    assert again == first
    assert _alone(B, grouped) == first


def _exact(bits) -> F:
    """The exact value of an mpf given as (sign, mantissa, exponent)."""
    sign, man, exp = bits
    v = F(int(man)) * F(2) ** exp
    return -v if sign else v


def _mp_contains(lo, hi, ref) -> bool:
    """lo ≤ ref ≤ hi, exactly (ref: an mpf of the reference)."""
    return _exact(lo) <= _exact([int(ref < 0), abs(ref).man, abs(ref).exp]) <= _exact(hi)


@pytest.fixture(scope="module")
def reference():
    """B's exact δ(ε), ε(δ), β(α) by enumeration of its loss distribution (harness, 60 digits)."""
    mechs = [(F(s2), d) for s2, d, m in B for _ in range(m)]
    return ([delta_brute(mechs, F(e)) for e in DELTA_EPS], [epsilon_brute(mechs, F(d)) for d in EPS_DELTAS],
            [tradeoff_brute(mechs, F(a)) for a in ALPHAS])


def test_answers_contain_the_brute_force_values(runs, reference):
    _, first, _ = runs
    for what, queries, got, refs in zip(("delta", "epsilon", "beta"), (DELTA_EPS, EPS_DELTAS, ALPHAS), first,
                                        reference):
        for q, (lo, hi), ref in zip(queries, got, refs):
            assert _mp_contains(lo, hi, ref), (what, q, _exact(lo), ref, _exact(hi))
