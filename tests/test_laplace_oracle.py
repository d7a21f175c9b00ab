"""The prototype quadrature of a continuous Laplace against the discrete Gaussians' oracle
(:mod:`exactdp.accounting.laplace_oracle`, not yet used by the mixed route: too slow for
ε(δ)'s search) against a brute force written here, nothing of exactdp's engine: the discrete
Gaussians' joint loss atoms enumerated from their pmfs (``tests/mixed_brute.py``, tails below
1e-400) and the single Laplace's closed form ``D(t) = 1 − e^{(t−μ)/2}`` on [0, μ]
(``tests/laplace_reference.py``, itself checked against quadrature of the output densities),
``D(t) = 1 − e^t + e^t D(−t)`` for t < 0, summed over the atoms.  Never a wrong side;
brackets ≤ 1e-9 relative."""

from __future__ import annotations

from fractions import Fraction

import laplace_reference as lref
import mixed_brute as brute
import mpmath

from exactdp import DiscreteGaussian
from exactdp.accounting.laplace_oracle import LaplaceOracleLoss
from exactdp.accounting.plan import plan
from exactdp.kinds.laplace import Laplace, laplace_part
from exactdp.mechanisms import Composition

REL = mpmath.mpf("1e-9")
# σ² = 1.0001 and 0.9999: their common loss grid (step ~1e-4) is too fine for exact windows
DG = ((DiscreteGaussian("1.0001", 1), 1), (DiscreteGaussian("0.9999", 1), 1))
LAP = Laplace(2)  # μ = 1/2


def _kernel(t: Fraction) -> mpmath.mpf:
    if t >= 0:
        return lref.single_closed(LAP.scale, LAP.shift, t)
    with mpmath.workdps(lref.DPS):
        tm = brute._m(t)
        return -mpmath.expm1(tm) + mpmath.exp(tm) * lref.single_closed(LAP.scale, LAP.shift, -t)


def _ref_delta(atoms, eps) -> tuple:
    d, tail = atoms
    with mpmath.workdps(lref.DPS):
        s = mpmath.fsum(p * _kernel(Fraction(eps) - k) for k, (p, _) in d.items() if p)
        return s * (1 - mpmath.mpf(10) ** -35), s * (1 + mpmath.mpf(10) ** -35) + tail


def test_delta_against_the_enumeration():
    gauss, _ = plan(Composition(DG), 1e-10, "lattice-free")
    loss = LaplaceOracleLoss(laplace_part(((LAP, 1),)), gauss, lambda t: None)
    atoms = brute.joint(DG)
    for e in ("1",):
        ef = Fraction(e)
        b = loss.delta(ef, ef, None, 128)
        lo, hi = _ref_delta(atoms, e)
        up, dn = mpmath.mpf(b.upper().str(30, radius=False)), mpmath.mpf(b.lower().str(30, radius=False))
        assert up >= lo * (1 - mpmath.mpf(10) ** -25) and dn <= hi * (1 + mpmath.mpf(10) ** -25), (e, dn, up, lo, hi)
        assert up - dn <= REL * hi, (e, dn, up)
