"""β = f(α) of a finite part beside discrete Gaussians: the Neyman–Pearson split over the joint
atoms of two factors, with the discrete Gaussians as windows.

The loss of a :class:`~exactdp.kinds.Mixture` without continuous parts and without randomized
responses by noise parameter is ``L = v + w``: ``v`` the finite part's atom (randomized response,
approx_dp, discrete Laplace, near-deterministic windows: ``acc.finite``, factor A) and ``w`` the
moving discrete Gaussians' summed loss, here a second :class:`~exactdp.engine.finite_loss.FiniteLoss`
of :class:`~exactdp.kinds.dgauss_window.GaussianWindow` groups (factor B, on its own grid).  Every
loss value is an exact rational, so each comparison with the split atom τ is exact: for each A atom
the B atoms below ``τ − v`` are a prefix of B's sorted atoms (an integer floor on B's grid).  With
B's prefix sums of P-mass and suffix sums of Q-mass (``Q_B[w] = P_B[−w]``, ``Q_A[v] = P_A[−v]``: both
factors are symmetric, no exponential per atom), ``P[L ≤ τ]`` and ``Q[L > τ]`` are ``|A|`` products
of positive balls; the two factors are never multiplied out (their product grid has up to 10^9
points where the twin of :mod:`~exactdp.accounting.mixed_windows` is beyond its budget).

For every τ, weak duality gives ``β ≥ Q[L > τ] + e^{−τ}(P[L ≤ τ] − α)`` over the kept atoms; where
``P[L < τ] ≤ α − D`` and ``α ≤ P[L ≤ τ]`` (D ≥ the P-mass the windows leave out) the test that
rejects every left-out atom, the kept atoms below τ and a share of τ's atoms has level α and
type-II error at most the same plus ``e^{−τ}D`` (as in :mod:`~exactdp.accounting.rr_neyman_pearson`).
The atoms of infinite loss (approx_dp's δ) carry no Q-mass, the Q-only atom no P-mass: both are
left out of the sums on the right side.  τ is proposed by a float bisection on log-masses and
certified on balls at rising precision; where ``e^{−τ}D`` is not below β's width the windows are
deepened.  Reference: Neyman & Pearson (1933); Dong, Roth & Su (2022), Prop. 2.2 and 2.12.
"""

from __future__ import annotations

import bisect
import math
from fractions import Fraction

import flint
import mpmath
import numpy

from exactdp.accounting.finite_tradeoff import BETA_WIDTH
from exactdp.accounting.mixed_balls import FLOOR, PRECS, to_mpf
from exactdp.engine.finite_loss import FiniteLoss, prec_ctx
from exactdp.kinds.dgauss_window import GaussianWindow
from exactdp.kinds.protocol import grid_step
from exactdp.numerics.errors import UncertifiedError

__all__ = ["applies", "beta_np_split", "MAX_FACTOR_ATOMS"]

#: the most atoms of positive mass of either factor (the discrete Gaussians' factor costs ~10 µs an atom per
#: precision: 32,000 atoms took 0.4 CPU-s where the dual answers in 0.02; the audit's deepest needs 13,400)
MAX_FACTOR_ATOMS = 20_000
#: the first windows' depth (nats): e^{−48} leaves β ≳ 1e-10 to the first pass (deeper where β asks)
FIRST_NATS = 48.0
#: how many window depths are tried
_DEEPENINGS = 5
#: the deepest windows asked (nats; β ≥ FLOOR = 1e-4000 lies above e^{−9211})
_MAX_NATS = 12_000.0
#: how far from the proposed split atom the certification looks (atoms on each side)
_NEIGHBOURS = 4


def applies(acc) -> bool:
    """Whether the loss is the finite part plus discrete Gaussians only (exact rational atoms)."""
    return (acc.gauss is not None and acc.rr is None and not acc._curved
            and any(m.shift for m, _ in acc.gauss.composition.groups))


