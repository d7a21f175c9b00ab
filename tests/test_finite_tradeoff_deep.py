"""β = f(α) of finite designs with near-deterministic discrete Gaussians (windows of the finite
loss), in the two shapes the third and second audits found slow (80 CPU-s) or hanging:

* ``DG(0.635, 1)×n + RR(1, k 3)×2 + approx(2, 0)`` at α = 1 − 1e-15 (β ≈ 1e-20 … 1e-44): the
  float tables are too coarse, and the 256-bit tables of a sparse grid (atoms ≪ grid points)
  were a dense ball power taking minutes;
* ``DG(0.1, −8)×n + RR(0)×m + approx(1/2, 1e-9)×4`` at α = 1e-3: β (≈ e^{−320·n}) lies far
  below the windows' deficit (≈ 1e-488), which no precision removes: refused after every
  precision (90 CPU-s); now the windows are widened to β's depth.

and, beside continuous Gaussians (the dual search), ``DG(0.1, −5)×n + DLap(1/2, −1)×m +
Gaussian(1/2, 3)×k`` at α = 1e-12 (the first audit's design 2 hung at n = 37): G = e^ε(1 − α − δ)
needs ``1 − δ`` to 1e-25 where δ's ball gives 1e-15; now 1 − δ is summed as positive terms.

All against a Neyman–Pearson enumeration written here (exact Fraction losses, P- and Q-masses
in mpmath; a discrete Gaussian's pmf over |x| ≤ R with the rest below ``TAIL``; an (ε, δ) block's
δ as an atom at L = +∞ with no Q-mass), each query under a CPU budget.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import mpmath
import pytest

from exactdp import DiscreteGaussian as G
from exactdp import ExactAccountant
from exactdp.kinds import ApproxDP, DiscreteLaplace, Gaussian, Mixture, RandomizedResponse

DPS = 60
INF = None  # the loss +∞ (P-mass δ of an (ε, δ) block, no Q-mass)
#: CPU seconds a query may take (the fixed code: ≤ 0.3 s; the old one: 10–90 s on these shapes)
BUDGET = 8.0


def _q(x: Fraction) -> mpmath.mpf:
    return mpmath.mpf(x.numerator) / x.denominator


def _dg_atoms(s2: Fraction, shift: int, nats: int) -> tuple:
    """(atoms, tail): (loss, P, Q) of N_Z(0, σ²) against N_Z(shift, σ²) for |x| ≤ R, and a bound
    on the P- and on the Q-mass left out (e^{−(R − |shift|)²/(2σ²)} < e^{−nats}, times 4)."""
    s = abs(shift)
    r = math.isqrt(int(2 * s2 * nats) + 1) + s + 2
    z = mpmath.fsum(mpmath.exp(-_q(Fraction(x * x) / (2 * s2))) for x in range(-r - 4 * s - 60, r + 4 * s + 61))
    out = []
    for x in range(-r, r + 1):
        loss = Fraction(shift * shift - 2 * x * shift) / (2 * s2)
        p = mpmath.exp(-_q(Fraction(x * x) / (2 * s2))) / z
        q = mpmath.exp(-_q(Fraction((x - shift) ** 2) / (2 * s2))) / z
        out.append((loss, p, q))
    return out, 4 * mpmath.exp(-nats)


def _rr_atoms(eps: Fraction, k: int) -> list:
    """k-ary randomized response e^ε : 1 : … : 1 (the pair of inputs, the k − 2 others)."""
    ee = mpmath.exp(_q(eps))
    den = ee + k - 1
    out = [(eps, ee / den, 1 / den), (-eps, 1 / den, ee / den)]
    return out + ([(Fraction(0), (k - 2) / den, (k - 2) / den)] if k > 2 else [])


def _approx_atoms(eps: Fraction, delta: Fraction) -> list:
    """The canonical (ε, δ) pair: P-mass δ at +∞, (1 − δ)·(e^ε, 1)/(1 + e^ε) at ±ε."""
    keep, ee = 1 - _q(delta), mpmath.exp(_q(eps))
    out = [(eps, keep * ee / (1 + ee), keep / (1 + ee)), (-eps, keep / (1 + ee), keep * ee / (1 + ee))]
    return out + ([(INF, _q(delta), mpmath.mpf(0))] if delta else [])


def _joint(groups: list) -> dict:
    acc = {Fraction(0): (mpmath.mpf(1), mpmath.mpf(1))}
    for atoms in groups:
        new: dict = {}
        for l1, (p1, q1) in acc.items():
            for l2, p2, q2 in atoms:
                key = INF if l1 is INF or l2 is INF else l1 + l2
                p0, q0 = new.get(key, (0, 0))
                new[key] = (p0 + p1 * p2, q0 + q1 * q2)
        acc = new
    return acc


def _np_beta(joint: dict, alpha: Fraction) -> mpmath.mpf:
    """Q-mass of the test accepting the largest losses (+∞ first) until their P-mass is 1 − α."""
    left = _q(1 - alpha)
    beta = mpmath.mpf(0)
    for loss in sorted(joint, key=lambda v: (v is INF, v if v is not INF else 0), reverse=True):
        p, q = joint[loss]
        if left <= 0:
            break
        take = min(mpmath.mpf(1), left / p)
        beta += take * q
        left -= take * p
    return beta


def _timed_beta(acc, alpha) -> tuple:
    t0 = time.process_time()
    got = acc.tradeoff([alpha])[0]
    cpu = time.process_time() - t0
    return got.lower, got.upper, cpu  # (rounded outward at 50 digits)


@pytest.mark.parametrize("count", [6, 9])
def test_beta_near_one_on_a_sparse_grid_against_the_enumeration(count):
    alpha = 1 - Fraction(1, 10**15)
    design = Mixture(((G("0.6350", 1), count), (RandomizedResponse(1, 3), 2), (ApproxDP(2, 0), 1)))
    acc = ExactAccountant(design)
    fin = acc.answerer.finite
    assert acc.answerer.gauss is None and not fin.sparse and 4 * fin.sparse_bound() <= fin.size  # (windows, few atoms)
    lo, hi, cpu = _timed_beta(acc, alpha)
    with mpmath.workdps(DPS):
        dg, tail = _dg_atoms(Fraction("0.6350"), 1, 400)
        joint = _joint([dg] * count + [_rr_atoms(Fraction(1), 3)] * 2 + [_approx_atoms(Fraction(2), Fraction(0))])
        ref = _np_beta(joint, alpha)
        slack = 2 * count * tail  # left-out mass (the threshold loss is > 0 here: Q ≤ P on the atoms it moves)
        assert ref > 1e6 * slack
        assert lo <= ref + slack and ref - slack <= hi, (lo, hi, ref)
        assert hi - lo <= 1e-9 * ref, (hi - lo) / ref
    assert cpu <= BUDGET, cpu


@pytest.mark.parametrize("count", [4, 6])
def test_beta_below_the_windows_deficit_against_the_enumeration(count):
    alpha = Fraction(1, 1000)
    design = Mixture(((G("0.1", -8), count), (RandomizedResponse(0), 5), (ApproxDP("1/2", "1e-9"), 4)))
    acc = ExactAccountant(design)
    fin = acc.answerer.finite
    assert acc.answerer.gauss is None
    with mpmath.workdps(DPS):
        assert fin.deficit(128).upper() > 1e10 * mpmath.exp(-320 * count)  # β is far below the default windows' deficit
    lo, hi, cpu = _timed_beta(acc, alpha)
    with mpmath.workdps(DPS):
        dg, tail = _dg_atoms(Fraction(1, 10), -8, 320 * count + 200)
        joint = _joint([dg] * count + [_approx_atoms(Fraction(1, 2), Fraction(1, 10**9))] * 4)
        ref = _np_beta(joint, alpha)
        slack = 2 * count * tail
        assert ref > 1e6 * slack
        assert lo <= ref + slack and ref - slack <= hi, (lo, hi, ref)
        assert hi - lo <= 1e-9 * ref, (hi - lo) / ref
    assert cpu <= BUDGET, cpu


def _dlap_atoms(b: Fraction, shift: int) -> list:
    """(loss, P, Q) of the discrete Laplace e^{−|y|/b} against its shift: y between 0 and the
    shift one by one, the two tails beyond (constant loss ∓|shift|/b) in closed form."""
    r = mpmath.exp(-1 / _q(b))
    c = (1 - r) / (1 + r)
    lo, hi = min(0, shift), max(0, shift)
    out = [(Fraction(abs(y - shift) - abs(y)) / b, c * r ** abs(y), c * r ** abs(y - shift)) for y in range(lo, hi + 1)]
    for y, p in ((hi + 1, c * r ** (hi + 1) / (1 - r)), (lo - 1, c * r ** (-lo + 1) / (1 - r))):
        loss = Fraction(abs(y - shift) - abs(y)) / b
        out.append((loss, p, p * mpmath.exp(-_q(loss))))
    return out


def _np_beta_beside_gaussians(joint: dict, mu: Fraction, alpha: Fraction) -> mpmath.mpf:
    """β of the loss L_fin + N(±μ, 2μ) (P: +μ, Q: −μ): the threshold τ with P[L ≤ τ] = α by
    bisection, then β = Q[L > τ] (the test accepts L > τ; no atom: no randomisation)."""
    m, sd = _q(mu), mpmath.sqrt(2 * _q(mu))
    atoms = [(_q(v), p, q) for v, (p, q) in joint.items()]

    def p_below(tau):
        return mpmath.fsum(p * mpmath.ncdf((tau - v - m) / sd) for v, p, _ in atoms)

    lo, hi = mpmath.mpf(-10**4), mpmath.mpf(10**4)  # (every loss of these designs lies inside)
    for _ in range(140):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if p_below(mid) < _q(alpha) else (lo, mid)
    return mpmath.fsum(q * mpmath.ncdf(-(lo - v + m) / sd) for v, _, q in atoms)


@pytest.mark.parametrize("counts", [(3, 2, 1), (8, 5, 2)])
def test_beta_beside_continuous_gaussians_near_alpha_zero(counts):
    n, m, k = counts
    alpha = Fraction(1, 10**12)
    design = Mixture(((G("0.1", -5), n), (DiscreteLaplace("1/2", -1), m), (Gaussian("1/2", 3), k)))
    acc = ExactAccountant(design)
    assert acc.answerer.gauss is None and acc.answerer.mu  # (windows beside continuous Gaussians: the dual)
    lo, hi, cpu = _timed_beta(acc, alpha)
    with mpmath.workdps(DPS):
        dg, tail = _dg_atoms(Fraction(1, 10), -5, 800)
        joint = _joint([dg] * n + [_dlap_atoms(Fraction(1, 2), -1)] * m)
        ref = _np_beta_beside_gaussians(joint, Fraction(9 * k), alpha)  # (ρ = 3²/(2·½) per Gaussian)
        slack = 4 * n * tail
        assert ref > 1e6 * slack
        assert lo <= ref * (1 + mpmath.mpf(10) ** -40) + slack and ref * (1 - mpmath.mpf(10) ** -40) - slack <= hi, \
            (lo, hi, ref)
        assert hi - lo <= 1e-9 * ref, (hi - lo) / ref
    assert cpu <= BUDGET, cpu
