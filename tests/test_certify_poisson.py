"""The trapezoid certificate's node factors through a few Poisson terms (certify/trapezoid.py,
certify/dgball.py) against 60-digit direct sums written here.

``G_n = Π_g [Θ_g(a_g(λ+iθ_n))/Θ_g(a_gλ)]^{m_g} (1 − e^{−λ})/(1 − e^{−λ−iθ_n})`` with
``Θ(z) = Σ_x exp(zx − x²/(2s²))`` summed directly in mpmath at 110 digits (no Poisson form, no theta
function): every ball the certificate builds must contain it.  The designs mix a huge, a
middling and a tiny variance so that each route is taken (one Poisson term, several, Arb's
theta ball), at the node θ = π (phase 0 for even weights), near θ = 0, and at a large tilt.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from flint import arb

from exactdp.certify.balls import precision
from exactdp.certify.dgball import DGBall
from exactdp.certify.trapezoid import POISSON_MAX_K, TrapezoidTails

F = Fraction


def theta_direct(s2: Fraction, z) -> mpmath.mpc:
    """Σ_x exp(zx − x²/(2s²)) over |x − s²Re z| ≤ sqrt(2s²·200) + 3 (the rest is < e^{−200})."""
    s = mpmath.mpf(s2.numerator) / s2.denominator
    c = int(mpmath.nint(s * mpmath.re(z)))
    w = int(math.isqrt(int(2 * float(s2) * 200) + 1)) + 3
    return mpmath.fsum(mpmath.exp(z * x - x * x / (2 * s)) for x in range(c - w, c + w + 1))


def mp_of(x: arb) -> mpmath.mpf:
    return mpmath.mpf(x.mid().str(60, radius=False))


def factor_mp(groups, lam: Fraction, n: int, N: int) -> mpmath.mpc:
    lm = mpmath.mpf(lam.numerator) / lam.denominator
    th = 2 * mpmath.pi * n / N
    out = mpmath.mpc(1)
    for a, m, s2 in groups:
        out *= (theta_direct(s2, a * (lm + 1j * th)) / theta_direct(s2, mpmath.mpc(a * lm))) ** m
    return out * (1 - mpmath.exp(-lm)) / (1 - mpmath.exp(-lm - 1j * th))


def routes(tt: TrapezoidTails, n: int) -> list:
    """Which route each group takes at node n: K (Poisson terms) or 'theta' (the rule of
    trapezoid.py restated, for coverage only)."""
    reach = tt._poisson_plan()[0]
    out = []
    for (a, _, _), rs in zip(tt.groups, reach):
        r = (a * n) % tt.N
        r = abs(r - tt.N if 2 * r > tt.N else r)
        out.append(next((K for K in range(POISSON_MAX_K + 1) if r <= rs[K]), "theta"))
    return out


def check_nodes(groups, j_of_sd: float, picks: int = 6):
    with precision(128), mpmath.workdps(110):  # the direct sums cancel (|G| ≪ 1)
        tt = TrapezoidTails(groups, 64 * math.log(2.0))
        j = max(1, int(round(j_of_sd * tt.lam_den / tt.sd)))
        lam = F(j, tt.lam_den)
        Gs = tt.node_factor_balls(j)
        idx = sorted({0, 1, 2, len(Gs) // 3, len(Gs) // 2, len(Gs) - 2, len(Gs) - 1}
                     | set(range(0, len(Gs), max(1, len(Gs) // picks))))
        seen = set()
        for i in idx:
            n, _, G = Gs[i]
            seen.update(routes(tt, n))
            ref = factor_mp(groups, lam, n, tt.N)
            for part, want in ((G.real, mpmath.re(ref)), (G.imag, mpmath.im(ref))):
                assert part.is_finite()
                err = abs(mp_of(part) - want)
                rad = mp_of(arb(part.rad()))
                assert err <= rad + abs(ref) * mpmath.mpf(10) ** -45, (n, part, want)
            assert float(abs(G).rad()) <= 1e-25 * float(abs(ref)) + 1e-60, (n, G, ref)  # and narrow
        return tt, seen


def test_mixed_variances_take_every_route():
    groups = [(1, 3, F(40)), (3, 2, F(5, 2)), (7, 1, F(1, 20)), (2, 1, F(1, 2))]
    _, seen = check_nodes(groups, 1.0, picks=12)
    assert {0, "theta"} <= seen and seen & {1, 2, 3}, seen


def test_node_at_half_turn_has_phase_zero_for_even_weights():
    """θ = π: the even weights' reduced phase is 0 (u = 0)."""
    groups = [(2, 1, F(9, 4)), (4, 2, F(30)), (3, 1, F(7, 5))]
    with precision(128):
        tt = TrapezoidTails(groups, 64 * math.log(2.0))
        assert tt.N // 2 in tt.nodes
        assert [(a * (tt.N // 2)) % tt.N for a, _, _ in tt.groups][:2] == [0, 0]
        assert "theta" not in routes(tt, tt.N // 2)[:2]
    check_nodes(groups, 2.0)


@pytest.mark.parametrize("z", [0.5, 12.0])
def test_large_tilt_and_huge_variance(z):
    groups = [(1, 1, F(10**4, 3)), (5, 2, F(13, 10))]
    check_nodes(groups, z, picks=4)


def test_tiny_variance_only_uses_theta_balls():
    groups = [(1, 4, F(1, 30)), (3, 1, F(1, 10))]
    tt, seen = check_nodes(groups, 1.0)
    assert seen == {"theta"}


@pytest.mark.parametrize("s2", [F(1, 50), F(1, 2), F(5, 2), F(40), F(10**6)])
def test_poisson_error_bounds_the_neglected_terms(s2):
    """|Σ_{|k|>K} e_k/e₀| ≤ poisson_error at the reach's edge, the terms summed in mpmath."""
    with precision(128), mpmath.workdps(50):
        dg = DGBall(s2)
        N = 1000
        s = mpmath.mpf(s2.numerator) / s2.denominator
        for K in range(POISSON_MAX_K + 1):
            r = dg.poisson_reach(N, 144, K)
            if r < 0:
                continue
            assert 2 * r <= N and (K > 0 or 2 * r < N)
            b = 2 * mpmath.pi * r / N
            rest = mpmath.fsum(mpmath.exp(-2 * mpmath.pi * s * (mpmath.pi * k * k - k * b))
                               for k in range(-40, 41) if abs(k) > K)
            bound = dg.poisson_error(r, N, K)
            assert rest <= mp_of(arb(bound.upper())), (K, rest, bound)
            assert bound.upper() < arb(2) ** -100  # the reach keeps it negligible


def test_tabulated_turns_and_powers_contain_the_direct_values():
    """``e^{2πir/N}`` and ``e^{±cy·r}`` (``cy = 4π²s²/N``) as products of two table balls, on
    both sides of the table's step M (r = 0, M − 1, M, M + 1, ..., up to N − 1 and ±N/2),
    each ball against mpmath at 60 digits, and narrow."""
    groups = [(1, 3, F(40)), (3, 2, F(5, 2))]
    with precision(128), mpmath.workdps(60):
        tt = TrapezoidTails(groups, 64 * math.log(2.0))
        N = tt.N
        M = math.isqrt(N - 1) + 1
        for r in sorted({0, 1, M - 1, M, M + 1, 2 * M - 1, N // 2, N - M, N - 1, 12345 % N}):
            z = tt._turn(r)
            want = mpmath.expjpi(mpmath.mpf(2 * r) / N)
            for part, w in ((z.real, mpmath.re(want)), (z.imag, mpmath.im(want))):
                assert abs(mp_of(part) - w) <= mp_of(arb(part.rad())) + mpmath.mpf(10) ** -55, (r, z, want)
                assert float(part.rad()) < 1e-35
        s2 = F(5, 2)
        cy = 4 * arb.pi() ** 2 * arb(s2.numerator) / s2.denominator / N
        Mp = math.isqrt(N // 2) + 1
        for r in sorted({0, 1, -1, Mp - 1, Mp, -Mp, Mp + 3, -(Mp + 3), N // 2, -(N // 2), 777 % (N // 2),
                         -(778 % (N // 2))}):  # |r| ≤ N/2: the reduced phases
            up, down = tt._powers(1, cy, r)
            e = 4 * mpmath.pi ** 2 * mpmath.mpf(5) / 2 * r / N
            for ball, w in ((up, mpmath.exp(e)), (down, mpmath.exp(-e))):
                assert abs(mp_of(ball) - w) <= mp_of(arb(ball.rad())) + w * mpmath.mpf(10) ** -55, (r, ball, w)
                assert float(ball.rad()) <= 1e-33 * float(w)
