"""Exact privacy accounting: δ(ε), ε(δ) and the f-DP trade-off curve.

For a :class:`~exactdp.mechanisms.Composition` with lattice sum ``S = scale·W`` (see
:mod:`exactdp.engine.lattice`), ``c`` = ρ and ``K = 2·c·scale``:

* **privacy profile** ``δ(ε) = P[S ≥ k1] − e^ε P[S ≥ k1 + K]``, ``k1 = ⌊scale(ε − c)⌋ + 1``
  (hockey-stick divergence; both directions coincide for symmetric noise).
* **ε(δ)**: on each piece ``ε ∈ [c + (k−1)/scale, c + k/scale]`` both tails are constant,
  so ``ε = log((P[S ≥ k] − δ)/P[S ≥ k + K])`` in closed form once the piece k is found
  (integer secant/bisection on the monotone sequence of breakpoint values).
* **trade-off**: the optimal test rejects when ``S ≥ k`` (randomising on the boundary
  atom); its vertices are ``(α_k, β_k) = (P[S ≥ k], P[S ≥ K − k + 1])`` and f is the
  piecewise-linear interpolation between consecutive vertices.

Every tail comes from :class:`exactdp.engine.tails.TailEngine` with a certified relative error;
the bounds below propagate it (plus the rounding of ``e^ε``, evaluated at 40 digits).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable, Iterable

import mpmath

from exactdp.accounting.results import AccountingResult, DeltaPoint, Diagnostics, EpsilonPoint, TradeoffPoint
from exactdp.engine.lattice import floor_exact, lattice_of
from exactdp.engine.tails import TailEngine, TailValue
from exactdp.mechanisms import Composition
from exactdp.numerics.errors import LatticeTooLarge
from exactdp.numerics.exact import InputError, to_fraction
from exactdp.numerics.precision import DPS_RESULT, to_mpf, workdps
from exactdp.numerics.search import first_true

__all__ = ["ExactAccountant", "delta", "epsilon", "tradeoff", "bun_steinke_epsilon", "as_real"]

_DPS = DPS_RESULT


def as_real(value, field: str):
    """An exact rational (Fraction) or a callable ``f(dps) -> mpf`` for an irrational."""
    if callable(value):
        return value
    return to_fraction(value, field)


def _mp(x, dps=_DPS):
    """An exact-real value (Fraction or ``f(dps)`` callable) at the current precision."""
    if isinstance(x, Fraction):
        return to_mpf(x)
    return x(dps)


def bun_steinke_epsilon(rho, delta) -> Callable:
    """The Bureau's conversion ``ε = ρ + 2 sqrt(ρ ln(1/δ))`` as an exact-real callable."""
    rho = to_fraction(rho, "rho")
    delta = to_fraction(delta, "delta")

    def eps(dps):
        with workdps(dps + 10):
            r = to_mpf(rho)
            d = to_mpf(delta)
            return r + 2 * mpmath.sqrt(r * mpmath.log(1 / d))

    return eps


