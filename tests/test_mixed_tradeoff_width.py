"""The fourth audit's mixed β(1e-9) (bench/audit.md, "audit4", FOUND 3): once 1.1e-8 relative wide
(G = 1 − δ − e^ε α from a ball of δ ≈ 1 − 3e-6 that was 1e-14 absolute), now ≤ 1e-9
(:mod:`exactdp.accounting.mixed_complement`).

The reference is an exact enumeration written in this file (nothing of exactdp): the joint
privacy-loss atoms of the design with exact rational losses and 60-digit mpmath masses, and the
Neyman–Pearson trade-off on them (the test accepts the highest-loss atoms: β(α) = Q[accepted]
with P[accepted] = 1 − α, the boundary atom split).
"""

from fractions import Fraction

import mpmath

from exactdp import DiscreteGaussian, ExactAccountant
from exactdp.kinds import DiscreteLaplace, Mixture, RandomizedResponse

_DPS = 60  # the reference's digits (under workdps: never the process's global precision)


def _compose(a, b):
    out = {}
    for la, pa, qa in a:
        for lb, pb, qb in b:
            p, q = out.get(la + lb, (0, 0))
            out[la + lb] = (p + pa * pb, q + qa * qb)
    return [(l, p, q) for l, (p, q) in out.items()]


def _power(atoms, c):
    res = [(Fraction(0), mpmath.mpf(1), mpmath.mpf(1))]
    for _ in range(c):
        res = _compose(res, atoms)
    return res


def _dlap(b: Fraction, m: int):
    """One discrete Laplace P(x) ∝ r^|x| vs Q(x) ∝ r^|x − m| (m > 0): loss (|x − m| − |x|)/b."""
    r = mpmath.exp(-1 / mpmath.mpf(b))
    c = (1 - r) / (1 + r)
    atoms = [(Fraction(m) / b, 1 / (1 + r), r**m / (1 + r))]
    atoms += [(Fraction(m - 2 * x) / b, c * r**x, c * r ** (m - x)) for x in range(1, m)]
    atoms.append((Fraction(-m) / b, r**m / (1 + r), 1 / (1 + r)))
    return atoms


def _dg(s2: Fraction, d: int, R: int):
    """One discrete Gaussian N_Z(0, σ²) vs N_Z(d, σ²), truncated to |x| ≤ R (mass e^{−R²/2σ²}
    beyond: negligible at the test's tolerance); loss (d² − 2dx)/(2σ²)."""
    w = {x: mpmath.exp(-mpmath.mpf(x * x) / (2 * mpmath.mpf(s2))) for x in range(-R - abs(d), R + abs(d) + 1)}
    z = mpmath.fsum(w[x] for x in range(-R, R + 1))
    return [(Fraction(d * d - 2 * d * x) / (2 * s2), w[x] / z, w[x - d] / z) for x in range(-R, R + 1)]


def _rr(e0: int, k: int):
    e = mpmath.exp(e0)
    den = e + k - 1
    atoms = [(Fraction(e0), e / den, 1 / den), (Fraction(-e0), 1 / den, e / den)]
    return atoms + ([(Fraction(0), (k - 2) / den, (k - 2) / den)] if k > 2 else [])


def _tradeoff(atoms, alpha: Fraction):
    need = 1 - mpmath.mpf(alpha)
    sp = sq = mpmath.mpf(0)
    for _, p, q in sorted(atoms, key=lambda t: t[0], reverse=True):
        if sp + p >= need:
            return sq + (need - sp) / p * q
        sp, sq = sp + p, sq + q
    return sq


def test_mixed_beta_bracket_meets_the_promised_width():
    scale = Fraction(37, 100)
    with mpmath.workdps(_DPS):
        joint = _compose(
            _compose(_power(_dlap(scale, 3), 5), _power(_dg(Fraction(2506, 100), 3, 60), 2)), _power(_rr(1, 5), 3)
        )
        ref = _tradeoff(joint, Fraction(1, 10**9))
    design = Mixture(
        (
            (DiscreteLaplace("0.37", 3), 5),
            (DiscreteGaussian("25.06", 3), 2),
            (RandomizedResponse("1", 5), 3),
        )
    )
    pt = ExactAccountant(design).tradeoff(["1e-9"])[0]
    with mpmath.workdps(_DPS):
        lo, hi = mpmath.mpf(pt.lower), mpmath.mpf(pt.upper)
        assert lo <= ref * (1 + mpmath.mpf(10) ** -30) and ref * (1 - mpmath.mpf(10) ** -30) <= hi  # never a wrong side
        assert hi - lo <= mpmath.mpf(10) ** -9 * hi
