"""Near-deterministic discrete Gaussians windowed beside the oracle (issue 35, the mixed route's split).

When the discrete Gaussians' common grid is too fine to window them all, the near-deterministic
ones (few outputs: σ² ≲ 0.08) become windows of the finite part and only the rest is the oracle
(:func:`exactdp.accounting.mixed._split`).  The reference is ``mixed_brute`` (every discrete part
enumerated from its output distributions at 70 digits; the continuous Gaussians by their closed
form ``delta_gaussian``), nothing of the engine.  To keep it fast, atoms of P-mass below 1e-50 are
dropped after each convolution (only the upper end widens: every term of δ is nonnegative and at
most its atom's mass), atoms with ``t − μ > 30`` are bounded by ``e^{−(t−μ)²/(4μ)}``, and atoms
with ``t < −25`` by ``[1 − e^t, 1]`` (``t = ε − ℓ``).
"""

from __future__ import annotations

from fractions import Fraction

import mixed_brute
import mpmath
import pytest

from exactdp import DiscreteGaussian, ExactAccountant
from exactdp.kinds import DiscreteLaplace, Gaussian, Mixture

REL = mpmath.mpf("1e-9")
_DROP = mpmath.mpf("1e-40")

DESIGNS = {
    # the example: σ² = 0.0273 (ρ ≈ 73 per copy) beside a wide discrete Gaussian, a discrete
    # Laplace and continuous Gaussians (its ε(1e-6) was refused with the near-deterministic group in the oracle)
    "example": ((DiscreteGaussian("0.0273", -2), 3), (DiscreteGaussian("8.31", 4), 12), (DiscreteLaplace("7/3", -5), 6),
                (Gaussian("1/2", 1), 2)),
    # no continuous Gaussian: a discrete-Gaussian oracle, a near-deterministic window and a discrete Laplace
    "plain": ((DiscreteGaussian("2.5", 1), 2), (DiscreteGaussian("0.0113", 2), 1), (DiscreteLaplace("0.37", 1), 1)),
}

_CACHE: dict = {}


def _prune(acc: tuple) -> tuple:
    """The atoms of P-mass below :data:`_DROP` moved to the tail (their sum, rounded up)."""
    d, tail = acc
    with mpmath.workdps(mixed_brute.DPS):
        small = [k for k, (p, _) in d.items() if p < _DROP]
        tail += mpmath.fsum(d[k][0] for k in small) * (1 + mpmath.mpf(10) ** -60)
        return {k: v for k, v in d.items() if v[0] >= _DROP}, tail


def _pruned_joint(groups) -> tuple:
    """``mixed_brute.joint`` with the atoms of P-mass below :data:`_DROP` moved to the tail after
    every convolution (each group's power by repeated squaring)."""
    acc: tuple = ({Fraction(0): [mpmath.mpf(1), mpmath.mpf(1)]}, mpmath.mpf(0))
    for mech, count in groups:
        power, sq = None, _prune(mixed_brute.atoms_of(mech))
        while count:
            if count & 1:
                power = sq if power is None else _prune(mixed_brute.convolve(power, sq))
            count >>= 1
            if count:
                sq = _prune(mixed_brute.convolve(sq, sq))
        acc = _prune(mixed_brute.convolve(acc, power))
    return acc


def _design(name: str):
    if name not in _CACHE:
        groups = DESIGNS[name]
        finite = [g for g in groups if not isinstance(g[0], Gaussian)]
        mu = sum((m.rho * c for m, c in groups if isinstance(m, Gaussian)), Fraction(0))
        atoms = _pruned_joint(finite) if mu else mixed_brute.joint(finite)
        _CACHE[name] = (ExactAccountant(Mixture(groups)), atoms, mu)
    return _CACHE[name]


def _ref(atoms, eps: Fraction, mu: Fraction) -> tuple:
    """``(lo, hi)`` of the reference's δ(ε) (``delta_gaussian`` beside continuous Gaussians)."""
    if not mu:
        return mixed_brute.delta(atoms, eps)
    d, tail = atoms
    near, far, low = {}, mpmath.mpf(0), mpmath.mpf(0)
    with mpmath.workdps(mixed_brute.DPS):
        m = mpmath.mpf(mu.numerator) / mu.denominator
        e = mpmath.mpf(eps.numerator) / eps.denominator
        for k, pq in d.items():
            t = None if k in (mixed_brute.INF, -mixed_brute.INF) else e - mpmath.mpf(k.numerator) / k.denominator
            if t is not None and t - m > 30:
                far += pq[0] * mpmath.exp(-((t - m) ** 2) / (4 * m))  # (½erfc(z/√2) ≤ e^{−z²/2})
            elif t is not None and t < -25:  # (δ_N(t) ∈ [1 − e^t, 1])
                low += pq[0] * -mpmath.expm1(t)
                far += pq[0] * mpmath.exp(t)
            else:
                near[k] = pq
        lo, hi = mixed_brute.delta_gaussian((near, tail), eps, mu)
        rnd = 1 + mpmath.mpf(10) ** -60
        return lo + low / rnd, hi + (low + far) * rnd


def _fraction(x) -> Fraction:
    return Fraction(*map(int, mpmath.mpf(x).as_integer_ratio()))


def test_the_near_deterministic_groups_are_windowed():
    for name in DESIGNS:
        acc = _design(name)[0]
        assert "near-det-windows" in acc.method, (name, acc.method)
        # (σ² = 0.0273 and 0.0113 are windows; the wide discrete Gaussian is the oracle's)
        assert [m.sigma2 for m, _ in acc.split] == [Fraction("0.0273") if name == "example" else
                                                         Fraction("0.0113")]


@pytest.mark.parametrize("name,eps", [("example", "268"), ("example", "300"),
                                      ("plain", "0"), ("plain", "170"), ("plain", "180")])
def test_delta_contains_the_enumeration(name, eps):
    acc, atoms, mu = _design(name)
    p = acc.delta([eps])[0]
    lo, hi = _ref(atoms, Fraction(eps), mu)
    assert p.lower <= lo and hi <= p.upper, (name, eps, p.lower, p.upper, lo, hi)
    assert p.upper - p.lower <= REL * p.upper
    assert p.value == p.upper


@pytest.mark.parametrize("name,target", [("example", "1e-6"), ("example", "1e-20"), ("plain", "1e-6"),
                                         ("plain", "1e-40")])
def test_epsilon_ends_are_judged_right_by_the_enumeration(name, target):
    acc, atoms, mu = _design(name)
    p = acc.epsilon([target])[0]
    t = mpmath.mpf(target)
    assert p.upper > 0
    assert _ref(atoms, _fraction(p.lower), mu)[0] > t  # δ(ε_lo) > target
    assert _ref(atoms, _fraction(p.upper), mu)[1] <= t  # δ(ε_hi) ≤ target
    assert p.upper - p.lower <= REL * p.upper
    assert p.value == p.upper


def test_tradeoff_contains_the_neyman_pearson_beta():
    acc, atoms, _ = _design("plain")
    p = acc.tradeoff(["1e-3"])[0]
    ref = mixed_brute.beta(atoms, "1e-3")
    with mpmath.workdps(60):
        slack = atoms[1] + mpmath.mpf("1e-60")  # (the reference's dropped window tails)
        assert p.lower <= ref + slack and ref - slack <= p.upper, (p.lower, p.upper, ref)
        assert p.upper - p.lower <= REL * p.upper
        assert p.value == p.lower
