"""The independent multiprecision recomputation of δ(ε) (``exactdp delta --verify``).

It shares the exact lattice mapping (``accountant.lattice``: weights, counts, exact
variances, the integer thresholds of ε) with the fast path and nothing else — no sieve,
node list, tilt, kernel or conditioning of :mod:`exactdp.engine` is imported or called:

* **its own rule**: N' = max(4097, ⌈24·sd⌉) nodes, odd (the fast path uses ~16·sd), its
  own tilt (bisection on the tilted mean), each group's characteristic function in its
  plain Poisson (σ² ≥ 1/2) or direct (σ² < 1/2) series;
* **its own node selection**: a branch and bound over intervals of nodes — an interval
  is dropped when, for the distance u of ``A_g θ`` to 2πℤ minimised *exactly* over the
  interval (integer arithmetic), ``Σ_g m_g log(P_g(u)/D_g) < −T'`` (wrapped-normal bound
  with its tail, T' for 1e-20 relative); intervals of ≤ 1024 nodes are screened node by
  node with the same bound;
* **its own arithmetic**: every node factor and the node sum in MPFR (gmpy2, correctly
  rounded) at :data:`NODE_PREC` bits, phases reduced exactly in integers (``A_g n mod
  N``, ``n s mod N``); the tilt's normaliser and the prefactor in mpmath at ``dps``
  digits (:data:`~exactdp.numerics.precision.VERIFY_DPS` by default); no float64 or
  extended-precision sum anywhere in a value;
* **its own conditioning**: groups whose factor never decays are enumerated by an exact
  multiprecision pmf (direct sums, atoms above 10^{−(dps+20)}) and the rest by the rule
  on its own sub-lattice.

Error bound of a tail (absolute): dropped nodes ≤ e^{−T'} in units of the normalising
factor; aliasing by the sub-Gaussian Chernoff bound (Canonne–Kamath–Steinke 2020) at the
shifted thresholds, both sides; for each node factor the terms its series leaves out
(below e^{−60} of the leading one; |k| ≥ 3 of the Poisson series bounded geometrically)
over a lower bound of the factor's modulus, and its rounding (16 ulp of ``NODE_PREC`` per
elementary operation on the magnitudes involved); the node sum's rounding ((n + 2) ulp of
Σ|term|); the prefactor's (10^{−(dps−10)} relative); for conditioning the dropped atoms'
mass.  Its cost is bounded by a node budget (:data:`MAX_NODES` node-factors), beyond
which it refuses with :class:`UncertifiedError` instead of running for minutes.
Timings: ``bench/verify.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import reduce

import gmpy2
import mpmath
import numpy as np

from exactdp.accounting.accountant import ExactAccountant
from exactdp.dgauss.mp import log_theta_real_deep_mp
from exactdp.engine.lattice import LatticeSum
from exactdp.numerics.bracket import CentredBracket
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import as_real
from exactdp.numerics.precision import VERIFY_DPS, to_mpf, workdps

__all__ = ["VerifiedTail", "VerifiedDelta", "verify_tail", "verify_delta", "MAX_NODES", "NODE_PREC"]

#: the largest number of nodes (times groups) evaluated per tail
MAX_NODES = 12_000_000
#: below this many node-factors the full rule is used without trying conditioning
PREFER_NODES = 400_000
#: the most atoms of the never-decaying groups the recomputation conditions on (one tail each)
MAX_ATOMS = 4096
#: intervals of at most this many nodes are screened node by node
_LEAF = 1024
#: nodes screened per vectorised batch
_BATCH = 1 << 16
#: nodes and aliased mass are dropped below e^-_LOG_DROP relative (the check needs ~1e-16)
_LOG_DROP = math.log(1e20)
#: binary precision of the node factors and the node sum (unit roundoff 2^-128 ≈ 2.9e-39)
NODE_PREC = 128
#: a factor's series terms below e^-_TERM_DROP of its leading term are left out (and bounded)
_TERM_DROP = 60.0
_U = 2.0**-NODE_PREC
#: groups with σ² at least this take the Poisson series (|k| ≥ 3 below e^{−12π²σ²} ≤ e^{−59}),
#: the others the direct sum over the support
POISSON_MIN_S2 = 0.5


@dataclass(frozen=True)
class VerifiedTail(CentredBracket):
    """``P[S ≥ threshold]`` recomputed in multiprecision (``estimate ± error_bound``) beside
    the fast engine's ``fast_value`` (relative error ``fast_rel_error``)."""

    _ARG, _NAME = "threshold", "P[S ≥ k]"

    threshold: int
    estimate: mpmath.mpf
    error_bound: mpmath.mpf
    fast_value: float
    fast_rel_error: float
    disagreement: float  # |fast − mp| / mp
    nodes: int
    dps: int

    @property
    def agrees(self) -> bool:
        return self.disagreement <= self.fast_rel_error + float(self.error_bound / self.estimate)


