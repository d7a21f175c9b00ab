"""The batched trade-off's oracle width (:func:`exactdp.accounting.tradeoff_batch._oracle_width`).

The batch asks its oracle for brackets of ``NOISE_SHARE·W/(2A)`` (A the model's amplification
of δ's noise into G's), between ``ORACLE_SHARE·W`` and ``NOISE_SHARE·W``.  Checked on an
oracle written here: the Gaussian mechanism of ``μ = √(2ρ)`` in mpmath (30 digits),
``δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)``, whose log brackets are widened outward by the
full relative width the batch asks for (the worst the contract allows: a real rest is
usually narrower).  The reference is the closed form ``f(α) = Φ(Φ⁻¹(1 − α) − μ)`` (Dong, Roth
& Su 2022), at 30 digits: every certified bracket contains it and is within W relative.
"""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import numpy as np
import pytest

import exactdp.accounting.tradeoff_batch as tb
from exactdp.accounting.dual_tradeoff import TRADEOFF_WIDTH


class _Rest:
    target = 2.5e-10


class _Profile:
    rest = _Rest()


class _GaussOracle:
    """``log_delta_at``/``log_complement_at`` of the Gaussian mechanism, each bracket widened
    by the rest's current target (relative) and rounded outward beyond float64."""

    def __init__(self, rho: F):
        self.rho = rho
        self.profile = _Profile()
        self.asked: list = []
        with mpmath.workdps(30):
            self.mu = mpmath.sqrt(2 * mpmath.mpf(rho.numerator) / rho.denominator)

    def _delta(self, e: float):
        mu, e = self.mu, mpmath.mpf(e)
        return mpmath.ncdf(mu / 2 - e / mu) - mpmath.exp(e) * mpmath.ncdf(-mu / 2 - e / mu)

    def _brackets(self, lo_v, hi_v):
        w = self.profile.rest.target
        self.asked.append(w)
        pad = float(mpmath.log1p(w)) + 1e-15
        return (np.array([float(mpmath.log(v)) - pad for v in lo_v]),
                np.array([min(float(mpmath.log(v)) + pad, 0.0) for v in hi_v]))

    def log_delta_at(self, m_dn, m_up):  # δ decreases in ε
        with mpmath.workdps(30):
            return self._brackets([self._delta(u) for u in m_up], [self._delta(d) for d in m_dn])

    def log_complement_at(self, m_dn, m_up):
        with mpmath.workdps(30):
            return self._brackets([1 - self._delta(d) for d in m_dn], [1 - self._delta(u) for u in m_up])


def _beta(mu, alpha: F):
    a = mpmath.mpf(alpha.numerator) / alpha.denominator
    return mpmath.ncdf(mpmath.sqrt(2) * mpmath.erfinv(1 - 2 * a) - mu)  # Φ(Φ⁻¹(1 − α) − μ)


@pytest.mark.parametrize("rho", [F(1, 8), F(1, 2), F(3)])
def test_batch_at_its_own_oracle_width_contains_the_closed_form(rho):
    acc = _GaussOracle(rho)
    alphas = [F(1, 100), F(1, 2), F(9, 10)]
    rng = np.array([(-float(rho) - 6, float(rho) + 6)] * 3)
    with tb.oracle_width(acc, TRADEOFF_WIDTH):  # the rest's target while the batch is not running
        out = tb.batch_brackets(acc, alphas, rng, TRADEOFF_WIDTH)
    assert acc.asked and max(acc.asked) <= tb.NOISE_SHARE * TRADEOFF_WIDTH * (1 + 1e-12)
    assert min(acc.asked) >= tb.ORACLE_SHARE * TRADEOFF_WIDTH * (1 - 1e-12)
    assert _Rest.target == 2.5e-10  # restored
    with mpmath.workdps(30):
        for a, b in zip(alphas, out):
            assert b is not None, a
            lo, hi = (mpmath.mpf(int(v.numerator)) / int(v.denominator) for v in b)
            ref = _beta(acc.mu, a)
            assert lo <= ref <= hi, (a, lo, ref, hi)
            assert hi - lo <= TRADEOFF_WIDTH * lo


def test_the_width_follows_the_amplification():
    """β near 0 (α near 1, ρ large): δ/G is large, the width stays ORACLE_SHARE·W; β of order
    one (small α, small ρ): coarser, at most NOISE_SHARE·W."""
    w = TRADEOFF_WIDTH
    for rho, alpha, expect in ((F(3), F(999, 1000), "fine"), (F(1, 8), F(1, 100), "coarse")):
        model = tb._Model(float(mpmath.sqrt(2 * rho)), np.array([float(alpha)]), np.array([float(1 - alpha)]))
        c, _ = model.argmax(np.array([-float(rho) - 6]), np.array([float(rho) + 6]), np.arange(1), w)
        got = tb._oracle_width(model, c, w)
        assert tb.ORACLE_SHARE * w <= got <= tb.NOISE_SHARE * w
        if expect == "fine":
            assert got == tb.ORACLE_SHARE * w
        else:
            assert got > 2 * tb.ORACLE_SHARE * w
