"""Discrete Gaussian primitives against direct mpmath sums (written here)."""

from collections import Counter
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp import dgauss


def _direct_norm(s2, mu=0, half=1500):
    # mpmath one-liner: fsum(exp(-(x-mu)^2/(2 s2)) for x in range(-half, half+1))
    with mpmath.workdps(50):
        return mpmath.fsum(mpmath.exp(-(x - mu) ** 2 / (2 * mpmath.mpf(s2))) for x in range(-half, half + 1))


@pytest.mark.parametrize("s2", [Fraction(1, 5), Fraction(1, 2), Fraction(1), Fraction(5, 2), Fraction(10000, 11)])
def test_normalizer_both_regimes(s2):
    with mpmath.workdps(50):
        ref = mpmath.log(_direct_norm(mpmath.mpf(s2.numerator) / s2.denominator))
        assert abs(dgauss.log_normalizer(s2) - float(ref)) < 1e-14 * max(1, abs(float(ref)))
        assert abs(dgauss.log_normalizer_mp(s2) - ref) < mpmath.mpf(10) ** -45


@settings(max_examples=30, deadline=None)
@given(st.fractions(min_value=Fraction(1, 10), max_value=Fraction(200), max_denominator=50),
       st.integers(min_value=-3, max_value=3))
def test_pmf_sums_to_one(s2, mu):
    with mpmath.workdps(40):
        half = int(40 * float(s2) ** 0.5) + 40
        tot = mpmath.fsum(dgauss.pmf_mp(x, s2, mu, dps=30) for x in range(mu - half, mu + half + 1))
    assert abs(tot - 1) < 1e-25


def test_tails_and_cf_against_direct_sums():
    s2 = Fraction(3)
    with mpmath.workdps(50):
        z = _direct_norm(3)
        ref = mpmath.fsum(mpmath.exp(-mpmath.mpf(x) ** 2 / 6) for x in range(7, 200)) / z
        cf_ref = mpmath.fsum(mpmath.exp(-mpmath.mpf(x) ** 2 / 6) * mpmath.cos(mpmath.mpf("0.7") * x)
                             for x in range(-200, 201)) / z
        assert abs(dgauss.tail_mp(7, s2) / ref - 1) < 1e-40
        assert abs(dgauss.cf_mp(mpmath.mpf("0.7"), s2).real - cf_ref) < mpmath.mpf(10) ** -40
    assert abs(dgauss.tail(7, s2) / float(ref) - 1) < 1e-13
    assert abs(dgauss.tail(-6, s2) - (1 - float(ref))) < 1e-15  # symmetry: P(X ≥ −6) = 1 − P(X ≥ 7)
    assert abs(dgauss.cf(0.7, s2).real - float(cf_ref)) < 1e-14


def test_mgf_poisson_vs_direct():
    for s2 in (Fraction(1, 3), Fraction(7, 2), Fraction(50)):
        for z in (0.3 + 0.2j, -1.1 + 3.0j):
            lm = dgauss.log_mgf(z, s2)
            # the direct sum cancels down to |M| ≈ e^{−195} here: 150 digits cover it
            with mpmath.workdps(150):
                ref = mpmath.log(dgauss.mgf_mp(z, s2, dps=150))
            assert abs(lm.real - float(ref.real)) < 1e-12 * max(1, abs(float(ref.real)))


def test_sampler_is_exact_in_distribution():
    s2 = Fraction(3, 2)
    n = 20000
    xs = dgauss.sample(s2, n, seed=12345)
    counts = Counter(xs)
    # chi-square over |x| ≤ 4 (+ tails lumped), 9 bins → df = 9; 99.9% quantile ≈ 27.9
    chi2 = 0.0
    lump_obs, lump_exp = 0, 0.0
    for x in range(-10, 11):
        e = n * float(dgauss.pmf_mp(x, s2, dps=20))
        if abs(x) <= 4:
            chi2 += (counts.get(x, 0) - e) ** 2 / e
        else:
            lump_obs += counts.get(x, 0)
            lump_exp += e
    chi2 += (lump_obs - lump_exp) ** 2 / lump_exp
    assert chi2 < 27.9


def test_float_refused():
    from exactdp.numerics.exact import InputError

    with pytest.raises(InputError, match="sigma2=0.5"):
        dgauss.log_normalizer(0.5)