@dataclass(frozen=True)
class VerifiedDelta(CentredBracket):
    """δ(ε) recomputed in multiprecision (``estimate ± error_bound``, ``value`` its upper
    end) beside the fast engine's ``fast_value ± fast_error_bound``."""

    _ARG, _NAME = "epsilon", "δ"

    epsilon: mpmath.mpf
    estimate: mpmath.mpf
    error_bound: mpmath.mpf
    fast_value: mpmath.mpf
    fast_error_bound: mpmath.mpf
    disagreement: mpmath.mpf  # |fast − mp| (absolute)
    tails: tuple

    @property
    def agrees(self) -> bool:
        return self.disagreement <= self.fast_error_bound + self.error_bound


def _wrapped_upper(u, s2: float):
    """log of an upper bound of Σ_k e^{−s²(u − 2πk)²/2}, u ∈ [0, π] (terms |k| ≤ 2 and
    a geometric remainder for |k| ≥ 3); ``u`` a float or an array."""
    if np.ndim(u) == 0:  # the branch and bound's scalar calls, without numpy overhead
        exps = [-0.5 * s2 * (u - 2 * math.pi * k) ** 2 for k in range(-2, 3)]
        top = max(exps)
        tail = 2 * math.exp(-0.5 * s2 * (5 * math.pi) ** 2 - top) / max(1e-300, -math.expm1(-10 * math.pi**2 * s2))
        return top + math.log(sum(math.exp(e - top) for e in exps) + tail)
    uu = np.asarray(u, dtype=float)
    ex = -0.5 * s2 * (uu[:, None] - 2 * math.pi * np.arange(-2, 3, dtype=float)[None, :]) ** 2
    mx = ex.max(axis=1)
    # |k| ≥ 3: (u − 2πk)² ≥ (5π + 2π(|k| − 3))², a geometric series of ratio e^{−10π²s²}
    rest = 2 * np.exp(-0.5 * s2 * (5 * math.pi) ** 2 - mx) / max(1e-300, -math.expm1(-10 * math.pi**2 * s2))
    return mx + np.log(np.exp(ex - mx[:, None]).sum(axis=1) + rest)


