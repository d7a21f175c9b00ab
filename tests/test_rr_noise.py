"""Randomized response by its noise parameter p (dp_accounting's ``RandomizedResponseDpEvent``):
δ(ε) and ε(δ) against an independent reference written here.

The reference enumerates the mechanism from its *output* distributions: under P (true bucket
0) bucket 0 comes out with ``q1 = 1 − p + p/k``, every other bucket with ``q2 = p/k``; under Q
(true bucket 1) buckets 0 and 1 swap.  The loss of an output is ``b·log R`` with b = +1 (bucket
0), −1 (bucket 1), 0 (others), ``R = q1/q2``; n events are convolved exactly (Fractions, keyed
by b), beside the rational-loss kinds of ``tests/mixed_brute.py``, and
``δ(ε) = Σ (P − e^ε Q)₊`` over the joint atoms in mpmath at 70 digits.  One event also in closed
form: for ε ≥ 0, ``δ(ε) = (q1 − e^ε q2)₊ + q0(1 − e^ε)₊ + (q2 − e^ε q1)₊ = (q1 − e^ε q2)₊``.
"""

from __future__ import annotations

from fractions import Fraction

import mixed_brute
import mpmath
import pytest

from exactdp import DiscreteGaussian, ExactAccountant, Gaussian
from exactdp.kinds import DiscreteLaplace, Mixture, RandomizedResponseNoise
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import InputError

DPS = 70
REL = 1e-9


def _m(q) -> mpmath.mpf:
    q = Fraction(q)
    return mpmath.mpf(q.numerator) / q.denominator


def _q(x: mpmath.mpf) -> Fraction:
    return Fraction(*map(int, x.as_integer_ratio()))


def _rr_outputs(p: Fraction, k: int, n: int) -> dict:
    """``{b: [P, Q]}`` (exact Fractions) of n events, from the outputs' P and Q."""
    q1, q2 = 1 - p + p / k, p / k
    one: dict = {}
    for j in range(k):
        pj = q1 if j == 0 else q2
        qj = q1 if j == 1 else q2
        b = 1 if j == 0 else -1 if j == 1 else 0
        got = one.setdefault(b, [Fraction(0), Fraction(0)])
        got[0] += pj
        got[1] += qj
    acc = {0: [Fraction(1), Fraction(1)]}
    for _ in range(n):
        new: dict = {}
        for b, (pa, qa) in acc.items():
            for c, (pb, qb) in one.items():
                got = new.setdefault(b + c, [Fraction(0), Fraction(0)])
                got[0] += pa * pb
                got[1] += qa * qb
        acc = new
    return acc


def ref_delta(rr: list, rest: tuple, eps) -> tuple:
    """``(lo, hi)`` of δ(ε) for the ``(p, k, n)`` groups ``rr`` beside the rational ``rest``."""
    with mpmath.workdps(DPS):
        atoms, tail = mixed_brute.joint(rest) if rest else ({Fraction(0): [mpmath.mpf(1), mpmath.mpf(1)]},
                                                            mpmath.mpf(0))
        e = _m(eps)
        terms = [(mpmath.mpf(1), mpmath.mpf(1))]  # (P, Q) of the joint atoms (b per group: distinct losses)
        for p, k, n in rr:
            terms = [(pa * _m(pb), qa * _m(qb)) for pa, qa in terms for pb, qb in _rr_outputs(p, k, n).values()]
        s = mpmath.mpf(0)
        for v, (pv, qv) in atoms.items():
            if v == mpmath.inf or v == float("inf"):
                s += pv
                continue
            if v == -mpmath.inf or v == float("-inf"):
                continue
            for pa, qa in terms:
                d = pv * pa - mpmath.exp(e) * qv * qa
                if d > 0:
                    s += d
        return s, s + tail


