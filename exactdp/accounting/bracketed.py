"""Accounting beyond the int64 lattice: δ(ε), ε(δ) and the trade-off from certified tails.

:class:`BigLatticeAccountant` answers every design whose exact lattice is too large for
the int64 engine (two-decimal variances, the P.L. 94-171 budgets, the whole 2020
release, binary-float σ² from other libraries), with the same methods as
:class:`~exactdp.accounting.accountant.ExactAccountant` (which hands such designs over).
Two engines, chosen per design:

* :class:`exactdp.engine.split.SplitTails` — *exact*: all variance groups but one family
  enumerated (tilted windows), the last family by its dense pmf; certified relative error
  ≤ rel_tol per tail.  Chosen when the enumeration is small enough; else
  :class:`exactdp.engine.split_sorted.SortedSplitTails` — *exact*, meet in the middle
  (two windowed halves, one merge per threshold), for up to 12 incommensurate groups;
  tiny-σ² groups as shifted thresholds (:mod:`exactdp.engine.split_free`).
* :class:`exactdp.engine.smoothed.SmoothedTails` — *bracketed*: the lattice-free smoothed
  inversion with monotone brackets of resolution a (any lattice scale).  Resolutions are
  refined per query (a finer engine is built on demand) until every bracket is at most
  :data:`TARGET_WIDTH` relative wide, or no finer sieve is affordable (then the wider,
  still certified bracket is returned).

Every point says which (``certification`` is ``"exact"`` or ``"bracket"``) and carries
``lower``/``upper``.  With W symmetric, c = ρ and θ = ε − c:

* ``δ(ε) = P(W > θ) − e^ε P(W > ε+c) = E(1 − e^{θ−W})₊`` (change of measure); the exact
  engine brackets the two tails, the smoothed one the kernel ``(1 − e^{θ−v})₊`` directly
  (no cancellation: width ≈ 2a·e^ε P(W > ε+c) instead of 2a·(λ+1)(P₁ + e^ε P₂));
* ε(δ): the smallest ε ≥ 0 with δ(ε) ≤ target lies in ``[ε_lo, ε_up]`` with
  ``δ_hi(ε_up) ≤ target < δ_lo(ε_lo)`` (δ is continuous and non-increasing);
* trade-off: see :mod:`exactdp.accounting.tradeoff_bracket` (supporting lines of slope
  ``e^{x−c}``, exact at atoms of any size).

All searches run on float64 thresholds (exact binary rationals) in log space, batched
over the queries; exact thresholds (rational or irrational ε) are enclosed by floats
and the monotone brackets evaluated at the outer ends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.accounting.base import Accountant, bun_steinke_epsilon, check_epsilon_range, sequence_values
from exactdp.accounting.results import (AccountingResult, BracketedDelta, BracketedEpsilon, BracketedTradeoff,
                                       Diagnostics)
from exactdp.accounting.tradeoff_bracket import tradeoff_brackets
from exactdp.engine.families import groups_of
from exactdp.engine.resonance import TooManyResonances
from exactdp.engine.smoothed import SmoothedTails, float_enclosure, log_sub, resolution_for
from exactdp.engine.split import TooManyAtoms
from exactdp.engine.split_free import exact_tails
from exactdp.mechanisms import Composition
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import InputError, to_fraction
from exactdp.numerics.precision import DPS_RESULT, EPS64, to_mpf, workdps

__all__ = ["BigLatticeAccountant", "BracketedDelta", "BracketedEpsilon", "BracketedTradeoff", "TARGET_WIDTH"]

_DPS = DPS_RESULT
#: relative bracket width the smoothed engine refines towards (the issue's bar is 1e-9)
TARGET_WIDTH = 6e-10
#: at most this many resolutions per accountant (each a finer sieve)
MAX_LEVELS = 4
#: a bracket wider than this (relative) is refused rather than reported (e.g. [0, 1]),
#: unless its upper end is below REPORT_FLOOR (then "≤ upper" is the useful statement);
#: with a resolution fixed by the caller, only one not pinning its value within a
#: factor 2 (MAX_COARSE_WIDTH) is
MAX_REPORTED_WIDTH = 1e-6
MAX_COARSE_WIDTH = 0.5
REPORT_FLOOR = 1e-100


def _real(value, field):
    return value if callable(value) else to_fraction(value, field)


def _negative(e) -> bool:
    if isinstance(e, Fraction):
        return e < 0
    with workdps(60):
        return e(60) < 0


def _at(x, dps=_DPS):
    return to_mpf(x) if isinstance(x, Fraction) else x(dps)


def _rel_width(lo, hi):
    with np.errstate(invalid="ignore", over="ignore"):
        return np.where(np.isfinite(hi), -np.expm1(lo - hi), np.inf)


def _mp_exp(x: float):
    return mpmath.exp(mpmath.mpf(float(x))) if x > -np.inf else mpmath.mpf(0)


class BigLatticeAccountant(Accountant):
    """δ(ε), ε(δ) and β = f(α) of a composition of any lattice size (see module).

    Parameters
    ----------
    composition : Composition
    rel_tol : float
        Certified relative accuracy of each exact tail (split engine).
    delta_floor : float
        The δ down to which the first smoothed resolution is sized (finer ones are built
        when a query needs them).
    method : {"auto", "split", "smoothed"}
    resolution : float, optional
        A fixed smoothed resolution a (no refinement); default: sized from ``delta_floor``
        and refined per query.

    Notes
    -----
    Method: exact split enumeration or the Gaussian-smoothed tilted inversion with a
    certified resonance sieve (:mod:`exactdp.engine.smoothed`).  Error bound: every
    number is a certified bracket ``[lower, upper]``.  Reference: Daniels (1954);
    Canonne, Kamath & Steinke (2020); Dong, Roth & Su (2022) for f-DP.
    """

    def __init__(self, composition: Composition, rel_tol: float = 1e-10, delta_floor: float = 1e-40,
                 method: str = "auto", resolution: float | None = None):
        if not isinstance(composition, Composition):
            raise InputError("composition", composition, "expected an exactdp.Composition")
        self.composition = composition
        self.rho = composition.rho
        self.c = composition.rho
        self.groups = groups_of(composition)
        self.rel_tol = float(rel_tol)
        self.tails = None
        self.levels: list = []
        errors = []
        if method in ("auto", "split"):
            try:
                self.tails = exact_tails(self.groups, rel_tol=self.rel_tol / 10)
                self.certification, self.method = "exact", self.tails.method
            except TooManyAtoms as exc:
                errors.append(str(exc))
        if self.tails is None and method in ("auto", "smoothed"):
            try:
                a = resolution if resolution is not None else resolution_for(float(self.c), delta_floor)
                self.tails = SmoothedTails(self.groups, a)
                self.levels = [self.tails]
                self.certification, self.method = "bracket", "smoothed-inversion"
            except TooManyResonances as exc:
                errors.append(str(exc))
        if self.tails is None:
            raise UncertifiedError("design beyond every big-lattice engine: " + "; ".join(errors)
                                   + " (see the README's performance envelope)")
        self._c_f = float(self.c)
        self._c_dn, self._c_up = (x[0] for x in float_enclosure([self.c]))
        self._refused_finer = resolution is not None
        self._fixed_resolution = resolution is not None

    @property
    def engine(self):
        """There is no int64 lattice engine here: the 60-digit twin of
        :mod:`exactdp.accounting.verification` (which re-runs it) does not apply."""
        raise UncertifiedError("this design is beyond the int64 lattice: its numbers are certified brackets of "
                               f"the {self.method} method; the 60-digit lattice twin (--verify) does not apply")

    @property
    def exact(self) -> bool:
        return self.certification == "exact"

    def _zcdp_delta(self, em):
        """exp(−(ε − ρ)²/(4ρ)) rounded up for ε ≥ ρ (ρ-zCDP, Bun & Steinke 2016), else 1."""
        rho = to_mpf(self.c)
        if not em > rho:
            return mpmath.mpf(1)
        return mpmath.exp(-((em - rho) ** 2) / (4 * rho)) * (1 + mpmath.mpf(10) ** (5 - _DPS))

    def _zcdp_epsilon(self, dt: Fraction):
        """The ρ-zCDP conversion (:func:`bun_steinke_epsilon`, δ(ε) ≤ δ there), rounded up."""
        return bun_steinke_epsilon(self.c, dt)(_DPS) * (1 + mpmath.mpf(10) ** (5 - _DPS))

    def _usable(self, lo, hi, what: str) -> None:
        """Refuse a bracket too wide to be a statement (e.g. [0, 1]): a result is
        certified, bracketed tightly, or refused."""
        limit = MAX_COARSE_WIDTH if self._fixed_resolution else MAX_REPORTED_WIDTH
        if hi <= REPORT_FLOOR or hi - lo <= limit * abs(hi):
            return
        raise UncertifiedError(f"{what}: the {self.method} method brackets it only in [{mpmath.nstr(lo, 6)}, "
                               f"{mpmath.nstr(hi, 6)}] (beyond its resolution: values below its e^-690 "
                               f"truncation floor, or near-deterministic σ² ≪ 1 mechanisms in a lattice this "
                               f"large; see the README's performance envelope)")

    # ------------------------------------------------------------------ resolutions
    def _finer(self, level: int, worst: float):
        """The engine one level finer than ``level`` (built on demand), or None."""
        if level + 1 < len(self.levels):
            return self.levels[level + 1]
        if self._refused_finer or len(self.levels) >= MAX_LEVELS:
            return None
        a = self.levels[level].a
        factor = min(0.5, 0.7 * TARGET_WIDTH / max(worst, 1e-300))
        try:
            eng = SmoothedTails(self.groups, a * max(factor, 1e-3))
        except TooManyResonances:
            self._refused_finer = True
            return None
        self.levels.append(eng)
        return eng

    def _refine(self, compute, n: int, width_of=_rel_width):
        """Run ``compute(engine, idx) -> (lo, hi, *extra)`` on the coarsest level, then on
        finer levels for the queries whose bracket is wider than TARGET_WIDTH."""
        res = list(compute(self.levels[0] if self.levels else self.tails, np.arange(n)))
        if not self.levels:
            return res
        level = 0
        for _ in range(MAX_LEVELS):
            w = width_of(res[0], res[1])
            bad = np.flatnonzero(w > TARGET_WIDTH)
            if bad.size == 0:
                break
            eng = self._finer(level, float(np.max(w[bad][np.isfinite(w[bad])], initial=1.0)))
            if eng is None:
                break
            level += 1
            sub = compute(eng, bad)
            better = width_of(sub[0], sub[1]) < w[bad]
            for k, arr in enumerate(sub):
                res[k][bad[better]] = arr[better]
        return res

    # ------------------------------------------------------------------ tails
    def _log_tails_on(self, eng, ts, strict: bool) -> tuple:
        """Certified (log lo, log hi) float arrays of ``P(W > t)`` / ``P(W ≥ t)`` on one engine."""
        if not isinstance(eng, SmoothedTails):  # an exact enumeration: linear intervals
            iv = np.array(eng.intervals(ts, strict), dtype=float).reshape(-1, 2)
            with np.errstate(divide="ignore"):
                lo, hi = np.log(iv[:, 0]), np.log(iv[:, 1])
            lo = np.where(np.isfinite(lo), lo - 4 * EPS64 * (np.abs(lo) + 1), -np.inf)
            hi = np.minimum(hi + 4 * EPS64 * (np.abs(np.where(np.isfinite(hi), hi, 0.0)) + 1), 0.0)
            return lo, hi
        dn, up = float_enclosure(ts)
        return eng.log_tail_brackets(dn, up)

    def log_tails(self, ts, strict: bool = True) -> tuple:
        """Certified (log lo, log hi) of ``P(W > t)`` (strict) or ``P(W ≥ t)`` for exact t
        (Fraction, float, or mpf taken exactly), refined to TARGET_WIDTH where possible."""
        ts = list(ts)
        return tuple(self._refine(lambda eng, idx: self._log_tails_on(eng, [ts[i] for i in idx], strict), len(ts)))

    def brackets(self, ts, strict: bool = True) -> list:
        """Certified (lo, hi) mpf of ``P(W > t)`` (strict) or ``P(W ≥ t)`` for each t."""
        lo, hi = self.log_tails([t if not callable(t) else t(_DPS + 20) for t in ts], strict)
        with workdps(_DPS):
            return [(_mp_exp(a), min(_mp_exp(b), mpmath.mpf(1))) for a, b in zip(lo, hi)]

    def diagnostics(self) -> Diagnostics:
        kept = getattr(self.tails, "nodes_kept", getattr(self.tails, "n_atoms", 0))
        return Diagnostics(method=self.method, nodes_kept=int(kept), nodes_total=0, lattice_scale="none",
                           n_groups=len(self.groups))

    # ------------------------------------------------------------------ δ(ε)
    def _eps_real(self, e):
        """(exact threshold θ = ε − c or its mpf, ε float enclosure) of an exact real ε."""
        if isinstance(e, Fraction):
            dn, up = float_enclosure([e])
            return e - self.c, (dn[0], up[0])
        with workdps(_DPS + 20):
            x = e(_DPS + 20)
            th = x - to_mpf(self.c)
        dn, up = float_enclosure([x])
        return th, (math.nextafter(dn[0], -math.inf), math.nextafter(up[0], math.inf))

    def _log_delta_on(self, eng, th_dn, th_up, e_dn, e_up, exact) -> tuple:
        """(log lo, log hi, log P₁ mid, log e^εP₂ mid) of δ at θ = ε − c, given float
        enclosures of θ and ε and ``exact(i)``, the exact θ of query i (split engine)."""
        n = th_dn.size
        lo, hi = np.full(n, -np.inf), np.zeros(n)
        lp1, lp2 = np.full(n, -np.inf), np.full(n, -np.inf)
        direct = np.zeros(n, dtype=bool)
        if isinstance(eng, SmoothedTails):
            direct = th_dn >= -eng.period / 16
        if direct.any():
            k = np.flatnonzero(direct)
            lo[k], hi[k] = eng.log_delta_brackets(th_dn[k], th_up[k])
            est = eng.log_tail_estimate(np.abs(th_dn[k]))
            with np.errstate(divide="ignore", over="ignore", invalid="ignore"):  # the branch not taken
                lp1[k] = np.where(th_dn[k] >= 0, est, np.log1p(-np.exp(np.minimum(est, 0.0))))
            with np.errstate(invalid="ignore"):
                mid = 0.5 * (lo[k] + hi[k])
                lp2[k] = lp1[k] + np.log(np.maximum(-np.expm1(mid - lp1[k]), 1e-300))
        rest = np.flatnonzero(~direct)
        if rest.size:
            m = rest.size
            if isinstance(eng, SmoothedTails):
                d2 = np.nextafter(th_dn[rest] + 2 * self._c_dn, -np.inf)
                u2 = np.nextafter(th_up[rest] + 2 * self._c_up, np.inf)
                both = eng.log_tail_brackets(np.concatenate([th_dn[rest], d2]), np.concatenate([th_up[rest], u2]))
            else:
                t1 = [exact(i) for i in rest]
                both = self._log_tails_on(eng, t1 + [_plus_2c(t, self.c) for t in t1], True)  # one window set
            l1, h1, l2, h2 = both[0][:m], both[1][:m], both[0][m:], both[1][m:]
            a_hi = e_up[rest] + h2 + 4 * EPS64 * (np.abs(e_up[rest]) + np.abs(h2) + 1)
            a_lo = e_dn[rest] + l2 - 4 * EPS64 * (np.abs(e_dn[rest]) + np.abs(l2) + 1)
            lo[rest] = log_sub(l1, a_hi) - 8 * EPS64 * (np.abs(l1) + 1)
            hi[rest] = np.minimum(log_sub(h1, a_lo) + 8 * EPS64 * (np.abs(h1) + 1), 0.0)
            lp1[rest] = 0.5 * (l1 + h1)
            with np.errstate(over="ignore", invalid="ignore"):  # a diagnostic estimate only
                lp2[rest] = 0.5 * e_dn[rest] + 0.5 * e_up[rest] + 0.5 * (l2 + h2)
        return lo, hi, lp1, lp2

    def _log_deltas(self, es) -> tuple:
        """Batched certified log brackets of δ at exact reals ε (Fraction or callable)."""
        info = [self._eps_real(e) for e in es]
        thetas = [th for th, _ in info]
        dn, up = float_enclosure(thetas)
        e_dn = np.array([enc[0] for _, enc in info])
        e_up = np.array([enc[1] for _, enc in info])
        return tuple(self._refine(lambda eng, idx: self._log_delta_on(eng, dn[idx], up[idx], e_dn[idx], e_up[idx],
                                                                      lambda i: thetas[idx[i]]), len(es)))

    def _log_deltas_at(self, eps: np.ndarray) -> tuple:
        """:meth:`_log_deltas` at float ε ≥ 0 (exact binary rationals), without Fractions on
        the smoothed path: θ enclosed by ``[ε − c_up, ε − c_dn]`` rounded outwards."""
        eps = np.asarray(eps, dtype=float)
        if not self.levels:
            return self._log_deltas([Fraction(float(x)) for x in eps])
        dn = np.nextafter(eps - self._c_up, -np.inf)
        up = np.nextafter(eps - self._c_dn, np.inf)
        return tuple(self._refine(lambda eng, idx: self._log_delta_on(eng, dn[idx], up[idx], eps[idx], eps[idx], None),
                                  eps.size))

    def delta(self, epsilons) -> tuple:
        """δ(ε) for each ε (exact value or ``f(dps)`` callable), as certified brackets."""
        epsilons = sequence_values(epsilons, "epsilon")
        es = [_real(e, "epsilon") for e in epsilons]
        check_epsilon_range(self.rho, es, "epsilon", shown=epsilons)
        neg = [_negative(e) for e in es]
        # ε < 0: δ(ε) = 1 − e^ε + e^ε δ(−ε) (a symmetric design; non-negative terms)
        pos = [(-e if isinstance(e, Fraction) else (lambda dps, e=e: -e(dps))) if n else e for e, n in zip(es, neg)]
        lo, hi, lp1, lp2 = self._log_deltas(pos)
        out = []
        with workdps(_DPS):
            widen = mpmath.mpf(10) ** (5 - _DPS)  # the mp rounding of the ε < 0 map, outward
            for k, e in enumerate(es):
                th = e - self.c if isinstance(e, Fraction) else None
                l, h = _mp_exp(lo[k]), min(_mp_exp(hi[k]), mpmath.mpf(1))
                p1, p2 = _mp_exp(lp1[k]), _mp_exp(lp2[k])
                if neg[k]:  # the two terms: (1 − e^ε + e^ε p1(−ε)) − e^ε p2(−ε)
                    em = _at(e)
                    ee, one = mpmath.exp(em), -mpmath.expm1(em)
                    l, h = (one + ee * l) * (1 - widen), min((one + ee * h) * (1 + widen), mpmath.mpf(1))
                    p1, p2 = one + ee * p1, ee * p2
                else:  # ρ-zCDP: δ(ε) ≤ exp(−(ε − ρ)²/(4ρ)) for ε ≥ ρ (beyond the engines' floor)
                    h = min(h, self._zcdp_delta(_at(e)) * (1 + widen))
                    l = min(l, h)
                ths = (th, th + 2 * self.c) if th is not None else ()
                self._usable(l, h, f"δ(ε={mpmath.nstr(_at(e), 12)})")
                out.append(BracketedDelta(_at(e), (l + h) / 2, (h - l) / 2, p1, p2, ths, self.certification))
        return tuple(out)

    # ------------------------------------------------------------------ ε(δ)
    def epsilon(self, deltas) -> tuple:
        """The smallest ε ≥ 0 with δ(ε) ≤ each target, as a certified bracket.

        Newton steps on log δ (``d log δ/dε = −e^ε P(W > ε+c)/δ``) for all targets at once
        on float ε (exact binary rationals), then certified sides ``δ_hi(upper) ≤ target <
        δ_lo(lower)``, stepping outwards from the Newton point by 1.5× the bracket's own
        width (×4 per retry)."""
        deltas = sequence_values(deltas, "delta")
        dts = []
        for d in deltas:
            dt = to_fraction(d, "delta")
            if not 0 < dt < 1:
                raise InputError("delta", d, "must lie in (0, 1)")
            dts.append(dt)
        n = len(dts)
        with workdps(30):
            logs = [mpmath.log(to_mpf(d)) for d in dts]
        lt = np.array([float(x) for x in logs])
        lt_dn = lt - 4 * EPS64 * (np.abs(lt) + 1)  # log target enclosure
        lt_up = lt + 4 * EPS64 * (np.abs(lt) + 1)
        ev = self._log_deltas_at
        zlo, zhi, _, _ = ev(np.zeros(1))
        c = self._c_f
        todo = np.flatnonzero(zhi[0] > lt_dn)  # δ(0) may exceed the target
        eps = np.zeros(n)
        eps[todo] = c + 2 * np.sqrt(c * np.maximum(-lt[todo], 1e-300))
        active = todo
        for _ in range(60):
            if active.size == 0:
                break
            lo, hi, lp1, lp2 = ev(eps[active])
            mid = 0.5 * (lo + hi)
            good = np.isfinite(mid) & np.isfinite(lp2)
            with np.errstate(over="ignore", invalid="ignore"):
                slope = np.exp(lp2 - mid)  # −d log δ/dε
                step = np.where(good, (mid - lt[active]) / np.maximum(slope, 1e-300), 0.0)
            step = np.clip(step, -eps[active] / 2 - 1e-300, 4 * max(c, 1.0) + 4 * eps[active])
            new = np.where(good, np.maximum(eps[active] + step, 0.0), eps[active] / 2)
            moved = np.abs(new - eps[active]) > 1e-13 * np.maximum(1.0, eps[active])
            eps[active] = new
            active = active[moved | ~good]
        up, low = eps.copy(), eps.copy()
        if todo.size:
            lo, hi, lp1, lp2 = ev(eps[todo])
            with np.errstate(over="ignore", invalid="ignore"):
                slope = np.maximum(np.exp(lp2 - 0.5 * (lo + hi)), 1e-300)
                w = np.where(np.isfinite(lo), (hi - lo) / slope, 1e-3 * np.maximum(eps[todo], 1.0))
            base = np.maximum(1.5 * w, 4e-16 * np.maximum(1.0, eps[todo]))
            # ρ-zCDP: δ(ε) ≤ target for ε ≥ ρ + 2 sqrt(ρ log(1/target)) (rounded up): a
            # certified upper end where the engines' floor hides δ (the walk stops there)
            zc = (self._c_up + 2 * np.sqrt(self._c_up * np.maximum(-lt_dn[todo], 0.0))) * (1 + 1e-12) + 1e-300
            for side in ("up", "low"):
                pos = eps[todo].copy()
                k = base.copy()
                pending = np.arange(todo.size)
                for _ in range(200):
                    if pending.size == 0:
                        break
                    sel = todo[pending]
                    if side == "up":
                        pos[pending] = np.minimum(pos[pending] + k[pending], zc[pending])
                    else:
                        pos[pending] = np.maximum(pos[pending] - k[pending], 0.0)
                    l2, h2, _, _ = ev(pos[pending])
                    if side == "up":
                        done = (h2 <= lt_dn[sel]) | (pos[pending] >= zc[pending])
                    else:
                        done = (l2 > lt_up[sel]) | (pos[pending] == 0)
                    k[pending] *= 4
                    pending = pending[~done]
                (up if side == "up" else low)[todo] = pos
            _bisect(ev, todo, low, up, lt_dn, lt_up)
        out = []
        solved = set(todo.tolist())
        with workdps(_DPS):
            for i in range(n):
                target = to_mpf(dts[i])
                if i not in solved:
                    z = mpmath.mpf(0)
                    out.append(BracketedEpsilon(target, z, z, z, 0, self.certification))
                    continue
                u, l = mpmath.mpf(float(up[i])), mpmath.mpf(float(low[i]))
                u = min(u, self._zcdp_epsilon(dts[i]))  # ε ≤ ρ + 2 sqrt(ρ log(1/δ)) (ρ-zCDP)
                self._usable(min(l, u), u, f"ε(δ={mpmath.nstr(target, 6)})")
                out.append(BracketedEpsilon(target, mpmath.mpf(float(eps[i])), min(l, u), u, 0, self.certification))
        return tuple(out)

    # ------------------------------------------------------------------ trade-off
    def tradeoff(self, alphas) -> tuple:
        """β = f(α) for each α ∈ [0, 1], as a certified bracket (value = lower bound)."""
        alphas = sequence_values(alphas, "alpha")
        afs = []
        for a in alphas:
            af = to_fraction(a, "alpha")
            if not 0 <= af <= 1:
                raise InputError("alpha", a, "must lie in [0, 1]")
            afs.append(af)
        inner = [k for k, af in enumerate(afs) if 0 < af < 1]
        br = {}
        if inner:
            lo, hi = self._refine(lambda eng, idx: tradeoff_brackets(self, eng, [afs[inner[i]] for i in idx]),
                                  len(inner), width_of=_lin_rel_width)
            br = {k: (lo[i], hi[i]) for i, k in enumerate(inner)}
        out = []
        with workdps(_DPS):
            for k, af in enumerate(afs):
                amp = to_mpf(af)
                if k not in br:
                    out.append(BracketedTradeoff(amp, mpmath.mpf(1 - af), mpmath.mpf(0), 0, self.certification))
                    continue
                l, h = (mpmath.mpf(float(v)) for v in br[k])
                self._usable(l, h, f"β(α={mpmath.nstr(amp, 6)})")
                out.append(BracketedTradeoff(amp, (l + h) / 2, (h - l) / 2, 0, self.certification))
        return tuple(out)

    def tradeoff_vertex_log_brackets(self, xs) -> tuple:
        """Float log brackets ``(α lo, α hi, β lo, β hi)`` of the curve points
        ``(P(W ≥ x), P(W > 2c − x))`` at exact loss offsets x (one batch each)."""
        xs = list(xs)
        a_lo, a_hi = self.log_tails(xs, strict=False)
        b_lo, b_hi = self.log_tails([2 * self.c - x for x in xs], strict=True)
        return a_lo, a_hi, b_lo, b_hi

    def tradeoff_vertex_brackets(self, xs) -> list:
        """Curve points ``(P(W ≥ x), P(W > 2c − x))`` as mpf brackets, for loss offsets x."""
        xs = list(xs)
        al = self.brackets(xs, strict=False)
        be = self.brackets([2 * self.c - x for x in xs], strict=True)
        return list(zip(al, be))


def _bisect(ev, rows, low, up, lt_dn, lt_up, rounds: int = 100) -> None:
    """Narrow the certified ε brackets ``[low, up]`` of ``rows`` wider than TARGET_WIDTH in
    place, by bisection on certified decisions only (``δ_hi(mid) ≤ target``: mid is an
    upper end; ``δ_lo(mid) > target``: a lower end; else the row stops).  This is what
    settles a staircase δ(ε) (near-deterministic mechanisms), where Newton steps fail."""
    active = rows[(up[rows] - low[rows]) > TARGET_WIDTH * np.maximum(up[rows], 1e-300)]
    for _ in range(rounds):
        if active.size == 0:
            return
        mid = 0.5 * (low[active] + up[active])
        lo, hi, _, _ = ev(mid)
        is_up = hi <= lt_dn[active]
        is_low = ~is_up & (lo > lt_up[active])
        up[active[is_up]] = mid[is_up]
        low[active[is_low]] = mid[is_low]
        moved = is_up | is_low
        active = active[moved & ((up[active] - low[active]) > TARGET_WIDTH * np.maximum(up[active], 1e-300))]


def _lin_rel_width(lo, hi):
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(hi > 0, (hi - lo) / hi, 0.0)


def _plus_2c(th, c):
    if isinstance(th, (Fraction, int)):
        return th + 2 * c
    with workdps(_DPS + 20):
        return th + 2 * to_mpf(c)


def result(kind: str, acc: BigLatticeAccountant, points) -> AccountingResult:
    """An AccountingResult of a big-lattice accountant (same shape as the exact one's)."""
    return AccountingResult(kind, acc.rho, tuple(points), acc.diagnostics())
