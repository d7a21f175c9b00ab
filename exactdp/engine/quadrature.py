"""The sieved tilted-contour trapezoid rule on one lattice (float64 sums, certified).

Method: for threshold s the contour of

    P(S ≥ s) = (1/2π) ∫ M(λ+iθ) e^{−(λ+iθ)s} / (1 − e^{−λ−iθ}) dθ

is put at the saddle point ``K'(λ) = s`` of the cumulant generating function K = log M
(on a grid of spacing 1/sd; Newton on the exact tilted moments when some σ² is small).
With ``μ_g = A_g λ s_g² = n0_g + f_g`` (n0_g ∈ ℤ, |f_g| ≤ 1/2, exact rationals: λ is a
float taken exactly) every factor is *recentred*: ``M_g(A_g(λ+iθ))/M_g(A_gλ) =
e^{iθ A_g n0_g} ψ_g(f_g, A_gθ)``, the integer phase goes into the threshold
(``s − s0``, s0 = Σ m_g A_g n0_g, exact) and ψ depends on O(1) quantities only.  Then

    P(S ≥ s) = exp(E − λs + κ) / (1 − e^{−λ}) · (1/N) Σ_n w_n Re[G_n e^{−iθ_n (s − s0)}]

with ``E = λ²V'/2 − Σ_{direct g} m_g f_g²/(2s_g²)`` (an exact rational, V' = Σ m_g A_g² s_g²)
and κ = Σ m_g [ℓ_g(f_g) − ℓ_g(0)] (bounded, multiprecision).  The exponent is carried
exactly, so tails far beyond float64 (e^{−10⁹}, e^{−10³⁸}) keep their relative accuracy;
such logs are returned as mpmath numbers.  The same rule with the kernel
``Σ_{j≥0} (1 − c e^{−βj}) e^{−zj}`` in place of ``1/(1 − e^{−z})`` gives the hockey-stick
sum ``Σ_{s≥k} P(S = s)(1 − c e^{−β(s−k)})`` directly (:meth:`QuadratureTails.weighted`):
a sum of non-negative terms with no cancellation, whatever ε.

Certified error bound (absolute, in units of the normalising factor, then relative):

* **sieve**: a node is dropped only if one group alone forces ``|G_n| ≤ e^{−T}``
  (``|ψ_g| ≤ P_g(u)/D_g`` with ``P_g`` the wrapped normal sum, bounded above with its
  tail, ``D_g = 1 − 2Σ_{k≥1} e^{−2π²s_g²k²}``); the dropped nodes add at most ``e^{−T}``.
* **aliasing**: the rule returns ``Σ_j e^{λjN} P(S ≥ s + jN)``.  Both sides are bounded in
  O(1) by Chernoff's inequality ``P(S ≥ x) ≤ e^{K(t) − tx}`` at the saddle point of the
  shifted threshold, with ``K(t) ≤ t²V'/2 + Σ_{small g} m_g log θ̃_g(f_g(t))/θ̃_g(0)``
  (sub-Gaussian bound of Canonne–Kamath–Steinke 2020 for the others), summed as a
  geometric series over j; for j < 0 also the trivial ``e^{−λN}/(1 − e^{−λN})``.
* **rounding**: per node the bound returned by the kernel (every log ψ to ~u·|log ψ|, the
  exp, the kernel factor), the phase rotations and the compensated sum.
* theta-series truncations (≤ 1e-25 per factor, in the per-node bound); κ to 1e-30; the
  float parts of the exponent (``u·|term|`` each).

A tail is *accepted* only when its certified relative error is ≤ ``rel_tol`` and its log
and bound are finite.  References: exponential tilting / saddle-point contours for lattice
distributions (Daniels 1954); trapezoid-rule convergence for periodic analytic integrands
(Trefethen & Weideman, SIAM Review 2014).
"""

from __future__ import annotations

