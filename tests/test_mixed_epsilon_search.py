"""The mixed route's ε(δ) search decides its bracket on certified δ balls only.

Its secant runs on estimates (log of a ball's upper end); they may choose where δ is asked,
never move a bracket end.  Biased estimates must still give a bracket containing the truth
(before the fix the secant's ends were returned: a lower end above ε* on the audit's design).
The reference: the composed loss atoms of the discrete Laplaces enumerated from their output
distributions and the continuous Gaussians' closed form (``mixed_brute``, nothing of the
engine), ε* bisected on its certified δ bracket.
"""

from __future__ import annotations

from fractions import Fraction

import mixed_brute
import mpmath
import pytest

import exactdp.accounting.mixed_queries as mixed_queries
from exactdp import DiscreteGaussian, ExactAccountant
from exactdp.kinds import DiscreteLaplace, Gaussian, Mixture

GROUPS = ((Gaussian("4", 1), 2), (DiscreteLaplace("1/2", 1), 3))
RHO = Fraction(1, 4)  # the two Gaussians' Σ shift²/(2σ²)


def _reference(target: str) -> tuple:
    """``(a, b)`` with δ(a) > target ≥ δ(b), b − a ≤ 2^−100 · 100 (certified on the brute
    force's own bracket of δ)."""
    atoms = mixed_brute.joint([GROUPS[1]])
    t = mpmath.mpf(Fraction(target).numerator) / Fraction(target).denominator
    a, b = Fraction(0), Fraction(100)
    with mpmath.workdps(60):
        for _ in range(100):
            m = (a + b) / 2
            lo, hi = mixed_brute.delta_gaussian(atoms, m, RHO)
            if lo > t:
                a = m
            elif hi <= t:
                b = m
            else:
                break
    return a, b


@pytest.mark.parametrize("bias", [0.0, 0.3, -0.3, 3.0])
@pytest.mark.parametrize("target", ["1e-3", "1e-10"])
def test_biased_estimates_never_move_a_bracket_end(monkeypatch, bias, target):
    logmid = mixed_queries._logmid
    monkeypatch.setattr(mixed_queries, "_logmid", lambda acc, e: logmid(acc, e) + bias)
    acc = ExactAccountant(Mixture(GROUPS))
    assert "gaussian-erfc" in acc.diagnostics().method  # (the search, not the finite route's exact solve)
    p = acc.epsilon([target])[0]
    a, b = _reference(target)
    assert p.lower <= a and b <= p.upper, (bias, target, p, float(a))
    assert p.upper - p.lower <= Fraction(1, 10**9) * p.upper


def test_the_audits_design_brackets_its_epsilon():
    """Audit design 20 (bench/audit.md): ε*(1e-10) = 490.013386670016598…, from two independent
    programs (Arb meet in the middle, and plain mpmath at 60 digits with another split); the
    old search returned 490.01338667005155 as the lower end."""
    design = Mixture(((DiscreteGaussian("4.610", 1), 6), (DiscreteGaussian("1.313", -6), 6),
                      (DiscreteLaplace("0.37", -2), 29), (DiscreteLaplace("1/2", 3), 30)))
    p = ExactAccountant(design).epsilon(["1e-10"])[0]
    truth = mpmath.mpf("490.013386670016598")
    assert p.lower <= truth - mpmath.mpf("1e-15") and truth + mpmath.mpf("1e-15") <= p.upper
    assert p.upper - p.lower <= mpmath.mpf("1e-9") * p.upper