def _check(point, lo, hi):
    got_lo, got_hi = point.estimate - point.error_bound, point.estimate + point.error_bound
    assert got_hi >= lo and got_lo <= hi, (point, lo, hi)  # the bracket holds the reference
    assert got_hi - got_lo <= REL * hi + 1e-320
    assert got_hi >= hi * (1 - 1e-15)  # the conservative side is at or above the exact value


P_VALUES = [Fraction(1, 2), Fraction(0.3), Fraction(1, 2**40), 1 - Fraction(1, 2**40), Fraction(0.999)]


@pytest.mark.parametrize("k", [2, 3, 5, 10])
@pytest.mark.parametrize("p", P_VALUES)
def test_one_event_closed_form(p, k):
    acc = ExactAccountant(Mixture(((RandomizedResponseNoise(p, k), 1),)))
    with mpmath.workdps(DPS):
        q1, q2 = _m(1 - p + p / k), _m(p / k)
        lr = mpmath.log(q1 / q2)
        epss = [Fraction(0), Fraction(1, 10**6), Fraction(float(lr / 3)), Fraction(float(lr * 0.999))]
    for eps, got in zip(epss, acc.delta(epss)):
        with mpmath.workdps(DPS):
            ref = max(mpmath.mpf(0), q1 - mpmath.exp(_m(eps)) * q2)
        _check(got, ref, ref)
        lo, hi = ref_delta([(p, k, 1)], (), eps)  # (the enumeration agrees with the closed form)
        assert abs(lo - ref) <= mpmath.mpf(10) ** -60
    with mpmath.workdps(DPS):
        beyond = Fraction(float(lr * 1.001)) + Fraction(1, 10**9)
    assert acc.delta([beyond])[0].estimate == 0  # pure ε-DP with ε = log R


@pytest.mark.parametrize("p,k,n,epss", [
    (Fraction(0.3), 3, 7, ["0", "1/2", "2", "5", "9"]),
    (Fraction(1, 2**40), 2, 4, ["0", "3", "40", "80"]),
    (1 - Fraction(1, 2**30), 10, 30, ["0", "1e-9", "1e-8"]),  # R → 1: tiny losses
])
def test_composed_against_enumeration(p, k, n, epss):
    acc = ExactAccountant(Mixture(((RandomizedResponseNoise(p, k), n),)))
    for eps, got in zip(epss, acc.delta(epss)):
        _check(got, *ref_delta([(p, k, n)], (), Fraction(eps)))


def test_deep_delta_and_epsilon():
    p, k, n = Fraction(999, 1000), 1000, 115  # P[b = n] = q1^n ≈ 1e-310
    acc = ExactAccountant(Mixture(((RandomizedResponseNoise(p, k), n),)))
    with mpmath.workdps(DPS):
        lr = mpmath.log(_m(1 - p + p / k) / _m(p / k))
        eps = Fraction(float((n - mpmath.mpf(1) / 2) * lr))
    lo, hi = ref_delta([(p, k, n)], (), eps)
    assert hi < 1e-300
    _check(acc.delta([eps])[0], lo, hi)
    target = Fraction(1, 10**300)
    got = acc.epsilon([target])[0]
    assert got.upper - got.lower <= REL * got.upper
    assert ref_delta([(p, k, n)], (), _q(got.upper))[1] <= _m(target)  # δ(upper) ≤ target: ε(δ) ≤ upper
    assert ref_delta([(p, k, n)], (), _q(got.lower))[0] > _m(target)


MIXES = [
    ([(Fraction(0.3), 4, 3)], ((DiscreteLaplace("5/2", 1), 2),)),
    ([(Fraction(1, 2), 2, 2), (Fraction(0.25), 3, 1)], ((DiscreteLaplace(2), 1), (DiscreteGaussian(4), 1))),
]


