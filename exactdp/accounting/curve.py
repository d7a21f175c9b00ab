"""The f-DP trade-off curve β = f(α) of a lattice sum (a mixin of the exact accountant),
the state the accountant's mixins share, and the result helpers its methods use.

The optimal test rejects when ``S ≥ k`` (randomising on the boundary atom); its vertices
are ``(α_k, β_k) = (P[S ≥ k], P[S ≥ K − k + 1])``; between two vertices f is linear with
slope ``−e^{β(k−1) − c}`` (the likelihood ratio of the boundary atom, exact).  The vertex
is located on certified brackets of α_k, or of the lower tail ``1 − α_k = P[S ≥ 1 − k]``
when α > 1/2 (with 1 − α exact).  Reference: Dong, Roth & Su, Gaussian differential
privacy (JRSS-B 2022).
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import TYPE_CHECKING

import mpmath
import numpy as np

from exactdp.accounting.base import sequence_values
from exactdp.accounting.results import TradeoffPoint
from exactdp.engine.lattice import LatticeSum
from exactdp.engine.tails import TailEngine, TailValue
from exactdp.mechanisms import Composition
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import InputError, alpha_display, to_fraction
from exactdp.numerics.precision import DPS_GUARD, DPS_RESULT, to_mpf, workdps
from exactdp.numerics.search import first_true

__all__ = ["TradeoffCurve", "LatticeAccountantState", "RESULT_ROUNDING", "exact_mp", "tail_bounds"]

#: relative rounding of a result stored at DPS_RESULT digits, added to every bound
RESULT_ROUNDING = mpmath.mpf(10) ** (-(DPS_RESULT - 3))


def exact_mp(x, dps=DPS_RESULT):
    """An exact-real value (Fraction or ``f(dps)`` callable) at the current precision."""
    if isinstance(x, Fraction):
        return to_mpf(x)
    return x(dps)


def tail_bounds(tv: TailValue):
    """(estimate, lower, upper) of a certified value (mp)."""
    v = mpmath.exp(tv.log_mp)
    r = mpmath.mpf(tv.rel_error)
    return v, v * (1 - r), v * (1 + r)



def _identical_point(amp, beta: Fraction) -> TradeoffPoint:
    """β = 1 − α of identical distributions: the rounded value and, as its error bound, the
    exact distance to ``beta`` rounded up (1 − 1e-300 rounds to 1 at any working precision:
    a zero error bound would put the reported lower end above the truth)."""
    with workdps(DPS_RESULT):
        est = to_mpf(beta)
        man, exp = est.man_exp
        gap = abs(Fraction(int(man)) * Fraction(2) ** int(exp) - beta)
        err = mpmath.fdiv(gap.numerator, gap.denominator, rounding="u") if gap else mpmath.mpf(0)
    return TradeoffPoint(amp, est, err, 0)

class LatticeAccountantState:
    """What the mixins of :class:`~exactdp.accounting.accountant.ExactAccountant` (the
    trade-off, :class:`TradeoffCurve`, and ε(δ), :class:`~exactdp.accounting.inversion.
    ProfileInversion`) read of it: declared here, set and defined by the accountant."""

    composition: Composition
    rho: Fraction
    rel_tol: float
    max_rel: float
    #: P = Q (every shift 0): no lattice and no engine (both None)
    identical: bool
    lattice: LatticeSum | None
    engine: TailEngine | None
    _ints: tuple[int, int, int]

    @property
    def _lat(self) -> LatticeSum:
        """The lattice sum (distinct distributions: callers have checked ``identical``)."""
        assert self.lattice is not None
        return self.lattice

    @property
    def _eng(self) -> TailEngine:
        """The tail engine (distinct distributions: callers have checked ``identical``)."""
        assert self.engine is not None
        return self.engine

    if TYPE_CHECKING:  # defined by ExactAccountant
        def _uncertified(self, what: str) -> UncertifiedError: ...

        def _tails(self, ks) -> list[TailValue]: ...

        def _loose_tails(self, ks) -> list[TailValue]: ...

        def _piece_eps(self, k: int) -> Fraction: ...

        def _profiles_any(self, eps_list, full: bool = True, complement: bool = True, pieces=None) -> list: ...

        def _profile_at(self, e, full: bool = True, complement: bool = True): ...


class TradeoffCurve(LatticeAccountantState):
    """The trade-off methods of :class:`~exactdp.accounting.accountant.ExactAccountant`."""

    def tradeoff(self, alphas: Iterable) -> tuple[TradeoffPoint, ...]:
        """β = f(α) for each α ∈ [0, 1] (exact rational or decimal string)."""
        out = []
        for a in sequence_values(alphas, "alpha"):
            af = to_fraction(a, "alpha")
            if not 0 <= af <= 1:
                raise InputError("alpha", a, "must lie in [0, 1]")
            with workdps(DPS_RESULT + DPS_GUARD):
                amp = to_mpf(af)
            if af == 0:
                out.append(TradeoffPoint(amp, mpmath.mpf(1), mpmath.mpf(0), 10**18))
            elif af == 1:
                out.append(TradeoffPoint(amp, mpmath.mpf(0), mpmath.mpf(0), -(10**18)))
            elif self.identical:  # P = Q: β = 1 − α exactly, its rounding in the error bound
                out.append(_identical_point(amp, 1 - af))
            else:
                out.append(self._tradeoff_one(af, amp))
        return tuple(out)

    def _alpha_side(self, k: int, af: Fraction):
        """Certified bracket of α_k (α ≤ 1/2) or of 1 − α_k = P[S ≥ 1 − k] (α > 1/2)."""
        (tv,) = self._eng.tails([k if af <= Fraction(1, 2) else 1 - k], strict=False)
        if not self._eng.done(tv):
            raise self._uncertified(f"the trade-off vertex at threshold {k}")
        with workdps(DPS_RESULT + DPS_GUARD):
            return tail_bounds(tv)

    def _tradeoff_one(self, af: Fraction, amp) -> TradeoffPoint:
        low_side = af <= Fraction(1, 2)
        with workdps(DPS_RESULT + DPS_GUARD):
            target = to_mpf(af if low_side else 1 - af)
            # sub-Gaussian bracket: P(S ≥ x) ≤ e^{−x²/(2V')} (Canonne–Kamath–Steinke)
            x = int(mpmath.ceil(mpmath.sqrt(2 * self._eng.vproxy * max(-mpmath.log(target), 0)))) + 2
        if low_side:
            lo, hi = 0, max(x, 1)
        else:
            lo, hi = min(1 - x, 0), 1

        def pred(k):  # α_k ≤ α, certainly
            v, vlo, vhi = self._alpha_side(k, af)
            return vhi <= target if low_side else vlo >= target

        k = first_true(pred, lo, hi)
        # f is convex and piecewise linear: every segment's line lies below f, and
        # f = max of the lines of the segments around α.  Segment j joins vertices j−1, j
        # (slope −e^{(j−1)/scale − c}); take j = k and, while α ≥ α_{j−1} is not certain,
        # the segments to the left as well.
        segs = [k]
        for _ in range(3):
            v = self._alpha_side(segs[-1] - 1, af)
            if (v[1] >= target) if low_side else (v[2] <= target):
                break
            segs.append(segs[-1] - 1)
        else:
            raise self._uncertified(f"the trade-off segment at α = {alpha_display(af)}")
        los, his = [], []
        for j in segs:
            lo_j, hi_j = self._segment_line(j, af, target, low_side)
            los.append(lo_j)
            his.append(hi_j)
        with workdps(DPS_RESULT + DPS_GUARD):
            lo_b = max(max(los), mpmath.mpf(0))
            hi_b = min(max(his), mpmath.mpf(1))
            hi_b = max(hi_b, lo_b)
            est = (lo_b + hi_b) / 2
            err = (hi_b - lo_b) / 2 + est * RESULT_ROUNDING
            if not err <= self.max_rel * est:
                raise self._uncertified(f"β at α = {mpmath.nstr(amp, 12)}")
            return TradeoffPoint(amp, est, err, k)

    def _segment_line(self, j: int, af: Fraction, target, low_side: bool):
        """Bounds of the line through vertices j−1 and j at α: from either vertex,
        ``β_{j−1} + s(α_{j−1} − α)`` and ``β_j − s(α − α_j)`` (α-differences through
        1 − α above 1/2), intersected."""
        K = self._lat.shift
        a0 = self._alpha_side(j - 1, af)
        a1 = self._alpha_side(j, af)
        tb0, tb1 = self._eng.tails([K - j + 2, K - j + 1], strict=False)
        if not (self._eng.done(tb0) and self._eng.done(tb1)):
            raise self._uncertified(f"β at α = {alpha_display(af)}")
        with workdps(DPS_RESULT + DPS_GUARD):
            slope = mpmath.exp(to_mpf(Fraction(j - 1) / self._lat.scale - self._lat.c))
            b0, b1 = tail_bounds(tb0), tail_bounds(tb1)
            lo_i, hi_i = (1, 2) if low_side else (2, 1)  # which α-bound gives the lower β
            if low_side:
                lo = max(b0[1] + slope * (a0[lo_i] - target), b1[1] - slope * (target - a1[lo_i]))
                hi = min(b0[2] + slope * (a0[hi_i] - target), b1[2] - slope * (target - a1[hi_i]))
            else:
                lo = max(b0[1] + slope * (target - a0[lo_i]), b1[1] - slope * (a1[lo_i] - target))
                hi = min(b0[2] + slope * (target - a0[hi_i]), b1[2] - slope * (a1[hi_i] - target))
            return lo, hi

    def tradeoff_vertices(self, ks: Iterable[int]):
        """Exact curve vertices ``(k, α_k, β_k)`` (TailValues) at thresholds ks."""
        ks = [int(k) for k in ks]
        K = self._lat.shift
        tv = self._tails(ks + [K - k + 1 for k in ks])
        n = len(ks)
        return [(k, tv[i], tv[n + i]) for i, k in enumerate(ks)]

    def tradeoff_vertex_floats(self, ks: Iterable[int]) -> tuple:
        """The vertices of :meth:`tradeoff_vertices` as ``(ks, keys, ia, ib)``: ``keys`` the
        ``(log value, relative error)`` of each distinct threshold among the α thresholds k
        and the β thresholds ``shift − k + 1`` (ascending), ``ia[i]``/``ib[i]`` the positions
        of vertex i's α and β in ``keys`` — the same fields as the vertices' TailValues
        (:meth:`TailEngine.tail_floats`), without a TailValue each."""
        ks = [int(k) for k in ks]
        K = int(self._lat.shift)
        if ks and abs(K) < 2**52 and max(ks) < 2**52 and min(ks) > -(2**52):
            # in int64 arrays: the same distinct thresholds, ascending, and positions
            ka = np.array(ks, dtype=np.int64)
            kb = (K + 1) - ka
            thr = np.sort(np.concatenate((ka, kb)))  # distinct (np.unique's values, without its hash table)
            thr = thr[np.concatenate(([True], thr[1:] != thr[:-1]))]
            logs, rels = self._eng.tail_floats(thr)
            return ks, list(zip(logs, rels)), np.searchsorted(thr, ka).tolist(), np.searchsorted(thr, kb).tolist()
        thr_list = sorted(set(ks).union([K - k + 1 for k in ks]))
        logs, rels = self._eng.tail_floats(thr_list)
        pos = {s: i for i, s in enumerate(thr_list)}
        return ks, list(zip(logs, rels)), [pos[k] for k in ks], [pos[K - k + 1] for k in ks]
