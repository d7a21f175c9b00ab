"""β = f(α) for α close to 1 (1 − α = 1e-9, 1e-15, 1e-40 as exact rationals) on the mixed route
(discrete Gaussians as the oracle beside discrete Laplaces; (ε, δ) blocks) and the lattice-free
route, against a Neyman–Pearson enumeration written here: each group's atoms (loss as an exact
Fraction, P- and Q-masses in mpmath at 80 digits; a discrete Gaussian's pmf summed over
|x| ≤ R with the rest below 1e-150, a discrete Laplace's two constant-loss tails in closed form),
the joint loss by exact convolution on the Fraction losses, then the test that accepts the
largest losses until their P-mass is 1 − α (the last atom randomised): β its Q-mass.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest

from exactdp import DiscreteGaussian as G
from exactdp import ExactAccountant
from exactdp.kinds import ApproxDP, DiscreteLaplace, Mixture
from exactdp.mechanisms import Composition

DPS = 80
TAIL = mpmath.mpf(10) ** -140  # above the P- and Q-mass a discrete Gaussian's |x| ≤ R leaves out
NEAR_ONE = [1 - Fraction(1, 10**9), 1 - Fraction(1, 10**15), 1 - Fraction(1, 10**40)]


def _q(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _dg_atoms(s2: Fraction, shift: int) -> list:
    """(loss, P, Q) of N_Z(0, σ²) against N_Z(shift, σ²), |x| ≤ R with e^{−(R−|shift|)²/(2σ²)} < 1e-150."""
    r = int(math.isqrt(int(2 * s2 * 360) + 1)) + abs(shift) + 2
    w = [mpmath.exp(-_q(Fraction(x * x) / (2 * s2))) for x in range(-r - abs(shift), r + abs(shift) + 1)]
    z = mpmath.fsum(w)
    out = []
    for x in range(-r, r + 1):
        loss = Fraction(shift * shift - 2 * x * shift) / (2 * s2)
        p = mpmath.exp(-_q(Fraction(x * x) / (2 * s2))) / z
        q = mpmath.exp(-_q(Fraction((x - shift) ** 2) / (2 * s2))) / z
        out.append((loss, p, q))
    return out


def _dlap_atoms(b: Fraction, shift: int) -> list:
    """(loss, P, Q) of the discrete Laplace e^{−|y|/b} against its shift: y between 0 and the
    shift one by one, the two tails beyond (constant loss ∓|shift|/b) in closed form."""
    r = mpmath.exp(-1 / _q(b))
    c = (1 - r) / (1 + r)
    lo, hi = min(0, shift), max(0, shift)
    out = []
    for y in range(lo, hi + 1):
        loss = Fraction(abs(y - shift) - abs(y)) / b
        out.append((loss, c * r ** abs(y), c * r ** abs(y - shift)))
    tail_hi = c * r ** (hi + 1) / (1 - r)  # P[y > hi]; Q[y > hi] = e^{−loss} of it
    tail_lo = c * r ** (-lo + 1) / (1 - r)
    for loss, p in ((Fraction(abs(hi + 1 - shift) - abs(hi + 1)) / b, tail_hi),
                    (Fraction(abs(lo - 1 - shift) - abs(lo - 1)) / b, tail_lo)):
        out.append((loss, p, p * mpmath.exp(-_q(loss))))
    return out


def _joint(groups: list) -> dict:
    acc = {Fraction(0): (mpmath.mpf(1), mpmath.mpf(1))}
    for atoms in groups:
        new: dict = {}
        for l1, (p1, q1) in acc.items():
            for l2, p2, q2 in atoms:
                p0, q0 = new.get(l1 + l2, (0, 0))
                new[l1 + l2] = (p0 + p1 * p2, q0 + q1 * q2)
        acc = new
    return acc


def _np_beta(joint: dict, alpha: Fraction) -> mpmath.mpf:
    """Q-mass of the test accepting the largest losses until their P-mass is 1 − α."""
    left = _q(1 - alpha)
    beta = mpmath.mpf(0)
    for loss in sorted(joint, reverse=True):
        p, q = joint[loss]
        if left <= 0:
            break
        take = min(mpmath.mpf(1), left / p)
        beta += take * q
        left -= take * p
    return beta


@pytest.fixture(scope="module")
def mixed20():
    """A discrete Gaussian beside two discrete Laplaces; the Gaussian's grid 100/(46103·37) makes
    windows too fine: the mixed route asks the Gaussian oracle (the dual search)."""
    design = Mixture(((G("4.6103", 1), 1), (DiscreteLaplace("0.37", -2), 1), (DiscreteLaplace("1/2", 3), 1)))
    with mpmath.workdps(DPS):
        joint = _joint([_dg_atoms(Fraction("4.6103"), 1), _dlap_atoms(Fraction("0.37"), -2),
                        _dlap_atoms(Fraction(1, 2), 3)])
    return ExactAccountant(design), joint


@pytest.mark.parametrize("alpha", NEAR_ONE)
def test_mixed_beta_near_one_against_the_enumeration(mixed20, alpha):
    acc, joint = mixed20
    assert acc.answerer.gauss is not None  # (the oracle, not windows: the dual search is exercised)
    got = acc.tradeoff([alpha])[0]
    with mpmath.workdps(DPS):
        ref = _np_beta(joint, alpha)
        lo, hi = got.estimate - got.error_bound, got.estimate + got.error_bound
        assert lo <= ref + TAIL and ref - TAIL <= hi, (alpha, lo, hi, ref)
        assert hi - lo <= 1e-9 * ref, (hi - lo) / ref
        assert ref > 10 * TAIL


def test_beta_is_zero_where_the_infinite_atom_holds_one_minus_alpha():
    """With (ε, δ) blocks P[L = +∞] = 1 − Π(1 − δ)^n, where Q has no mass: β(α) = 0 exactly for
    1 − α ≤ that, and tiny but positive just beyond it."""
    delta = Fraction(1, 10**5)
    design = Mixture(((G("4.6103", 1), 1), (ApproxDP("1/2", delta), 1), (DiscreteLaplace("0.37", -2), 1)))
    acc = ExactAccountant(design)
    for a in (1 - Fraction(1, 10**9), 1 - delta, 1 - Fraction(1, 10**40)):
        got = acc.tradeoff([a])[0]
        assert got.estimate == 0 and got.error_bound == 0
    got = acc.tradeoff([1 - 2 * delta])[0]
    assert got.estimate - got.error_bound > 0


@pytest.mark.parametrize("alpha", NEAR_ONE)
def test_lattice_free_beta_near_one_against_the_enumeration(alpha):
    comp = Composition(((G("4.610", 1), 1), (G("1.313", -6), 1)))
    acc = ExactAccountant(comp, method="lattice-free")
    got = acc.tradeoff([alpha])[0]
    with mpmath.workdps(DPS):
        ref = _np_beta(_joint([_dg_atoms(Fraction("4.610"), 1), _dg_atoms(Fraction("1.313"), -6)]), alpha)
        lo, hi = got.estimate - got.error_bound, got.estimate + got.error_bound
        assert lo <= ref + TAIL and ref - TAIL <= hi, (alpha, lo, hi, ref)
        assert hi - lo <= 1e-9 * ref
        assert ref > 10 * TAIL


def test_a_refusal_prints_alpha_exactly():
    from exactdp.numerics.exact import alpha_display

    assert alpha_display(1 - Fraction(1, 10**40)) == "1 − 1/" + "1" + "0" * 40
    assert alpha_display(Fraction(999999999, 10**9)) == "999999999/1000000000"
    assert alpha_display(Fraction(1, 3)) == "1/3"
