"""Designs of clumpy groups with counts (issue 33): the grouped tilted halves.

Ten σ² in [1.18, 1.28] with counts 2 were refused by every route; the tilted halves now take
each group's sum as one coordinate (:mod:`exactdp.engine.group_log_pmf`,
:class:`exactdp.engine.halves.HalvesProfile` with ``grouped=True``).  Checks, each against a
reference written here or in ``tests/harness.py`` (nothing of the engine):

* the group pmf (residue identity) against an m-fold convolution in mpmath (50 digits);
* the profile of four groups (σ² in [1.18, 1.28], counts 2–3, shifts 1–3) against a
  meet-in-the-middle enumeration in mpmath (40 digits, truncation bounded), δ(θ) down to
  1e-50 and 1 − δ(θ) near 1: contained, ≤ 1e-9 relative wide;
* the public accountant on the grouped halves (two groups, counts 2 and 3, shifts 1 and 3)
  against the exact loss distribution (harness): δ(ε) down to 1e-50, ε(δ), β(α) at α near
  0 and 1;
* the README's design (ten σ² in [1.18, 1.28] ×2, shift 1) answered, ≤ 1e-9 relative.
"""

from __future__ import annotations

import bisect
import math
from fractions import Fraction as F

import mpmath
import numpy as np
import pytest

from exactdp.engine.families import Group
from exactdp.engine.group_log_pmf import group_log_pmf
from exactdp.engine.halves import HalvesProfile, grouped_tilted_fit
from exactdp.mechanisms import Composition, DiscreteGaussian

from harness import delta_brute, epsilon_brute, tradeoff_brute

REL = 1e-9


def _sum_pmf(s2: F, m: int, depth: int = 260) -> tuple:
    """(offset, probabilities, tail bound) of the sum of m iid N_Z(0, σ²) by m-fold
    convolution in mpmath (the caller's precision): the single pmf on |j| ≤ J, normalised
    over |j| ≤ 3J, the mass of configurations with a coordinate beyond J bounded by
    ``m·2e^{−(J+1)²/(2σ²)}/(1 − e^{−(J+1)/σ²})/Z`` (a geometric tail)."""
    s = mpmath.mpf(s2.numerator) / s2.denominator
    J = int(math.ceil(math.sqrt(2 * float(s2) * depth)))
    z = 1 + 2 * mpmath.fsum(mpmath.exp(-mpmath.mpf(k * k) / (2 * s)) for k in range(1, 3 * J + 1))
    one = [mpmath.exp(-mpmath.mpf(k * k) / (2 * s)) / z for k in range(-J, J + 1)]
    out = one
    for _ in range(m - 1):
        new = [mpmath.mpf(0)] * (len(out) + len(one) - 1)
        for i, a in enumerate(out):
            for j, b in enumerate(one):
                new[i + j] += a * b
        out = new
    tail = m * 2 * mpmath.exp(-mpmath.mpf((J + 1) ** 2) / (2 * s)) / (1 - mpmath.exp(-mpmath.mpf(J + 1) / s)) / z
    return -m * J, out, tail


@pytest.mark.parametrize("s2,m", [(F("0.3"), 2), (F("1.18"), 3), (F("2.9"), 2), (F("1.25"), 5)])
def test_group_log_pmf_matches_the_convolution(s2, m):
    with mpmath.workdps(50):
        off, probs, tail = _sum_pmf(s2, m, depth=600)
        K = min(40, -off - 1)  # inside the convolution's support
        lp, err = group_log_pmf(s2, m, K)
        assert float(np.max(err)) < 1e-11
        for i, k in enumerate(range(-K, K + 1)):
            lo = mpmath.log(probs[k - off])
            hi = mpmath.log(probs[k - off] + tail)
            assert lo - err[i] <= lp[i] <= hi + err[i], (k, lp[i], lo, hi, err[i])
            # the reference is tight where the tail is negligible: the error bound must hold
            if tail < probs[k - off] * mpmath.mpf("1e-20"):
                assert abs(lp[i] - lo) <= err[i]


# ------------------------------------------------------------------ the profile, four groups
FOUR = ((F("1.18"), 1, 2), (F("1.22"), 2, 3), (F("1.25"), 3, 2), (F("1.28"), 1, 3))  # σ², shift, count


def _groups(design) -> tuple:
    return tuple(Group(F(d) / s2, s2, m) for s2, d, m in design)


def _half(design, depth: int = 260) -> tuple:
    """(sorted exact values, probabilities, truncated mass bound) of Σ w_g S_g over ``design``
    (each group's pmf to ``depth`` nats)."""
    atoms = {F(0): mpmath.mpf(1)}
    lost = mpmath.mpf(0)
    for s2, d, m in design:
        off, probs, tail = _sum_pmf(s2, m, depth)
        w = F(d) / s2
        lost += tail
        new: dict = {}
        for v, p in atoms.items():
            for i, q in enumerate(probs):
                key = v + w * (off + i)
                new[key] = new.get(key, 0) + p * q
        atoms = new
    vals = sorted(atoms)
    return vals, [atoms[v] for v in vals], lost