class _Rule:
    """The twin's rule on one lattice sum (weights A, counts m, exact variances)."""

    def __init__(self, A, m, s2q, dps: int):
        self.A = [int(a) for a in A]
        self.m = [int(c) for c in m]
        self.s2q = [Fraction(s) for s in s2q]
        self.s2f = [float(s) for s in self.s2q]
        self.dps = dps
        self.vp = sum(mm * a * a * s for a, mm, s in zip(self.A, self.m, self.s2f))
        vn = sum(mm * a * a * max(s, 0.25) for a, mm, s in zip(self.A, self.m, self.s2f))
        # odd N (no node at π); at least 4097 so that the aliasing floor of the tilt stays small
        self.N = max(4097, int(math.ceil(24.0 * math.sqrt(vn))) | 1)
        self.T = _LOG_DROP + 0.5 * math.log(2 * math.pi * self.vp) + 8.0
        self.lam_floor = (_LOG_DROP + 30.0) / self.N
        self._nodes: list[int] | None = None

    # -- node selection: branch and bound with exact interval distances --------------
    def nodes(self, budget: int = MAX_NODES):
        """The kept nodes (refusing, UncertifiedError, beyond ``budget`` node-factors)."""
        if self._nodes is not None:
            return self._nodes
        N = self.N
        logD = []
        for s2 in self.s2f:
            q = sum(math.exp(-2 * math.pi**2 * s2 * k * k) for k in range(1, 30))
            D = 1 - 2 * q
            logD.append(math.log(D) if D > 0.1 else None)
        out, pending, waiting = [], [], 0
        stack = [(0, N // 2)]
        if N >= 2**31:
            raise UncertifiedError(f"the verification twin's rule would need {N} nodes (beyond 2^31); the design is "
                                   f"too large for its check (try --certify for an Arb enclosure)")
        steps = budget
        while stack:
            n0, n1 = stack.pop()
            steps -= 1
            if steps < 0:
                raise UncertifiedError("the verification twin's node selection exceeds its budget; "
                                       "the design is too large for a multiprecision check")
            bound = 0.0
            for a, mm, s2, ld in zip(self.A, self.m, self.s2f, logD):
                if ld is None:
                    continue
                # A_g·n over the real interval [n0, n1], modulo N: [x0, x1]
                x0 = (a * n0) % N
                x1 = x0 + a * (n1 - n0)
                if x1 >= N:  # it contains a multiple of N: no bound from this group
                    continue
                d = min(x0, N - x1)  # the distance of [x0, x1] ⊂ [0, N) to {0, N}
                bound += mm * (_wrapped_upper(2 * math.pi * d / N, s2) - ld)
            if bound + 1e-6 < -self.T:
                continue
            if n1 - n0 + 1 <= _LEAF:
                pending.append((n0, n1))
                waiting += n1 - n0 + 1
                if waiting >= _BATCH or not stack:
                    out.extend(self._screen(pending, logD).tolist())
                    pending, waiting = [], 0
                    if len(out) * len(self.A) > budget:
                        raise UncertifiedError(f"the verification twin would evaluate more than {budget} "
                                               f"node-factors; the design is too large for its check (the fast "
                                               f"result stands unverified; try --certify for an Arb enclosure)")
                continue
            mid = (n0 + n1) // 2
            stack.append((mid + 1, n1))
            stack.append((n0, mid))
        if pending:
            out.extend(self._screen(pending, logD).tolist())
        self._nodes = sorted(out)
        return self._nodes

    def _screen(self, spans, logD):
        """The nodes of the intervals ``spans`` whose own bound (exact integer distance of
        A_g·n to Nℤ, wrapped-normal bound per group) is not below −T'; groups in order of
        decay, dropping a node as soon as even the largest contribution of the remaining
        groups (each ≤ m_g(log P_g(0) − log D_g), small and positive) cannot lift it."""
        N = self.N
        n = np.concatenate([np.arange(a, b + 1, dtype=np.int64) for a, b in spans])
        groups = sorted(((mm * s2, a, mm, s2, ld) for a, mm, s2, ld in zip(self.A, self.m, self.s2f, logD)
                         if ld is not None), reverse=True)
        lift = [mm * max(0.0, _wrapped_upper(0.0, s2) - ld) for _, _, mm, s2, ld in groups] + [0.0]
        for i in range(len(groups) - 1, -1, -1):
            lift[i] += lift[i + 1]
        bound = np.zeros(len(n))
        for i, (_, a, mm, s2, ld) in enumerate(groups):
            r = (a % N) * n % N
            bound += mm * (_wrapped_upper(2 * math.pi * np.minimum(r, N - r) / N, s2) - ld)
            keep = bound + lift[i + 1] + 1e-6 >= -self.T
            n, bound = n[keep], bound[keep]
        return n

    # -- the tilt ------------------------------------------------------------------------
    def _mean(self, lam: float) -> float:
        tot = 0.0
        for a, mm, s2 in zip(self.A, self.m, self.s2f):
            mu = a * lam * s2
            if s2 >= 10:
                tot += mm * a * mu
                continue
            c = round(mu)
            xs = range(c - int(math.sqrt(120 * s2)) - 3, c + int(math.sqrt(120 * s2)) + 4)
            ws = [-(x - mu) ** 2 / (2 * s2) for x in xs]
            mx = max(ws)
            e = [math.exp(w - mx) for w in ws]
            tot += mm * a * sum(x * v for x, v in zip(xs, e)) / sum(e)
        return tot

    def tilt(self, s: int) -> float:
        lo, hi = 0.0, max(s / self.vp, 1e-300)
        while self._mean(hi) < s:
            lo, hi = hi, 2 * hi
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            if self._mean(mid) < s:
                lo = mid
            else:
                hi = mid
        return max(0.5 * (lo + hi), self.lam_floor)

    # -- the node factors in MPFR ------------------------------------------------------------
    def _groups_at(self, lamf: float):
        """Per-group constants of the tilt λ (a float, exact in MPFR): ``("poisson", …)``
        or ``("direct", …)`` tuples for :meth:`_node_term`, and the constant part of the
        node factors' log error (:meth:`_node_term` adds what varies with the node)."""
        out, err = [], 0.0
        lam = gmpy2.mpfr(lamf)
        two_pi = 2 * gmpy2.const_pi()
        step = two_pi / self.N  # b = step·r, r the signed residue of A_g n mod N
        for A, m, s2q, s2f in zip(self.A, self.m, self.s2q, self.s2f):
            s2 = gmpy2.mpfr(gmpy2.mpq(s2q.numerator, s2q.denominator))
            a = A * lam
            if s2f >= POISSON_MIN_S2:
                out.append(self._poisson_group(A, m, s2, s2f, a, lamf, step, two_pi))
                err += m * out[-1][-1]
            else:
                out.append(self._direct_group(m, s2, s2f, a, step))
        return out, err

    def _poisson_group(self, A, m, s2, s2f, a, lamf, step, two_pi):
        """σ² ≥ 1/2: ψ(b) = e^{−s²b²/2 + i s² a b}·(1 + Σ_{k=±1,±2} C_k e^{2π s² k b})/den, the
        Poisson series of the tilted factor; |k| ≥ 3 and terms below e^{−60} left out."""
        s2a = s2 * a
        pi = gmpy2.const_pi()
        den = gmpy2.mpc(0)
        for k in range(-4, 5):  # |k| ≥ 5: below e^{−2π²·25}
            den += gmpy2.exp(-two_pi * pi * s2 * k * k) * gmpy2.exp(gmpy2.mpc(0, -two_pi * k * s2a))
        logden = gmpy2.log(den)
        # the term k is e^{e_k} with e_k = −2π²s²k² + 2π s² k b; it is kept iff e_k ≥ −60,
        # i.e. k·r ≥ (2π²s²k² − 60)/(2π s²)/(2π/N) for the residue r of b (one step of margin)
        extra = []
        for k in (-2, -1, 1, 2):
            need = math.floor((2 * math.pi**2 * s2f * k * k - _TERM_DROP) / (2 * math.pi * s2f) * self.N
                              / (2 * math.pi)) - 1
            if need <= abs(k) * (self.N // 2):
                c = gmpy2.exp(-two_pi * pi * s2 * k * k) * gmpy2.exp(gmpy2.mpc(0, -two_pi * k * s2a))
                extra.append((k, need, c))
        q3 = 12 * math.pi**2 * s2f
        dropped = 2 * math.exp(-q3) / -math.expm1(-q3) + 4 * math.exp(1 - _TERM_DROP) + 1e-300
        sa = abs(s2f * A * lamf)
        dx_mag = 16 * _U * (8 * math.pi**2 * s2f + 4 * math.pi * sa + 8)  # per unit of Σ|C_k e^{…}|
        base_err = 16 * _U * (s2f * math.pi**2 / 2 + sa * math.pi + abs(complex(logden)) + 8)
        return ("poisson", m, s2 * step * step / -2 * m, s2a * step * m, logden * m, extra, two_pi * s2 * step,
                dropped, dx_mag, base_err + dropped / (1 - 2 * dropped))

    def _direct_group(self, m, s2, s2f, a, step):
        """σ² < 1/2: ψ(b) = Σ_x w_x e^{ibx}/Σ_x w_x, w_x = e^{a x − x²/(2s²) − top} around the
        tilted centre, terms below e^{−60} of the top left out."""
        x0 = int(gmpy2.rint(a * s2))
        half = int(math.ceil(math.sqrt(2 * s2f * _TERM_DROP))) + 2
        xs = list(range(x0 - half, x0 + half + 1))
        ts = [a * x - gmpy2.mpfr(x * x) / (2 * s2) for x in xs]
        top = max(ts)
        w = [gmpy2.exp(t - top) for t in ts]
        W = sum(w)
        af = abs(float(a))
        mag = max(af * abs(x) + x * x / (2 * s2f) for x in xs) + abs(float(top)) + 2 * half + 16
        # outside ±half: (x − μ)² ≥ (half + 1/2)² ≥ 2s²·60, a geometric tail of ratio ≤ e^{−1}
        dropped = 4 * math.exp(-_TERM_DROP)
        return ("direct", m, xs[0], w[::-1], W, mag, max(abs(x) for x in xs), dropped, step)

    def _node_term(self, n: int, s: int, groups, const_err: float, tilt):
        """``(term, |term|, log error)`` of node n: ``w_n Re[Π_g ψ_g^{m_g}·e^{−iθ_n s}·(1 −
        e^{−λ})/(1 − e^{−λ−iθ_n})]`` and a bound on the error of its log."""
        N = self.N
        om, q, pi_n, step = tilt
        re = gmpy2.mpfr(0)
        im = gmpy2.mpfr(0)
        prod = None
        err = const_err
        dx = 0.0
        for g, A in zip(groups, self.A):
            r = (A % N) * n % N
            if 2 * r > N:
                r -= N
            if g[0] == "poisson":
                _, m, c2, c1, logden_m, extra, slope, dropped, dx_mag, _ = g
                re += c2 * (r * r) - logden_m.real
                im += c1 * r - logden_m.imag
                f = None
                y = None  # e^{2π s² b}: the terms are C_k·y^k
                for k, need, c in extra:
                    if k * r >= need:
                        if y is None:
                            y = gmpy2.exp(slope * r)
                            powers = {1: y, -1: 1 / y}
                        yk = powers.get(k)
                        if yk is None:
                            yk = powers[k] = powers[k // 2] * powers[k // 2]
                        t = c * yk
                        f = 1 + t if f is None else f + t
                        dx += float(abs(t))  # (|C_k| and y^k alone can under/overflow a float)
                if f is not None:
                    dx *= dx_mag
                    low = float(abs(f)) - dx - dropped
                    err += m * ((dx + dropped) / low if low > 0 else math.inf) + 32 * _U * m
                    dx = 0.0
                    prod = _times_power(prod, f, m)
                continue
            _, m, x_first, w_rev, W, mag, xmax, dropped, _ = g
            b = step * r
            sn, cs = gmpy2.sin_cos(b)
            e1 = gmpy2.mpc(cs, sn)
            acc = gmpy2.mpc(w_rev[0])
            for wx in w_rev[1:]:  # Horner: Σ_j w_j e^{ibj}, j = x − x_first
                acc = acc * e1 + wx
            sn, cs = gmpy2.sin_cos(b * x_first)
            S = acc * gmpy2.mpc(cs, sn)
            dS = 16 * _U * float(W) * (mag + abs(float(b)) * xmax)
            low = float(abs(S)) - dS - 2 * dropped
            err += m * ((dS + 2 * dropped) / low + 32 * _U * mag + dropped if low > 0 else math.inf) + 32 * _U * m
            prod = _times_power(prod, S / W, m)
        im -= step * ((n * s) % N)  # the phase e^{−iθ s}, reduced exactly
        sh, ch = gmpy2.sin_cos(pi_n * n)  # θ/2
        dr = om + 2 * q * sh * sh  # 1 − e^{−λ} cos θ
        di = 2 * q * sh * ch  # e^{−λ} sin θ
        sn, cs = gmpy2.sin_cos(im)
        z = gmpy2.mpc(cs, sn)
        if prod is not None:
            z *= prod
        e = gmpy2.exp(re)
        wn = 1 if n == 0 else 2
        den2 = dr * dr + di * di
        term = wn * e * om * (z.real * dr + z.imag * di) / den2
        size = wn * float(e * om) * float(abs(z)) / math.sqrt(float(den2))
        err += 32 * _U * (abs(float(re)) + abs(float(im)) + 16)
        return term, size, err

    def tail(self, s: int):
        """``(P(S ≥ s), absolute error bound)`` for s ≥ 1: the prefactor at the working
        precision (mpmath), every node factor and the node sum in MPFR at NODE_PREC bits."""
        N = self.N
        lamf = self.tilt(s)
        lam = mpmath.mpf(lamf)
        nodes = self.nodes()
        logm = mpmath.fsum(mm * (log_theta_real_deep_mp(a * lam, self.s2q[g], self.dps)
                                 - log_theta_real_deep_mp(0, self.s2q[g], self.dps))
                           for g, (a, mm) in enumerate(zip(self.A, self.m)))
        with gmpy2.context(gmpy2.get_context(), precision=NODE_PREC):
            groups, const_err = self._groups_at(lamf)
            lm = gmpy2.mpfr(lamf)
            tilt = (-gmpy2.expm1(-lm), gmpy2.exp(-lm), gmpy2.const_pi() / N, 2 * gmpy2.const_pi() / N)
            total = gmpy2.mpfr(0)
            mags = 0.0
            round_err = 0.0
            for n in nodes:
                term, size, e = self._node_term(n, s, groups, const_err, tilt)
                total += term
                mags += size
                round_err += size * math.expm1(e + 64 * _U)
            round_err += (len(nodes) + 2) * _U * mags
            man, ex = total.as_mantissa_exp()
        R = mpmath.exp(logm - lam * s) / -mpmath.expm1(-lam)
        est = R * mpmath.mpf((int(man), int(ex))) / N
        # dropped nodes, aliasing from below (sub-Gaussian Chernoff), rounding
        err = R * mpmath.exp(-self.T)
        vp = mpmath.mpf(self.vp)
        t = max((s + N) / vp, lam + N / vp)
        err += mpmath.exp(t * t * vp / 2 - t * (s + N) + lam * N) / (-mpmath.expm1(-(t - lam) * N))
        err += R * mpmath.mpf(round_err) * (1 + mpmath.mpf(2) ** -50) / N
        err += abs(est) * mpmath.mpf(10) ** (-(self.dps - 10))
        # aliasing from above: Σ_{j≥1} e^{−λjN} P[S ≥ s + jN] ≤ q·P[S ≥ s], q = e^{−λN}/(1 − e^{−λN}),
        # relative to the tail itself, which is ≤ (|est| + err)/(1 − q)
        q = mpmath.exp(-lam * N) / (-mpmath.expm1(-lam * N))
        err += q * (abs(est) + err) / (1 - q)
        return est, err


def _times_power(prod, f, m: int):
    """``prod·f^m`` (``prod`` None: 1), f^m by squaring and multiplying."""
    p = None
    while m:
        if m & 1:
            p = f if p is None else p * f
        m >>= 1
        if m:
            f = f * f
    return p if prod is None else prod * p


class _Twin:
    """The twin of one lattice sum: full rule, or exact conditioning on the groups that
    never decay (``m s² π²/2 < T'``) with the rule on the rest's sub-lattice."""

    def __init__(self, lattice: LatticeSum, dps: int):
        self.dps = dps
        self.lat = lattice
        self.coarse: list[int] = []
        self.rule = _Rule(lattice.weights, lattice.counts, lattice.sigma2, dps)
        try:
            self.rule.nodes(PREFER_NODES)
            return
        except UncertifiedError as exc:
            over = exc
        try:
            self._conditioned(lattice, dps, over)
        except UncertifiedError:  # conditioning does not pay: the full rule at the full budget
            self.coarse = []
            self.rule = _Rule(lattice.weights, lattice.counts, lattice.sigma2, dps)
            self.rule.nodes(MAX_NODES)

    def _conditioned(self, lattice, dps, over):
        """Exact conditioning on the groups that never decay, the rule on the rest."""
        G = lattice.n_groups
        # over budget: enumerate the groups that never decay (m s² π²/2 < T'), if cheap
        T = _LOG_DROP + 30
        self.coarse = [g for g in range(G) if int(lattice.counts[g]) * float(lattice.sigma2[g]) * math.pi**2 / 2 < T]
        if not self.coarse or len(self.coarse) == G:
            raise over
        fine = [g for g in range(G) if g not in self.coarse]
        est = 1
        for g in self.coarse:  # atoms of the coarse part, roughly, before building them
            est *= 2 * int(math.sqrt(2 * int(lattice.counts[g]) * float(lattice.sigma2[g]) * (dps + 25) * 2.31)) + 1
        if est > MAX_ATOMS:
            raise UncertifiedError(f"the verification twin would enumerate ~{est} coarse atoms; the design is too "
                                   f"large for a multiprecision check")
        self.d = reduce(math.gcd, (int(lattice.weights[g]) for g in fine))
        self.rule = _Rule([int(lattice.weights[g]) // self.d for g in fine], [lattice.counts[g] for g in fine],
                          [lattice.sigma2[g] for g in fine], dps)
        self._atoms()
        cost = len(self.atoms) * len(self.rule.nodes(MAX_NODES)) * len(fine)
        if cost > MAX_NODES:
            raise UncertifiedError(f"the verification twin would evaluate {cost} node-factors (budget "
                                   f"{MAX_NODES}); the design is too large for its check")

    def _atoms(self):
        """Exact pmf of the coarse part (direct mp sums and convolution; atoms below
        10^{−(dps+20)} dropped, their mass bounded)."""
        lat = self.lat
        atoms = {0: mpmath.mpf(1)}
        dropped = mpmath.mpf(0)
        floor = mpmath.mpf(10) ** (-(self.dps + 20))
        for g in self.coarse:
            s2 = to_mpf(Fraction(lat.sigma2[g]))
            half = int(math.ceil(math.sqrt(2 * float(lat.sigma2[g]) * (self.dps + 25) * 2.31))) + 2
            ws = {x: mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * s2)) for x in range(-half - 20, half + 21)}
            z = mpmath.fsum(ws.values())
            single = {x: v / z for x, v in ws.items() if abs(x) <= half}
            dropped += int(lat.counts[g]) * (1 - mpmath.fsum(single.values()))
            a = int(lat.weights[g])
            for _ in range(int(lat.counts[g])):
                new = {}
                for v, p in atoms.items():
                    for x, q in single.items():
                        pq = p * q
                        if pq < floor:
                            dropped += pq
                            continue
                        new[v + a * x] = new.get(v + a * x, 0) + pq
                atoms = new
        self.atoms = atoms
        self.dropped = dropped

    @property
    def n_nodes(self) -> int:
        return len(self.rule.nodes())

    def tail(self, s: int):
        """``(P(S ≥ s), absolute error)`` for any integer s (s ≤ 0 by 1 − P(S ≥ 1 − s))."""
        if s <= 0:
            v, e = self.tail(1 - s)
            return 1 - v, e
        if not self.coarse:
            return self.rule.tail(s)
        tot, err = mpmath.mpf(0), self.dropped
        cache = {}
        for v, p in self.atoms.items():
            u = -((-(s - v)) // self.d)
            if u not in cache:
                cache[u] = self.rule.tail(u) if u >= 1 else self._lower(u)
            a, e = cache[u]
            tot += p * a
            err += p * e
        return tot, err

    def _lower(self, u: int):
        a, e = self.rule.tail(1 - u)
        return 1 - a, e


def _twin(engine, dps: int) -> _Twin:
    key = ("_verify_twin", dps)
    tw = getattr(engine, "_twins", None)
    if tw is None:
        tw = engine._twins = {}
    if key not in tw:
        tw[key] = _Twin(engine.lattice, dps)
    return tw[key]


def verify_tail(engine, s: int, dps: int = VERIFY_DPS) -> VerifiedTail:
    """Recompute ``P(S ≥ s)`` by the independent twin and compare with ``engine.tail(s)``
    (any object with ``lattice`` and ``tail``; only its answer and lattice are used)."""
    fast = engine.tail(s)
    with workdps(dps):
        tw = _twin(engine, dps)
        val, err = tw.tail(int(s))
        dis = abs(mpmath.exp(fast.log_mp) - val) / val
        return VerifiedTail(s, +val, +err, fast.value, fast.rel_error, float(dis), tw.n_nodes, dps)


def verify_delta(accountant: ExactAccountant, eps, dps: int = VERIFY_DPS) -> VerifiedDelta:
    """δ(ε) by the twin (both tails) beside the fast-path value.

    Notes
    -----
    Method: the twin of this module (own rule, node selection, arithmetic, conditioning)
    for ``P[S ≥ k1] − e^ε P[S ≥ k2]`` (valid for every real ε).  Error bound: dropped
    nodes + aliasing + rounding of both tails, absolute (so relative to δ it grows where
    the two tails cancel, ε ≈ 0 with a wide loss distribution).  Refuses
    (UncertifiedError) beyond its node budget.  Reference: the tilted Fourier inversion
    of the lattice pmf (the twin's rule), Canonne, Kamath & Steinke (2020) for the
    discrete Gaussian's sub-Gaussian tails.
    """
    e = as_real(eps, "epsilon")
    if accountant.lattice is None:
        raise UncertifiedError("the multiprecision recomputation needs the design's exact int64 lattice; this "
                               "design is beyond it (try --certify for an Arb enclosure)")
    fast = accountant.delta([e])[0]
    k1, k2 = accountant.lattice.delta_thresholds(e)  # the exact lattice mapping (shared), any sign of ε
    try:
        t1 = verify_tail(accountant.engine, k1, dps)
        t2 = verify_tail(accountant.engine, k2, dps)
    except OverflowError:  # a threshold so far out (|ε| near 1e50) that the twin's float tilt leaves its range
        raise UncertifiedError("the multiprecision recomputation cannot reach this ε (its tilt leaves the float "
                               "range); try --certify for an Arb enclosure") from None
    with workdps(dps):
        em = e(dps) if callable(e) else to_mpf(e)
        ee = mpmath.exp(em)
        val = t1.estimate - ee * t2.estimate
        err = t1.error_bound + ee * t2.error_bound
        dis = abs(fast.estimate - val)
        if not err <= abs(val) * mpmath.mpf("1e-9"):
            rel = mpmath.nstr(err / abs(val), 3) if val else "inf"
            raise UncertifiedError(f"the multiprecision recomputation cannot resolve δ(ε) here (its own bound is "
                                   f"{rel} relative); the fast result stands "
                                   f"unverified; try --certify for an Arb enclosure")
        return VerifiedDelta(em, +val, +err, fast.estimate, fast.error_bound, +dis, (t1, t2))