class ExactAccountant:
    """Exact accountant of one composition (lattice and quadrature state are cached).

    Parameters
    ----------
    composition : Composition
    rel_tol : float
        Certified relative accuracy required of every tail (default 1e-10).

    Notes
    -----
    Method: tilted-contour trapezoid rule with a sieve (:mod:`exactdp.engine.tails`).  Error
    bound: each returned number carries the propagated certified tail bounds.
    Reference: Su, Su & Wang, exact privacy accounting of the 2020 Census (sieve
    quadrature); Dong, Roth & Su (2022) for f-DP.
    """

    def __init__(self, composition: Composition, rel_tol: float = 1e-10):
        if not isinstance(composition, Composition):
            raise InputError("composition", composition, "expected an exactdp.Composition")
        self.composition = composition
        self.lattice = lattice_of(composition)
        try:
            self.engine = TailEngine(self.lattice, rel_tol=rel_tol)
        except (LatticeTooLarge, OverflowError):  # beyond the int64 lattice (issue 11): hand over
            from exactdp.accounting.bracketed import BigLatticeAccountant

            self.__class__ = BigLatticeAccountant
            BigLatticeAccountant.__init__(self, composition, rel_tol)
            return
        self.rho = composition.rho

    # ------------------------------------------------------------------ helpers
    def diagnostics(self) -> Diagnostics:
        lat = self.lattice
        return Diagnostics(
            method="tilted-trapezoid",
            nodes_kept=self.engine.nodes_kept,
            nodes_total=self.engine.n_nodes,
            lattice_scale=str(lat.scale),
            n_groups=lat.n_groups,
        )

    def _piece_eps(self, k: int):
        """Breakpoint ε_k = c + k/scale (exact)."""
        return self.lattice.c + Fraction(k) / self.lattice.scale

    def _tails(self, ks) -> list[TailValue]:
        return self.engine.tails(ks)

    @staticmethod
    def _val(tv: TailValue):
        return mpmath.exp(mpmath.mpf(tv.log_value))

    def _delta_from(self, eps_mp, t1: TailValue, t2: TailValue):
        p1 = self._val(t1)
        p2 = self._val(t2) * mpmath.exp(eps_mp)
        est = p1 - p2
        err = p1 * t1.rel_error + p2 * (t2.rel_error + 1e-30)
        return est, err, p1, p2

    # ------------------------------------------------------------------ δ(ε)
    def delta(self, epsilons: Iterable) -> tuple[DeltaPoint, ...]:
        """δ(ε) for each ε (exact rational, decimal string, or callable for irrationals)."""
        eps_list = [as_real(e, "epsilon") for e in epsilons]
        pairs = [self.lattice.delta_thresholds(e) for e in eps_list]
        flat = self._tails([k for pair in pairs for k in pair])
        out = []
        with workdps(_DPS):
            for i, (e, (k1, k2)) in enumerate(zip(eps_list, pairs)):
                em = _mp(e)
                est, err, p1, p2 = self._delta_from(em, flat[2 * i], flat[2 * i + 1])
                out.append(DeltaPoint(em, est, err, p1, p2, (k1, k2)))
        return tuple(out)

    def _delta_at_breakpoint(self, k: int):
        """(estimate, error) of δ at ε_k = c + k/scale, where P1 = P[S ≥ k+1]... continuous."""
        t1, t2 = self._tails([k, k + self.lattice.shift])
        with workdps(_DPS):
            em = _mp(self._piece_eps(k))
            est, err, _, _ = self._delta_from(em, t1, t2)
        return est, err

    # ------------------------------------------------------------------ ε(δ)
    def epsilon(self, deltas: Iterable) -> tuple[EpsilonPoint, ...]:
        """The smallest ε with δ(ε) ≤ target, for each target δ ∈ (0, 1)."""
        out = []
        for d in deltas:
            dt = to_fraction(d, "delta")
            if not 0 < dt < 1:
                raise InputError("delta", d, "must lie in (0, 1)")
            out.append(self._epsilon_one(dt))
        return tuple(out)

    def _epsilon_one(self, dt: Fraction) -> EpsilonPoint:
        lat = self.lattice
        with workdps(_DPS):
            dmp = to_mpf(dt)
        # δ at breakpoint k as a function of k is non-increasing; find the first k with
        # δ(ε_k) ≤ target.  Upper bracket from the zCDP bound (valid: ρ-zCDP holds).
        eps_hi = bun_steinke_epsilon(lat.c, dt)
        k_hi = floor_exact(lambda dps: eps_hi(dps) - to_mpf(lat.c), lat.scale) + 1
        k_hi = max(k_hi, 1)

        def g(k):
            est, _ = self._delta_at_breakpoint(k)
            return est

        if g(k_hi) > dmp:  # numerical safety: widen
            step = max(1, int(lat.scale))
            while g(k_hi) > dmp:
                k_hi += step
                step *= 2
        k_lo = min(0, k_hi - 1)
        if g(k_lo) <= dmp:  # δ(c) = P[S≥0]−e^c P[S≥K] can already be ≤ δ for tiny designs
            step = max(1, int(lat.scale))
            while g(k_lo) <= dmp:
                k_hi = k_lo
                k_lo -= step
                step *= 2
        k_star = _first_below(g, dmp, k_lo, k_hi)
        t1, t2 = self._tails([k_star, k_star + lat.shift])
        with workdps(_DPS):
            p1 = self._val(t1)
            p2 = self._val(t2)
            e_left = _mp(self._piece_eps(k_star - 1))
            e_right = _mp(self._piece_eps(k_star))

            def solve(a, b):
                if a - dmp <= 0:
                    return e_left
                return min(max(mpmath.log((a - dmp) / b), e_left), e_right)

            est = solve(p1, p2)
            upper = solve(p1 * (1 + t1.rel_error), p2 * (1 - t2.rel_error))
            lower = solve(p1 * (1 - t1.rel_error), p2 * (1 + t2.rel_error))
            # the piece itself is certified when δ(ε_k*) is below the target with its bound
            est_r, err_r = self._delta_at_breakpoint(k_star)
            if est_r + err_r > dmp:
                upper = max(upper, _mp(self._piece_eps(k_star + 1)))
        return EpsilonPoint(dmp, est, lower, upper, k_star)

    # ------------------------------------------------------------------ trade-off
    def tradeoff(self, alphas: Iterable) -> tuple[TradeoffPoint, ...]:
        """β = f(α) for each α ∈ [0, 1] (exact rational or decimal string)."""
        K = self.lattice.shift
        out = []
        for a in alphas:
            af = to_fraction(a, "alpha")
            if not 0 <= af <= 1:
                raise InputError("alpha", a, "must lie in [0, 1]")
            with workdps(_DPS):
                amp = to_mpf(af)
            if af == 0:
                out.append(TradeoffPoint(amp, mpmath.mpf(1), mpmath.mpf(0), 10**18))
                continue
            if af == 1:
                out.append(TradeoffPoint(amp, mpmath.mpf(0), mpmath.mpf(0), -(10**18)))
                continue

            def alpha_at(k):
                return self._val(self._tails([k])[0])

            # α_k is non-increasing in k; find the first k with α_k ≤ α: then α ∈ [α_k, α_{k-1}]
            sd = max(1, int(math.sqrt(self.engine.var)))
            lo, hi = -sd, sd
            while alpha_at(lo) <= amp:
                lo -= 4 * sd
            while alpha_at(hi) > amp:
                hi += 4 * sd
            k = _first_below(alpha_at, amp, lo, hi)
            ta0, ta1, tb0, tb1 = self._tails([k - 1, k, K - k + 2, K - k + 1])
            with workdps(_DPS):
                a0, a1, b0, b1 = (self._val(t) for t in (ta0, ta1, tb0, tb1))
                frac = (a0 - amp) / (a0 - a1) if a0 > a1 else mpmath.mpf(0)
                beta = b0 + (b1 - b0) * frac
                slope = (b1 - b0) / (a0 - a1) if a0 > a1 else mpmath.mpf(0)
                err = (b0 * tb0.rel_error + b1 * tb1.rel_error) + abs(slope) * (a0 * ta0.rel_error + a1 * ta1.rel_error)
            out.append(TradeoffPoint(amp, beta, err, k))
        return tuple(out)

    def tradeoff_vertices(self, ks: Iterable[int]):
        """Exact curve vertices ``(k, α_k, β_k, rel_err_α, rel_err_β)`` at thresholds ks."""
        ks = [int(k) for k in ks]
        K = self.lattice.shift
        tv = self._tails(ks + [K - k + 1 for k in ks])
        n = len(ks)
        return [(k, tv[i], tv[n + i]) for i, k in enumerate(ks)]