import functools
import math
from collections import OrderedDict
from collections.abc import Sequence
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.dgauss.float64 import variance_float
from exactdp.engine.lattice import LatticeSum
from exactdp.engine.quadalias import AliasBounds
from exactdp.engine.quadbatch import FloatBatches
from exactdp.engine.quadstate import SieveLevel, Tilt, tail_values
from exactdp.engine.tilt import (
    GAUSS_S2,
    HUGE_MU,
    ell_ratio_mp,
    exact_saddle,
    frac_parts,
    gauss_slack,
    log_as_value,
    mp_bits_for,
    sieve_umax,
    sieve_umaxes,
)
from exactdp.engine.values import TailValue, WeightedQuery, certified, tail_queries, tail_query, tail_value, tol_for
from exactdp.kernels.quadfinish import (
    FINISH_EMPTY,
    FINISH_OK,
    FINISH_PYTHON,
    GRID_HUGE,
    GRID_OK,
    finish_values,
    grid_tilts,
)
from exactdp.kernels.tilted import (
    ANCHOR,
    delta_factors,
    node_factors,
    node_trig,
    saddle_point,
    sieve_candidates,
    tilted_sums,
)
from exactdp.numerics.errors import LatticeTooLarge
from exactdp.numerics.precision import EPS64, to_mpf

__all__ = ["TailValue", "QuadratureTails", "sieve_umax", "sieve_umaxes", "tol_for", "certified", "WeightedQuery"]

#: |log| above which a float64 exponent would lose relative accuracy: use mpmath instead
_FLOAT_LOG_MAX = 1e4


#: the raise of the sieve level for values the first pass cannot certify
RAISE_T = 25.0
#: the most candidate nodes (≈ N·u*/2π, u* the sieve's narrowest window) a rule may sieve:
#: beyond, the design goes to the lattice-free accountant (the DHC pairs need ≤ 2.6e7)
MAX_SIEVE_CANDIDATES = 100_000_000
#: values remembered per engine and sieve level (a query asked again costs a dict look-up)
_MEMO_VALUES = 8192
#: memory for the hockey-stick factors G·X remembered per engine (shared by thresholds)
_MEMO_BYTES = 64_000_000
#: memory for the tilts kept per sieve level (G, |G|w, the bounds: ~48 bytes a node)
_TILT_BYTES = 64_000_000


#: ``variance_float`` kept per float σ² (a pure function; a sweep's and a tune's designs share groups)
_variance = functools.lru_cache(maxsize=65536)(variance_float)


