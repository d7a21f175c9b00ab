"""Deep thresholds of designs on the ordinary (untilted) halves reach the grouped tilted levels.

Seven σ² near 1.5 with counts 2–3 and shifts 2–5 (the fifth audit's FOUND 2) were on the
ordinary halves, whose levels by depth stop near δ ≈ 1e-96: ε(1e-45 … 1e-100) and deep δ were
refused.  :class:`exactdp.engine.halves.HalvesProfile` now sends what its levels by depth leave
wider than ``GROUPED_REL`` to the grouped tilted levels (``_grouped_levels``; branch eps30).
Checks, against a 40-digit meet-in-the-middle reference written here (the group pmf of
``tests/test_grouped_halves.py``: mpmath convolutions, truncation bounded; nothing of the engine):

* four groups of the same shape (σ² near 1.5, counts 2–3, shifts 2–5): δ(θ) down to < 1e-120 and
  1 − δ(θ), contained and ≤ 1e-9 relative wide, the grouped halves asked for the deep ones;
* the public accountant on these four: ε(1e-45) and ε(1e-60) bracket the reference's crossing
  (θ = ε − ρ exactly), ≤ 1e-9 relative;
* the audit design itself: routed to the ordinary halves with the grouped ones for depth, and
  ε(1e-45) answered ≤ 1e-9 relative (refused before).
"""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import numpy as np
import pytest
from test_grouped_halves import _groups
from test_grouped_halves import _half as _half_at

from exactdp.engine.grouped_halves import grouped_halves_fit
from exactdp.engine.halves import HalvesProfile
from exactdp.mechanisms import Composition, DiscreteGaussian

REL = 1e-9
TINY = mpmath.mpf("1e-30")
SMALL = ((F("1.494"), 2, 2), (F("1.516"), 3, 3), (F("1.480"), 2, 3), (F("1.479"), 5, 2))  # σ², shift, count
RHO = sum(F(m) * d * d / (2 * s2) for s2, d, m in SMALL)  # the loss is ρ + W


def _half(design, depth: int = 420) -> tuple:
    """:func:`test_grouped_halves._half` with each group's pmf to ``depth`` nats (the truncation
    ~e^{−420}, far below δ ≈ 1e-120)."""
    return _half_at(design, depth)


@pytest.fixture(scope="module")
def small_reference():
    """θ ↦ (δ(θ), 1 − δ(θ), truncated mass) of W = Σ w_g S_g over SMALL (40 digits)."""
    import bisect

    with mpmath.workdps(40):
        va, pa, la = _half(SMALL[:2])
        vb, pb, lb = _half(SMALL[2:])
        n = len(vb)
        s0 = [mpmath.mpf(0)] * (n + 1)
        s1 = [mpmath.mpf(0)] * (n + 1)
        for i in range(n - 1, -1, -1):
            s0[i] = s0[i + 1] + pb[i]
            s1[i] = s1[i + 1] + pb[i] * mpmath.exp(-mpmath.mpf(vb[i].numerator) / vb[i].denominator)
        total_b = s0[0]

        def both(theta: F) -> tuple:
            with mpmath.workdps(40):
                d = c = mpmath.mpf(0)
                for a, p in zip(va, pa):
                    x = theta - a
                    i = bisect.bisect_right(vb, x)
                    ex = mpmath.exp(mpmath.mpf(x.numerator) / x.denominator)
                    d += p * (s0[i] - ex * s1[i])
                    c += p * ((total_b - s0[i]) + ex * s1[i])
                return d, c, la + lb

        yield both


@pytest.fixture(scope="module")
def small_profile():
    groups = _groups(SMALL)
    assert grouped_halves_fit(groups)
    return HalvesProfile(groups, tilted=False)


THETAS = [F(0), F(-6), F(60), F(130), F(190)]


