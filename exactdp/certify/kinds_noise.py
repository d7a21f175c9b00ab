"""Randomized response by its noise parameter in the mixed-kinds certificate: the net count of ±log R.

:class:`~exactdp.kinds.RandomizedResponseNoise` ``(p, k)`` has the loss ``+log R`` (P-mass
``q1 = 1 − p + p/k``), ``0`` (``(k − 2)p/k``) and ``−log R`` (``q2 = p/k``) with the rational
``R = q1/q2``: its loss is irrational, on no rational grid.  Groups sharing one ``R`` compose, by an
exact polynomial power, into the law of the net count ``n`` of ``+log R`` steps (P-mass ``w_n``,
exact rationals in balls: :func:`net_counts`).  Beside the rest of the design's discrete part (atoms
``v_i`` on their rational grid, :mod:`.kind_atoms`) the joint loss is ``v_i + n·log R``, and

    δ_F(ε) = Σ_n w_n · D(ε − n·log R),    D(t) = Σ_i p_i (1 − e^{t − v_i})_+

(:func:`hockey_stick_at`, the threshold ``t`` a ball).  The atoms certainly above ``t`` (``v_i >``
the ball's upper end) are summed by suffix sums after the first few by ``expm1``; the few whose value
the ball of ``t`` does not separate contribute ``p_i·max(0, 1 − e^{t − v_i})``, a ball around 0 as
wide as ``p_i·|t − v_i|`` — no side is ever decided by a guess (for ``n ≠ 0`` a tie is impossible:
``e^{r}`` is irrational for a rational ``r ≠ 0``, Lindemann; for ``n = 0`` the threshold is exact).
β(α) (:func:`threshold_tests`): the tests "reject iff ``V + n log R < ℓ``" at rational ℓ either side of
the α-quantile, each test's ``(P(reject), Q(accept))`` a ball over the net counts (:func:`test_at`).
Nothing is shared with the engine's conditioning (:mod:`exactdp.accounting.mixed_rr`) or its dual search
(:mod:`exactdp.accounting.mixed_queries`, :mod:`exactdp.accounting.rr_kinks`).
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import arb, arb_poly, ctx

from exactdp.certify.balls import ball, endpoints
from exactdp.certify.kind_atoms import REMEDY, Atoms
from exactdp.numerics.errors import UncertifiedError

__all__ = ["NetCounts", "net_counts", "hockey_stick_at", "test_at", "threshold_tests", "KIND", "MAX_COUNT"]

KIND = "RandomizedResponseNoise"
#: most ±log R steps (the net count's law has 2·count + 1 atoms)
MAX_COUNT = 200_000
#: atoms above t taken one by one (expm1) before the suffix sums
_NEAR = 4


class NetCounts:
    """The law of the net count ``n ∈ [−N, N]`` of ``+log R`` steps of the ``(mechanism, count)`` groups
    ``live`` (one R), evaluated at the current Arb precision (cached per precision)."""

    def __init__(self, ratio: Fraction, live: list):
        self.ratio, self.live = Fraction(ratio), live
        self.total = sum(c for _, c in live)
        self._cache: dict = {}

    def log_ratio(self) -> arb:
        """A ball of ``log R``."""
        return ball(self.ratio).log()

    def items(self) -> list:
        """``[(n, w_n), ...]`` for every n with a non-zero mass."""
        prec = ctx.prec
        if prec not in self._cache:
            poly = arb_poly([1])
            for mech, count in self.live:
                q2, q0, q1 = (ball(Fraction(x)) for x in mech.masses)
                poly = poly * arb_poly([q2, q0, q1]) ** count  # z^m ↔ net count m − total
            self._cache = {prec: [(m - self.total, poly[m]) for m in range(2 * self.total + 1)
                                  if not poly[m].is_zero()]}
        return self._cache[prec]


def net_counts(groups) -> NetCounts | None:
    """The net-count law of the ``(RandomizedResponseNoise, count)`` groups (None without one, or when
    every ``R`` is 1: no loss).

    Raises
    ------
    UncertifiedError
        Groups of different ``R`` (their losses ±log R₁, ±log R₂ share no grid), or more than
        :data:`MAX_COUNT` steps.
    """
    live = [(m, int(c)) for m, c in groups if m.ratio != 1]
    if not live:
        return None
    ratios = sorted({m.ratio for m, _ in live})
    if len(ratios) > 1:
        raise UncertifiedError(f"--certify: randomized response by noise parameters of different ratios R "
                               f"({', '.join(str(r) for r in ratios[:3])}): their losses ±log R share no grid, and "
                               f"this certificate conditions on one R only; what would work: one R, or: {REMEDY}")
    total = sum(c for _, c in live)
    if total > MAX_COUNT:
        raise UncertifiedError(f"--certify: {total} randomized responses by noise parameter (at most {MAX_COUNT}); "
                               f"{REMEDY}")
    return NetCounts(ratios[0], live)


def hockey_stick_at(A: Atoms, t: arb) -> arb:
    """A ball of ``D(t) = Σ_i p_i (1 − e^{t − v_i})_+`` over the kept atoms, for a ball threshold t."""
    lo, hi = endpoints(t)
    j0 = A.above(hi)  # atoms from j0 on are certainly above t
    s = arb(0)
    for i in range(A.at_least(lo), j0):  # (not separated from t by its ball)
        s += (A.P[i] * (-(t - A.vball(i)).expm1())).nonnegative_part()
    n = len(A)
    stop = min(n, j0 + _NEAR)
    for i in range(j0, stop):
        s += A.P[i] * (-(t - A.vball(i)).expm1())
    if stop < n:
        s += (A.SP[stop] - t.exp() * A.SQ[stop]).nonnegative_part()
    return s


# -- β(α): the tests "reject iff V + n·log R < ℓ" -------------------------------------------------
def test_at(A: Atoms, noise: NetCounts, ell: Fraction) -> tuple:
    """``(a, b)``: balls of the kept ``P(V + n log R < ℓ)`` and ``Q(V + n log R ≥ ℓ)`` (the net count's
    Q-law is ``w_n R^{−n}``).  For each n the atoms the ball of ``ℓ − n log R`` does not separate
    from it enter both sums as ``[0, their mass]`` (the union of the two prefix / suffix sums): the
    ball holds the exact test's values whatever their order (for n ≠ 0 no atom equals the
    threshold, Lindemann; for n = 0 it is exact)."""
    lb, lr = ball(ell), noise.log_ratio()
    a, b = arb(0), arb(0)
    for n, w in noise.items():
        lo, hi = endpoints(lb - n * lr)
        i1, i2 = A.at_least(lo), A.at_least(hi)  # atoms below i1: certainly < t; from i2 on: certainly ≥ t
        a += w * (A.PP[i1] if i1 == i2 else A.PP[i1].union(A.PP[i2]))
        b += w * (-n * lr).exp() * (A.SQ[i2] if i1 == i2 else A.SQ[i2].union(A.SQ[i1]))
    return a, b


def threshold_tests(A: Atoms, noise: NetCounts, ab: arb, prec: int) -> list:
    """``[(ℓ, a, b), ...]`` (:func:`test_at`) at rational ℓ just below and above the α-quantile of
    the joint loss ``V + n log R`` (bisection on the midpoints of ``a``: estimates only choose ℓ;
    every test's line and chord is certified by the caller), sorted by ℓ."""
    span = Fraction(math.ceil(noise.total * abs(math.log(noise.ratio)))) + 1
    lo, hi = A.value(0) - span, A.value(len(A) - 1) + span
    amid = ab.mid()
    if not test_at(A, noise, hi)[0].mid() > amid:
        raise ArithmeticError("alpha is within the left-out mass of 1")
    half = prec // 2
    for _ in range(4 * prec):
        if hi - lo <= (abs(hi) + 1) * Fraction(1, 2 ** (half + 12)):
            break
        mid = (lo + hi) / 2
        k = half + 40 - (abs(mid).numerator.bit_length() - abs(mid).denominator.bit_length())
        mid = Fraction(round(mid * 2**k), 2**k) if mid and k >= 0 else mid
        if not lo < mid < hi:
            mid = (lo + hi) / 2
        if test_at(A, noise, mid)[0].mid() < amid:
            lo = mid
        else:
            hi = mid
    mid, out = (lo + hi) / 2, []
    for k in (0, 1, 2):
        eta = (abs(mid) + 1) * Fraction(1, 2 ** (half - 12 * k))
        out.extend((ell, *test_at(A, noise, ell)) for ell in (mid - eta, mid + eta))
    return sorted(out, key=lambda t: t[0])
