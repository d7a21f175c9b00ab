"""β = f(α) of designs with randomized response by its noise parameter p
(:class:`~exactdp.kinds.RandomizedResponseNoise`), against an independent reference written here.

The reference is the Neyman–Pearson curve of the composed pair enumerated from the
mechanisms' *output* distributions: each randomized response's outputs by net count b
(exact Fractions, ``tests/test_rr_noise.py``'s ``_rr_outputs``), the rational-loss kinds'
outputs from ``tests/mixed_brute.py``, the joint atoms ``(loss, P, Q)`` with loss
``v + Σ b log R`` sorted in mpmath at 70 digits; the test rejecting in increasing order of the
loss gives ``β = Σ Q`` over the accepted atoms plus the split atom's share — the complement
summed directly, never ``1 − Σ``.  Beside a continuous Gaussian (loss ``N(±μ, 2μ)`` under P
and Q) the threshold c of the test is found by bisection on ``α(c) = Σ_b P[b]·Φ((c − b log R −
μ)/√(2μ))`` (or its complement for α near 1) and ``β = Σ_b Q[b]·Φ̄((c − b log R + μ)/√(2μ))``.
"""

from __future__ import annotations

from fractions import Fraction

import mixed_brute
import mpmath
import pytest
from test_rr_noise import _rr_outputs

from exactdp import DiscreteGaussian, ExactAccountant, Gaussian
from exactdp.kinds import DiscreteLaplace, Mixture, RandomizedResponse, RandomizedResponseNoise

DPS = 70
REL = 1e-9
#: the reference's relative rounding: masses convolved at 70 digits, sums of positive terms
REF_ROUND = mpmath.mpf(10) ** -64
ALPHAS = [Fraction(1, 10**100), Fraction(1, 1000), Fraction(1, 3), Fraction(1, 2), Fraction(9, 10),
          1 - Fraction(1, 10**12)]


def _m(q) -> mpmath.mpf:
    q = Fraction(q)
    return mpmath.mpf(q.numerator) / q.denominator


def ref_atoms(rr: list, rest: tuple, swap: bool = False) -> list:
    """The joint atoms ``(loss, P, Q)`` sorted by loss (``swap``: each randomized response's
    P and Q exchanged — a deliberate sign error the tests must tell apart)."""
    with mpmath.workdps(DPS):
        atoms, tail = mixed_brute.joint(rest) if rest else ({Fraction(0): [mpmath.mpf(1), mpmath.mpf(1)]},
                                                            mpmath.mpf(0))
        assert tail < mpmath.mpf(10) ** -300
        terms = [(mpmath.mpf(0), mpmath.mpf(1), mpmath.mpf(1))]
        for p, k, n in rr:
            lr = mpmath.log(_m(1 - p + p / k) / _m(p / k))
            outs = _rr_outputs(p, k, n).items()
            terms = [(la + b * lr, pa * _m(qb if swap else pb), qa * _m(pb if swap else qb))
                     for la, pa, qa in terms for b, (pb, qb) in outs]
        out = []
        for v, (pv, qv) in atoms.items():
            for la, pa, qa in terms:
                lv = v if v in (mpmath.inf, -mpmath.inf, float("inf"), float("-inf")) else _m(v) + la
                out.append((mpmath.mpf(lv), pv * pa, qv * qa))
        out.sort(key=lambda t: t[0])
        return out


def ref_beta(atoms: list, alpha: Fraction) -> tuple:
    """``(β, err)``: the Neyman–Pearson β(α) of the atoms and a bound of its rounding."""
    with mpmath.workdps(DPS):
        al, used = _m(alpha), mpmath.mpf(0)
        for i, (_, p, q) in enumerate(atoms):
            if used + p <= al:
                used += p
                continue
            frac = (al - used) / p
            b = mpmath.fsum(t[2] for t in atoms[i + 1:]) + (1 - frac) * q
            return b, REF_ROUND * (b + q / p * max(used, al))
        return mpmath.mpf(0), mpmath.mpf(0)


def _check(got, ref: mpmath.mpf, err: mpmath.mpf):
    with mpmath.workdps(DPS):
        assert got.lower <= ref + err and ref - err <= got.upper, (got, ref)  # the bracket holds the truth
        assert got.upper - got.lower <= REL * got.upper + mpmath.mpf(10) ** -4000
        assert got.value == got.lower  # the conservative side: the lower end of β