def test_deep_thresholds_contain_the_enumeration(small_reference, small_profile):
    prof = small_profile
    th = np.array([float(t) for t in THETAS])
    lo, hi = prof.log_brackets(th, th)
    clo, chi = prof.log_complement(th, th)
    deepest = mpmath.mpf(1)
    for i, t in enumerate(THETAS):
        assert float(t) == th[i]
        d, c, lost = small_reference(t)
        deepest = min(deepest, d)
        # the reference's own 40-digit rounding (a complement of 1 + 1e-40 seen): 1e-30 relative
        d_lo, d_hi = d * (1 - TINY), (d + lost) * (1 + TINY)
        c_lo, c_hi = c * (1 - TINY), (c + lost) * (1 + TINY)
        assert mpmath.exp(lo[i]) <= d_hi and d_lo <= mpmath.exp(hi[i]), (t, lo[i], hi[i], d)
        assert mpmath.exp(clo[i]) <= c_hi and c_lo <= mpmath.exp(chi[i]), (t, clo[i], chi[i], c)
        assert hi[i] - lo[i] <= REL and chi[i] - clo[i] <= REL, (t, hi[i] - lo[i], chi[i] - clo[i])
        assert lost <= d * mpmath.mpf("1e-20")  # the reference is tight
    assert deepest < mpmath.mpf("1e-120")
    # the levels by depth alone leave the deepest threshold wide; the grouped ones settle it
    deepest_level = [lv for lv in prof._levels if lv is not None][-1]
    base_lo, base_hi = deepest_level.sums(th[-1:], th[-1:], False)
    assert not (base_hi[0] - base_lo[0] <= REL) and prof._grouped_levels() is not None


@pytest.mark.parametrize("target", ["1e-45", "1e-60"])
def test_accountant_epsilon_brackets_the_crossing(small_reference, target):
    from exactdp.accounting import lattice_free
    from exactdp.accounting.accountant import ExactAccountant

    comp = Composition(tuple((DiscreteGaussian(s2, d), m) for s2, d, m in SMALL))
    mp = pytest.MonkeyPatch()
    mp.setattr(lattice_free, "profile_for",
               lambda groups, wide=True: HalvesProfile(groups, tilted=False))
    try:
        acc = ExactAccountant(comp, method="lattice-free")
    finally:
        mp.undo()
    b = acc.epsilon([target])[0]
    lo, up = F(str(b.lower)), F(str(b.upper))
    assert (up - lo) / up <= REL, (lo, up)
    # δ(ε) is decreasing: δ(lower) ≥ target ≥ δ(upper) (θ = ε − ρ exactly; widened by 1e-12 so
    # the mpf → Fraction conversions of the ends cannot decide it)
    tgt = mpmath.mpf(target)
    d_lo, _, lost = small_reference(lo - RHO - F(1, 10**12))
    d_up, _, _ = small_reference(up - RHO + F(1, 10**12))
    assert d_lo + lost >= tgt >= d_up, (target, d_lo, d_up)


def test_audit_design_deep_epsilon_is_answered():
    from exactdp.accounting.accountant import ExactAccountant

    design = [("1.494", 2, 2), ("1.516", 3, 3), ("1.500", 3, 3), ("1.480", 2, 3), ("1.479", 5, 2),
              ("1.484", 3, 3), ("1.488", 4, 2)]
    acc = ExactAccountant(Composition(tuple((DiscreteGaussian(s, d), m) for s, d, m in design)))
    assert acc.method == "halves-enumeration"
    b = acc.epsilon(["1e-45"])[0]
    assert 0 < b.lower <= b.upper and (b.upper - b.lower) / b.upper <= REL
    # ρ < ε(1e-45) ≤ the zCDP bound ρ + 2√(ρ log(1/δ))
    rho = float(sum(F(m) * d * d / (2 * F(s)) for s, d, m in design))
    assert rho < float(b.lower) and float(b.upper) <= rho + 2 * (rho * 45 * 2.302585093) ** 0.5
