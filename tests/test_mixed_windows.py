"""β(α) beside a near-deterministic discrete-Gaussian oracle (δ_G(0) ≈ 1 − e^{−200}): the shape of
the second audit's design 4 (``DG(0.1125, 8)×38, RRN(1/2)×5, RR(1/1000), DLap(0.37, 2)×4``, β(1e-12)
refused "[0, 1]" after 42 CPU-s), smaller; answered by the windowed twin
(:mod:`exactdp.accounting.mixed_windows`).  On main these α are refused ("[0.0, 1.0]") or 1.2e-9
relative wide.

The reference is the 80-digit Neyman–Pearson enumeration of ``tests/test_mixed_complement.py``
(nothing of exactdp): the discrete Gaussians on |x| ≤ 30 (left-out mass below e^{−2000}, β ≥
e^{−1100} here).
"""

from fractions import Fraction

import mpmath
import pytest
from test_mixed_complement import _beta, _compose, _dg, _dlap, _power, _rr, _rrn, _sorted

from exactdp import DiscreteGaussian, ExactAccountant
from exactdp.kinds import DiscreteLaplace, Mixture, RandomizedResponse, RandomizedResponseNoise

_DPS = 80
_S2 = Fraction(1125, 10000)
_ALPHAS = ("1e-12", "1e-3", "1/2", "0.999999999")
_CASES = {
    "rrn": (
        lambda: ((DiscreteGaussian("0.1125", 8), 3), (RandomizedResponseNoise("1/2"), 2),
                 (RandomizedResponse("1/1000"), 1), (DiscreteLaplace("0.37", 2), 1)),
        lambda: _compose(_compose(_power(_dg(_S2, 8, 30), 3), _power(_rrn(Fraction(1, 2)), 2)),
                         _compose(_rr(Fraction(1, 1000)), _dlap(Fraction(37, 100), 2))),
        3,
    ),
    "finite": (
        lambda: ((DiscreteGaussian("0.1125", 8), 3), (RandomizedResponse("1/1000"), 1),
                 (DiscreteLaplace("0.37", 2), 2)),
        lambda: _compose(_power(_dg(_S2, 8, 30), 3),
                         _compose(_rr(Fraction(1, 1000)), _power(_dlap(Fraction(37, 100), 2), 2))),
        None,
    ),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_beta_beside_a_near_deterministic_oracle_against_enumeration(name):
    groups, atoms_of, r = _CASES[name]
    acc = ExactAccountant(Mixture(groups()))
    assert "lattice" in acc.method  # (the oracle's route: the case is the one meant)
    pts = acc.tradeoff(list(_ALPHAS))
    with mpmath.workdps(_DPS):
        ordered = _sorted(atoms_of(), mpmath.log(r) if r else mpmath.mpf(0))
        for a, pt in zip(_ALPHAS, pts):
            ref = _beta(ordered, Fraction(a))
            lo, hi = mpmath.mpf(pt.lower), mpmath.mpf(pt.upper)
            tol = mpmath.mpf(10) ** -40
            assert lo <= ref * (1 + tol) and ref * (1 - tol) <= hi, (name, a, lo, ref, hi)  # never a wrong side
            assert 0 < lo and hi - lo <= mpmath.mpf(10) ** -9 * hi, (name, a, float((hi - lo) / hi))
