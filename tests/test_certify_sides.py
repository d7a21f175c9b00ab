"""``certify_points`` decides the fast value's side on an enclosure sharp enough to decide it.

At σ² = 1/1000 the fast path's β(α) is exact to ~1e-37 relative (enumeration), sharper than
the certificate's first level (~1e-29): the value lay *inside* that enclosure and
``exactdp tradeoff --certify`` refused (exit 3) a correct number.  Now an undecided side is
decided on the finest level; a value inside even that one is reported as inconclusive, one on
the wrong side as a disagreement.  A ball end beyond the exact range (δ ≈ 10^-2171484) is
refused at once instead of building multi-megabyte Fractions.

The reference is a direct mpmath Neyman–Pearson computation written here (nothing of the
engine or of the certificate).
"""

from __future__ import annotations

from fractions import Fraction
from types import SimpleNamespace

import mpmath
import pytest

from exactdp.accounting.accountant import ExactAccountant
from exactdp.certify import Certifier, certify_points, on_conservative_side
from exactdp.mechanisms import Composition
from exactdp.numerics.errors import UncertifiedError

S2 = Fraction(1, 1000)
ALPHA = Fraction(999999999, 10**9)


def _beta_reference(alpha: Fraction, s2: Fraction, dps: int = 200):
    """β(α) of N_Z(0, s2) against N_Z(1, s2): the likelihood ratio grows with x, the
    Neyman–Pearson vertices are (P₀[X ≥ k], P₁[X < k]); interpolate linearly between the
    two vertices around α (at 1 − 1e-9 the interpolation cancels 9 digits, so 200-digit
    arithmetic).  Terms beyond |x| = 12 are below e^{-72000}: dropped."""
    with mpmath.workdps(dps):
        s = mpmath.mpf(s2.numerator) / s2.denominator
        xs = range(-12, 14)
        w0 = {x: mpmath.exp(-mpmath.mpf(x * x) / (2 * s)) for x in xs}
        w1 = {x: mpmath.exp(-mpmath.mpf((x - 1) ** 2) / (2 * s)) for x in xs}
        z0, z1 = mpmath.fsum(w0.values()), mpmath.fsum(w1.values())
        a = mpmath.mpf(alpha.numerator) / alpha.denominator
        verts = [(mpmath.fsum(w0[x] for x in xs if x >= k) / z0,
                  mpmath.fsum(w1[x] for x in xs if x < k) / z1) for k in range(13, -13, -1)]
        for (a0, b0), (a1, b1) in zip(verts, verts[1:]):
            if a0 <= a <= a1 and a1 > a0:
                return b0 + (b1 - b0) * (a - a0) / (a1 - a0)
    raise AssertionError("alpha not bracketed")


def test_sharp_fast_value_is_decided_on_the_finest_level():
    comp = Composition.from_sigma2([S2])
    fast = ExactAccountant(comp).tradeoff([ALPHA])[0]
    ref = _beta_reference(ALPHA, S2)
    with mpmath.workdps(80):
        assert fast.value <= ref <= fast.value + 2 * fast.error_bound
        assert abs(ref - mpmath.mpf("7.12457640674128553154915737712e-227")) < mpmath.mpf(10) ** -255
    first = Certifier(comp).tradeoff(ALPHA)
    assert not on_conservative_side("tradeoff", fast.value, first)  # the case that refused
    (enc,) = certify_points(comp, "tradeoff", [ALPHA], [fast])
    assert on_conservative_side("tradeoff", fast.value, enc)
    with mpmath.workdps(200):
        assert enc.lower <= ref <= enc.upper


def test_inside_the_finest_enclosure_is_inconclusive_and_wrong_side_disagrees():
    comp = Composition.from_sigma2([Fraction(5, 2)])
    enc = Certifier(comp, rel_width=0.0).tradeoff(Fraction(1, 2))
    with mpmath.workdps(200):
        inside = (enc.lower + enc.upper) / 2
        above = enc.upper * (1 + mpmath.mpf(10) ** -12)
    with pytest.raises(UncertifiedError, match="inconclusive"):
        certify_points(comp, "tradeoff", [Fraction(1, 2)], [SimpleNamespace(value=inside, threshold=None)])
    with pytest.raises(UncertifiedError, match="disagree"):
        certify_points(comp, "tradeoff", [Fraction(1, 2)], [SimpleNamespace(value=above, threshold=None)])


def test_ball_end_beyond_the_exact_range_is_refused_at_once():
    comp = Composition.from_sigma2([Fraction(10**7)])  # δ(1) ≈ 8.4e-2171484
    with pytest.raises(UncertifiedError, match="exact range"):
        Certifier(comp).delta(Fraction(1))
