"""The multiprecision twin of the fast path.

Re-evaluates the tilted-contour trapezoid rule of :mod:`exactdp.engine.tails` in mpmath (gmpy2
backend) at ``dps ≥ 50`` digits, on its own, finer rule: a sieve level for relative
accuracy 1e-45, ``N ≈ 24·sqrt(V')`` nodes (aliasing ≤ e^{−288} relative) and theta
series with ``|k| ≤ 8`` Poisson terms or a ±sqrt(2 s² · 230)-wide direct sum.  Node
selection uses the same exact integer arithmetic as the fast path; every floating
operation of the integrand is done at the working precision.

It reports the value, its analytic error bound (sieve + aliasing + series truncation,
all ≤ 1e-40 relative), and the disagreement with the float64 result, which must lie
within the fast path's certified bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
import numpy as np

from exactdp.accounting.accountant import ExactAccountant, as_real
from exactdp.dgauss.mp import log_theta_ratio_mp, log_theta_real_mp
from exactdp.engine.quadrature import sieve_umax
from exactdp.engine.tails import TailEngine
from exactdp.kernels.tilted import sieve_candidates
from exactdp.numerics.precision import VERIFY_DPS, to_mpf, workdps

__all__ = ["VerifiedTail", "VerifiedDelta", "verify_tail", "verify_delta"]


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


class _MpRule:
    def __init__(self, engine: TailEngine, dps: int):
        lat = engine.lattice
        self.dps = dps
        self.A = [int(a) for a in lat.weights]
        self.m = [int(c) for c in lat.counts]
        self.s2 = [to_mpf(s) for s in lat.sigma2]
        self.vproxy = engine.vproxy
        self.var = engine.var
        n = int(math.ceil(24.0 * math.sqrt(self.vproxy) / 2.0)) * 2
        self.N = max(n, 64)
        self.T = math.log(1e45) + 0.5 * math.log(2 * math.pi * self.vproxy) + 6.0
        umax = np.array([sieve_umax(float(s), m, self.T) for s, m in zip(self.s2, self.m)])
        self.nodes = sieve_candidates(np.array(self.A, dtype=np.int64), umax, self.N, int(np.argmin(umax)))
        self.lam_min = (math.log(1e45) + 30.0) / self.N

    def tail(self, s: int):
        """(value, abs_error_bound) of P(S ≥ s) for s ≥ 1."""
        N = self.N
        lam = mpmath.mpf(max(s / self.var, self.lam_min))
        pi2 = 2 * mpmath.pi
        logm = mpmath.fsum(m * (log_theta_real_mp(A * lam, s2) - log_theta_real_mp(0, s2)) for A, m, s2 in zip(self.A, self.m, self.s2))
        acc = []
        for n in self.nodes:
            n = int(n)
            w = 1 if (n == 0 or 2 * n == N) else 2
            theta = pi2 * n / N
            lg = mpmath.mpf(0)
            for A, m, s2 in zip(self.A, self.m, self.s2):
                r = (A * n) % N
                b = pi2 * (r - N if 2 * r > N else r) / N
                lg += m * log_theta_ratio_mp(A * lam, b, s2)
            z = lam + 1j * theta
            ph = (n * s) % N
            val = mpmath.exp(lg - 1j * pi2 * ph / N) * (-mpmath.expm1(-lam)) / (-mpmath.expm1(-z))
            acc.append(w * val.real)
        R = mpmath.exp(logm - lam * s) / (-mpmath.expm1(-lam))
        est = R * mpmath.fsum(acc) / N
        lamf = float(lam)
        err = R * mpmath.exp(-self.T)
        err += mpmath.exp(-lamf * N) / (-mpmath.expm1(-lamf * N))
        mu = (s + N) / self.vproxy
        err += mpmath.exp(-mpmath.mpf(s + N) ** 2 / (2 * self.vproxy) + lamf * N) / (-mpmath.expm1(-(mu - lamf) * N))
        err += abs(est) * mpmath.mpf(10) ** (-(self.dps - 10))
        return est, err


def verify_tail(engine: TailEngine, s: int, dps: int = VERIFY_DPS) -> VerifiedTail:
    """Recompute ``P(S ≥ s)`` at ``dps`` digits and compare with the fast path."""
    fast = engine.tail(s)
    with workdps(dps):
        rule = _MpRule(engine, dps)
        if s >= 1:
            val, err = rule.tail(s)
        else:
            v, err = rule.tail(1 - s)
            val = 1 - v
        dis = abs(mpmath.exp(mpmath.mpf(fast.log_value)) - val) / val
        return VerifiedTail(s, +val, +err, fast.value, fast.rel_error, float(dis), len(rule.nodes), dps)


def verify_delta(accountant: ExactAccountant, eps, dps: int = VERIFY_DPS) -> VerifiedDelta:
    """δ(ε) at ``dps`` digits (both tails by the twin) beside the fast-path value.

    Notes
    -----
    Method: the tilted trapezoid rule in mpmath on a rule certified to 1e-40.  Error
    bound: sieve + aliasing + series truncation + working precision.
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
