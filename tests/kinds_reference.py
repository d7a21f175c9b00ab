"""An independent brute force for designs mixing mechanism kinds, written from the
mechanisms' output distributions (not from exactdp's loss-atom formulas).

Each mechanism is its pair of output distributions (P, Q) on neighbouring inputs,
enumerated output by output; the privacy loss ``log P(o)/Q(o)`` is an exact rational for
every kind used here, so losses are kept as Fractions and summed exactly, their masses at
60 digits.  δ(ε) = E_P[(1 − e^{ε−L})_+] (+ the mass where Q vanishes).  The discrete
Laplace is truncated at ``|x| ≤ T`` with the dropped mass returned as a bound.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath

from harness import DPS, convolve, dg_pmf, mp


def dlap_loss(scale, shift: int, depth: int = 170):
    """{loss: P-mass} of x + DLap(scale) at 0 vs at ``shift``, from the pmf
    ``tanh(1/(2b))·e^{−|x|/b}``, and the mass left out (|x| beyond ``depth·b``)."""
    b = Fraction(scale)
    with mpmath.workdps(DPS):
        a = 1 / mp(b)
        c = mpmath.tanh(a / 2)
        t = int(depth * b) + abs(shift) + 2
        dist: dict = {}
        for x in range(-t, t + 1):
            loss = Fraction(abs(x - shift) - abs(x)) / b
            dist[loss] = dist.get(loss, 0) + c * mpmath.exp(-a * abs(x))
        dropped = 2 * c * mpmath.exp(-a * (t + 1)) / (1 - mpmath.exp(-a))
        return dist, dropped


def rr_loss(epsilon, k: int = 2):
    """{loss: P-mass} of k-ary randomized response on true category 0 vs 1: output o
    has P(o) ∝ e^ε if o = 0 else 1 and Q(o) ∝ e^ε if o = 1 else 1."""
    e = Fraction(epsilon)
    with mpmath.workdps(DPS):
        ee = mpmath.exp(mp(e))
        z = ee + (k - 1)
        dist: dict = {}
        for o in range(k):
            p = (ee if o == 0 else 1) / z
            loss = e if o == 0 else (-e if o == 1 else Fraction(0))
            dist[loss] = dist.get(loss, 0) + p
        return dist


def dg_loss(sigma2, shift: int = 1):
    """{loss: P-mass} of the discrete Gaussian N_Z(0, σ²) vs N_Z(shift, σ²)."""
    s2 = Fraction(sigma2)
    dist: dict = {}
    with mpmath.workdps(DPS):  # (a sum outside would round the masses to the caller's precision)
        for x, p in dg_pmf(s2, 0).items():
            loss = Fraction((x - shift) ** 2 - x * x) / (2 * s2)
            dist[loss] = dist.get(loss, 0) + p
    return dist


def approx_loss(epsilon, delta):
    """{loss: P-mass} of the (ε, δ) dominating pair, written from its four outputs
    P = (δ, (1−δ)e^ε/(1+e^ε), (1−δ)/(1+e^ε), 0), Q = (0, (1−δ)/(1+e^ε), (1−δ)e^ε/(1+e^ε), δ);
    the loss at the first output is +∞ (the key ``math.inf``)."""
    e, d = Fraction(epsilon), Fraction(delta)
    with mpmath.workdps(DPS):
        ee = mpmath.exp(mp(e))
        keep = 1 - mp(d)
        dist = {math.inf: mp(d)} if d else {}
        for loss, p in ((e, keep * ee / (1 + ee)), (-e, keep / (1 + ee))):
            dist[loss] = dist.get(loss, 0) + p
        return dist


def mixed_delta(parts, eps):
    """δ(ε) of the composition of ``parts`` (a list of ({loss: mass}, count)); a loss
    ``math.inf`` (Q vanishes) contributes its whole mass; at 60 digits."""
    with mpmath.workdps(DPS):
        total = {Fraction(0): mpmath.mpf(1)}
        for dist, count in parts:
            for _ in range(count):
                total = convolve(total, dist, mpmath.mpf(10) ** -75)
        e = mp(eps)
        return mpmath.fsum(p if v == math.inf else p * (1 - mpmath.exp(e - mp(v)))
                           for v, p in total.items() if v > eps)


def mixed_tradeoff(parts, alpha):
    """β = f(α) of the composition: the Neyman–Pearson test rejecting P when the loss is
    small, randomised between the vertices ``(P[L < t], 1 − Q[L < t])`` with
    ``Q[L = v] = e^{−v} P[L = v]`` (Q[L = ∞] = 0); the outputs where P vanishes (loss −∞,
    Q-mass ``1 − Σ_v e^{−v} P[L = v]`` over finite v) are rejected first, at no cost in α;
    at 60 digits."""
    with mpmath.workdps(DPS):
        total = {Fraction(0): mpmath.mpf(1)}
        for dist, count in parts:
            for _ in range(count):
                total = convolve(total, dist, mpmath.mpf(10) ** -75)
        a = mp(alpha)
        cp = mpmath.mpf(0)
        cq = 1 - mpmath.fsum(p * mpmath.exp(-mp(v)) for v, p in total.items() if v != math.inf)
        for v in sorted(total, key=lambda x: (x == math.inf, x)):
            p = total[v]
            q = mpmath.mpf(0) if v == math.inf else p * mpmath.exp(-mp(v))
            if cp + p >= a:  # the vertex after this atom passes α: interpolate inside it
                return 1 - cq - q * (a - cp) / p
            cp, cq = cp + p, cq + q
        return mpmath.mpf(0)