def beta_np_split(acc, alpha: Fraction) -> tuple | None:
    """``(lower, upper)`` (mpmath) of β(α), 0 < α < 1, within :data:`BETA_WIDTH` relative (or below
    :data:`~exactdp.accounting.mixed_balls.FLOOR`), or None: not applicable, a factor beyond
    :data:`MAX_FACTOR_ATOMS`, or not certified at the highest precision (the other routes answer).
    The windows start :data:`FIRST_NATS` deep (small factors, float64 tables) and are deepened
    to what the bracket's deficit term asks."""
    if not applies(acc):
        return None
    moving = tuple((m, c) for m, c in acc.gauss.composition.groups if m.shift)
    nats = FIRST_NATS
    for _ in range(_DEEPENINGS):
        fac = _factors(acc, moving, nats)
        if fac is None:
            return None
        got = _certified(fac, alpha)
        if got is None:
            return None
        if isinstance(got, tuple):
            return got
        if got > _MAX_NATS or got <= nats:
            return None
        nats = got
    return None


class _Factors:
    """The two factors' exact grids and, per precision, their balls and prefix/suffix sums."""

    def __init__(self, a: FiniteLoss, b: FiniteLoss):
        self.a, self.b = a, b
        self._cache: dict = {}

    def at(self, p: int):
        got = self._cache.get(p)
        if got is None:
            got = self._cache[p] = _Tables(self.a, self.b, p)
        return got


def _factors(acc, moving: tuple, nats: float) -> _Factors | None:
    wins = tuple((GaussianWindow(m, c, nats=nats), c) for m, c in moving)
    # (before any table: B's atoms are at most Π (count·(2K + |s|) + 1) and its grid's span / step + 1)
    sparse = math.prod(c * (2 * w.k + w.s) + 1 for w, c in wins)
    step = grid_step([Fraction(0), *(w.lattice_weight for w, _ in wins)])
    if min(sparse, int(sum((c * w.span for w, c in wins), Fraction(0)) / step) + 1) > MAX_FACTOR_ATOMS:
        return None
    try:
        b = FiniteLoss(wins)
    except UncertifiedError:
        return None
    if max(min(f.size, f.sparse_bound()) for f in (b, acc.finite)) > MAX_FACTOR_ATOMS:
        return None
    return _Factors(acc.finite, b)


