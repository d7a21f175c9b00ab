"""β(α) of near-deterministic designs (σ² ≈ 0.001–0.004, shifts 1–3) against brute force.

The loss is a few atoms far apart (the main one, at ℓ = ρ ≈ 10³, of mass ≈ 1); β ≈ e^{−ρ}
sits on a kink of the trade-off, and for α below the lowest atoms' mass (e^{−125} …
e^{−250}) on other kinks.  The reference enumerates the joint outputs y ∈ ℤ^k of both
hypotheses, P = ⊗ N_Z(0, σ_j²) and Q = ⊗ N_Z(s_j, σ_j²), on a box |y_j|, |y_j − s_j| ≤ K
(the mass left out is below e^{−K²/(2σ²_max)} ≈ e^{−2000}, far below every β·1e-12
tested), sorts them by the exact rational loss ℓ(y) = log P(y)/Q(y) and applies the
Neyman–Pearson lemma with randomisation on the boundary outcome: β(α) is the Q-mass of
the outcomes accepted, summed from the accepted end (no cancellation), at 60 digits.
Nothing of exactdp's engine is used.
"""

from __future__ import annotations

import itertools
from fractions import Fraction as F

import mpmath
import pytest

from exactdp.accounting.accountant import ExactAccountant
from exactdp.mechanisms import Composition, DiscreteGaussian

#: the box's half-width beyond each hypothesis's centre
K = 4
DPS = 60
#: the designs: [(σ², shift)], count 1 each
DESIGNS = {
    "three": [(F(2, 1000), 1), (F(3, 1000), 2), (F(35, 10000), 3)],
    "four": [(F(1303, 10**6), 3), (F(2497, 10**6), 1), (F(3881, 10**6), 2), (F(1000, 10**6), 1)],
}
ALPHAS = ["1e-100", "1e-70", "1e-6", "0.01", "0.5", "0.9", "0.999999", "0.999999999999"]
#: (design, α) whose bracket may contain the reference without being narrow: none (the "three"
#: design's α = 1e-70 and 1e-100, whose kink sits 857 nats left of ρ, beyond 12 sd of R, were
#: until the conditioned profile kept the enumerated rest's atom sums there)
KNOWN_WIDE: set = set()


def _brute_beta(design, alpha: F):
    """β(α) = T(P, Q)(α) by exact enumeration and the Neyman–Pearson lemma (module docstring)."""
    with mpmath.workdps(DPS):
        axes = []
        for s2, s in design:
            two_s2 = 2 * mpmath.mpf(s2.numerator) / s2.denominator
            z = mpmath.fsum(mpmath.exp(-mpmath.mpf(k) ** 2 / two_s2) for k in range(-40, 41))
            ys = range(min(0, s) - K, max(0, s) + K + 1)
            axes.append([(y, F(s * s - 2 * s * y) / (2 * s2), mpmath.exp(-mpmath.mpf(y) ** 2 / two_s2) / z,
                          mpmath.exp(-mpmath.mpf(y - s) ** 2 / two_s2) / z) for y in ys])
        outcomes = []
        for combo in itertools.product(*axes):
            loss = sum((c[1] for c in combo), F(0))
            p = mpmath.fprod(c[2] for c in combo)
            q = mpmath.fprod(c[3] for c in combo)
            outcomes.append((loss, p, q))
        outcomes.sort(key=lambda o: o[0])  # small loss: evidence for Q, rejected first
        a = mpmath.mpf(alpha.numerator) / alpha.denominator
        # suffix sums of Q (the accepted outcomes' mass, summed from the accepted end)
        suffix = [mpmath.mpf(0)] * (len(outcomes) + 1)
        for i in range(len(outcomes) - 1, -1, -1):
            suffix[i] = suffix[i + 1] + outcomes[i][2]
        used = mpmath.mpf(0)
        for i, (_, p, q) in enumerate(outcomes):
            if used + p >= a:
                t = (a - used) / p  # the boundary outcome rejected with probability t
                return suffix[i + 1] + q * (1 - t)
            used += p
        return mpmath.mpf(0)


def _composition(design) -> Composition:
    return Composition(tuple((DiscreteGaussian(s2, s), 1) for s2, s in design))


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_near_deterministic_tradeoff_against_brute_force(name):
    design = DESIGNS[name]
    acc = ExactAccountant(_composition(design), method="lattice-free")
    assert acc.method == "atom-sum"
    points = acc.tradeoff(ALPHAS)
    for a, pt in zip(ALPHAS, points):
        ref = _brute_beta(design, F(a))
        with mpmath.workdps(DPS):
            slack = ref * mpmath.mpf(10) ** -30  # the reference's truncation and rounding
            assert pt.lower - slack <= ref <= pt.upper + slack, (name, a, pt.lower, ref, pt.upper)
            if (name, a) not in KNOWN_WIDE:
                assert pt.upper - pt.lower <= mpmath.mpf("1e-9") * pt.upper, (name, a, pt.lower, pt.upper)


def test_thirty_near_deterministic_groups_on_the_main_kink():
    """The bench's design (30 σ² = (1000 + 97j mod 3000)/10⁶, shifts 1–3, ρ ≈ 32,641, β ≈
    1e-14176).  For α in [1e-6, 1 − 1e-12] the Neyman–Pearson boundary is the outcome y = 0
    (loss exactly ρ, P-mass P₀ ≥ 1 − η): with the outcomes of loss below ρ rejected and those
    above accepted, β = Q(ℓ > ρ) + e^{−ρ}(1 − α − P(ℓ > ρ)), and ``Q(ℓ > ρ) ≤ e^{−ρ}P(ℓ > ρ)``,
    so ``|β − e^{−ρ}(1 − α)| ≤ e^{−ρ}η`` with η = Σ_j P(y_j ≠ 0) ≤ Σ_j 2e^{−1/(2σ_j²)}/(1 −
    e^{−3/(2σ_j²)}) < 1e-52 (σ_j² ≤ 0.004)."""
    design = [(F(1000 + (97 * j) % 3000, 10**6), 1 + j % 3) for j in range(30)]
    acc = ExactAccountant(_composition(design))
    alphas = ["1e-6", "0.01", "0.5", "0.9", "0.999999", "0.999999999999"]
    points = acc.tradeoff(alphas)
    with mpmath.workdps(DPS):
        rho = sum((F(s * s) / (2 * s2) for s2, s in design), F(0))
        base = mpmath.exp(-mpmath.mpf(rho.numerator) / rho.denominator)
        eta = mpmath.fsum(2 * mpmath.exp(-1 / (2 * mpmath.mpf(s2.numerator) / s2.denominator))
                          / (1 - mpmath.exp(-3 / (2 * mpmath.mpf(s2.numerator) / s2.denominator)))
                          for s2, _ in design)
        assert eta < mpmath.mpf("1e-52")
        for a, pt in zip(alphas, points):
            am = mpmath.mpf(F(a).numerator) / F(a).denominator
            ref_lo, ref_hi = base * (1 - am - eta), base * (1 - am + eta)
            assert pt.lower <= ref_hi and ref_lo <= pt.upper, (a, pt.lower, pt.upper)
            assert pt.upper - pt.lower <= mpmath.mpf("1e-9") * pt.upper, (a, pt.lower, pt.upper)
