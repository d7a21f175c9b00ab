"""Tail enclosures ``P(F ≥ t)`` by the tilted-contour trapezoid rule, in ball arithmetic.

For ``F = Σ_g a_g Σ_{k≤m_g} X_{g,k}`` (integers a_g, X ~ N_Z(0, s_g²)), ``M(z) = E e^{zF}``,
any ``λ > 0``, integer ``t`` and even ``N``, with ``f(θ) = M(λ+iθ) e^{−(λ+iθ)t}/(1 − e^{−λ−iθ})``:

    (1/N) Σ_{n<N} f(2πn/N) = Σ_{j∈ℤ} e^{λjN} P(F ≥ t + jN)                       (exact)

(expand ``M`` and the geometric series of ``1/(1 − e^{−z})``; the coefficient of
``e^{zy}`` is ``P(F ≥ t + y)``).  Hence ``P(F ≥ t) = Q − E₋ − E₊ + (sieve)`` with

* ``Q = R · (1/N) Σ_{kept n ≤ N/2} w_n Re[G_n e^{−iθ_n t}]`` over the kept nodes, ``w_n = 1``
  for n ∈ {0, N/2} and 2 otherwise (``f(−θ) = conj f(θ)``); ``R = M(λ)e^{−λt}/(1 − e^{−λ})``,
  ``G_n = Π_g [Θ_g(a_g(λ+iθ_n))/Θ_g(a_gλ)]^{m_g} · (1 − e^{−λ})/(1 − e^{−λ−iθ_n})``, each
  factor at the exactly reduced phase ``b = 2π(a_g n mod N)/N``: from the Poisson form
  (:mod:`.dgball`) with ``|k| ≤ K ≤ 3`` terms where their neglected rest is below
  ``2^{−prec−16}`` — the ``k = 0`` exponents ``Σ_g m_g(−s²b²/2 + i s²a_gλb)`` summed as exact
  rationals: the real ones into one real exponential per node, the phase (an exact
  rational) added to the threshold's ``−θ_n t`` (``2π(n t mod N)/N``) and reduced mod 2π
  exactly before one ``sin/cos`` per node and threshold; the rest bounded into the ball —
  else an Arb theta ball — integers all the way, no 64-bit limit.  ``e^{iθ_n}`` and the
  powers ``e^{±2πs²b}`` of the Poisson terms are products of two tabulated balls (``√N``
  entries each); the sum over the nodes is formed with :data:`GUARD_BITS` more bits;
* **sieve**: the dropped nodes add at most ``R e^{−T}`` in modulus (:mod:`.nodes`);
* **aliasing below**: ``0 ≤ E₋ = Σ_{j≥1} e^{−λjN} P(F ≥ t − jN) ≤ e^{−λN}/(1 − e^{−λN})``;
* **aliasing above**: ``0 ≤ E₊ = Σ_{j≥1} e^{λjN} P(F ≥ t + jN)``; with the sub-Gaussian tail
  ``P(F ≥ x) ≤ e^{−x²/(2V')}`` (x ≥ 0, ``V' = Σ m a² s²``) the terms decrease at least
  geometrically with ratio ``ρ = exp(λN − (2(t+N)N + N²)/(2V'))``, so
  ``E₊ ≤ exp(λN − (t+N)²/(2V'))/(1 − ρ)`` when ρ < 1.

All three bounds are evaluated in balls and moved into the result:
``P(F ≥ t) ∈ [Q_lo − R e^{−T} − E₋ − E₊, Q_hi + R e^{−T}]``.  Thresholds t ≤ 0 use the
symmetry of F: ``P(F ≥ t) = 1 − P(F ≥ 1 − t)``.

The rule's parameters are this module's own (independent of the float64 engine): ``N`` is
``≈ κ·sqrt(V')`` with ``κ²/2 = 2 log(1/η) + 10`` (so ``E₊ ≤ η`` relative even at the tilt
floor), raised for deep thresholds so that the saddle point ``λ*`` (``K'(λ*) = t``, solved
in float64) satisfies ``λ*N ≥ log(1/η) + log(1/P)``; the tilt is ``λ*`` on a grid of
spacing ``1/(2 sd)``, floored so that ``E₋`` is below the target; the sieve level is
``T = log(1/η) + log sd + 14``.  These choices only steer accuracy and speed.  A tail whose discarded
terms exceed ``η`` relative is recomputed with a raised level, tilt or node count.
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import acb, arb, ctx, fmpq

from exactdp.certify.balls import interval, precision
from exactdp.certify.dgball import DGBall, float_log_mgf, float_tilted_mean, float_variance
from exactdp.certify.nodes import SieveGroup, choose_n_nodes, select_nodes

__all__ = ["TrapezoidTails", "kappa_for"]

_MAX_REFINE = 4
#: most Poisson terms ``|k| ≤ K`` a group is summed with before Arb's theta ball is used
POISSON_MAX_K = 3
#: bits above the working precision at which the node factors are summed (a tail's ball then
#: carries the factors' own radii, not 10⁵ roundings of the sum at the working precision)
GUARD_BITS = 32


def kappa_for(log_inv_eta: float) -> float:
    """Nodes per standard deviation such that ``N²/(2V') ≥ 2 log(1/η) + 10``: the aliasing
    from above stays below η also at the tilt floor ``λN ≈ log(1/η)``."""
    return math.sqrt(2.0 * (2.0 * log_inv_eta + 10.0))


class TrapezoidTails:
    """Enclosures of ``P(F ≥ t)``; construct and query inside one :func:`balls.precision`.

    Parameters
    ----------
    groups : sequence of (a, m, s2)
        Integer weight, multiplicity and variance (Fraction) of each group.
    log_inv_eta : float
        ``log(1/η)``: every discarded term is kept below ``η`` relative to the tail.
    kappa : float, optional
        Nodes per standard deviation of the variance proxy (default :func:`kappa_for`).
    """

    method = "tilted-trapezoid"

    def __init__(self, groups, log_inv_eta: float, kappa: float | None = None, max_candidates: int = 20_000_000):
        self.groups = [(int(a), int(m), Fraction(s2)) for a, m, s2 in groups]
        self.dg = [DGBall(s2) for _, _, s2 in self.groups]
        self.log_inv_eta = float(log_inv_eta)
        self.vproxy = sum((m * a * a * s2 for a, m, s2 in self.groups), Fraction(0))
        self.var = sum(m * a * a * float_variance(s2) for a, m, s2 in self.groups)
        self.sd = math.sqrt(self.var)
        if kappa is None:
            kappa = kappa_for(self.log_inv_eta)
        self.kappa = kappa
        self.lam_den = max(2, 2 * int(round(self.sd)))
        consts = [d.sieve_constant() for d in self.dg]
        self.sieve_groups = [SieveGroup(a, m, s2, None if c is None else float(c.upper()))
                             for (a, m, s2), c in zip(self.groups, consts)]
        self._cache: dict = {}
        self._saddles: dict = {}
        self._plans: dict = {}
        self._turns: dict = {}
        self._ytabs: dict = {}
        self.vproxy_f = float(self.vproxy)
        self._max_candidates = max_candidates
        self._build(kappa, self.log_inv_eta + math.log(max(self.sd, 1.0)) + 14.0)
        self._max_candidates = 20_000_000

    def _build(self, kappa: float, T: float) -> None:
        self.kappa = kappa
        self.N = choose_n_nodes(float(self.vproxy), kappa)
        self.set_level(T)

    def set_level(self, T: float) -> None:
        """Re-select the nodes at sieve level T (factors are recomputed on demand)."""
        self.T = float(T)
        nodes = select_nodes(self.sieve_groups, self.N, self.T, self._max_candidates)
        self.nodes = [int(n) for n in nodes]
        self._factors: dict = {}

    @property
    def nodes_kept(self) -> int:
        return len(self.nodes)

    def parameters(self) -> dict:
        return {"nodes_kept": self.nodes_kept, "n_nodes": self.N, "sieve_level": round(self.T, 6),
                "kappa": round(self.kappa, 6)}

    # -- tilt -------------------------------------------------------------------------
    def _saddle(self, t: int) -> tuple[float, float]:
        """(λ*, log 1/P estimate) for threshold t: ``K'(λ*) = t`` and ``λ*t − K(λ*)`` plus
        the Gaussian prefactor (floats, for choosing the rule only)."""
        hit = self._saddles.get(t)
        if hit is not None:
            return hit
        groups = self.groups

        def dk(lam):
            return sum(m * a * float_tilted_mean(s2, a * lam) for a, m, s2 in groups)

        hi = max(t / self.vproxy_f, 1e-300)
        while dk(hi) < t:
            hi *= 2
        lo = 0.0
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            if dk(mid) < t:
                lo = mid
            else:
                hi = mid
        lam = hi
        k = sum(m * float_log_mgf(s2, a * lam) for a, m, s2 in groups)
        out = (lam, max(lam * t - k, 0.0) + math.log1p(lam * self.sd * 2.5066282746310002))
        self._saddles[t] = out
        return out

    def _rule_for(self, t: int, extra: float) -> int:
        """Rebuild with more nodes if the tilt floor would sit far above the saddle point;
        return the tilt index j (λ = j/lam_den)."""
        lam_star, log_inv_p = self._saddle(t)
        need = self.log_inv_eta + log_inv_p + 3.0 + extra
        z = lam_star * self.sd
        kappa_req = need / (z + 4.0)
        if kappa_req > self.kappa:
            self._build(1.1 * kappa_req, self.T)
        j = int(round(lam_star * self.lam_den))
        j_min = int(math.ceil(need / self.N * self.lam_den))
        return max(j, j_min, 1)

    def _poisson_plan(self):
        """Per group, at this N and precision: the reaches ``r_K`` of the Poisson terms
        ``|k| ≤ K`` (K ≤ :data:`POISSON_MAX_K`, :meth:`DGBall.poisson_reach`; −1 where none)
        with their error bounds, and ``m s²`` and ``m s² a`` as integer numerators over one
        common denominator D."""
        key = (self.N, ctx.prec)
        hit = self._plans.get(key)
        if hit is not None:
            return hit
        N, bits = self.N, ctx.prec + 16
        reach, errs = [], []
        for d in self.dg:
            rs, es = [], []
            for K in range(POISSON_MAX_K + 1):
                r = d.poisson_reach(N, bits, K)
                e = d.poisson_error(r, N, K) if r >= 0 else None
                if e is None or not (e.is_finite() and e > 0 and e < 1):  # a void bound: not used
                    r, e = -1, None
                rs.append(r)
                es.append(None if e is None else arb(e.upper()))
            reach.append(rs)
            errs.append(es)
        D = math.lcm(*(s2.denominator for _, _, s2 in self.groups))
        p = [m * s2.numerator * (D // s2.denominator) for _, m, s2 in self.groups]
        q = [pg * a for pg, (a, _, _) in zip(p, self.groups)]
        out = self._plans[key] = (reach, errs, D, p, q)
        return out

    def _turn(self, r: int) -> acb:
        """``e^{2πi r/N}`` (0 ≤ r < N) as the product of two tabulated balls: ``r = hM + l``
        with ``M = ⌈√N⌉``, each table entry ``sin/cos(π·2x/N)`` of an exact rational (Arb's
        ``sin_cos_pi_fmpq``); 2√N entries per N and precision, built once."""
        key = (self.N, ctx.prec)
        tab = self._turns.get(key)
        if tab is None:
            N = self.N
            M = math.isqrt(N - 1) + 1

            def cis(x: int) -> acb:
                s, c = arb.sin_cos_pi_fmpq(fmpq(2 * x, N))
                return acb(c, s)

            tab = self._turns[key] = (M, [cis(x) for x in range(M)], [cis(h * M % N) for h in range(M)])
        M, lo, hi = tab
        h, l = divmod(r, M)
        return hi[h] * lo[l] if h else lo[l]

    def _powers(self, g: int, cy: arb, r: int) -> tuple[arb, arb]:
        """``(e^{cy·r}, e^{−cy·r})`` of group g (``cy = 4π²s_g²/N``, independent of the tilt)
        as products of two tabulated balls: ``|r| = hM + l`` with ``M = ⌈√(N/2)⌉``, each
        entry ``e^{±cy·x}`` one Arb exponential; built once per group, N and precision."""
        key = (g, self.N, ctx.prec)
        tab = self._ytabs.get(key)
        if tab is None:
            M = math.isqrt(self.N // 2) + 1
            step = cy * M
            tab = self._ytabs[key] = (M, [(cy * x).exp() for x in range(M)], [(-cy * x).exp() for x in range(M)],
                                      [(step * h).exp() for h in range(M + 1)],
                                      [(-step * h).exp() for h in range(M + 1)])
        M, lo, lo_inv, hi, hi_inv = tab
        h, l = divmod(r if r >= 0 else -r, M)
        up = hi[h] * lo[l] if h else lo[l]
        down = hi_inv[h] * lo_inv[l] if h else lo_inv[l]
        return (up, down) if r >= 0 else (down, up)

    def _node_factors(self, j: int):
        """Per kept node n: ``G_n`` as ``(n, w, H_n, P_n)`` with ``G_n = H_n e^{iπ P_n/D_φ}``,
        ``D_φ = lam_den·N·D`` (the last of the returned tuple; see the module docstring).

        A group whose reduced phase ``b = 2πr/N`` lies within the reach of K Poisson terms
        (:mod:`.dgball`) contributes ``(e₀ (Σ_{|k|≤K} γ_k y^k + ξ))^m`` over its
        prefactor-scaled ``Θ(a_gλ)^m``: the ``e₀`` exponents are summed exactly (integers over
        one denominator) — the real ones into one real exponential per node, the phases into
        the exact integer ``P_n`` (reduced mod ``2D_φ``), which :meth:`_tail_at` adds to the
        threshold's phase before one ``sin_cos_pi`` — and ``ξ`` (bounded by
        :meth:`DGBall.poisson_error`) goes into the ball.  A group beyond every reach is
        Arb's theta ball at its exact phase (in ``H_n``)."""
        hit = self._factors.get(j)
        if hit is not None:
            return hit
        plan = self._poisson_plan()  # at the working precision (its reaches are chosen for it)
        out = self._factors[j] = self._node_factors_at(j, plan)
        return out

    def _node_factors_at(self, j: int, plan):
        """:meth:`_node_factors` (uncached) with the Poisson plan ``plan``."""
        lam = fmpq(j, self.lam_den)
        lam_b = arb(lam)
        e_lam = (-lam_b).exp()
        one_minus = -(-lam_b).expm1()
        N = self.N
        a_lam = [arb(fmpq(a) * lam) for a, _, _ in self.groups]
        den = [d.theta_real(x) for d, x in zip(self.dg, a_lam)]
        log_m = arb(0)
        for (_, m, _), d, dn in zip(self.groups, self.dg, den):
            log_m += m * (dn / d.theta0).log()
        reach, errs, D, p, q = plan
        pi = arb.pi()
        pi2 = pi * pi
        re_c = -2 * pi2 / (N * N * D)  # Σ m(−s²b²/2) = −2π²A/(N²D) = A·re_c
        ph_den = self.lam_den * N * D  # Σ m s²(aλ)b = π · 2jB/(lam_den N D)
        ph_mod = 2 * ph_den
        consts: dict = {}

        def const(mask: int, mask0: int) -> acb:
            """Π over groups of dn^{−m}, times the Poisson prefactors of the groups in mask, in
            a box for the neglected terms of the one-term groups (mask0)."""
            k, grow = arb(1), arb(1)
            for i, ((_, m, _), d, x, dn) in enumerate(zip(self.groups, self.dg, a_lam, den)):
                k = k * (d.poisson_scale(x) / dn) ** m if mask >> i & 1 else k / dn ** m
                if mask0 >> i & 1:
                    grow *= (1 + errs[i][0]) ** m
            e = (grow - 1).upper()
            return acb(k) * acb(arb(1, e), arb(0, e)) if mask0 else acb(k)

        rows = []
        for (a, m, s2), d, x, rs, es, pg, qg in zip(self.groups, self.dg, a_lam, reach, errs, p, q):
            # γ_k = e^{−2π²s²k²} e^{−2πi s²(aλ)k} (the phase reduced exactly); γ_{−k} = conj γ_k
            gam = []
            for k in range(1, POISSON_MAX_K + 1):
                ph = fmpq(s2.numerator * a * j * k, s2.denominator * self.lam_den)
                ps, pc = arb.sin_cos_pi_fmpq(-2 * (ph - ph.floor()))
                mag = (-2 * pi2 * d.s2b * k * k).exp()
                gam.append((pc * mag, ps * mag))
            boxes = [None if e is None else arb(0, e) for e in es]
            cy = 4 * pi2 * d.s2b / N  # y = e^{2πs²b} = e^{cy·r}
            # the phase numerator of one unit of r, 2j·q_g, reduced mod 2D_φ (B enters as 2jB)
            rows.append((a, m, d, acb(0, -x / d.two_pi), rs[0], rs, boxes, gam, cy, pg, (2 * j * qg) % ph_mod))
        one = acb(1)
        turn = self._turn
        Gs = []
        for n in self.nodes:
            if n == 0:
                Gs.append((0, 1, one, 0))
                continue
            prod: acb | None = None
            A = B = mask = mask0 = 0
            for i, (a, m, d, xi, r0, rs, boxes, gam, cy, pg, qg) in enumerate(rows):
                r = (a * n) % N
                if 2 * r > N:
                    r -= N
                ar = r if r >= 0 else -r
                if ar <= r0:  # K = 0 (the common case)
                    A += pg * r * r
                    B += qg * r
                    mask |= 1 << i
                    mask0 |= 1 << i
                    continue
                K = 1
                while K <= POISSON_MAX_K and ar > rs[K]:
                    K += 1
                if K > POISSON_MAX_K:
                    th = d.theta_w(xi + fmpq(r, N)) ** m
                    prod = th if prod is None else prod * th
                    continue
                A += pg * r * r
                B += qg * r
                mask |= 1 << i
                # Σ_{|k|≤K} γ_k y^k + ξ = 1 + Σ_{k≥1} [Re γ_k (y^k + y^−k) + i Im γ_k (y^k − y^−k)] + ξ
                y, yi = self._powers(i, cy, r)
                yk, yik = y, yi
                box = boxes[K]
                assert box is not None  # (K ≤ POISSON_MAX_K: its error box exists)
                t_re, t_im = 1 + box, box
                for k in range(K):
                    g_re, g_im = gam[k]
                    t_re += g_re * (yk + yik)
                    t_im += g_im * (yk - yik)
                    if k + 1 < K:
                        yk *= y
                        yik *= yi
                t = acb(t_re, t_im) ** m
                prod = t if prod is None else prod * t
            kc = consts.get((mask, mask0))
            if kc is None:
                kc = consts[mask, mask0] = const(mask, mask0)
            if mask:
                kc = kc * (re_c * A).exp()
            prod = kc if prod is None else prod * kc
            # (1 − e^{−λ})/(1 − e^{−λ−iθ_n}), e^{−iθ_n} the conjugate of the tabulated turn
            G = prod * one_minus / (one - e_lam * turn(n).conjugate())
            Gs.append((n, 1 if 2 * n == N else 2, G, B % ph_mod))
        return lam, lam_b, log_m, one_minus, Gs, ph_den

    def node_factor_balls(self, j: int) -> list:
        """``(n, w, G_n)`` of every kept node at tilt index j, each ``G_n`` one ball (the
        factors of :meth:`_node_factors` with their phase multiplied in; for tests)."""
        *_, Gs, ph_den = self._node_factors(j)
        out = []
        for n, w, H, P in Gs:
            s, c = arb.sin_cos_pi_fmpq(fmpq(P, ph_den))
            out.append((n, w, H * acb(c, s)))
        return out

    # -- tails ------------------------------------------------------------------------
    def tail(self, t: int) -> arb:
        """A ball containing ``P(F ≥ t)``."""
        t = int(t)
        if t <= 0:
            return 1 - self.tail(1 - t)
        v = self._cache.get(t)
        if v is None:
            v = self._cache[t] = self._tail(t)
        return v

    def _tail(self, t: int) -> arb:
        extra = 0.0
        eta = math.exp(-self.log_inv_eta)
        for _ in range(_MAX_REFINE):
            val, parts, q = self._tail_at(t, self._rule_for(t, extra))
            est = float(q.mid()) if q.mid() > 0 else math.exp(-min(self._saddle(t)[1], 700.0))
            if est == 0.0:
                est = 1e-300
            worst = max(parts, key=lambda k: parts[k])
            bound = parts[worst]
            if bound.is_finite() and bound / est < eta:
                return val
            excess = float((bound / est / eta).log().upper()) + 3.0 if bound.is_finite() else 30.0
            if worst == "sieve":
                self.set_level(self.T + excess)
            elif worst == "alias_below":
                extra += excess
            else:
                self._build(self.kappa * 1.5, self.T)
        return val

    def _tail_at(self, t: int, j: int):
        lam, lam_b, log_m, one_minus, Gs, ph_den = self._node_factors(j)
        N = self.N
        # Re[G_n e^{−iθ_n t}] = Re[H_n e^{iπψ}] with ψ = P_n/D_φ − 2(nt mod N)/N, summed
        # exactly over D_φ = lam_den·N·D and reduced mod 2; the terms at the working
        # precision, their sum with GUARD_BITS more
        t_ph = 2 * (ph_den // N)
        ph_mod = 2 * ph_den
        terms = []
        for n, w, H, P in Gs:
            s, c = arb.sin_cos_pi_fmpq(fmpq((P - t_ph * ((n * t) % N)) % ph_mod, ph_den))
            v = H.real * c - H.imag * s
            terms.append(v if w == 1 else 2 * v)
        with precision(ctx.prec + GUARD_BITS):
            acc = arb(0)
            for v in terms:
                acc += v
        R = (log_m - lam_b * t).exp() / one_minus
        q = R * acc / N
        sieve = R * arb(-self.T).exp()
        lam_n = lam_b * N
        below = (-lam_n).exp() / (-(-lam_n).expm1())
        vp = arb(fmpq(self.vproxy.numerator, self.vproxy.denominator))
        rho = (lam_n - (2 * arb(t + N) * N + arb(N) * N) / (2 * vp)).exp()
        if rho < 1:
            above = (lam_n - arb(t + N) ** 2 / (2 * vp)).exp() / (1 - rho)
        else:
            above = arb("inf")
        parts = {"sieve": sieve.upper(), "alias_below": below.upper(), "alias_above": above.upper()}
        lo = q.lower() - parts["sieve"] - parts["alias_below"] - parts["alias_above"]
        hi = q.upper() + parts["sieve"]
        return interval(lo, hi), parts, q
