"""The float screen of the ε(δ) search (accounting/screen.py) against the mpmath comparison.

The screen may answer a certified comparison of δ(ε_k) with a target only when the
mpmath assembly of the same engine values gives the same answer.  Checked on real
breakpoints of three designs (a DHC-like sum, a tiny-σ² group, a design whose method
gives tails only), with targets placed at relative distances from 1e-17 to 1e-8 on both
sides of each certified end: every screened answer equals the mpmath one, and the screen
answers nearly every target farther than 1e-12 (it is useful)."""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest

from exactdp.accounting.accountant import ExactAccountant
from exactdp.accounting.screen import decide, delta_bracket
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.precision import DPS_RESULT as _DPS

DESIGNS = {
    "dhc-like": Composition.from_rhos([Fraction(1, 40)] * 20 + [Fraction(7, 100)] * 10),
    "tiny-sigma2": Composition.of([DiscreteGaussian(Fraction(1, 1000), 1), DiscreteGaussian(Fraction(7, 3), 2),
                                   DiscreteGaussian(Fraction(5, 2), 1)]),
    "tails-only": Composition.of([DiscreteGaussian(Fraction(1, 2), 1), DiscreteGaussian(Fraction(7, 3), 2)]),
}
ETAS = (1e-17, 3e-17, 1e-16, 3e-16, 1e-15, 1e-14, 1e-13, 1e-12, 1e-10, 1e-8)


def _targets(v):
    with mpmath.workdps(60):
        for eta in ETAS:
            for sgn in (1, -1):
                t = v * (1 + sgn * mpmath.mpf(eta))
                if 0 < t < mpmath.mpf(1) / 2:
                    yield eta, Fraction(mpmath.nstr(t, 50))


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_screened_comparisons_agree_with_mpmath(name):
    acc = ExactAccountant(DESIGNS[name])
    eng = acc.engine
    ks = sorted({int(float(e) * acc.lattice.scale) for e in (Fraction(1, 10), 1, 2, 3, 5, 8, 12)})
    eps = [acc._piece_eps(k) for k in ks if acc._piece_eps(k) >= 0]
    recs = acc._profile_values(eps, full=False, complement=False)
    decided = far = 0
    for e, rec in zip(eps, recs):
        br = delta_bracket(rec, float(e), eng.done, eng.log_chernoff)
        with mpmath.workdps(_DPS):
            pr = acc._assemble(rec)
        for side, end in (("upper", pr.d_hi), ("lower", pr.d_lo)):
            if not 0 < end < 0.5:
                continue
            for eta, t in _targets(end):
                got = decide(br, float(t), side)
                if got is not None:
                    assert got == acc._below(pr, t, side), (name, e, side, eta, br)
                if eta >= 1e-12:
                    far += 1
                    decided += got is not None
    assert far > 0 and decided >= 0.9 * far, (decided, far)


def test_unscreenable_values_are_left_to_mpmath():
    acc = ExactAccountant(DESIGNS["dhc-like"])
    (rec,) = acc._profile_values([acc._piece_eps(10**6)], full=False, complement=False)
    eng = acc.engine
    assert delta_bracket(rec, -1.0, eng.done, eng.log_chernoff) is None  # negative ε
    assert delta_bracket(rec, 800.0, eng.done, eng.log_chernoff) is None  # e^ε beyond the float range
    assert decide(None, 0.25, "upper") is None
    assert decide((0.1, 0.2, 1e-3), 0.0, "upper") is None  # a target below the float range
