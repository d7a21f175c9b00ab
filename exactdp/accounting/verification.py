"""An independent check of the fast path (the verification "twin").

It shares the exact lattice mapping (``accountant.lattice``: weights, counts, exact
variances) with the fast path and nothing else — no sieve, node list, tilt, kernel or
conditioning of :mod:`exactdp.engine` is imported or called:

* **its own rule**: N' = max(4097, ⌈24·sd⌉) nodes, odd (the fast path uses ~16·sd), its
  own tilt (bisection on the tilted mean), the theta functions in their plain Poisson /
  direct forms;
* **its own node selection**: a branch and bound over intervals of nodes — an interval
  is dropped when, for the distance u of ``A_g θ`` to 2πℤ minimised *exactly* over the
  interval (integer arithmetic), ``Σ_g m_g log(P_g(u)/D_g) < −T'`` (wrapped-normal bound
  with its tail, T' for 1e-30 relative); intervals of ≤ 1024 nodes are screened node by
  node with the same bound;
* **its own arithmetic**: the node sums in x87 extended precision (64-bit significand,
  vectorised numpy ``longdouble``; the fast path is float64 Numba), phases reduced
  exactly in integers (``A_g n mod N``, ``n s mod N``), the prefactor in mpmath;
* **its own conditioning**: groups whose factor never decays are enumerated by an exact
  multiprecision pmf (direct sums, atoms above 10^{−(dps+20)}) and the rest by the rule
  on its own sub-lattice — where the fast path tilts atoms in float64.

Error bound of a tail (absolute): dropped nodes ≤ e^{−T'} in units of the normalising
factor; aliasing by the sub-Gaussian Chernoff bound (Canonne–Kamath–Steinke 2020) at the
shifted thresholds, both sides; rounding of each node term (a running bound, 4 ulp per
elementary operation on the magnitudes involved) and of the pairwise sum
((128 + log₂ n) ulp of Σ|term|); for conditioning the dropped atoms' mass.  Its cost is
bounded by a node budget (``MAX_NODES`` node-factors), beyond which it refuses with
:class:`UncertifiedError` instead of running for minutes.  Timings: ``bench/verify.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import reduce

import mpmath
import numpy as np

from exactdp.accounting.accountant import ExactAccountant
from exactdp.dgauss.mp import log_theta_real_deep_mp
from exactdp.engine.lattice import LatticeSum
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import as_real
from exactdp.numerics.precision import VERIFY_DPS, to_mpf, workdps

__all__ = ["VerifiedTail", "VerifiedDelta", "verify_tail", "verify_delta", "MAX_NODES"]

#: the largest number of nodes (times groups) the twin evaluates per tail (where
#: ``longdouble`` is only float64, e.g. on Windows or ARM, its bounds are ~2000× wider
#: and it refuses more often; they stay valid: the unit roundoff is read from numpy)
MAX_NODES = 12_000_000
#: below this many node-factors the full rule is used without trying conditioning
PREFER_NODES = 400_000
#: the most atoms of the never-decaying groups the twin conditions on (one tail each)
MAX_ATOMS = 4096
#: intervals of at most this many nodes are screened node by node
_LEAF = 1024
#: nodes screened per vectorised batch
_BATCH = 1 << 16
#: nodes and aliased mass are dropped below e^-_LOG_DROP relative (far below the 1e-19
#: rounding of the extended-precision sums)
_LOG_DROP = math.log(1e30)
#: x87 extended precision (64-bit significand) for the node sums, and its unit roundoff
_LD = np.longdouble
_CLD = np.clongdouble
_U = float(np.finfo(_LD).eps)
_TWO_PI = _LD("6.283185307179586476925286766559005768")


@dataclass(frozen=True)
class VerifiedTail:
    threshold: int
    value: mpmath.mpf
    error_bound: mpmath.mpf
    fast_value: float
    fast_rel_error: float
    disagreement: float  # |fast − mp| / mp
    nodes: int
    dps: int

    @property
    def agrees(self) -> bool:
        return self.disagreement <= self.fast_rel_error + float(self.error_bound / self.value)


@dataclass(frozen=True)
class VerifiedDelta:
    epsilon: mpmath.mpf
    value: mpmath.mpf
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
        ex = [-0.5 * s2 * (u - 2 * math.pi * k) ** 2 for k in range(-2, 3)]
        mx = max(ex)
        rest = 2 * math.exp(-0.5 * s2 * (5 * math.pi) ** 2 - mx) / max(1e-300, -math.expm1(-10 * math.pi**2 * s2))
        return mx + math.log(sum(math.exp(e - mx) for e in ex) + rest)
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
        # odd N (no node at π); at least 4097 so that the aliasing floor of the tilt stays
        # small and the extended-precision node sum does not cancel
        self.N = max(4097, int(math.ceil(24.0 * math.sqrt(vn))) | 1)
        self.T = _LOG_DROP + 0.5 * math.log(2 * math.pi * self.vp) + 8.0
        self.lam_floor = (_LOG_DROP + 30.0) / self.N
        self._nodes = None

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

    # -- log Θ(a + ib) − log Θ(a) in mpmath ------------------------------------------------
    def _prep(self, lam):
        """Per-tilt constants: a_g = A_g λ, and for the Poisson groups the log of the
        b = 0 sum Σ_k e^{−2π²s²k² − 2πik s² a} (direct groups: the real normaliser)."""
        pi2 = 2 * mpmath.pi
        out = []
        for g, a_g in enumerate(self.A):
            a = a_g * lam
            s2 = to_mpf(self.s2q[g])
            if self.s2f[g] >= 1.0:
                den = mpmath.fsum(mpmath.exp(-s2 * (pi2 * k) ** 2 / 2 - 1j * s2 * a * pi2 * k) for k in range(-4, 5))
                out.append((a, s2, mpmath.log(den)))
            else:
                out.append((a, s2, None))
        return out

    def _log_ratios(self, g: int, prep, b):
        """log Θ(a + ib) − log Θ(a) of group g at the frequencies ``b`` (an extended-
        precision array), and a bound on its absolute rounding error: the Poisson form
        (the k = 0 term analytically, k = ±1, ±2 where above e^-60) for s² ≥ 1, else a
        direct sum around the tilted centre (terms above e^-60)."""
        a, s2, logden = prep[g]
        s2l = _LD(str(s2))
        al = _LD(str(a))
        if logden is not None:
            big = s2l * b * b / 2 + np.abs(s2l * al * b)
            base = -s2l * b * b / 2 + 1j * (s2l * al * b)
            extra = np.zeros(b.shape, dtype=_CLD)
            for k in (-2, -1, 1, 2):
                e = -s2l * ((b - _TWO_PI * k) ** 2 - b * b) / 2
                keep = e > -60
                if np.any(keep):
                    ph = -(s2l * al * _TWO_PI * k) % _TWO_PI
                    extra[keep] += np.exp(e[keep] + 1j * ph)
            ld = complex(logden)
            out = base + np.log1p(extra) - _CLD(complex(_LD(str(ld.real)), _LD(str(ld.imag))))
            return out, _U * 4 * (big + abs(ld) + 4)
        x0 = int(mpmath.nint(a * s2))
        half = int(math.ceil(math.sqrt(2 * self.s2f[g] * 60))) + 2
        xs = np.arange(x0 - half, x0 + half + 1)
        tmp = [a * int(x) - mpmath.mpf(int(x)) ** 2 / (2 * s2) for x in xs]
        top = max(tmp)
        ts = np.array([_LD(mpmath.nstr(t - top, 25)) for t in tmp], dtype=_LD)  # exponents relative to the top
        keep = ts > -60
        xs, ts = xs[keep], ts[keep]
        w = np.exp(ts)
        den = w.sum()
        out = np.empty(b.shape, dtype=_CLD)
        for c0 in range(0, len(b), 1 << 14):
            bb = b[c0:c0 + (1 << 14), None]
            out[c0:c0 + (1 << 14)] = np.log((w[None, :] * np.exp(1j * ((bb * xs[None, :]) % _TWO_PI))).sum(axis=1) / den)
        return out, _U * 4 * (np.abs(b) * (abs(x0) + half) + len(xs) + 4)

    def tail(self, s: int):
        """``(P(S ≥ s), absolute error bound)`` for s ≥ 1: the prefactor at the working
        precision (mpmath), the node sum vectorised in x87 extended precision (64-bit
        significand) with a per-term rounding bound."""
        N = self.N
        lamf = self.tilt(s)
        lam = mpmath.mpf(lamf)
        nodes = np.asarray(self.nodes(), dtype=np.int64)
        prep = self._prep(lam)
        logm = mpmath.fsum(mm * (log_theta_real_deep_mp(a * lam, self.s2q[g], self.dps) - log_theta_real_deep_mp(0, self.s2q[g], self.dps))
                           for g, (a, mm) in enumerate(zip(self.A, self.m)))
        lg = np.zeros(len(nodes), dtype=_CLD)
        lerr = np.zeros(len(nodes), dtype=_LD)
        for g, (a, mm) in enumerate(zip(self.A, self.m)):
            r = (a % N) * nodes % N  # exact: a·n mod N (both < N < 2^31)
            b = _TWO_PI * np.where(2 * r > N, r - N, r).astype(_LD) / N
            lr, er = self._log_ratios(g, prep, b)
            lg += mm * lr
            lerr += mm * er
        ph = _TWO_PI * ((s % N) * nodes % N).astype(_LD) / N  # exact reduction of n·s mod N
        laml = _LD(repr(lamf))
        z = laml + 1j * (_TWO_PI * nodes.astype(_LD) / N)
        one_minus = -np.expm1(-laml)
        w = np.where(nodes == 0, 1, 2).astype(_LD)
        terms = (w * np.exp(lg - 1j * ph) * one_minus / (-np.expm1(-z))).real
        mags = w * np.exp(lg.real) * one_minus / np.abs(-np.expm1(-z))
        # rounding: each term ≤ |term|·(e^{lerr + 40u} − 1); the pairwise sum ≤ (128 + log2 n)·u·Σ|term|
        round_err = float((mags * np.expm1(lerr + 40 * _U)).sum()) + float((128 + math.log2(len(nodes) + 1)) * _U) \
            * float(mags.sum())
        R = mpmath.exp(logm - lam * s) / -mpmath.expm1(-lam)
        total = terms.sum()
        est = R * mpmath.mpf(repr(float(total))) / N + R * mpmath.mpf(repr(float(total - _LD(float(total))))) / N
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


class _Twin:
    """The twin of one lattice sum: full rule, or exact conditioning on the groups that
    never decay (``m s² π²/2 < T'``) with the rule on the rest's sub-lattice."""

    def __init__(self, lattice: LatticeSum, dps: int):
        self.dps = dps
        self.lat = lattice
        G = lattice.n_groups
        self.coarse = []
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
    fast = accountant.delta([e])[0]
    k1, k2 = accountant.lattice.delta_thresholds(e)  # the exact lattice mapping (shared), any sign of ε
    t1 = verify_tail(accountant.engine, k1, dps)
    t2 = verify_tail(accountant.engine, k2, dps)
    with workdps(dps):
        em = e(dps) if callable(e) else to_mpf(e)
        ee = mpmath.exp(em)
        val = t1.value - ee * t2.value
        err = t1.error_bound + ee * t2.error_bound
        dis = abs(fast.estimate - val)
        if not err <= abs(val) * mpmath.mpf("1e-9"):
            raise UncertifiedError(f"the verification twin cannot resolve δ(ε) here (its own bound is "
                                   f"{mpmath.nstr(err / abs(val), 3) if val else 'inf'} relative); the fast result stands "
                                   f"unverified; try --certify for an Arb enclosure")
        return VerifiedDelta(em, +val, +err, fast.estimate, fast.error_bound, +dis, (t1, t2))