def _mix(rr, rest) -> Mixture:
    return Mixture(tuple((RandomizedResponseNoise(p, k), n) for p, k, n in rr) + tuple(rest))


CASES = [
    ([(Fraction(1, 2), 3, 2)], ()),
    ([(Fraction(1, 2**40), 2, 1)], ()),  # p → 0: R ≈ 2^41
    ([(1 - Fraction(1, 2**40), 2, 3)], ()),  # p → 1: R − 1 ≈ 2^−39, kinks 1e-12 apart
    ([(Fraction(999, 1000), 1000, 3)], ()),
    ([(Fraction(1, 2), 3, 1), (Fraction(2, 3), 2, 2)], ()),  # R = 4 and R = 2: coinciding kinks log 4 = 2 log 2
    ([(Fraction(3, 10), 3, 12)], ((DiscreteLaplace("1/2", 3), 2),)),
    ([(Fraction(1, 2), 2, 2), (Fraction(1, 4), 3, 1)], ((DiscreteLaplace(2), 1), (DiscreteGaussian(4), 1))),
    ([(Fraction(1, 7), 2, 6), (Fraction(1, 3), 4, 3)], ((DiscreteLaplace(1), 1),)),
    ([(Fraction(1, 2**40), 5, 2)], ((DiscreteLaplace(3), 1),)),
    ([(Fraction(3, 10), 3, 2)], ((DiscreteLaplace("1/3", 1), 1), (RandomizedResponse("1/1000003"), 1))),  # (3·10⁶
    # grid points, 4 atoms: held sparsely)
]


@pytest.mark.parametrize("rr,rest", CASES)
def test_tradeoff_against_neyman_pearson(rr, rest):
    atoms = ref_atoms(rr, rest)
    got = ExactAccountant(_mix(rr, rest)).tradeoff(ALPHAS)
    for a, g in zip(ALPHAS, got):
        _check(g, *ref_beta(atoms, a))


def test_tradeoff_large_k_beside_discrete_gaussians():
    rr, rest = [(Fraction(999, 1000), 1000, 20)], ((DiscreteGaussian(2), 2),)
    atoms = ref_atoms(rr, rest)
    alphas = [Fraction(1, 10**100), Fraction(1, 3), 1 - Fraction(1, 10**12)]
    for a, g in zip(alphas, ExactAccountant(_mix(rr, rest)).tradeoff(alphas)):
        _check(g, *ref_beta(atoms, a))


def test_tradeoff_beside_oracle_discrete_gaussians():
    """Discrete Gaussians too fine for exact windows (their route is the oracle of δ_G)."""
    rr, rest = [(Fraction(3, 10), 3, 2)], ((DiscreteGaussian("1/3", 1), 1), (DiscreteGaussian("1000003/1000000", 1), 1))
    atoms = ref_atoms(rr, rest)
    alphas = [Fraction(1, 10**6), Fraction(1, 10), Fraction(1, 2), 1 - Fraction(1, 10**9)]
    for a, g in zip(alphas, ExactAccountant(_mix(rr, rest)).tradeoff(alphas)):
        _check(g, *ref_beta(atoms, a))


def test_tradeoff_tells_off_by_one_and_sign_errors():
    """The brackets exclude the reference of n + 1 events, and of P and Q swapped in the
    randomized response beside a discrete Laplace (a sign error of b): the checks above can fail."""
    rr, rest = [(Fraction(3, 10), 4, 3)], ((DiscreteLaplace("5/2", 1), 2),)
    got = ExactAccountant(_mix(rr, rest)).tradeoff(ALPHAS[1:-1])
    plus = ref_atoms([(Fraction(3, 10), 4, 4)], rest)
    swapped = ref_atoms(rr, rest, swap=True)
    right = ref_atoms(rr, rest)
    for a, g in zip(ALPHAS[1:-1], got):
        _check(g, *ref_beta(right, a))
        for wrong in (plus, swapped):
            b, _ = ref_beta(wrong, a)
            assert not g.lower <= b <= g.upper


