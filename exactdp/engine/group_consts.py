"""What every smoothing level of one privacy-loss noise shares (:mod:`exactdp.engine.smoothed_profile`).

:class:`GroupConsts` holds the groups' float arrays, the exact variance proxy, the penalties'
``log D_g``, the saddle search's moment table, and per tilt the theta logs of the nodes asked
so far (:func:`exactdp.kernels.ratio_factors.ratio_logs`, independent of the smoothing) and
``log M_R(λ)``; :func:`exact_sum` sums rationals exactly (gmpy2, pairwise).
"""

from __future__ import annotations

from fractions import Fraction

import gmpy2
import numpy as np

from exactdp.dgauss.float64 import variance_float
from exactdp.engine.families import log_d
from exactdp.kernels.profile import log_mgf_sum, moment_table
from exactdp.kernels.ratio_factors import ratio_logs

__all__ = ["GroupConsts", "exact_sum", "THETA_CACHE"]

#: tilts whose theta logs a GroupConsts keeps (each: the union of the levels' nodes)
THETA_CACHE = 48


def _dd(n: int, d: int) -> tuple:
    """``(hi, lo)``: ``hi`` the float nearest n/d (d > 0), ``lo`` the float nearest ``n/d − hi``
    (exact integer arithmetic: int true division rounds correctly)."""
    h = n / d
    hn, hd = h.as_integer_ratio()
    return h, (n * hd - hn * d) / (d * hd)


def exact_sum(values):
    """The exact sum of rationals (Fraction, gmpy2.mpq or int) as a Fraction: gmpy2, pairwise (a sequential
    Fraction sum of 10,000 distinct denominators spends seconds in gcds)."""
    vals = [gmpy2.mpq(v.numerator, v.denominator) for v in values]
    if not vals:
        return Fraction(0)
    while len(vals) > 1:
        nxt = [a + b for a, b in zip(vals[0::2], vals[1::2])]
        if len(vals) % 2:
            nxt.append(vals[-1])
        vals = nxt
    return Fraction(int(vals[0].numerator), int(vals[0].denominator))


class GroupConsts:
    """What every smoothing level of one noise R shares (computed once): the groups' float
    arrays, ``vproxy = Σ m w²σ²`` (exact sum, rounded to nearest), the float variance, the
    penalties' ``log D_g``, the sieve's group order, τ = w/P per period P, the saddle
    search's moment table, and per tilt the theta logs of the nodes asked so far
    (:func:`exactdp.kernels.ratio_factors.ratio_logs`: independent of the smoothing, so one
    evaluation per node and tilt serves every level) and ``log M_R(λ)``."""

    def __init__(self, groups):
        self.groups = tuple(groups)
        self.w = np.array([float(g.weight) for g in self.groups])
        self.s2 = np.array([float(g.sigma2) for g in self.groups])
        self.m = np.array([float(g.count) for g in self.groups])
        self.m_int = np.array([int(g.count) for g in self.groups], dtype=np.int64)
        # w·σ² and m·w²·σ² from the integer parts (a correctly rounded quotient; exact rationals
        # by gmpy2): the same numbers as the Fraction products, without their gcds in Python
        parts = [(g.weight.numerator, g.weight.denominator, g.sigma2.numerator, g.sigma2.denominator)
                 for g in self.groups]
        self.delta = np.array([(wn * sn) / (wd * sd) for wn, wd, sn, sd in parts])
        self._terms = [gmpy2.mpq(g.count * wn * wn * sn, wd * wd * sd)
                       for g, (wn, wd, sn, sd) in zip(self.groups, parts)]
        self.vproxy = float(exact_sum(self._terms))
        self.var = float(sum(g.count * float(g.weight) ** 2 * variance_float(float(g.sigma2)) for g in self.groups))
        logd: dict = {}
        self.log_d = np.array([logd.setdefault(v, log_d(v)) for v in self.s2.tolist()])
        self.order = np.argsort(-(self.m * self.s2), kind="stable")
        self._taus: dict = {}
        self._rho: Fraction | None = None
        self._mct: np.ndarray | None = None
        self._theta: dict = {}
        self._logm: dict = {}

    @property
    def rho(self) -> Fraction:
        if self._rho is None:
            self._rho = exact_sum(self._terms) / 2
        return self._rho

    @property
    def mct(self) -> np.ndarray:
        """The groups' moment table (:func:`exactdp.kernels.profile.moment_table`)."""
        if self._mct is None:
            self._mct = moment_table(self.s2)
        return self._mct

    def log_mgf(self, lam: float) -> tuple:
        """``(Σ_g m_g log M_g(λ), absolute error bound)`` (:func:`exactdp.kernels.profile.log_mgf_sum`)."""
        hit = self._logm.get(lam)
        if hit is None:
            hit = log_mgf_sum(lam, self.delta, self.s2, self.m)
            if len(self._logm) > 1024:
                self._logm.pop(next(iter(self._logm)))
            self._logm[lam] = hit
        return hit

    def ratio_logs(self, lam: float, P: int, nodes: np.ndarray) -> tuple:
        """``(re, im, err, log_w)`` of :func:`exactdp.kernels.ratio_factors.ratio_logs` at the tilt
        λ, period P and the (increasing) node indices; the nodes not evaluated before at
        (λ, P) are evaluated now and kept (a node's values do not depend on the others)."""
        key = (lam, P)
        hit = self._theta.get(key)
        if hit is not None:
            have = hit[0]
            pos = np.minimum(np.searchsorted(have, nodes), max(have.size - 1, 0))
            there = have[pos] == nodes if have.size else np.zeros(nodes.size, dtype=bool)
            if there.all():
                return tuple(a[pos] for a in hit[1:])
            missing = nodes[~there]
        else:
            missing = nodes
        tau_hi, tau_lo = self.taus(P)
        new = ratio_logs(np.ascontiguousarray(missing), tau_hi, tau_lo, self.s2, self.m, self.delta, lam, float(P))
        if hit is not None:
            allnodes = np.concatenate([hit[0], missing])
            order = np.argsort(allnodes, kind="stable")
            hit = (allnodes[order],) + tuple(np.concatenate([a, b])[order] for a, b in zip(hit[1:], new))
        else:
            hit = (np.array(missing),) + tuple(new)
        if key not in self._theta and len(self._theta) >= THETA_CACHE:
            self._theta.pop(next(iter(self._theta)))
        self._theta[key] = hit
        pos = np.searchsorted(hit[0], nodes)
        return tuple(a[pos] for a in hit[1:])

    def taus(self, P: int) -> tuple:
        """``(hi, lo)`` float arrays of ``τ_g = w_g/P`` in double-double."""
        hit = self._taus.get(P)
        if hit is None:
            taus = [_dd(g.weight.numerator, g.weight.denominator * P) for g in self.groups]
            hit = (np.array([t[0] for t in taus]), np.array([t[1] for t in taus]))
            self._taus[P] = hit
        return hit