class _Tables:
    """At ``p`` bits: A's atoms (exact values, P- and Q-mass balls), B's sorted grid indices with
    ``pre[c] = Σ_{t<c} P_B`` and ``sufq[c] = Σ_{t≥c} Q_B`` (cumulative sums of positive balls), the
    deficit D of both factors, and float logs for the proposal."""

    def __init__(self, a: FiniteLoss, b: FiniteLoss, p: int):
        self.p = p
        ia, ma = a.atoms(p)
        ib, mb = b.atoms(p)
        masses_a, masses_b = a.tables(p)[0], b.tables(p)[0]
        with prec_ctx(p):
            self.va = [a.value(i) for i in ia]
            self.pa = list(ma)
            self.qa = [masses_a[a.size - 1 - i] for i in ia]  # Q_A[v] = P_A[−v] (a symmetric grid)
            self.ib = list(ib)
            qb = [masses_b[b.size - 1 - i] for i in ib]
            self.pre = _cumulative(mb)
            self.sufq = _cumulative(qb[::-1])[::-1]
            self.sufp = _cumulative(list(mb)[::-1])[::-1]
            self.d_a = a.deficit(p)  # (the finite part's own windows: near-deterministic discrete Gaussians)
            self.d = self.d_a + b.deficit(p)
            self.p_inf = a.tables(p)[3]
        self.offb, self.stb = b.offset, b.step
        # floats for the proposal (logs: the masses reach far below float64's range)
        self.va_f = numpy.array([float(v) for v in self.va])
        self.la = numpy.array([_flog(m) for m in self.pa])
        self.lpre = numpy.array([_flog(x) for x in self.pre])
        self.lsufp = numpy.array([_flog(x) for x in self.sufp])
        self.ib_arr = numpy.array(self.ib, dtype=numpy.float64)
        self.lo_f = float(min(self.va) + (self.offb + self.stb * self.ib[0]))
        self.hi_f = float(max(self.va) + (self.offb + self.stb * self.ib[-1]))

    # -------------------------------------------------------------- exact cuts
    def cuts(self, tau: Fraction, strict: bool) -> list:
        """For each A atom, how many B atoms have ``v + w ≤ τ`` (``< τ`` when ``strict``)."""
        out = []
        for v in self.va:
            x = (tau - v - self.offb) / self.stb
            if strict:
                out.append(bisect.bisect_left(self.ib, math.ceil(x)))
            else:
                out.append(bisect.bisect_right(self.ib, math.floor(x)))
        return out

    def wb(self, c: int) -> Fraction:
        return self.offb + self.stb * self.ib[c]

    def below(self, tau: Fraction) -> Fraction | None:
        """The largest joint loss < τ (None: none)."""
        best = None
        for v, c in zip(self.va, self.cuts(tau, True)):
            if c > 0:
                x = v + self.wb(c - 1)
                best = x if best is None or x > best else best
        return best

    def above(self, tau: Fraction) -> Fraction | None:
        """The smallest joint loss > τ (None: none)."""
        best = None
        for v, c in zip(self.va, self.cuts(tau, False)):
            if c < len(self.ib):
                x = v + self.wb(c)
                best = x if best is None or x < best else best
        return best

    # -------------------------------------------------------------- the proposal
    def _crosses(self, t: float, alpha: float, lalpha: float, l1alpha: float) -> bool:
        """Floats: whether P[L ≤ t] ≥ α (on log P[L ≤ t], or on log P[L > t] for α > 1/2)."""
        k = numpy.floor((t - self.va_f - float(self.offb)) / float(self.stb))
        c = numpy.searchsorted(self.ib_arr, k, side="right")
        if alpha <= 0.5:
            return _lse(self.la + self.lpre[c]) >= lalpha
        lgt = numpy.logaddexp(_lse(self.la + self.lsufp[c]), _flog(self.p_inf))
        return lgt <= l1alpha

    def propose(self, alpha: Fraction) -> Fraction:
        af = float(alpha)
        lalpha = math.log(alpha.numerator) - math.log(alpha.denominator)
        m = 1 - alpha
        l1alpha = math.log(m.numerator) - math.log(m.denominator)
        lo, hi = self.lo_f - 1, self.hi_f + 1
        for _ in range(200):
            mid = (lo + hi) / 2
            if mid in (lo, hi):
                break
            if self._crosses(mid, af, lalpha, l1alpha):
                hi = mid
            else:
                lo = mid
        tau = self.below(Fraction(hi) + Fraction(1, 10**30) * (1 + abs(Fraction(hi))))
        return tau if tau is not None else Fraction(hi)

    # -------------------------------------------------------------- the bracket
    def piece(self, tau: Fraction, alpha: Fraction) -> tuple | None:
        """``(low, e^{−τ}D)`` as balls where τ is certified as the split atom (β ∈ [low, low + e^{−τ}D]), else None."""
        le, lt = self.cuts(tau, False), self.cuts(tau, True)
        with prec_ctx(self.p):
            a = flint.arb(flint.fmpq(alpha.numerator, alpha.denominator))
            p_le = sum((m * self.pre[c] for m, c in zip(self.pa, le)), flint.arb(0))
            p_lt = sum((m * self.pre[c] for m, c in zip(self.pa, lt)), flint.arb(0))
            if not ((p_lt + self.d).upper() <= a.lower() and a.upper() <= p_le.lower()):
                return None
            q_gt = sum((q * self.sufq[c] for q, c in zip(self.qa, le)), flint.arb(0))
            e_tau = (-flint.arb(flint.fmpq(tau.numerator, tau.denominator))).exp()
            low = q_gt + e_tau * (p_le - a)
            return low, e_tau * self.d


