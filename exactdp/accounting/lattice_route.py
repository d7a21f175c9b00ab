"""The int64 lattice route: δ(ε), ε(δ) and the f-DP trade-off of a lattice sum, as certified points.

The route of :mod:`exactdp.accounting.plan` for designs whose exact lattice fits int64 phase
arithmetic (:class:`LatticeAccountant`; users reach it through
:class:`exactdp.accounting.accountant.ExactAccountant`, whose planner builds it).

For a :class:`~exactdp.mechanisms.Composition` with lattice sum ``S = scale·W`` (see
:mod:`exactdp.engine.lattice`), ``c`` = ρ, ``β = 1/scale`` and ``K = 2·c·scale``:

* **privacy profile** (hockey-stick divergence; both directions coincide for symmetric
  noise), for ε ≥ 0 with ``k = ⌊scale(ε − c)⌋ + 1``:

      δ(ε) = Σ_{s≥k} P(S = s)(1 − e^{ε − c − βs}) = P[S ≥ k] − e^ε P[S ≥ k + K].

  The left form is a sum of non-negative terms; the engine evaluates it directly (no
  cancellation at any depth or for ε ≈ 0); the right form, from two certified tails, is
  a second certified interval, and the two are intersected.  For ε < 0,
  ``δ(ε) = 1 − e^ε + e^ε δ(−ε)`` (non-negative terms).
* **ε(δ)**: on each piece ``ε ∈ [ε_{k−1}, ε_k]``, ``ε_k = c + k/scale``, both tails are
  constant, so ``δ(ε) = δ(ε_{k−1}) − (e^ε − e^{ε_{k−1}}) P[S ≥ k + K]``; the piece is
  found on certified predicates and ε solved in closed form inside it (the methods of
  :class:`exactdp.accounting.inversion.ProfileInversion`).  Targets above 1/2 are
  compared through ``1 − δ`` (computed directly as ``P[S ≤ k − 1] + e^ε P[S ≥ k + K]``)
  and ``1 − target`` (exact).
* **trade-off**: the optimal test rejects when ``S ≥ k`` (randomising on the boundary
  atom); its vertices are ``(α_k, β_k) = (P[S ≥ k], P[S ≥ K − k + 1])``; between two
  vertices f is linear with slope ``−e^{β(k−1) − c}`` (the likelihood ratio of the
  boundary atom, exact).  The vertex is located on certified brackets of α_k, or of the
  lower tail ``1 − α_k = P[S ≥ 1 − k]`` when α > 1/2 (with 1 − α exact); the methods
  are those of :class:`exactdp.accounting.curve.TradeoffCurve`.

Every tail comes from :class:`exactdp.engine.tails.TailEngine` with a certified relative
error; a point whose certified relative error exceeds ``max(1e-9, 10·rel_tol)`` raises
:class:`UncertifiedError` instead of being returned.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from fractions import Fraction
from typing import Any

import mpmath

from exactdp.accounting.base import Accountant, check_epsilon_range, check_rel_tol, sequence_values
from exactdp.accounting.curve import RESULT_ROUNDING, TradeoffCurve, exact_mp, tail_bounds
from exactdp.accounting.inversion import ProfileInversion
from exactdp.accounting.results import DeltaPoint, Diagnostics
from exactdp.accounting.screen import ProfileValues
from exactdp.engine.lattice import LatticeSum, lattice_of
from exactdp.engine.tails import TailEngine, TailValue, WeightedQuery
from exactdp.mechanisms import Composition
from exactdp.numerics.arith import (
    FTWO,
    MPFR_FAIL,
    ctx_prec,
    from_float,
    from_rational,
    fzero,
    libmp_ops,
    make,
    mpf_add,
    mpf_div,
    mpf_exp,
    mpf_le,
    mpf_lt,
    mpf_mul,
    mpf_sub,
    mpfr_ops,
    raw_convert,
    raw_exp,
    raw_fraction,
    to_float,
)
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import InputError, MemoReal, as_real, check_sigma2_range
from exactdp.numerics.precision import DPS_DECIDE, DPS_GUARD, DPS_RESULT, workdps

__all__ = ["LatticeAccountant"]

#: the hockey-stick value of a profile whose kernel was not asked (see _profile_values)
_NO_VALUE = TailValue(0, -math.inf, math.inf, "none", 0, 0, 0.0)


def _k1_held(e, lat: LatticeSum):
    """``lat.delta_thresholds(e)[0]`` for a :class:`MemoReal` ε from the value it holds, or
    None (then ask ``delta_thresholds``).

    That call is :func:`~exactdp.engine.lattice.floor_exact` of ``(ε − c)·scale`` at 50
    digits, plus one, where ``ε(50)`` is the first held value of at least 50 digits ``v``
    (a dyadic rational): it computes ``y = (v − c)·scale`` with four roundings at 50
    digits (error ≤ 4·2^-166·(|c|·scale + |y|)) and keeps ``⌊y⌋`` when ``y`` is more than
    ``1e-40·(1 + |y|)`` from an integer.  Here ``y`` is exact (integers) and ``⌊y⌋`` kept
    when its distance to an integer exceeds ``2e-40·(1 + |y| + |c|·scale)`` (twice the
    other's margin, in float with a 1 % allowance): the computed ``y`` then has the same
    floor and passes its test, so the same integer; otherwise None."""
    if type(e) is not MemoReal:
        return None
    v = None
    for d, x in e.cache.items():  # MemoReal's choice of ε(50) (its context at 50 digits)
        if d >= 50:
            v = x
            break
    if not isinstance(v, mpmath.mpf):
        return None
    sign, man, exp, _ = v._mpf_
    if not man:
        return None
    c, sc = lat.c, lat.scale
    a, b, st, tt = c.numerator, c.denominator, sc.numerator, sc.denominator
    m = -man if sign else man
    if exp >= 0:
        num, den = (m * b << exp) - a, b
    else:
        num, den = m * b - (a << -exp), b << -exp
    num *= st  # y = num/den exactly
    den *= tt
    fl, r = divmod(num, den)
    try:
        y_abs = abs(num / den)
        gap = min(r, den - r) / den
        need = 2e-40 * (1.0 + y_abs + float(c) * float(sc)) * 1.01
    except OverflowError:
        return None
    if not gap > need:
        return None
    return fl + 1


#: id of a mechanism whose σ² check_sigma2_range accepted → the mechanism (held, so the id is not
#: reused); then (p, q) of the σ² = p/q accepted
_S2_CHECKED: dict = {}
_S2_IN_RANGE: set = set()


def check_groups_sigma2(composition: Composition) -> None:
    """``check_sigma2_range(m.sigma2)`` of every shifted mechanism of the composition (a pure
    check, done once per mechanism object and once per σ² value: the sweep's and the tuner's
    compositions share their mechanisms)."""
    checked = _S2_CHECKED
    for m, _ in composition.groups:
        if m.shift != 0 and checked.get(id(m)) is not m:
            s2 = m.sigma2
            key = (s2.numerator, s2.denominator)
            if key not in _S2_IN_RANGE:
                check_sigma2_range(s2)
                if len(_S2_IN_RANGE) >= 65536:
                    _S2_IN_RANGE.clear()
                _S2_IN_RANGE.add(key)
            if len(checked) >= 65536:
                checked.clear()
            checked[id(m)] = m


class _Profile:
    """Certified δ(ε) and 1 − δ(ε) at one ε: estimates and brackets (mp)."""

    __slots__ = ("d", "d_lo", "d_hi", "c", "c_lo", "c_hi", "p1", "p2", "thresholds")
    # mpf values (estimate and certified bracket of δ and of 1 − δ; diagnostic tail terms)
    d: Any
    d_lo: Any
    d_hi: Any
    c: Any
    c_lo: Any
    c_hi: Any
    p1: Any
    p2: Any
    thresholds: tuple

    def rel(self):
        return (self.d_hi - self.d_lo) / 2 / self.d if self.d > 0 else mpmath.inf

class LatticeAccountant(ProfileInversion, TradeoffCurve, Accountant):
    """The lattice route's accountant of one composition (lattice and quadrature state are cached).

    Parameters
    ----------
    composition : Composition
    rel_tol : float
        Certified relative accuracy required of every tail (default 1e-10, in
        [1e-15, 1e-2]).
    lattice : LatticeSum, optional
        The design's exact lattice when the planner has built it already.

    Notes
    -----
    Method: tilted-contour trapezoid rule with a sieve, lattice convolution, tilted-atom
    enumeration or conditioning (:mod:`exactdp.engine.tails`).  Error bound: each
    returned number carries the propagated certified bounds, ≤ ``max(1e-9, 10·rel_tol)``
    relative, or :class:`UncertifiedError` is raised.  Reference: Su, Su & Wang, exact
    privacy accounting of the 2020 Census (sieve quadrature); Dong, Roth & Su (2022) for
    f-DP.
    """

    def __init__(self, composition: Composition, rel_tol: float = 1e-10, lattice: LatticeSum | None = None):
        self._setup(composition, rel_tol, lattice)

    #: the planner's fallback for a query this route cannot certify (a callable returning an
    #: accountant of the declared fallback route, or None); set by :mod:`exactdp.accounting.plan`
    fallback: Callable[[], Accountant | None] | None = None

    def _setup(self, composition: Composition, rel_tol, lattice: LatticeSum | None = None) -> None:
        if not isinstance(composition, Composition):
            raise InputError("composition", composition, "expected an exactdp.Composition")
        self.rel_tol = check_rel_tol(rel_tol)
        self.max_rel = max(1e-9, 10 * self.rel_tol)
        check_groups_sigma2(composition)
        self.composition = composition
        self.rho = rho = composition.rho
        self.identical = all(m.shift == 0 for m, _ in composition.groups)
        if self.identical:  # P = Q: δ(ε) = (1 − e^ε)_+, β = 1 − α
            self.lattice = None
            self.engine = None
            return
        self.lattice = lat = lattice if lattice is not None else lattice_of(composition, rho)
        a, b, sn, sd = lat.c.numerator, lat.c.denominator, lat.scale.numerator, lat.scale.denominator
        self._ints = (a * sn, sd * b, b * sn)  # ε_k = (a·s + k·t·b)/(b·s), see _piece_eps
        self.engine = TailEngine(self.lattice, rel_tol=self.rel_tol)
        self._memo_tails: dict = {}
        self._query_raws: dict = {}  # (prec, rounding) → raw c and β of _query's callable path
        self._memo_weighted: dict = {}
        self._curve_pts: list = []  # (piece as float, sqrt(−log δ)) estimates: ε(δ) guesses only

    # ------------------------------------------------------------------ helpers
    def diagnostics(self) -> Diagnostics:
        if self.identical:
            return Diagnostics("identical-distributions", 0, 0, "0", 0)
        lat = self._lat
        return Diagnostics(
            method=self._eng.method,
            nodes_kept=self._eng.nodes_kept,
            nodes_total=self._eng.n_nodes,
            lattice_scale=str(lat.scale),
            n_groups=lat.n_groups,
        )

    def _piece_eps(self, k: int):
        """Breakpoint ε_k = c + k/scale (exact): ``(a·s + k·t·b)/(b·s)`` for c = a/b,
        scale = s/t, normalised once (the Fraction that ``c + Fraction(k)/scale`` gives)."""
        ints = self._ints
        return Fraction(ints[0] + int(k) * ints[1], ints[2])

    def _tails(self, ks) -> list[TailValue]:
        return self._eng.tails(ks)

    #: values kept per accountant by :meth:`_loose_tails` / :meth:`_loose_weighted`
    MEMO_SIZE = 50_000

    def _loose_tails(self, ks) -> list[TailValue]:
        """``engine.tails(ks, strict=False)``, each threshold computed once per accountant
        (a value is a pure function of its threshold: the searches re-ask the same ones)."""
        memo = self._memo_tails
        if len(memo) > self.MEMO_SIZE:  # (cleared before the values to compute are chosen: all of ks are then in it)
            memo.clear()
        todo = sorted({int(k) for k in ks} - memo.keys())
        if todo:
            memo.update(zip(todo, self._eng.tails(todo, strict=False)))
        return [memo[int(k)] for k in ks]

    def _loose_weighted(self, queries) -> list[TailValue]:
        """``engine.weighted(queries, strict=False)``, each query computed once per accountant."""
        memo = self._memo_weighted
        if len(memo) > self.MEMO_SIZE:
            memo.clear()
        todo = list(dict.fromkeys(q for q in queries if q not in memo))
        if todo:
            memo.update(zip(todo, self._eng.weighted(todo, strict=False)))
        return [memo[q] for q in queries]

    def _uncertified(self, what: str):
        return UncertifiedError(f"{what} could not be certified to {self.max_rel:g} relative; try a looser "
                                "--rel-tol (rel_tol=) or the lattice-free route (--method lattice-free, "
                                "method=\"lattice-free\": exactdp.accounting.lattice_free.LatticeFreeAccountant)")

    def _profiles(self, eps_list, full: bool = True, complement: bool = True, pieces=None) -> list[_Profile]:
        """Certified δ(ε) (and 1 − δ(ε) when ``complement``) for exact ε ≥ 0 (Fraction or
        callable).  ``full=False`` (searches) evaluates the kernel and P[S ≥ k2] only,
        and the first tail only when the kernel alone is not certified.  ``pieces``: as
        in :meth:`_profile_values`."""
        recs = self._profile_values(eps_list, full, complement, pieces)
        with workdps(DPS_RESULT):
            return [self._assemble(r) for r in recs]

    def _profile_values(self, eps_list, full: bool = True, complement: bool = True,
                        pieces=None) -> list[ProfileValues]:
        """The engine values behind :meth:`_profiles` (one batch for all ε), unassembled.

        ``pieces``: the ε are the breakpoints ``ε_k = c + k/scale`` of these k (then
        ``k1 = k + 1``, ``x0 = −β`` and ``x1 = 0`` exactly, without rational arithmetic)."""
        lat = self._lat
        beta = Fraction(1) / lat.scale
        fbeta = float(beta)
        if pieces is not None:
            queries = piece_queries(pieces, fbeta)
        else:
            queries = [self._query(e, beta, fbeta) for e in eps_list]
        if self._eng.weighted_costly:
            # the chosen method gives tails only: the kernel is asked only where the
            # difference of the two certified tails is not tight enough
            ks = [q.threshold + lat.shift for q in queries] + [q.threshold for q in queries]
            if complement:
                ks += [1 - q.threshold for q in queries]
            tv = dict(zip(ks, self._loose_tails(ks)))
            need1 = [True] * len(queries)
            loose = [i for i, (q, e) in enumerate(zip(queries, eps_list))
                     if not self._tails_tight(tv[q.threshold], tv[q.threshold + lat.shift], e)]
            got = dict(zip(loose, self._loose_weighted([queries[i] for i in loose])))
            wv = [got.get(i, _NO_VALUE) for i in range(len(queries))]
        else:
            wv = self._loose_weighted(queries)
            need1 = [full or not (self._eng.done(w) and w.rel_error <= self.max_rel / 4) for w in wv]
            ks = [q.threshold + lat.shift for q in queries]
            ks += [q.threshold for q, n in zip(queries, need1) if n]
            if complement:
                ks += [1 - q.threshold for q in queries]  # P[S ≤ k1 − 1] = P[S ≥ 1 − k1]
            tv = dict(zip(ks, self._loose_tails(ks)))
        return [ProfileValues(e, q.threshold, q.threshold + lat.shift, w, tv[q.threshold] if n else None,
                              tv[q.threshold + lat.shift], tv.get(1 - q.threshold) if complement else None)
                for q, w, n, e in zip(queries, wv, need1, eps_list)]

    def _query(self, e, beta: Fraction, fbeta: float) -> WeightedQuery:
        """The hockey-stick query of δ(ε): threshold k1, ``x0 = ε − c − k1β`` and
        ``x1 = x0 + β`` (clipped at 0), each rounded once to a float.

        For a Fraction ε = p/q (c = a/b, β = t/s) in integers: ``x0 = N/D`` with
        ``N = (p·b − a·q)·s − k1·t·q·b``, ``D = q·b·s`` (int true division rounds the exact
        quotient once, as ``float(Fraction)``); for a callable, raw mpf arithmetic."""
        lat = self._lat
        k1 = None if isinstance(e, Fraction) else _k1_held(e, lat)
        if k1 is None:
            k1, _ = lat.delta_thresholds(e)
        c = lat.c
        t, s = beta.numerator, beta.denominator
        if isinstance(e, Fraction):
            p, q, a, b = e.numerator, e.denominator, c.numerator, c.denominator
            den = q * b * s
            n0 = (p * b - a * q) * s - k1 * t * q * b
            n1 = n0 + t * q * b
            return WeightedQuery(k1, n0 / den, n1 / den if n1 > 0 else 0.0, fbeta)
        with workdps(DPS_RESULT + DPS_GUARD + DPS_GUARD + len(str(abs(k1)))):
            prec, rnd = ctx_prec()
            key = (prec, rnd)
            cb = self._query_raws.get(key)
            if cb is None:  # to_mpf(c) and to_mpf(β) at this precision
                cb = self._query_raws[key] = (raw_fraction(c, prec, rnd), from_rational(t, s, prec, rnd))
            x0 = mpf_sub(mpf_sub(raw_convert(exact_mp(e, mpmath.mp.dps)), cb[0], prec, rnd),
                         from_rational(k1 * t, s, prec, rnd), prec, rnd)
            x1 = mpf_add(x0, cb[1], prec, rnd)
            return WeightedQuery(k1, to_float(x0, rnd=rnd), 0.0 if mpf_lt(x1, fzero) else to_float(x1, rnd=rnd), fbeta)

    def _assemble(self, r: ProfileValues) -> _Profile:
        """The certified profile (mp, at the caller's precision) from its engine values.

        The arithmetic is MPFR's (:mod:`exactdp.numerics.arith`): +, −, ×, ÷ correctly
        rounded at the caller's precision and rounding mode, as the libmp calls of the
        mpf operators are, so the same bits; exp stays libmp's.  A chain outside MPFR's
        finite range is recomputed on raw libmp tuples."""
        prec, rnd = ctx_prec()
        ops = mpfr_ops(prec, rnd)
        if ops is not None:
            try:
                return _assemble_with(self.engine, r, ops)
            except MPFR_FAIL:
                pass
        return _assemble_with(self.engine, r, libmp_ops(prec, rnd))

    def _note_curve(self, eps_list, profiles) -> None:
        """Keep the estimated curve points of a δ(ε) call for the ε(δ) search's guesses."""
        lat = self._lat
        c, scale = float(lat.c), float(lat.scale)
        with workdps(DPS_RESULT):
            for e, pr in zip(eps_list, profiles):
                d = float(pr.d)
                if 0.0 < d < 1.0 and len(self._curve_pts) < self.MEMO_SIZE:
                    self._curve_pts.append(((float(exact_mp(e)) - c) * scale, math.sqrt(-math.log(d))))

    def _tails_tight(self, t1: TailValue, t2: TailValue, e) -> bool:
        """Whether ``P[S ≥ k1] − e^ε P[S ≥ k2]`` from two certified tails is within
        max_rel/4 relative (then the hockey-stick kernel is not needed)."""
        if not (self._eng.done(t1) and self._eng.done(t2)):
            return False
        with workdps(DPS_RESULT):
            ee = mpmath.exp(exact_mp(e))
            _, lo1, hi1 = tail_bounds(t1)
            _, lo2, hi2 = tail_bounds(t2)
            lo, hi = lo1 - ee * hi2, hi1 - ee * lo2
            return lo > 0 and hi - lo <= self.max_rel / 4 * (hi + lo)

    def _profile_at(self, e, full: bool = True, complement: bool = True) -> _Profile:
        """Certified δ and 1 − δ at any exact ε (see :meth:`_profiles_any`)."""
        return self._profiles_any([e], full, complement)[0]

    def _profiles_any(self, eps_list, full: bool = True, complement: bool = True, pieces=None) -> list[_Profile]:
        """:meth:`_profiles` for exact ε of either sign (negative ε by
        δ(ε) = 1 − e^ε + e^ε δ(−ε)), one batch per sign.  ``pieces``: the ε are the
        breakpoints of these k (the non-negative ones are then queried without rational
        arithmetic, see :meth:`_profile_values`)."""
        neg = [self._negative(e) for e in eps_list]
        pos = [e for e, n in zip(eps_list, neg) if not n]
        pos_pieces = None if pieces is None else [k for k, n in zip(pieces, neg) if not n]
        out_pos = iter(self._profiles(pos, full, complement, pos_pieces) if pos else ())
        mirrored = [(-e) if isinstance(e, Fraction) else (lambda dps, e=e: -e(dps)) for e, n in zip(eps_list, neg) if n]
        out_neg = iter(self._profiles(mirrored, full, True) if mirrored else ())
        out = []
        for e, n in zip(eps_list, neg):
            if not n:
                out.append(next(out_pos))
                continue
            q = next(out_neg)
            with workdps(DPS_RESULT):
                em = exact_mp(e)
                ee = mpmath.exp(em)
                one = -mpmath.expm1(em)
                pr = _Profile()
                pr.thresholds = self._lat.delta_thresholds(e)
                pr.d, pr.d_lo, pr.d_hi = one + ee * q.d, one + ee * q.d_lo, one + ee * q.d_hi
                pr.c, pr.c_lo, pr.c_hi = ee * q.c, ee * q.c_lo, ee * q.c_hi
                pr.p1, pr.p2 = None, None
            out.append(pr)
        return out

    @staticmethod
    def _negative(e) -> bool:
        if isinstance(e, Fraction):
            return e.numerator < 0  # the denominator is positive
        if type(e) is MemoReal and mpmath.mp.dps <= DPS_DECIDE:  # the same memo without a context
            return e(DPS_DECIDE) < 0
        with workdps(DPS_DECIDE):
            return e(DPS_DECIDE) < 0

    # ------------------------------------------------------------------ δ(ε)
    def delta(self, epsilons: Iterable) -> tuple[DeltaPoint, ...]:
        """δ(ε) for each ε (exact rational, decimal string, or callable for irrationals)."""
        raw = sequence_values(epsilons, "epsilon")
        eps_list = [as_real(e, "epsilon") for e in raw]
        check_epsilon_range(self.rho, eps_list, "epsilon", shown=raw)
        if self.identical:
            with workdps(DPS_RESULT):
                pts = []
                for e in eps_list:
                    d = max(-mpmath.expm1(exact_mp(e)), mpmath.mpf(0))
                    pts.append(DeltaPoint(exact_mp(e), d, d * RESULT_ROUNDING, d, mpmath.mpf(0), (0, 0)))
                return tuple(pts)
        neg = [self._negative(e) for e in eps_list]
        pos = [e for e, n in zip(eps_list, neg) if not n]
        # the hockey-stick kernel; the two tails only where it is not certified alone
        prof = self._profiles(pos, full=False, complement=False) if pos else []
        self._note_curve(pos, prof)
        out, j = [], 0
        for e, n in zip(eps_list, neg):
            if n:
                pr = self._profile_at(e)
                k1, k2 = pr.thresholds
                t1, t2 = self._loose_tails([k1, k2])
                with workdps(DPS_RESULT):  # diagnostic terms (estimates) of the certified δ
                    pr.p1 = tail_bounds(t1)[0] if mpmath.isfinite(t1.log_mp) else mpmath.mpf(1)
                    p2 = tail_bounds(t2)[0] if mpmath.isfinite(t2.log_mp) else mpmath.mpf(1)
                    pr.p2 = p2 * mpmath.exp(exact_mp(e))
            else:
                pr = prof[j]
                j += 1
            with workdps(DPS_RESULT):  # raw: width = d_hi − d_lo ≤ (2·max_rel)·d
                prec, rnd = ctx_prec()
                em = exact_mp(e)
                d = pr.d._mpf_
                width = mpf_sub(pr.d_hi._mpf_, pr.d_lo._mpf_, prec, rnd)
                if not mpf_le(width, mpf_mul(d, from_float(2 * self.max_rel), prec, rnd)):
                    cap = _zcdp_cap_below_floor(em, self.rho)
                    if cap is None:  # the planner's declared fallback answers the call
                        raise self._uncertified(f"δ(ε={mpmath.nstr(em, 12)})")
                    # beyond every floor (ε ≫ ρ): the certified bracket [0, zCDP cap], as the
                    # lattice-free route reports it (README: ε up to 1e19 is answered)
                    out.append(DeltaPoint(em, cap / 2, cap / 2, pr.p1, pr.p2, pr.thresholds))
                    continue
                # + the rounding of the 40-digit estimate itself
                err = mpf_add(mpf_div(width, FTWO, prec, rnd), mpf_mul(d, RESULT_ROUNDING._mpf_, prec, rnd), prec, rnd)
                out.append(DeltaPoint(em, pr.d, make(err), pr.p1, pr.p2, pr.thresholds))
        return tuple(out)


def piece_queries(pieces, fbeta: float, _new=object.__new__) -> list:
    """``[WeightedQuery(int(k) + 1, −fbeta, 0.0, fbeta) for k in pieces]``: the same objects,
    built without the frozen dataclass's four ``object.__setattr__`` (as
    :func:`exactdp.engine.values.tail_queries`)."""
    out: list[WeightedQuery] = []
    ap = out.append
    x0 = -fbeta
    for k in pieces:
        q = _new(WeightedQuery)
        d = q.__dict__
        d["threshold"] = int(k) + 1
        d["x0"] = x0
        d["x1"] = 0.0
        d["beta"] = fbeta
        ap(q)
    return out


def _zcdp_cap_below_floor(em, rho):
    """The ρ-zCDP bound ``exp(−(ε−ρ)²/(4ρ))`` on δ(ε) ≤ P[L > ε] (Bun & Steinke 2016), rounded
    up, when ε > ρ and it is below 1e-300 (the lattice-free route's report floor); else None.
    The exponent is taken 1e-20 relative smaller than computed (its rounding at DPS_RESULT
    digits is far below that)."""
    with workdps(DPS_RESULT):
        r = mpmath.mpf(rho.numerator) / rho.denominator
        if not em > r:
            return None
        x = (em - r) ** 2 / (4 * r) * (1 - mpmath.mpf(10) ** -20)
        cap = mpmath.exp(-x) * (1 + mpmath.mpf(10) ** -20)
        return cap if cap <= mpmath.mpf(10) ** -300 else None


def _assemble_with(engine, r: ProfileValues, F) -> _Profile:
    """:meth:`ExactAccountant._assemble` in the arithmetic namespace ``F``
    (:mod:`exactdp.numerics.arith`) with the engine's ``done`` and ``log_chernoff``."""
    prec, rnd = F.prec, F.rnd
    eps = r.eps
    exact_real: Any = eps  # a Fraction or a MemoReal (called with its digits)
    em = raw_fraction(eps, prec, rnd) if isinstance(eps, Fraction) else raw_convert(exact_real(DPS_RESULT))
    ee = F.of_raw(mpf_exp(em, prec, rnd))
    add, sub, mul = F.add, F.sub, F.mul
    pr = _Profile()
    pr.thresholds = (r.k1, r.k2)
    done = engine.done
    t2 = r.t2
    ok2 = done(t2)
    if ok2:
        p2, p2lo, p2hi = F.bounds(t2)
    else:  # an uncertified far tail still has its Chernoff bound
        p2, p2lo, p2hi = F.zero, F.zero, F.of_raw(raw_exp(engine.log_chernoff(r.k2), prec, rnd))
    lo, hi = F.zero, F.one
    p1 = None
    if r.t1 is not None and done(r.t1):
        p1, p1lo, p1hi = F.bounds(r.t1)
        lo = F.max(sub(p1lo, mul(ee, p2hi)), lo)
        hi = F.min(sub(p1hi, mul(ee, p2lo)), hi)
    p2e = mul(p2, ee)
    if done(r.w):
        d, dlo, dhi = F.bounds(r.w)
        if F.gt(dlo, hi) or F.lt(dhi, lo):  # two certified intervals must intersect
            raw = F.raw
            raise UncertifiedError(f"inconsistent certified bounds for δ at ε = {mpmath.nstr(make(em), 12)} "
                                   f"([{mpmath.nstr(make(raw(dlo)), 12)}, {mpmath.nstr(make(raw(dhi)), 12)}] vs "
                                   f"[{mpmath.nstr(make(raw(lo)), 12)}, {mpmath.nstr(make(raw(hi)), 12)}]): an "
                                   f"internal error, please report it")
        lo, hi = F.max(lo, dlo), F.min(hi, dhi)
        if p1 is None:
            p1 = add(d, p2e)
    d_hi = F.max(hi, lo)
    dd = F.div(add(lo, d_hi), F.two)
    # 1 − δ = P[S ≤ k1 − 1] + e^ε P[S ≥ k2]  (non-negative terms)
    tl = r.tl
    if tl is not None and ok2 and done(tl):
        ql, qllo, qlhi = F.bounds(tl)
        c = add(ql, mul(ee, p2))
        c_lo = add(qllo, mul(ee, p2lo))
        c_hi = add(qlhi, mul(ee, p2hi))
    else:
        one = F.one
        c, c_lo, c_hi = sub(one, dd), sub(one, d_hi), sub(one, lo)
    raw = F.raw
    pr.d_lo, pr.d_hi, pr.d = make(raw(lo)), make(raw(d_hi)), make(raw(dd))
    pr.p1 = None if p1 is None else make(raw(p1))
    pr.p2 = make(raw(p2e))
    pr.c, pr.c_lo, pr.c_hi = make(raw(c)), make(raw(c_lo)), make(raw(c_hi))
    return pr