@pytest.fixture(scope="module")
def four_reference():
    """δ(θ) and 1 − δ(θ) of W = Σ w_g S_g by meet in the middle (40 digits): δ(θ) =
    Σ_a P(a)·Σ_{b > θ−a} P(b)(1 − e^{θ−a−b}), 1 − δ(θ) = Σ_a P(a)·(P(B ≤ θ−a) +
    Σ_{b>θ−a} P(b)e^{θ−a−b}); the truncated masses (each side's) bound the error of both."""
    with mpmath.workdps(40):
        va, pa, la = _half(FOUR[:2])
        vb, pb, lb = _half(FOUR[2:])
        n = len(vb)
        s0 = [mpmath.mpf(0)] * (n + 1)  # Σ_{j≥i} p_j and Σ_{j≥i} p_j e^{−b_j}
        s1 = [mpmath.mpf(0)] * (n + 1)
        for i in range(n - 1, -1, -1):
            s0[i] = s0[i + 1] + pb[i]
            s1[i] = s1[i + 1] + pb[i] * mpmath.exp(-mpmath.mpf(vb[i].numerator) / vb[i].denominator)
        total_b = s0[0]

        def both(theta: F) -> tuple:
            d = c = mpmath.mpf(0)
            for a, p in zip(va, pa):
                x = theta - a
                i = bisect.bisect_right(vb, x)  # b > x from index i
                ex = mpmath.exp(mpmath.mpf(x.numerator) / x.denominator)
                d += p * (s0[i] - ex * s1[i])
                c += p * ((total_b - s0[i]) + ex * s1[i])
            return d, c, la + lb

        yield both


THETAS = [F(0), F(3), F(-4), F(12), F(30), F(60), F(95)]


def test_four_group_profile_contains_the_enumeration(four_reference):
    groups = _groups(FOUR)
    assert grouped_tilted_fit(groups)
    prof = HalvesProfile(groups, grouped=True)
    th = np.array([float(t) for t in THETAS])
    lo, hi = prof.log_brackets(th, th)
    clo, chi = prof.log_complement(th, th)
    deepest = mpmath.mpf(1)
    with mpmath.workdps(40):
        for i, t in enumerate(THETAS):
            assert float(t) == th[i]  # the thresholds are exact floats
            d, c, lost = four_reference(t)
            deepest = min(deepest, d)
            # δ ∈ [d, d + lost], 1 − δ ∈ [c, c + lost]
            assert mpmath.exp(lo[i]) <= d + lost and d <= mpmath.exp(hi[i]), (t, lo[i], hi[i], d)
            assert mpmath.exp(clo[i]) <= c + lost and c <= mpmath.exp(chi[i]), (t, clo[i], chi[i], c)
            assert hi[i] - lo[i] <= REL and chi[i] - clo[i] <= REL, (t, hi[i] - lo[i], chi[i] - clo[i])
    assert deepest < mpmath.mpf("1e-50")  # the deep thresholds are reached


# ------------------------------------------------------------------ the public accountant
TWO = ((F("1.21"), 1, 2), (F("1.26"), 3, 3))  # σ², shift, count


@pytest.fixture(scope="module")
def two_accountant():
    """The public accountant with the grouped halves as its profile (the planner sends such a
    small design to the atom-table split; the grouped route is asked only beyond it)."""
    from exactdp.accounting import lattice_free
    from exactdp.accounting.accountant import ExactAccountant

    comp = Composition(tuple((DiscreteGaussian(s2, d), m) for s2, d, m in TWO))
    mp = pytest.MonkeyPatch()
    mp.setattr(lattice_free, "profile_for", lambda groups, wide=True: HalvesProfile(groups, grouped=True))
    try:
        acc = ExactAccountant(comp, method="lattice-free")
    finally:
        mp.undo()
    assert acc.method == "halves-enumeration" and acc.profile.grouped
    return acc


MECHS = [(s2, d) for s2, d, m in TWO for _ in range(m)]


def _rel(lo, hi) -> float:
    return float((hi - lo) / hi) if hi > 0 else 0.0


def test_accountant_delta_and_epsilon_contain_the_exact_values(two_accountant):
    eps = [F(0), F(2), F(9, 2), F(20), F(45), F(85)]
    got = two_accountant.delta(eps)
    smallest = 1.0
    for e, b in zip(eps, got):
        ref = delta_brute(MECHS, e)
        assert b.lower <= ref <= b.upper, (e, b.lower, ref, b.upper)
        assert _rel(b.lower, b.upper) <= REL
        smallest = min(smallest, float(ref))
    assert smallest < 1e-50
    for d in ("1e-2", "1e-8", "1e-30"):
        b = two_accountant.epsilon([d])[0]
        ref = epsilon_brute(MECHS, F(d))
        assert b.lower <= ref <= b.upper, (d, b.lower, ref, b.upper)
        assert _rel(b.lower, b.upper) <= REL


def test_accountant_tradeoff_contains_the_exact_curve(two_accountant):
    alphas = ["1e-12", "0.3", "0.999999"]
    got = two_accountant.tradeoff(alphas)
    for a, b in zip(alphas, got):
        ref = tradeoff_brute(MECHS, F(a))
        assert b.lower <= ref <= b.upper, (a, b.lower, ref, b.upper)
        assert _rel(b.lower, b.upper) <= REL


# ------------------------------------------------------------------ the README's design
def test_readme_design_is_answered_within_the_promised_width():
    from exactdp.accounting.accountant import ExactAccountant

    s2s = ["1.21", "1.28", "1.20", "1.23", "1.25", "1.27", "1.19", "1.24", "1.26", "1.18"]
    acc = ExactAccountant(Composition(tuple((DiscreteGaussian(s, 1), 2) for s in s2s)))
    assert acc.method == "halves-enumeration"
    d = acc.delta(["1", "25"])
    e = acc.epsilon(["1e-6"])
    b = acc.tradeoff(["0.5"])
    for x in (*d, *e, *b):
        assert 0 < x.lower <= x.upper and _rel(x.lower, x.upper) <= REL
    # monotone and inside (0, 1): δ(1) > δ(25) > 0, the zCDP bound caps ε(1e-6)
    assert d[0].lower > d[1].upper
    rho = float(acc.rho)
    assert float(e[0].upper) <= rho + 2 * math.sqrt(rho * math.log(1e6))