def _certified(fac: _Factors, alpha: Fraction) -> tuple | float | None:
    """``(lower, upper)``; or the depth (nats) the windows must reach where their deficit term
    ``e^{−τ}D`` dominates the bracket; None: the split is not certified at any precision."""
    tau = None
    m = min(alpha, 1 - alpha)
    for p in PRECS:
        t = fac.at(p)
        if to_mpf(t.d, True) > mpmath.mpf(m.numerator) / m.denominator / 1024:  # (no τ certifies with the
            # windows' deficit near α or 1 − α: deeper windows, not more precision — unless the finite part's own)
            if to_mpf(t.d_a, True) > mpmath.mpf(m.numerator) / m.denominator / 4096:
                return None
            nats = max(w.nats for w, _ in fac.b.groups)
            return max(2 * nats, math.log(m.denominator) - math.log(m.numerator) + math.log(len(fac.b.groups)) + 16)
        if tau is None:
            tau = t.propose(alpha)
        got, tried = None, [tau]
        nxt_lo, nxt_hi = tau, tau
        for _ in range(_NEIGHBOURS):
            nxt_lo = t.below(nxt_lo) if nxt_lo is not None else None
            nxt_hi = t.above(nxt_hi) if nxt_hi is not None else None
            tried += [x for x in (nxt_hi, nxt_lo) if x is not None]
        for x in tried:
            got = t.piece(x, alpha)
            if got is not None:
                tau = x
                break
        if got is None:
            continue  # (undecided at this precision)
        low, dd = got
        lo = max(to_mpf(low, False), mpmath.mpf(0))
        kept_hi = to_mpf(low, True)
        hi = min(to_mpf(low + dd, True), mpmath.mpf(1))
        if hi <= FLOOR or hi - lo <= BETA_WIDTH / 2 * lo:
            return lo, hi
        if to_mpf(dd, True) > kept_hi - lo:  # the deficit dominates (more precision cannot help): deeper windows,
            with prec_ctx(p):  # unless the finite part's own deficit term is already too wide
                own = to_mpf((-flint.arb(flint.fmpq(tau.numerator, tau.denominator))).exp() * t.d_a, True)
            return None if own > BETA_WIDTH / 8 * lo else _deeper(fac, lo, tau)
    return None


def _deeper(fac: _Factors, beta_lo: mpmath.mpf, tau: Fraction) -> float:
    """The window depth (nats) that puts ``e^{−τ}D`` below ``BETA_WIDTH/8 · β``: each window group
    leaves out at most about e^{−nats} (its construction), so ``nats ≥ −τ − log(BETA_WIDTH/8 · β) +
    log(groups)`` (with margins); where β's lower end is 0 (the windows miss β's atoms), four times
    the depth."""
    nats = max(w.nats for w, _ in fac.b.groups)
    if not beta_lo > 0:
        return 4 * nats
    with mpmath.workdps(30):
        target = -float(mpmath.log(BETA_WIDTH / 8 * beta_lo))
    return max(max(0.0, -float(tau)) + target + math.log(len(fac.b.groups)) + 8, 2 * nats)


def _cumulative(xs) -> list:
    out, s = [flint.arb(0)], flint.arb(0)
    for x in xs:
        s = s + x
        out.append(s)
    return out


def _flog(x: flint.arb) -> float:
    """log of a nonnegative ball's midpoint as a float (−inf at 0)."""
    if x.is_zero() or x.mid() <= 0:
        return -math.inf
    return float(x.mid().log())


def _lse(xs: numpy.ndarray) -> float:
    m = numpy.max(xs) if len(xs) else -math.inf
    if not numpy.isfinite(m):
        return -math.inf
    return float(m + numpy.log(numpy.sum(numpy.exp(xs - m))))