def test_tradeoff_beside_a_continuous_gaussian():
    p, k, n, sigma2 = Fraction(3, 10), 3, 5, Fraction(4)
    got = ExactAccountant(Mixture(((RandomizedResponseNoise(p, k), n), (Gaussian(sigma2), 1)))).tradeoff(ALPHAS)
    with mpmath.workdps(DPS):
        mu = _m(1 / (2 * sigma2))
        sd = mpmath.sqrt(2 * mu)
        lr = mpmath.log(_m(1 - p + p / k) / _m(p / k))
        outs = [(b, _m(pb), _m(qb)) for b, (pb, qb) in _rr_outputs(p, k, n).items()]

        def alpha_of(c, upper):  # P[L ≤ c] (upper: P[L > c], for α near 1)
            s = -1 if upper else 1
            return mpmath.fsum(pb * mpmath.ncdf(s * (c - b * lr - mu) / sd) for b, pb, _ in outs)

        for a, g in zip(ALPHAS, got):
            am, lo, hi = _m(a), mpmath.mpf(-2000), mpmath.mpf(2000)
            for _ in range(300):
                c = (lo + hi) / 2
                below = alpha_of(c, False) < am if a < Fraction(1, 2) else alpha_of(c, True) > 1 - am
                lo, hi = (c, hi) if below else (lo, c)
            beta = mpmath.fsum(qb * mpmath.ncdf(-(c - b * lr + mu) / sd) for b, _, qb in outs)
            _check(g, beta, beta * mpmath.mpf(10) ** -50)


def test_tradeoff_ends():
    """β(0) = 1 and β(1) = 0 (no infinite loss), to the results' rounding."""
    acc = ExactAccountant(Mixture(((RandomizedResponseNoise("1/2", 3), 2), (DiscreteLaplace(2), 1))))
    b0, b1 = acc.tradeoff(["0", "1"])
    assert b0.upper == 1 and 1 - b0.lower <= 1e-40 and b1.lower == b1.upper == 0


def test_tradeoff_beside_a_continuous_laplace():
    """Beside ``Laplace(2)`` (shift 1, c = 1/2: ``δ_L(t) = (1 − e^{(t − c)/2})₊`` for t ≥ 0, by
    symmetry ``1 − e^t + e^t δ_L(−t)`` below): β = sup_ε 1 − δ(ε) − e^ε α with
    ``δ(ε) = Σ_b P[b] δ_L(ε − b log R)``, maximised over ε on a grid of step 1/200 and then by
    golden section (G(ε) = g(e^ε), g concave: unimodal) in mpmath at 70 digits."""
    from exactdp.kinds import Laplace

    p, k, n = Fraction(1, 2), 3, 2
    got = ExactAccountant(Mixture(((RandomizedResponseNoise(p, k), n), (Laplace(2), 1)))).tradeoff(["1/10", "1/2"])
    with mpmath.workdps(DPS):
        outs = [(b, _m(pb)) for b, (pb, _) in _rr_outputs(p, k, n).items()]
        lr, c = mpmath.log(4), mpmath.mpf(1) / 2

        def dl(t):
            if t >= 0:
                return max(mpmath.mpf(0), 1 - mpmath.exp((t - c) / 2))
            return 1 - mpmath.exp(t) + mpmath.exp(t) * dl(-t)

        for a, g in zip((Fraction(1, 10), Fraction(1, 2)), got):
            am = _m(a)

            def gee(e, al=am):
                return 1 - mpmath.fsum(pb * dl(e - b * lr) for b, pb in outs) - mpmath.exp(e) * al

            best = max((mpmath.mpf(i) / 200 for i in range(-1200, 1200)), key=gee)
            lo, hi = best - mpmath.mpf(1) / 200, best + mpmath.mpf(1) / 200
            for _ in range(200):
                m1, m2 = lo + (hi - lo) * mpmath.mpf(0.382), lo + (hi - lo) * mpmath.mpf(0.618)
                lo, hi = (m1, hi) if gee(m1) < gee(m2) else (lo, m2)
            ref = gee((lo + hi) / 2)  # (a value of G: at most sup G, within 1e-30 of it)
            assert g.lower <= ref + mpmath.mpf(10) ** -30 and ref <= g.upper
            assert g.upper - g.lower <= REL * g.upper
