"""β(α) of mixed designs beside the discrete Gaussians' oracle (and randomized responses by
noise parameter), where G = 1 − δ(ε) − e^ε α cancels: ``1 − δ`` summed as positive terms
(:mod:`exactdp.accounting.mixed_complement`) must give brackets ≤ 1e-9 relative on the right side.

The reference is written here (nothing of exactdp): the joint privacy-loss atoms of the design
enumerated from each mechanism's closed-form atoms with 60-digit mpmath masses (a randomized
response by noise p as the loss ``b·log R`` kept symbolically: (rational part, b)), the discrete
Gaussians truncated at |x| ≤ R where their left-out mass is below 1e-150, and the
Neyman–Pearson test on them (accept the highest-loss atoms: β(α) = Q[accepted] with
P[accepted] = 1 − α, the boundary atom split).
"""

from fractions import Fraction

import mpmath
import pytest

from exactdp import DiscreteGaussian, ExactAccountant
from exactdp.kinds import DiscreteLaplace, Mixture, RandomizedResponse, RandomizedResponseNoise

_DPS = 60


def _compose(a: dict, b: dict) -> dict:
    out: dict = {}
    for (ra, ba), (pa, qa) in a.items():
        for (rb, bb), (pb, qb) in b.items():
            key = (ra + rb, ba + bb)
            p, q = out.get(key, (0, 0))
            out[key] = (p + pa * pb, q + qa * qb)
    return out


def _power(atoms: dict, c: int) -> dict:
    res = {(Fraction(0), 0): (mpmath.mpf(1), mpmath.mpf(1))}
    for _ in range(c):
        res = _compose(res, atoms)
    return res


def _dlap(b: Fraction, m: int) -> dict:
    r = mpmath.exp(-1 / mpmath.mpf(b))
    c = (1 - r) / (1 + r)
    out = {(Fraction(m) / b, 0): (1 / (1 + r), r**m / (1 + r)), (Fraction(-m) / b, 0): (r**m / (1 + r), 1 / (1 + r))}
    for x in range(1, m):
        out[(Fraction(m - 2 * x) / b, 0)] = (c * r**x, c * r ** (m - x))
    return out


def _dg(s2: Fraction, d: int, R: int) -> dict:
    """N_Z(0, σ²) vs N_Z(d, σ²) on |x| ≤ R (each normaliser over ±(R + 2d): the left-out
    mass e^{−R²/2σ²}-small is below every β asked)."""
    w = {x: mpmath.exp(-mpmath.mpf(x * x) / (2 * mpmath.mpf(s2))) for x in range(-R - 2 * d, R + 2 * d + 1)}
    z = mpmath.fsum(w.values())
    out: dict = {}
    for x in range(-R, R + 1):
        key = (Fraction(d * d - 2 * d * x) / (2 * s2), 0)
        p, q = out.get(key, (0, 0))
        out[key] = (p + w[x] / z, q + w[x - d] / z)
    return out


def _rr(e0: Fraction, k: int = 2) -> dict:
    e = mpmath.exp(mpmath.mpf(e0))
    den = e + k - 1
    out = {(e0, 0): (e / den, 1 / den), (-e0, 0): (1 / den, e / den)}
    if k > 2:
        out[(Fraction(0), 0)] = ((k - 2) / den, (k - 2) / den)
    return out


def _rrn(p: Fraction) -> dict:
    """Binary randomized response by noise p: loss ±log R, R = q1/q2 (kept as the count b)."""
    q2 = mpmath.mpf(p) / 2
    q1 = 1 - q2
    return {(Fraction(0), 1): (q1, q2), (Fraction(0), -1): (q2, q1)}


def _sorted(atoms: dict, log_r) -> list:
    """``(P, Q)`` masses in decreasing order of the loss ``r + b·log R``."""
    return [atoms[k] for k in sorted(atoms, key=lambda k: mpmath.mpf(k[0]) + k[1] * log_r, reverse=True)]


def _beta(ordered: list, alpha: Fraction) -> mpmath.mpf:
    need = 1 - mpmath.mpf(alpha)
    sp = sq = mpmath.mpf(0)
    for p, q in ordered:
        if sp + p >= need:
            return sq + (need - sp) / p * q
        sp, sq = sp + p, sq + q
    return sq


_S2 = Fraction(2506, 100)
_B = Fraction(37, 100)
#: (groups, the reference's atoms, R of the randomized responses by noise parameter, the α asked); on
#: main each has α whose bracket is 1.1e-9 … 1.5e-8 relative wide (G from a ball of δ ≈ 1 − 1e-6
#: that is 1e-14 absolute)
_CASES = {
    # the Gaussian oracle (lattice route: DG(25.06) beside the grid 1/37 of the others) beside
    # discrete Laplaces and randomized responses; α from 1e-12 to 1 − 1e-9
    "oracle": (
        lambda: ((DiscreteLaplace("0.37", 3), 4), (DiscreteGaussian("25.06", 3), 2), (RandomizedResponse("1", 5), 2)),
        lambda: _compose(_compose(_power(_dlap(_B, 3), 4), _power(_dg(_S2, 3, 130), 2)),
                         _power(_rr(Fraction(1), 5), 2)),
        None,
        ("1e-12", "1e-7", "1e-5", "0.999999999"),
    ),
    # ... and randomized responses by noise parameter 1/100 (the irrational losses ±log 199)
    "oracle+rrn": (
        lambda: ((DiscreteGaussian("25.06", 3), 2), (RandomizedResponseNoise("1/100"), 3),
                 (DiscreteLaplace("0.37", 3), 3), (RandomizedResponse("1"), 1)),
        lambda: _compose(_compose(_power(_dg(_S2, 3, 130), 2), _power(_rrn(Fraction(1, 100)), 3)),
                         _compose(_power(_dlap(_B, 3), 3), _rr(Fraction(1)))),
        199,
        ("1e-9",),
    ),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_mixed_beta_deep_and_near_one_within_1e9_against_enumeration(name):
    groups, atoms_of, r, alphas = _CASES[name]
    acc = ExactAccountant(Mixture(groups()))
    assert "lattice" in acc.method  # (the oracle's route: the case is the one meant)
    pts = acc.tradeoff(list(alphas))
    with mpmath.workdps(_DPS):
        ordered = _sorted(atoms_of(), mpmath.log(r) if r else mpmath.mpf(0))
        for a, pt in zip(alphas, pts):
            ref = _beta(ordered, Fraction(a))
            lo, hi = mpmath.mpf(pt.lower), mpmath.mpf(pt.upper)
            tol = mpmath.mpf(10) ** -40
            assert lo <= ref * (1 + tol) and ref * (1 - tol) <= hi, (name, a, lo, ref, hi)  # never a wrong side
            assert hi - lo <= mpmath.mpf(10) ** -9 * hi, (name, a, float((hi - lo) / hi))