def _first_below(g, target, lo: int, hi: int) -> int:
    """Smallest integer k in (lo, hi] with g(k) ≤ target, for non-increasing g with
    g(lo) > target ≥ g(hi).  Secant steps on log g (the probe of
    :func:`exactdp.numerics.search.first_true`) alternate with bisection, so the bracket
    at least halves every two evaluations."""
    vals: dict = {}

    def val(k):
        if k not in vals:
            vals[k] = g(k)
        return vals[k]

    ltarget = mpmath.log(target)

    def probe(a, b):
        ga, gb = val(a), val(b)
        if ga > 0 and gb > 0:
            la, lb = mpmath.log(ga), mpmath.log(gb)
            if la != lb:
                return int(round(a + (b - a) * float((la - ltarget) / (la - lb))))
        return None

    return first_true(lambda k: val(k) <= target, lo, hi, probe=probe)


def _accountant(design, rel_tol) -> ExactAccountant:
    if isinstance(design, ExactAccountant) or getattr(design, "handed_over", False):  # issue 11 hand-over
        return design
    return ExactAccountant(design, rel_tol=rel_tol)


def delta(design, epsilons, *, rel_tol: float = 1e-10) -> AccountingResult:
    """δ(ε) of a composition for each ε.

    Parameters
    ----------
    design : Composition or ExactAccountant
    epsilons : iterable of exact values (``"26.3405888527"``, Fraction) or callables
        ``f(dps) -> mpf`` (e.g. :func:`bun_steinke_epsilon`).
    rel_tol : float
        Certified relative accuracy of each tail.

    Returns
    -------
    AccountingResult
        ``points`` are :class:`DeltaPoint` (value = conservative upper bound).

    Notes
    -----
    Method: ``δ(ε) = P[S ≥ k1] − e^ε P[S ≥ k1 + K]`` with exact integer thresholds; the
    tails by the sieved tilted trapezoid rule.  Error bound: ``rel1·P1 + rel2·e^ε P2``
    from the certified tail bounds.  Reference: Balle & Wang (2018) for the profile of
    Gaussian-type mechanisms; Canonne, Kamath & Steinke (2020) for the discrete Gaussian.
    """
    acc = _accountant(design, rel_tol)
    return AccountingResult("delta", acc.rho, acc.delta(epsilons), acc.diagnostics())


def epsilon(design, deltas, *, rel_tol: float = 1e-10) -> AccountingResult:
    """ε(δ): the smallest ε with δ(ε) ≤ each target (value = certified upper bound).

    Notes
    -----
    Method: piece search on the lattice breakpoints, closed-form solve inside the piece.
    Error bound: the bracket [lower, upper] from the certified tail bounds.
    """
    acc = _accountant(design, rel_tol)
    return AccountingResult("epsilon", acc.rho, acc.epsilon(deltas), acc.diagnostics())


def tradeoff(design, alphas, *, rel_tol: float = 1e-10) -> AccountingResult:
    """The f-DP trade-off β = f(α) (value = certified lower bound).

    Notes
    -----
    Method: randomised Neyman–Pearson test on the lattice; vertices
    ``(P[S ≥ k], P[S ≥ K − k + 1])``, linear in between.  Error bound: propagated
    certified tail bounds of the two bracketing vertices.  Reference: Dong, Roth & Su,
    Gaussian differential privacy (JRSS-B 2022).
    """
    acc = _accountant(design, rel_tol)
    return AccountingResult("tradeoff", acc.rho, acc.tradeoff(alphas), acc.diagnostics())
