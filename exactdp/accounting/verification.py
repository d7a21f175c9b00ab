"""An independent multiprecision check of the fast path (the 60-digit "twin").

It shares the exact lattice mapping with the fast path and nothing else:

* **its own rule**: N' ≈ 24·sd nodes (the fast path uses 16), its own tilt (bisection on
  the tilted mean, float), the theta functions in their plain (not recentred) Poisson /
  direct forms evaluated in mpmath at ``dps`` digits;
* **its own node selection**: a branch and bound over intervals of nodes — an interval
  is dropped when, for the distance u of ``A_g θ`` to 2πℤ minimised *exactly* over the
  interval (integer arithmetic), ``Σ_g m_g log(P_g(u)/D_g) < −T'`` (wrapped-normal bound
  with its tail, T' for 1e-45), else split; intervals of ≤ 16 nodes are evaluated —
  where the fast path enumerates peaks of one group and filters by the others;
* **its own conditioning**: groups whose factor never decays are enumerated by an exact
  multiprecision pmf (direct sums, atoms above 10^{−(dps+20)}) and the rest by the rule
  on its own sub-lattice — where the fast path tilts atoms in float64.

Error bound of a tail (absolute): dropped nodes ≤ e^{−T'} in units of the normalising
factor; aliasing by the sub-Gaussian Chernoff bound (Canonne–Kamath–Steinke 2020) at the
shifted thresholds, both sides; series truncations and working precision ≤ 10^{−(dps−10)}
relative; for conditioning the dropped atoms' mass.  It is meant for moderate depths
(δ ≳ 10^{−(dps−20)}); its cost is bounded by a node budget (``MAX_NODES``), beyond which
it refuses with :class:`UncertifiedError` instead of running for minutes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import reduce

import mpmath

from exactdp.accounting.accountant import ExactAccountant
from exactdp.dgauss.mp import log_theta_real_deep_mp
from exactdp.engine.lattice import LatticeSum
from exactdp.engine.tails import TailEngine
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import as_real
from exactdp.numerics.precision import VERIFY_DPS, to_mpf, workdps

__all__ = ["VerifiedTail", "VerifiedDelta", "verify_tail", "verify_delta", "MAX_NODES"]

#: the largest number of nodes (times groups) the twin evaluates at multiprecision
MAX_NODES = 400_000
_LEAF = 16


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


def _wrapped_upper(u: float, s2: float) -> float:
    """log of an upper bound of Σ_k e^{−s²(u − 2πk)²/2}, u ∈ [0, π] (terms |k| ≤ 12 and
    a geometric remainder)."""
    two_pi = 2 * math.pi
    ex = [-0.5 * s2 * (u - two_pi * k) ** 2 for k in range(-12, 13)]
    mx = max(ex)
    tot = sum(math.exp(e - mx) for e in ex)
    rest = 2 * math.exp(-0.5 * s2 * (two_pi * 12 - math.pi) ** 2 - mx) / max(1e-300, -math.expm1(-two_pi**2 * s2 * 12))
    return mx + math.log(tot + rest)


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
        self.N = max(64, int(math.ceil(24.0 * math.sqrt(vn))) | 1)  # odd: no node at π
        self.T = math.log(1e45) + 0.5 * math.log(2 * math.pi * self.vp) + 8.0
        self.lam_floor = (math.log(1e45) + 30.0) / self.N
        self._nodes = None

    # -- node selection: branch and bound with exact interval distances --------------
    def nodes(self):
        if self._nodes is not None:
            return self._nodes
        N = self.N
        logD = []
        for s2 in self.s2f:
            q = sum(math.exp(-2 * math.pi**2 * s2 * k * k) for k in range(1, 30))
            D = 1 - 2 * q
            logD.append(math.log(D) if D > 0.1 else None)
        out = []
        stack = [(0, N // 2)]
        budget = MAX_NODES * 4
        while stack:
            n0, n1 = stack.pop()
            budget -= 1
            if budget < 0:
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
                out.extend(range(n0, n1 + 1))
                if len(out) * len(self.A) > MAX_NODES:
                    raise UncertifiedError(f"the verification twin would evaluate more than {MAX_NODES} "
                                           f"node-factors; the design is too large for a multiprecision check")
                continue
            mid = (n0 + n1) // 2
            stack.append((mid + 1, n1))
            stack.append((n0, mid))
        self._nodes = sorted(out)
        return self._nodes

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

    def _log_ratio(self, g: int, prep, b):
        """log Θ(a + ib) − log Θ(a): Poisson form (the k = 0 term analytically, the others
        where above 10^{−(dps+5)}) or a direct sum around the tilted centre."""
        a, s2, logden = prep[g]
        pi2 = 2 * mpmath.pi
        cut = -(self.dps * 2.31 + 12)
        if logden is not None:
            base = -s2 * b * b / 2 + 1j * s2 * a * b  # the k = 0 term's log
            extra = mpmath.mpf(0)
            for k in (-2, -1, 1, 2):
                e = -s2 * ((b - pi2 * k) ** 2 - b * b) / 2
                if e > cut:
                    extra += mpmath.exp(e - 1j * s2 * a * pi2 * k)
            return base + (mpmath.log1p(extra) if extra else 0) - logden
        x0 = int(mpmath.nint(a * s2))
        half = int(math.ceil(math.sqrt(2 * self.s2f[g] * (self.dps * 2.31 + 12)))) + 2
        ts = [(a * x - mpmath.mpf(x) ** 2 / (2 * s2), x) for x in range(x0 - half, x0 + half + 1)]
        tmax = max(t for t, _ in ts)
        num = mpmath.fsum(mpmath.exp(t - tmax + 1j * b * x) for t, x in ts)
        den = mpmath.fsum(mpmath.exp(t - tmax) for t, _ in ts)
        return mpmath.log(num / den)

    def tail(self, s: int):
        """``(P(S ≥ s), absolute error bound)`` for s ≥ 1 at the working precision."""
        N = self.N
        lamf = self.tilt(s)
        lam = mpmath.mpf(lamf)
        pi2 = 2 * mpmath.pi
        nodes = self.nodes()
        prep = self._prep(lam)
        logm = mpmath.fsum(mm * (log_theta_real_deep_mp(a * lam, self.s2q[g], self.dps) - log_theta_real_deep_mp(0, self.s2q[g], self.dps))
                           for g, (a, mm) in enumerate(zip(self.A, self.m)))
        acc = []
        one_minus = -mpmath.expm1(-lam)
        for n in nodes:
            w = 1 if n == 0 else 2
            lg = mpmath.mpf(0)
            for g, (a, mm) in enumerate(zip(self.A, self.m)):
                r = (a * n) % N
                b = pi2 * (r - N if 2 * r > N else r) / N
                lg += mm * self._log_ratio(g, prep, b)
            ph = pi2 * ((n * s) % N) / N
            z = lam + 1j * pi2 * n / N
            acc.append(w * (mpmath.exp(lg - 1j * ph) * one_minus / (-mpmath.expm1(-z))).real)
        R = mpmath.exp(logm - lam * s) / one_minus
        est = R * mpmath.fsum(acc) / N
        # dropped nodes, aliasing (sub-Gaussian Chernoff, both sides), precision
        err = R * mpmath.exp(-self.T)
        vp = mpmath.mpf(self.vp)
        err += mpmath.exp(-lam * N) / (-mpmath.expm1(-lam * N))
        t = max((s + N) / vp, lam + N / vp)
        err += mpmath.exp(t * t * vp / 2 - t * (s + N) + lam * N) / (-mpmath.expm1(-(t - lam) * N))
        err += abs(est) * mpmath.mpf(10) ** (-(self.dps - 10)) * (1 + len(nodes) * len(self.A))
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
            self.rule.nodes()
            return
        except UncertifiedError as exc:
            over = exc
        # over budget: enumerate the groups that never decay (m s² π²/2 < T'), if cheap
        T = math.log(1e45) + 30
        self.coarse = [g for g in range(G) if int(lattice.counts[g]) * float(lattice.sigma2[g]) * math.pi**2 / 2 < T]
        if not self.coarse or len(self.coarse) == G:
            raise over
        fine = [g for g in range(G) if g not in self.coarse]
        est = 1
        for g in self.coarse:  # atoms of the coarse part, roughly, before building them
            est *= 2 * int(math.sqrt(2 * int(lattice.counts[g]) * float(lattice.sigma2[g]) * (dps + 25) * 2.31)) + 1
        if est > MAX_NODES:
            raise UncertifiedError(f"the verification twin would enumerate ~{est} coarse atoms; the design is too "
                                   f"large for a multiprecision check")
        self.d = reduce(math.gcd, (int(lattice.weights[g]) for g in fine))
        self.rule = _Rule([int(lattice.weights[g]) // self.d for g in fine], [lattice.counts[g] for g in fine],
                          [lattice.sigma2[g] for g in fine], dps)
        self._atoms()
        cost = len(self.atoms) * len(self.rule.nodes()) * len(fine)
        if cost > MAX_NODES * 4:
            raise UncertifiedError(f"the verification twin would evaluate {cost} node-factors (budget "
                                   f"{MAX_NODES * 4}); the design is too large for a multiprecision check")

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


def _twin(engine: TailEngine, dps: int) -> _Twin:
    key = ("_verify_twin", dps)
    tw = getattr(engine, "_twins", None)
    if tw is None:
        tw = engine._twins = {}
    if key not in tw:
        tw[key] = _Twin(engine.lattice, dps)
    return tw[key]


def verify_tail(engine: TailEngine, s: int, dps: int = VERIFY_DPS) -> VerifiedTail:
    """Recompute ``P(S ≥ s)`` at ``dps`` digits by the independent twin and compare."""
    fast = engine.tail(s)
    with workdps(dps):
        tw = _twin(engine, dps)
        val, err = tw.tail(int(s))
        dis = abs(mpmath.exp(fast.log_mp) - val) / val
        return VerifiedTail(s, +val, +err, fast.value, fast.rel_error, float(dis), tw.n_nodes, dps)


def verify_delta(accountant: ExactAccountant, eps, dps: int = VERIFY_DPS) -> VerifiedDelta:
    """δ(ε) at ``dps`` digits (both tails by the twin) beside the fast-path value.

    Notes
    -----
    Method: the twin of this module (own rule, node selection, conditioning) for
    ``P[S ≥ k1] − e^ε P[S ≥ k2]``.  Error bound: dropped nodes + aliasing + truncations +
    working precision of both tails.  Refuses (UncertifiedError) beyond its node budget.
    """
    e = as_real(eps, "epsilon")
    fast = accountant.delta([e])[0]
    k1, k2 = fast.thresholds
    t1 = verify_tail(accountant.engine, k1, dps)
    t2 = verify_tail(accountant.engine, k2, dps)
    with workdps(dps):
        em = e(dps) if callable(e) else to_mpf(e)
        ee = mpmath.exp(em)
        val = t1.value - ee * t2.value
        err = t1.error_bound + ee * t2.error_bound
        dis = abs(fast.estimate - val)
        return VerifiedDelta(em, +val, +err, fast.estimate, fast.error_bound, +dis, (t1, t2))