@pytest.mark.parametrize("rr,rest", MIXES)
def test_beside_discrete_laplace_and_gaussian(rr, rest):
    mix = Mixture(tuple((RandomizedResponseNoise(p, k), n) for p, k, n in rr) + rest)
    acc = ExactAccountant(mix)
    epss = [Fraction(0), Fraction(1, 2), Fraction(2), Fraction(5)]
    for eps, got in zip(epss, acc.delta(epss)):
        _check(got, *ref_delta(rr, rest, eps))
    for target in (Fraction(1, 10**3), Fraction(1, 10**8)):
        got = acc.epsilon([target])[0]
        assert got.upper - got.lower <= REL * got.upper
        assert ref_delta(rr, rest, _q(got.upper))[1] <= _m(target)
        assert ref_delta(rr, rest, _q(got.lower))[0] > _m(target)


def test_refusals():
    with pytest.raises(InputError, match="p = 0"):
        RandomizedResponseNoise(0, 2)
    with pytest.raises(InputError):
        RandomizedResponseNoise(0.5, 2)  # (a binary float where an exact value is meant)
    from exactdp.certify.kind_atoms import group_atoms

    with pytest.raises(UncertifiedError, match="no independent certificate"):  # (--certify: exit 3)
        group_atoms(RandomizedResponseNoise("1/2", 3), 1, 40.0)


#: discrete Gaussians whose common loss grid (steps 3 and 1000000/1000003) is too fine for exact
#: windows: their own route answers δ_G as the oracle
ORACLE_DG = ((DiscreteGaussian("1/3", 1), 1), (DiscreteGaussian("1000003/1000000", 1), 1))


def test_beside_oracle_discrete_gaussians():
    rr = [(Fraction(3, 10), 3, 2)]
    acc = ExactAccountant(Mixture(((RandomizedResponseNoise(Fraction(3, 10), 3), 2),) + ORACLE_DG))
    assert acc.diagnostics().method.startswith("finite-loss+rr-trinomial+lattice")  # (the oracle answers)
    epss = [Fraction(0), Fraction(1, 2), Fraction(5), Fraction(9)]
    for eps, got in zip(epss, acc.delta(epss)):
        _check(got, *ref_delta(rr, ORACLE_DG, eps))
    target = Fraction(1, 10**6)
    got = acc.epsilon([target])[0]
    assert got.upper - got.lower <= REL * got.upper
    assert ref_delta(rr, ORACLE_DG, _q(got.upper))[1] <= _m(target)
    assert ref_delta(rr, ORACLE_DG, _q(got.lower))[0] > _m(target)


def test_beside_a_continuous_gaussian():
    """δ = Σ_b P[b]·δ_N(ε − b log R) with the Gaussian's loss N(μ, 2μ) (μ = 1/(2σ²)) in its
    closed form ``½erfc((t − μ)/(2√μ)) − ½e^t erfc((t + μ)/(2√μ))``, P[b] from the outputs."""
    p, k, n, sigma2 = Fraction(0.3), 3, 5, Fraction(4)
    acc = ExactAccountant(Mixture(((RandomizedResponseNoise(p, k), n), (Gaussian(sigma2), 1))))
    epss = [Fraction(0), Fraction(1), Fraction(4)]
    with mpmath.workdps(DPS):
        mu = _m(1 / (2 * sigma2))
        lr = mpmath.log(_m(1 - p + p / k) / _m(p / k))
        outs = _rr_outputs(p, k, n)

        def dn(t):
            r = 2 * mpmath.sqrt(mu)
            return mpmath.erfc((t - mu) / r) / 2 - mpmath.exp(t) * mpmath.erfc((t + mu) / r) / 2

        refs = [mpmath.fsum(_m(pb) * dn(_m(e) - b * lr) for b, (pb, _) in outs.items()) for e in epss]
    for got, ref in zip(acc.delta(epss), refs):
        _check(got, ref, ref)
    got = acc.epsilon([Fraction(1, 10**6)])[0]
    with mpmath.workdps(DPS):
        at = [mpmath.fsum(_m(pb) * dn(x - b * lr) for b, (pb, _) in outs.items()) for x in (got.lower, got.upper)]
    assert at[1] <= _m(Fraction(1, 10**6)) < at[0] and got.upper - got.lower <= REL * got.upper