class QuadratureTails(AliasBounds, FloatBatches):
    """Certified upper tails ``P(S ≥ s)``, s ≥ 1, and hockey-stick sums of one lattice sum
    by the sieved rule.

    Parameters
    ----------
    lattice : LatticeSum
    rel_tol : float
        Required certified relative error of every accepted value (default 1e-10).
    kappa : float
        Nodes per standard deviation: ``N ≈ kappa·sqrt(V')`` (default 16).
    lam_step_sd : float
        Spacing of the tilt grid in units of 1/sd(S) (default 1).

    Raises
    ------
    LatticeTooLarge
        When ``max A_g · N`` does not fit int64 phase arithmetic.
    """

    def __init__(self, lattice: LatticeSum, rel_tol: float = 1e-10, kappa: float = 16.0,
                 lam_step_sd: float = 1.0):
        self.lattice = lattice
        self.rel_tol = float(rel_tol)
        if max(abs(int(a)) for a in lattice.weights) >= 2**62:
            raise LatticeTooLarge("lattice weights beyond 64 bits")
        self.A = np.array(lattice.weights, dtype=np.int64)
        self.m = np.array(lattice.counts, dtype=np.int64)
        self.s2q = tuple(Fraction(s) for s in lattice.sigma2)
        self.s2 = np.array([float(s) for s in self.s2q])
        # Σ m A² σ² exactly, over one common denominator (the Fraction the term-by-term sum gives)
        den = math.lcm(*(s.denominator for s in self.s2q))
        self.vq = Fraction(sum(int(m) * int(a) ** 2 * s.numerator * (den // s.denominator)
                               for a, m, s in zip(lattice.weights, lattice.counts, self.s2q)), den)
        self.vproxy = float(np.sum(self.m * self.A.astype(float) ** 2 * self.s2))
        self.var = float(sum(m * a * a * _variance(float(s)) for a, m, s in zip(self.A.astype(float), self.m, self.s2)))
        # nodes: kappa per sd of the widest tilted law; a tilted N_Z(f, s²) with s² small
        # is a coin on two atoms near f = 1/2 (variance up to 1/4 > s²)
        v_nodes = float(np.sum(self.m * self.A.astype(float) ** 2 * np.maximum(self.s2, 0.25)))
        n = int(math.ceil(kappa * math.sqrt(v_nodes) / 2.0)) * 2
        self.n_nodes = max(n, 64)
        if float(self.A.max()) * self.n_nodes >= 2.0**62 or self.n_nodes >= 2**31:
            raise LatticeTooLarge("lattice too large for int64 phase arithmetic")
        self.small = [g for g in range(len(self.A)) if self.s2[g] < GAUSS_S2]
        self._small_idx = np.array(self.small, dtype=np.int64)
        self._small_set = frozenset(self.small)
        self.gaussian = not self.small
        self.slack = gauss_slack(self.s2, self.m)  # relative effect of the Gaussian groups' κ
        # tilts on a grid of lam_step_sd/sd(S): thresholds on the same tilt share one
        # evaluation of the product
        self.lam_step = lam_step_sd / math.sqrt(self.vproxy)
        self.lam_min = (math.log(1.0 / self.rel_tol) + 12.0) / self.n_nodes
        self._gamma0 = EPS64 * (16.0 + 4.0 * ANCHOR)
        self._mu_scale = float(np.max(np.abs(self.A.astype(float)) * self.s2))
        self.sieve_T = math.log(1.0 / self.rel_tol) + 0.5 * math.log(2 * math.pi * self.vproxy) + 6.0
        umax0 = sieve_umaxes(self.s2, self.m, self.sieve_T)
        n_cand = min(0.5, float(np.min(umax0)) / (2 * math.pi)) * self.n_nodes
        if n_cand > MAX_SIEVE_CANDIDATES:
            raise LatticeTooLarge(f"the tilted rule would sieve about {n_cand:.2g} candidate nodes "
                                  f"(more than {MAX_SIEVE_CANDIDATES:.0e})")
        self._sieves: list[SieveLevel | None] = [self._make_sieve(self.sieve_T, umax0), None]
        # pure-function memos (deterministic: a value depends on its query and level only)
        self._memo: tuple[OrderedDict, OrderedDict] = (OrderedDict(), OrderedDict())  # per level: query_key → TailValue
        self._hs_memo: OrderedDict = OrderedDict()  # (level, λ, β, x0, x1) → (G·X, errsum, sumabs)

    # -- sieve ------------------------------------------------------------------------
    def _make_sieve(self, T: float, umax=None) -> SieveLevel:
        umax = sieve_umaxes(self.s2, self.m, T) if umax is None else umax
        gstar = int(np.argmin(umax))
        nodes = sieve_candidates(self.A, umax, self.n_nodes, gstar)
        half = self.n_nodes // 2
        w = np.where((nodes == 0) | (2 * nodes == self.n_nodes), 1.0, 2.0)
        w[nodes > half] = 0.0
        return SieveLevel(T, umax, nodes, w, OrderedDict(), self.n_nodes,
                      max_tilts=max(24, _TILT_BYTES // (48 * max(1, int(nodes.shape[0])))))

    def _sieve(self, level: int) -> SieveLevel:
        """The sieve of level 0 (``T0``) or 1 (``T0 + RAISE_T``), built once each: every
        value is a function of its query and level only, never of the query history."""
        sv = self._sieves[level]
        if sv is None:
            sv = self._sieves[level] = self._make_sieve(self.sieve_T + RAISE_T * level)
        return sv

    @property
    def umax(self) -> np.ndarray:
        return self._sieve(0).umax

    @property
    def nodes(self) -> np.ndarray:
        return self._sieve(0).nodes

    @property
    def nodes_kept(self) -> int:
        return int(self.nodes.shape[0])

    def done(self, tv: TailValue | None) -> bool:
        """Whether a value is certified to the required accuracy."""
        return certified(tv, self.rel_tol)

    # -- tilts ------------------------------------------------------------------------
    def saddle(self, s) -> float:
        """The saddle point λ > 0 of threshold s > 0 (float)."""
        lam0 = float(s) / self.vproxy
        if self.gaussian:
            return lam0
        return float(saddle_point(self.A, self.m, self.s2, float(s), lam0))

    def saddle_q(self, s) -> Fraction:
        """The saddle point as an exact rational: the float one, or, when a float λ
        cannot place the tilted centres (|A λ s²| > HUGE_MU), :func:`exact_saddle`."""
        lam = self.saddle(s)
        if lam * self._mu_scale <= HUGE_MU:
            return Fraction(lam)
        return exact_saddle(self.lattice.weights, self.lattice.counts, self.s2q, int(s), self.vq)

    def _grid_lam(self, s: int, floor: float) -> Fraction:
        lam = self.saddle(s) if s > 0 else 0.0
        if lam * self._mu_scale > HUGE_MU:
            return self.saddle_q(s)
        j = int(round(lam / self.lam_step))
        lam_j = j * self.lam_step
        return Fraction(lam_j if lam_j > floor else floor)

    def _grid_lams(self, qs, plain: bool = False) -> list:
        """:meth:`_grid_lam` of each query's threshold (floor ``lam_min``) in one kernel call
        (:func:`grid_tilts`: the same float operations; a float grid point stands for the
        exact rational it is, a huge tilt is the Fraction of :meth:`saddle_q`); ``plain``:
        ``qs`` are the thresholds themselves."""
        floor = self.lam_min
        ss = qs if plain else [q.threshold for q in qs]
        try:
            s = np.array(ss, dtype=float)
        except OverflowError:
            return [self._grid_lam(x, floor) for x in ss]
        key, status = grid_tilts(self.A, self.m, self.s2, s, self.vproxy, self.gaussian, self.lam_step, floor,
                                 self._mu_scale)
        out = key.tolist()
        for i, st in enumerate(status.tolist()):
            if st != GRID_OK:
                out[i] = self.saddle_q(ss[i]) if st == GRID_HUGE else self._grid_lam(ss[i], floor)
        return out

    def _tilt(self, key, sv: SieveLevel) -> Tilt:
        """The tilt at λ = ``key`` (a float or a Fraction: the same key for the same
        rational) on sieve ``sv``, evaluated once and kept (an LRU of at least 24 tilts,
        more within :data:`_TILT_BYTES`: a tilt is a function of its key and sieve only)."""
        cache = sv.tilts
        hit = cache.get(key)
        if hit is not None:
            cache.move_to_end(key)
            return hit
        lamq = key if isinstance(key, Fraction) else Fraction(key)
        lam = float(lamq)
        n0, f, fq = frac_parts(self.lattice.weights, self.s2q, lamq, self._small_set)  # exact f: small groups
        s0 = sum(int(m) * int(a) * n for a, m, n in zip(self.lattice.weights, self.lattice.counts, n0))
        quad = lamq * lamq * self.vq / 2
        direct = Fraction(0)  # Σ_direct m f²/(2s²), exact: E = quad − direct, E − λ²V'/2 = −direct
        for g in self.small:
            if self.s2[g] < 1.0:
                direct += int(self.m[g]) * fq[g] * fq[g] / (2 * self.s2q[g])
        exact = quad - direct
        kappa, kerr = ell_ratio_mp([(self.s2q[g], int(self.m[g]), fq[g]) for g in self.small])
        f_arr = np.array(f, dtype=float)
        G, err = node_factors(self.A, self.m, self.s2, f_arr, lam, sv.nodes, self.n_nodes)
        aG = np.abs(G) * sv.w
        N = self.n_nodes
        t = Tilt(lam, lamq, exact, float(exact), float(-direct) + float(kappa), kappa, kerr, s0, f_arr,
                  G, aG, err, float(aG.sum() / N), float((aG * (err + self._gamma0)).sum() / N),
                  math.log(-math.expm1(-lam)), sv)
        t.key = key
        t.fin = np.array([lam, t.exact_f, float(kappa), kerr, t.rho_lam, math.exp(-sv.T), self.slack, self.vproxy])
        t.aux = np.array([[-t.log1m], [EPS64 * (2 * abs(t.log1m) + 4)], [t.errsum], [t.sumabs]])
        cache[key] = t
        while len(cache) > sv.max_tilts:
            cache.popitem(last=False)
        return t

    # -- public -----------------------------------------------------------------------
    def tails(self, thresholds, best: dict | None = None) -> dict:
        """Offer quadrature tails for the upper thresholds (s ≥ 1) not yet certified in
        ``best`` (a dict threshold → TailValue, updated in place and returned)."""
        best = {} if best is None else best
        qs = {int(s): WeightedQuery(int(s), -math.inf, 0.0, 1.0) for s in thresholds}
        got = self.weighted(list(qs.values()), {q: best.get(s) for s, q in qs.items()})
        for s, q in qs.items():
            tv, old = got.get(q), best.get(s)
            if tv is not None and (old is None or tv.rel_error < old.rel_error):
                best[s] = tv
        return best

    def weighted(self, queries, best: dict | None = None) -> dict:
        """Certified values of the queries (WeightedQuery → TailValue dict, starting from
        ``best``): :meth:`weighted_list` as a dict."""
        qs = list(queries)
        out = {q: v for q, v in (best or {}).items() if v is not None}
        for q, tv in zip(qs, self.weighted_list(qs, [out.get(q) for q in qs] if out else None)):
            if tv is not None:
                out[q] = tv
        return out

    def weighted_list(self, qs: list, prior: list | None = None) -> list:
        """Certified values of the queries (a list aligned with ``qs``, each the better of
        its ``prior`` and what the rule gives, None where there is neither): one pass on
        the tilt grid, then, for what is still uncertified, one at the exact saddle point
        with a raised sieve level (and a raised floor tilt for central hockey-stick sums,
        whose j < 0 aliasing is measured against a smaller value)."""
        return self.weighted_list_ok(qs, prior)[0]

    def weighted_list_ok(self, qs: list, prior: list | None = None, plain: bool = False) -> tuple:
        """:meth:`weighted_list` and, aligned with it, whether each value is certified
        (``certified(value, rel_tol)``, False for None): ``(values, flags)``.  ``plain``:
        ``qs`` are the thresholds of plain tails (no query objects; the same values)."""
        tol = self.rel_tol
        n = len(qs)
        if prior is None or prior.count(None) == len(prior):  # a list, or no value in it
            out, ok = [None] * n, [False] * n
        else:
            out = list(prior)
            ok = [v is not None and certified(v, tol) for v in out]  # certified(out[i], tol), kept with out[i]
        keys = ([(s, -math.inf, 0.0, 1.0) for s in qs] if plain  # query_key of each query
                else [(q.threshold, q.x0, q.x1, q.beta) for q in qs])
        todo: Sequence[int] = range(n)
        for attempt in range(2):
            todo = [i for i in todo if not ok[i]]
            if not todo:
                break
            sv = self._sieve(attempt)
            memo = self._memo[attempt]
            new: Sequence[int]
            if memo:
                new = []
                for i in todo:
                    tv = memo.get(keys[i])
                    if tv is None:
                        new.append(i)
                        continue
                    old = out[i]  # a value is a function of (query, level) only
                    if old is None or tv.rel_error < old.rel_error:
                        out[i] = tv
                        ok[i] = certified(tv, tol)
            else:
                new = todo
            if not new:
                continue
            if attempt == 0:
                lams = self._grid_lams([qs[i] for i in new], plain)
            else:
                lams = []
                for i in new:
                    s, x0 = (qs[i], -math.inf) if plain else (qs[i].threshold, qs[i].x0)
                    floor = Fraction(self.lam_min * (1.0 if x0 == -math.inf else 2.5))
                    lams.append(max(self.saddle_q(s) if s > 0 else Fraction(0), floor))
            by_lam: dict = {}
            for i, lam in zip(new, lams):
                by_lam.setdefault(lam, []).append(i)
            order = sorted(by_lam)
            got = self._values_many(sv, order, [[qs[i] for i in by_lam[lam]] for lam in order], plain)
            for lam, (vals, flags) in zip(order, got):
                idx = by_lam[lam]
                memo.update(zip([keys[i] for i in idx], vals))
                for i, tv, flag in zip(idx, vals, flags):
                    old = out[i]
                    if old is None or tv.rel_error < old.rel_error:
                        out[i] = tv
                        ok[i] = flag
                while len(memo) > _MEMO_VALUES:
                    memo.popitem(last=False)
        return out, ok

    # -- values -----------------------------------------------------------------------
    def _values_many(self, sv: SieveLevel, lams: list, groups: list, plain: bool = False) -> list:
        """:meth:`_values_at` of each group of queries on its tilt (``groups[i]`` on
        ``lams[i]``, sieve ``sv``), as a list of ``(values, flags)``: the tilts built in
        order, the signed sums per tilt, and the float-path values of a batch of tilts
        (at most ``sv.max_tilts`` held at once) finished in one :func:`finish_tilts` call
        (the same :func:`finish_values` on the same numbers, segment by segment); ``plain``:
        the groups hold thresholds of plain tails."""
        out: list = [None] * len(groups)
        batch = []  # (group index, tilt, thresholds, offset) of the float-path groups
        n_batch = 0
        for gi, (lam, qs) in enumerate(zip(lams, groups)):
            t = self._tilt(lam, sv)
            s_list = qs if plain else [q.threshold for q in qs]
            if (-2**53 < min(s_list) and max(s_list) < 2**53 and abs(t.s0) < 2**53
                    and t.lam * self._mu_scale <= HUGE_MU):
                batch.append((gi, t, s_list, n_batch))
                n_batch += len(s_list)
                if len(batch) >= sv.max_tilts:
                    self._finish_batch(sv, batch, n_batch, groups, out, plain)
                    batch, n_batch = [], 0
            else:
                out[gi] = self._values_at(t, tail_queries(qs) if plain else qs)
        if batch:
            self._finish_batch(sv, batch, n_batch, groups, out, plain)
        return out

    def _finish_batch(self, sv: SieveLevel, batch: list, n: int, groups: list, out: list,
                      plain: bool = False) -> None:
        """The values of the float-path groups of :meth:`_values_many` into ``out``: the
        arrays of :meth:`_finish_arrays`, then a TailValue each."""
        r, aux, est, rel, status = self._finish_arrays(sv, batch, n, groups, plain)
        tol, N = self.rel_tol, self.n_nodes
        # certified(·, tol) of each float-path value, vectorised (the same comparisons)
        flags = (np.isfinite(rel) & (rel <= np.where(np.isfinite(est), tol, 0.0))).tolist()
        est, rel, status = est.tolist(), rel.tolist(), status.tolist()
        kept = int(sv.nodes.shape[0])
        for gi, t, s_list, a in batch:
            b = a + len(s_list)
            vals = tail_values(s_list, est[a:b], rel[a:b], "tilted-trapezoid", kept, N, t.lam)
            fl = flags[a:b]
            if FINISH_PYTHON in status[a:b]:
                qs = groups[gi]
                for i, sti in enumerate(status[a:b]):
                    if sti != FINISH_OK and sti != FINISH_EMPTY:
                        c = a + i
                        q = tail_query(qs[i]) if plain else qs[i]
                        vals[i] = tv = self._finish(t, q, float(r[c]), float(aux[2, c]), float(aux[3, c]),
                                                    float(aux[0, c]), float(aux[1, c]))
                        fl[i] = certified(tv, tol)
            out[gi] = (vals, fl)

    def _values_at(self, t: Tilt, qs) -> tuple:
        """The TailValues of the queries on one tilt and whether each is certified: the
        tails' signed sums in one kernel call; per hockey-stick (β, x0, x1) the factors G·X
        and their bound sums once (memoised), then the signed sum of each threshold; then
        the logs and certified bounds of all in one kernel call (:func:`finish_values`,
        the float path of :meth:`_finish`; what is off that path goes through
        :meth:`_finish`)."""
        N = self.n_nodes
        sv = t.sieve
        n = len(qs)
        s_list = [q.threshold for q in qs]
        small_s = -2**53 < min(s_list) and max(s_list) < 2**53 and abs(t.s0) < 2**53
        if small_s:
            s_arr = np.array(s_list, dtype=np.int64)
            thr = (s_arr - t.s0) % N
        else:
            thr = np.array([(s - t.s0) % N for s in s_list], dtype=np.int64)
        hs = [i for i, q in enumerate(qs) if q.x0 != -math.inf]
        if not hs:
            assert t.aux is not None  # set by _tilt
            r, aux = tilted_sums(t.G, sv.nodes, N, thr), t.aux
        else:
            r, aux = np.empty(n), np.empty((4, n))
            aux[:, :] = t.aux
            if len(hs) < n:
                plain = [i for i, q in enumerate(qs) if q.x0 == -math.inf]
                r[plain] = tilted_sums(t.G, sv.nodes, N, thr[plain])
            self._hs_sums(t, qs, hs, thr, r, aux)
        out: list = [None] * n
        tol = self.rel_tol
        if small_s and t.lam * self._mu_scale <= HUGE_MU:  # else every value in Python
            kept = int(sv.nodes.shape[0])
            est, rel, status = finish_values(r, s_arr, aux, t.fin, N, self.A, self.m, self.s2, self._small_idx,
                                             self.gaussian)
            # certified(·, tol) of each float-path value, vectorised (the same comparisons)
            flags = (np.isfinite(rel) & (rel <= np.where(np.isfinite(est), tol, 0.0))).tolist()
            lam = t.lam
            st = status.tolist()
            if FINISH_PYTHON not in st:  # every value on the float path (the common case)
                return tail_values(s_list, est.tolist(), rel.tolist(), "tilted-trapezoid", kept, N, lam), flags
            for i, s, e, rl, sti in zip(range(n), s_list, est.tolist(), rel.tolist(), st):
                if sti == FINISH_OK or sti == FINISH_EMPTY:
                    out[i] = tail_value(s, e, rl, "tilted-trapezoid", kept, N, lam)
        else:
            flags = [False] * n
        j = 0 if aux.shape[1] == 1 else None
        for i, tv in enumerate(out):
            if tv is None:
                c = i if j is None else j
                out[i] = tv = self._finish(t, qs[i], float(r[i]), float(aux[2, c]), float(aux[3, c]),
                                           float(aux[0, c]), float(aux[1, c]))
                flags[i] = certified(tv, tol)
        return out, flags

    def _hs_sums(self, t: Tilt, qs, hs, thr, r, aux) -> None:
        """The hockey-stick queries' (indices ``hs``) signed sums into ``r`` and their
        kernel-factor logs, errors and bound sums into the columns of ``aux``: per kernel
        (β, x0, x1) the factors G·X (memoised) and the columns once, then the signed sums
        of all its thresholds in one :func:`tilted_sums` call (each threshold's sum is
        the same however many are summed side by side)."""
        N = self.n_nodes
        sv = t.sieve
        cos_t, sin_t, sh_t = self._trig(sv)
        aG = t.aG
        groups: dict = {}
        for i in hs:
            q = qs[i]
            groups.setdefault((q.beta, q.x0, q.x1), []).append(i)
        for (beta, x0, x1), idx in groups.items():
            a0 = -math.expm1(x0)
            a1 = math.exp(x0) * -math.expm1(-x1)
            key = (sv.T, t.key, beta, x0, x1)  # t.key: λ as a float when it is one (cheap hash)
            hit = self._hs_memo.get(key)
            if hit is None:
                X, R2 = delta_factors(cos_t, sin_t, sh_t, t.lam, beta, a0, a1)
                aGX = aG * np.abs(X)
                if t.err_hs is None:
                    t.err_hs = t.err + self._gamma0 + 16 * EPS64
                es = float((aGX * t.err_hs).sum() + 8 * EPS64 * (aG * R2).sum()) / N
                hit = self._hs_memo[key] = (t.G * X, es, float(aGX.sum() / N))
                while len(self._hs_memo) > max(4, _MEMO_BYTES // (16 * max(1, len(sv.nodes)))):
                    self._hs_memo.popitem(last=False)
            else:
                self._hs_memo.move_to_end(key)
            GX, errsum, sumabs = hit
            ia = np.array(idx, dtype=np.intp)
            r[ia] = tilted_sums(GX, sv.nodes, N, thr[ia])
            num0 = a0 + a1 * math.exp(-t.lam)
            lb = -math.expm1(-(t.lam + beta))
            log_num0, log_lb = math.log(num0), math.log(lb)
            aux[0, ia] = log_num0 - t.log1m - log_lb
            aux[1, ia] = (EPS64 * (abs(log_num0) + 2 * abs(t.log1m) + 2 * abs(log_lb) + 12)
                          + 8 * EPS64 * (1 + abs(x0) + abs(x1)))
            aux[2, ia] = errsum
            aux[3, ia] = sumabs

    @staticmethod
    def _trig(sv: SieveLevel):
        if sv.trig is None:
            sv.trig = node_trig(sv.nodes, int(sv.n_nodes))
        return sv.trig

    def _finish(self, t: Tilt, q: WeightedQuery, r: float, errsum: float, sumabs: float, logK: float,
                logK_err: float) -> TailValue:
        s = q.threshold
        N = self.n_nodes
        method = "tilted-trapezoid"
        if not (r > 0 and math.isfinite(r)):
            return tail_value(s, -math.inf, math.inf, method, int(t.sieve.nodes.shape[0]), N, t.lam)
        # exponent: E − λs + κ + log K(λ) + log r
        small = logK + math.log(r)
        small_err = logK_err + 2 * EPS64 * abs(math.log(r)) + t.kappa_err
        ex, ls = t.exact_f, t.lam * s
        if abs(ex) < _FLOAT_LOG_MAX and abs(ls) < _FLOAT_LOG_MAX:
            big = None
            bigf = ex - ls
            log_est = bigf + float(t.kappa) + small
            small_err += 4 * EPS64 * (abs(ex) + 2 * abs(ls) + abs(float(t.kappa)) + abs(small) + 1)
            log_est_mp = None
        else:
            big = t.exact - t.lamq * s
            with mpmath.workprec(mp_bits_for(big)):
                log_est_mp = to_mpf(big) + t.kappa + small
            log_est = float(log_est_mp)
        rel_R = (math.exp(-t.sieve.T) + errsum + 3 * EPS64 * sumabs + 1e-300) / r
        alias = self._alias_norm(t, s, big, logK, log_est, log_est_mp)
        # an exponent error beyond the float range certifies nothing (σ² far outside the
        # float route's range): an infinite bound, never an overflow
        rel = rel_R + alias / r + (math.expm1(small_err) if small_err < 700 else math.inf) + self.slack
        rel *= 1 + 1e-6
        log_value, rel = log_as_value(log_est_mp if log_est_mp is not None else log_est, rel)
        return tail_value(s, log_value, rel, method, int(t.sieve.nodes.shape[0]), N, t.lam)
