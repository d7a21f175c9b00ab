"""What a guarantee means: the attacker, likelihood-ratio and tail bounds against brute force.

References written here, nothing of the engine: the discrete Gaussian N_Z(0, σ²) with shift
1 enumerated in mpmath at 50 digits (its privacy loss (2x − 1)/(2σ²) is monotone, so its
trade-off vertices and its best attacker are sums over atoms), and the closed form of the
canonical (ε, δ) pair's total variation.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from exactdp.numerics.errors import InputError
from exactdp.report.meaning import meaning_section
from exactdp.risk.guarantee import (
    bayes_success_bound,
    bayes_success_from_vertices,
    exp_upper,
    meaning,
    tail_probability,
)


def _dg(sigma2, lim=None):
    """Atoms x and probabilities of N_Z(0, σ²) over |x| ≤ lim (50 digits)."""
    with mpmath.workdps(50):
        s2 = mpmath.mpf(sigma2.numerator) / sigma2.denominator
        lim = lim or int(40 * math.sqrt(float(sigma2))) + 40
        xs = list(range(-lim, lim + 1))
        w = [mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * s2)) for x in xs]
        z = mpmath.fsum(w)
        return xs, [v / z for v in w]


def _vertices(sigma2):
    """Exact trade-off vertices of P = X, Q = X + 1: reject P when x ≥ k."""
    xs, ps = _dg(sigma2)
    pr = dict(zip(xs, ps))
    with mpmath.workdps(50):
        alphas, betas = [], []
        upper, lower = mpmath.fsum(ps), mpmath.mpf(0)  # P(X ≥ k), P(X ≤ k − 2)
        for k in range(xs[0], xs[-1] + 2):
            alphas.append(upper)
            betas.append(lower)
            upper -= pr[k] if k in pr else 0
            lower += pr.get(k - 1, 0)
        return alphas, betas


def _brute_success(sigma2, p):
    """max over tests of p(1 − α) + (1 − p)(1 − β) = Σ_x max(p·P(x), (1 − p)·Q(x)), both ways."""
    xs, ps = _dg(sigma2)
    pr = dict(zip(xs, ps))
    with mpmath.workdps(50):
        p = mpmath.mpf(p.numerator) / p.denominator
        zero = mpmath.mpf(0)
        one = mpmath.fsum(max(p * pr.get(x, zero), (1 - p) * pr.get(x - 1, zero)) for x in range(xs[0], xs[-1] + 2))
        two = mpmath.fsum(max((1 - p) * pr.get(x, zero), p * pr.get(x - 1, zero)) for x in range(xs[0], xs[-1] + 2))
        return max(one, two)


@pytest.mark.parametrize("sigma2", [Fraction(1, 1000), Fraction(2), Fraction(100)])
@pytest.mark.parametrize("prior", [Fraction(1, 2), Fraction(1, 10), Fraction(1, 1000)])
def test_attacker_bound_from_vertices_contains_brute_force(sigma2, prior):
    alphas, betas = _vertices(sigma2)
    lo = lambda v: [np.nextafter(float(x), -np.inf) for x in v]  # noqa: E731
    bound = bayes_success_from_vertices(lo(alphas), lo(betas), float(prior))
    exact = _brute_success(sigma2, prior)
    assert bound >= exact
    # the slack is one vertex step: the largest atom of the noise
    step = max(_dg(sigma2)[1])
    assert bound <= exact + step + 1e-12


def test_attacker_bound_from_thinned_vertices_is_still_a_bound():
    alphas, betas = _vertices(Fraction(400))
    keep = slice(None, None, 7)
    lo = lambda v: [np.nextafter(float(x), -np.inf) for x in v]  # noqa: E731
    for prior in (Fraction(1, 2), Fraction(1, 100)):
        assert bayes_success_from_vertices(lo(alphas[keep]), lo(betas[keep]), float(prior)) >= \
            _brute_success(Fraction(400), prior)


@pytest.mark.parametrize("eps, delta", [("0", "0"), ("1", "1e-10"), ("24.46", "1e-10"), ("1e-6", "1e-600"),
                                        ("700", "0"), ("3", "0.5")])
def test_attacker_bound_of_one_pair_is_the_canonical_pairs_total_variation(eps, delta):
    # the (ε, δ) trade-off's best attacker at p = 1/2: (1 + TV)/2, TV = δ + (1 − δ)(e^ε − 1)/(e^ε + 1)
    e, d = Fraction(eps), Fraction(delta)
    with mpmath.workdps(80):
        big = mpmath.exp(mpmath.mpf(e.numerator) / e.denominator)
        dd = mpmath.mpf(d.numerator) / d.denominator
        tv = dd + (1 - dd) * (big - 1) / (big + 1)
        exact = (1 + tv) / 2
        got = bayes_success_bound([(eps, delta)], "1/2")
        assert got >= exact - mpmath.mpf(10) ** -70
        assert got <= exact + mpmath.mpf(10) ** -40


def test_more_profile_points_only_tighten_and_stay_above_the_true_curve():
    # points of the exact profile of N_Z(0, 100), shift 1, by enumeration: δ(ε) = Σ (P − e^ε Q)₊
    xs, ps = _dg(Fraction(100))
    pr = dict(zip(xs, ps))
    pts = []
    with mpmath.workdps(50):
        for eps in ("0", "1/10", "1/4", "1/2", "1"):
            ee = mpmath.exp(mpmath.mpf(Fraction(eps).numerator) / Fraction(eps).denominator)
            dl = mpmath.fsum(max(pr.get(x, 0) - ee * pr.get(x - 1, 0), 0) for x in range(xs[0], xs[-1] + 2))
            pts.append((eps, Fraction(mpmath.nstr(dl * (1 + mpmath.mpf(10) ** -30), 40))))
    exact = _brute_success(Fraction(100), Fraction(1, 2))
    one = bayes_success_bound(pts[:1], "1/2")
    all_ = bayes_success_bound(pts, "1/2")
    assert all_ <= one and all_ >= exact
    assert abs(float(one) - float(exact)) < 1e-25  # ε = 0 alone: δ(0) is the total variation


def test_tail_reading_bounds_the_privacy_loss_tail():
    xs, ps = _dg(Fraction(2))
    pr = dict(zip(xs, ps))
    with mpmath.workdps(50):
        for eps in (Fraction(1, 2), Fraction(2)):
            ee = mpmath.exp(mpmath.mpf(eps.numerator) / eps.denominator)
            dl = mpmath.fsum(max(pr.get(x, 0) - ee * pr.get(x - 1, 0), 0) for x in range(xs[0], xs[-1] + 2))
            dfrac = Fraction(mpmath.nstr(dl * (1 + mpmath.mpf(10) ** -30), 40))
            for t in (Fraction(1, 10), Fraction(1)):
                # L(x) = (2x − 1)/(2σ²) = (2x − 1)/4
                tail = mpmath.fsum(pr[x] for x in xs if Fraction(2 * x - 1, 4) > eps + t)
                assert tail <= tail_probability(eps, dfrac, t)


def test_exp_upper_is_above_e_to_the_x():
    for x in (Fraction(0), Fraction(1, 3), Fraction(-700), Fraction(24456, 1000), Fraction(10**4)):
        with mpmath.workdps(300):
            assert exp_upper(x) >= mpmath.exp(mpmath.mpf(x.numerator) / x.denominator)
            assert exp_upper(x) <= mpmath.exp(mpmath.mpf(x.numerator) / x.denominator) * (1 + mpmath.mpf(2) ** -140)


def test_meaning_refuses_bad_input_and_renders():
    with pytest.raises(InputError, match="epsilon"):
        meaning("-1", "1e-10")
    with pytest.raises(InputError, match="prior"):
        bayes_success_bound([("1", "0")], "3/2")
    with pytest.raises(InputError, match="t"):
        meaning("1", "0", t="0")
    sec = meaning_section("24.4565144575", "1e-10", quoted=("26.3405888528", "1e-10"))
    assert sec.title == "What this guarantee means" and len(sec.rows) == 5
    assert sec.rows[1][0] == "1/2" and sec.rows[1][1] == "50.00 %"
    assert "e^ε ≤ 4.182e10" in sec.paragraphs[0]
