"""The shared test harness: independent brute-force references in mpmath and integers.

Every reference value a test compares exactdp against is generated here (in the spirit of
scipy's ``special/_mptestutils.py``), next to the code that makes it; nothing here imports
exactdp.  Add new references here instead of writing them again in a test module.

The privacy-loss distribution is built by exact enumeration: each mechanism's output
distribution is truncated where its mass is below 1e-70 and the loss
ℓ(x) = log P(x)/Q(x) is accumulated as an exact rational on the support, with
probabilities at 60 digits.  Nothing here uses exactdp's engine.

References (all at 60 digits, by direct sums and dictionary convolutions):

* :func:`dg_pmf` — the pmf of N_Z(μ, σ²) truncated below e^{−depth};
* :func:`delta_brute`, :func:`tradeoff_vertices_brute` — δ(ε) and the trade-off vertices
  of a composition (list of ``(σ², shift)``);
* :func:`sum_pmf_brute`, :func:`tail_brute` — the pmf and upper tails of ``Σ a_i X_i``;
* :func:`moments_brute` — even moments of N_Z(0, σ²);
* :func:`kernel_pmf`, :func:`kernel_sum_pmf`, :func:`theta3` — the kernel-coefficient form
  ``exp(−a z²)/Z`` used by the disclosure-risk tests (Z from Jacobi's θ₃ or a direct sum);
* :func:`mp` — an exact rational as an mpf (``numerator / denominator``);
* :func:`epsilon_brute`, :func:`tradeoff_brute`, :func:`delta_single_brute` — ε(δ) and
  β(α) from the loss distribution, and δ(ε) of one discrete Gaussian by direct sums (fast
  for huge σ², and far below float64), for the Arb certificates; :data:`BRUTE_ABS_ERROR`
  is the absolute accuracy of the loss-distribution references.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import mpmath

DPS = 60


def mp(x):
    """An exact rational (Fraction, int or ``"p/q"``) as an mpf: ``numerator / denominator``
    at the current precision."""
    x = Fraction(x)
    return mpmath.mpf(x.numerator) / x.denominator


def dg_pmf(sigma2, center: int = 0, depth: int = 165):
    """{x: P[N_Z(center, σ²) = x]} on ``|x − center| ≤ sqrt(2σ²·depth) + 3`` (the terms left
    out are below e^{−depth} of the largest; 165: mass 1e-70), normalised by a direct sum
    over a wider range, at 60 digits."""
    sigma2 = Fraction(sigma2)
    with mpmath.workdps(DPS):
        s2 = mp(sigma2)
        half = int(math.isqrt(int(2 * sigma2 * depth)) + 3)
        xs = range(center - half, center + half + 1)
        w = {x: mpmath.exp(-mpmath.mpf(x - center) ** 2 / (2 * s2)) for x in xs}
        big = int(math.isqrt(int(2 * sigma2 * (depth + 235))) + 10)
        z = mpmath.fsum(mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * s2)) for x in range(-big, big + 1))
        return {x: v / z for x, v in w.items()}


@functools.lru_cache(maxsize=64)  # room for the property tests of test_certify_properties.py
def _loss_distributions(mechs):
    return _build(mechs)


def loss_distributions(mechs):
    return _loss_distributions(tuple(tuple(m) for m in mechs))


def _build(mechs):
    """mechs: list of (sigma2 Fraction, shift int).  Returns (dist_P, dist_Q) of the loss
    ℓ = log P/Q as {Fraction: mpf}."""
    with mpmath.workdps(DPS):
        dist_p = {Fraction(0): mpmath.mpf(1)}
        dist_q = {Fraction(0): mpmath.mpf(1)}
        for s2, d in mechs:
            # per-coordinate loss at x: (Δ² − 2Δx)/(2σ²)
            lp = {}
            for x, pr in dg_pmf(s2, 0).items():
                lv = Fraction(d * d - 2 * d * x) / (2 * s2)
                lp[lv] = lp.get(lv, 0) + pr
            lq = {}
            for x, pr in dg_pmf(s2, d).items():
                lv = Fraction(d * d - 2 * d * x) / (2 * s2)
                lq[lv] = lq.get(lv, 0) + pr
            dist_p = convolve(dist_p, lp, _FLOOR)
            dist_q = convolve(dist_q, lq, _FLOOR)
        return dist_p, dist_q


#: loss-distribution atoms below this probability are dropped
_FLOOR = mpmath.mpf(10) ** -75


# ----------------------------------------------------------------------------- sums, moments, kernels
def convolve(a: dict, b: dict, floor=None) -> dict:
    """The distribution of the sum of independent {value: probability} dicts (terms
    below ``floor`` dropped, none by default)."""
    out: dict = {}
    for x, p in a.items():
        for y, q in b.items():
            v = p * q
            if floor is not None and v < floor:
                continue
            out[x + y] = out.get(x + y, 0) + v
    return out


def sum_pmf_brute(parts, depth: int = 165) -> dict:
    """{v: P[Σ a_i X_i = v]} for ``parts = [(a_i, σ_i²), ...]``, X_i ~ N_Z(0, σ_i²)
    independent, each truncated below e^{−depth} (:func:`dg_pmf`), at 60 digits."""
    with mpmath.workdps(DPS):
        tot = {0: mpmath.mpf(1)}
        for a, s2 in parts:
            tot = convolve(tot, {a * x: p for x, p in dg_pmf(s2, 0, depth).items()})
        return tot


def tail_brute(parts, s, depth: int = 1000):
    """P(Σ a_i X_i ≥ s) by direct summation of :func:`sum_pmf_brute` (factors kept down to
    e^{−depth}: tails far below 1e-300 keep their relative accuracy)."""
    dist = _sum_pmf_cached(tuple((a, Fraction(s2)) for a, s2 in parts), depth)
    with mpmath.workdps(DPS):
        return mpmath.fsum(p for v, p in dist.items() if v >= s)


@functools.lru_cache(maxsize=8)
def _sum_pmf_cached(parts, depth):
    return sum_pmf_brute(parts, depth)


def moments_brute(sigma2, kmax: int = 4) -> list:
    """``[E X^2, E X^4, …, E X^{2·kmax}]`` for X ~ N_Z(0, σ²) by direct sums (60 digits)."""
    pmf = dg_pmf(sigma2, 0, 200)
    with mpmath.workdps(DPS):
        return [mpmath.fsum(p * mpmath.mpf(x) ** (2 * k) for x, p in pmf.items()) for k in range(1, kmax + 1)]


def theta3(a):
    """``Z(a) = Σ_z exp(−a z²) = θ₃(0, e^{−a})`` (Jacobi theta, mpmath), current precision."""
    return mpmath.jtheta(3, 0, mpmath.exp(-mp(a)))


def kernel_pmf(a, K: int) -> dict:
    """{z: exp(−a z²)/Σ_{|z'|≤K} exp(−a z'²)} for |z| ≤ K (the discrete Gaussian with kernel
    coefficient a = 1/(2σ²), normalised on its truncated support), 60 digits."""
    with mpmath.workdps(DPS):
        am = mp(a)
        w = {z: mpmath.exp(-am * z * z) for z in range(-K, K + 1)}
        Z = mpmath.fsum(w.values())
        return {z: v / Z for z, v in w.items()}


def kernel_sum_pmf(a, d: int, K: int = 40) -> dict:
    """{u: P[E_1 + … + E_d = u]} for iid :func:`kernel_pmf` (a, K) by direct convolution."""
    f = kernel_pmf(a, K)
    with mpmath.workdps(DPS):
        h = dict(f)
        for _ in range(d - 1):
            h = convolve(h, f)
        return h


# ----------------------------------------------------------------------------- δ and trade-off
def delta_brute(mechs, eps, direction="PQ"):
    """δ(ε) = E_P[(1 − e^{ε−ℓ})_+] (PQ) or E_Q[(1 − e^{ε+ℓ})_+] (QP), at 60 digits."""
    dist_p, dist_q = loss_distributions(mechs)
    with mpmath.workdps(DPS):
        e = mpmath.mpf(eps.numerator) / eps.denominator if isinstance(eps, Fraction) else mpmath.mpf(eps)
        if direction == "PQ":
            items = dist_p.items()
            return mpmath.fsum(p * (1 - mpmath.exp(e - mpmath.mpf(l.numerator) / l.denominator))
                               for l, p in items if l > e)
        return mpmath.fsum(p * (1 - mpmath.exp(e + mpmath.mpf(l.numerator) / l.denominator))
                           for l, p in dist_q.items() if -l > e)


def tradeoff_vertices_brute(mechs):
    """Vertices (α, β) of the exact trade-off curve: the likelihood-ratio test that rejects
    P when ℓ ≤ t (small loss = evidence for Q), for every t in the support."""
    dist_p, dist_q = loss_distributions(mechs)
    with mpmath.workdps(DPS):
        levels = sorted(set(dist_p) | set(dist_q))
        # cumulative masses below each level, summed from the small end (positive terms)
        verts = []
        cp = cq = mpmath.mpf(0)
        for t in levels:
            verts.append((cp, 1 - cq))  # reject when ℓ < t
            cp += dist_p.get(t, 0)
            cq += dist_q.get(t, 0)
        verts.append((cp, 1 - cq))
        return verts


# -- interop: outward rounding to binary64 (section of the interop tests) -------------------------
def float_up_reference(value) -> float:
    """The smallest binary64 float ≥ the exact rational ``value`` (a decimal string such as
    the CLI prints, or a Fraction): ``float()`` of a Fraction is correctly rounded to
    nearest, so at most one step up is needed, decided by an exact comparison."""
    x = value if isinstance(value, Fraction) else Fraction(value)
    f = float(x)
    if Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    return f


def gaussian_delta_reference(mu, eps):
    """δ(ε) of the continuous Gaussian pair N(0, 1) vs N(μ, 1) in closed form,
    Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle & Wang 2018), at 60 digits — the limit of a
    discrete Gaussian composition with total zCDP ρ = μ²/2 as every σ² grows."""
    with mpmath.workdps(DPS):
        mu, e = mpmath.mpf(mu), mpmath.mpf(eps)
        return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)


# ---------------------------------------------------------------------------------------
# Section: references for the Arb certificates (tests/test_certify*.py)
# ---------------------------------------------------------------------------------------


def epsilon_brute(mechs, delta):
    """ε(δ) = min{ε : δ(ε) ≤ δ}, exactly from the loss distribution at 60 digits.

    Between consecutive loss levels l_{j} < l_{j+1}, δ(ε) = A − e^ε B with A = P[ℓ > ε] and
    B = Σ_{l > ε} p_l e^{−l} constant; the level interval where δ crosses the target is
    found by scanning down from the top, then ε = log((A − δ)/B) in closed form.
    """
    dist_p, _ = loss_distributions(mechs)
    with mpmath.workdps(DPS):
        d = mp(delta)
        levels = sorted(dist_p, reverse=True)
        A = B = mpmath.mpf(0)
        for i, lv in enumerate(levels):
            # on [next level, lv): the loss values above ε are levels[:i+1]
            A += dist_p[lv]
            B += dist_p[lv] * mpmath.exp(-mp(lv))
            lower = mp(levels[i + 1]) if i + 1 < len(levels) else -mpmath.mpf(10) ** 6
            # δ at ε = lower (the interval's left end) with this A, B
            if A - mpmath.exp(lower) * B >= d:
                return mpmath.log((A - d) / B)
        raise ValueError("delta is below the support's resolution")


def tradeoff_brute(mechs, alpha):
    """β = f(α) by linear interpolation between the exact Neyman–Pearson vertices."""
    verts = sorted(tradeoff_vertices_brute(mechs))
    with mpmath.workdps(DPS):
        a = mp(alpha)
        for (a0, b0), (a1, b1) in zip(verts, verts[1:]):
            if a0 <= a <= a1 and a1 > a0:
                return b0 + (b1 - b0) * (a - a0) / (a1 - a0)
    raise ValueError("alpha outside [0, 1]")


#: Absolute accuracy of delta_brute / tradeoff_vertices_brute probabilities for designs of
#: ≤ 10 mechanisms with σ² ≤ 10⁵: each pmf is cut where its terms fall below e^{−165}
#: (dropped mass ≤ 3e^{−165}·sqrt(σ²/330) ≤ 1e-69 per mechanism) and products below 1e-75
#: are dropped (≤ 1e-68 in all); the 60-digit arithmetic adds 1e-55 relative.
BRUTE_ABS_ERROR = mpmath.mpf(10) ** -65


def delta_single_brute(sigma2, eps):
    """δ(ε) of one unit-shift discrete Gaussian N_Z(·, σ²), σ² ≥ 1 (fast for huge σ²).

    The loss under P at x is ℓ(x) = (1 − 2x)/(2σ²), so with x0 = ⌈(1 − 2σ²ε)/2⌉ − 1 the
    largest x with ℓ(x) > ε, δ = P[X ≤ x0] − e^ε P[X ≤ x0 − 1]; the lower tails are direct
    sums from x0 down (terms by exact ratios, until below e^{−170} of the first) and the
    normaliser is the Poisson form sqrt(2πσ²)(1 + 2Σ_k e^{−2π²σ²k²}).
    """
    s2 = Fraction(sigma2)
    e = Fraction(eps)
    with mpmath.workdps(DPS):
        S2 = mp(s2)
        z = mpmath.sqrt(2 * mpmath.pi * S2) * (1 + 2 * mpmath.fsum(mpmath.exp(-2 * mpmath.pi**2 * S2 * k * k)
                                                                   for k in range(1, 6)))
        x0 = math.ceil((1 - 2 * s2 * e) / 2) - 1

        def lower_tail(k):  # Σ_{x ≤ k} exp(−x²/(2σ²)), k ≤ 0
            if k > 0:
                return z - lower_tail(-k - 1)
            t = mpmath.exp(-mpmath.mpf(k) ** 2 / (2 * S2))
            ratio = mpmath.exp((2 * mpmath.mpf(k) - 1) / (2 * S2))  # t_{x−1}/t_x at x = k
            q = mpmath.exp(-1 / S2)
            acc, first = mpmath.mpf(0), t
            while t > first * mpmath.exp(-170):
                acc += t
                t *= ratio
                ratio *= q
            return acc

        em = mp(e)
        return (lower_tail(x0) - mpmath.exp(em) * lower_tail(x0 - 1)) / z


# --- big lattices (issue 11): no lattice at all --------------------------------------------
# For groups (σ², shift Δ, count m) the privacy-loss noise is W = Σ_g (|Δ_g|/σ_g²)·Σ_k X_{g,k};
# δ(ε) = P(W > ε − c) − e^ε P(W > ε + c) with c = Σ m Δ²/(2σ²).  All groups but the last are
# enumerated exactly (atoms keyed by exact rationals, probabilities at 60 digits); over the
# last group a prefix-sum table on its own integer support answers P(W_last > y) for any
# rational y by one exact floor.  Any lattice scale is fine: nothing is put on a common lattice.


def _group_sum_pmf(sigma2: Fraction, m: int) -> dict:
    """{s: P[Σ_{k≤m} X_k = s]} for X_k iid N_Z(0, σ²), each truncated at mass 1e-70."""
    with mpmath.workdps(DPS):
        one = dg_pmf(sigma2)
        out = {0: mpmath.mpf(1)}
        for _ in range(m):
            out = convolve(out, one)
        return out


@functools.lru_cache(maxsize=8)
def _big_lattice_tables(groups):
    gs = [(Fraction(s2), abs(int(d)), int(m)) for s2, d, m in groups if int(d) != 0]
    c = sum((Fraction(m * d * d) / (2 * s2) for s2, d, m in gs), Fraction(0))
    atoms = {Fraction(0): mpmath.mpf(1)}
    with mpmath.workdps(DPS):
        for s2, d, m in gs[:-1]:
            w = Fraction(d) / s2
            atoms = convolve(atoms, {w * s: p for s, p in _group_sum_pmf(s2, m).items()})
    s2, d, m = gs[-1]
    last = _group_sum_pmf(s2, m)
    lo, hi = min(last), max(last)
    suffix = [mpmath.mpf(0)] * (hi - lo + 2)
    for s in range(hi, lo - 1, -1):
        suffix[s - lo] = suffix[s - lo + 1] + last[s]
    return c, list(atoms.items()), Fraction(d) / s2, lo, hi, suffix


def big_lattice_tail_brute(groups, t, strict: bool = True) -> mpmath.mpf:
    """``P(W > t)`` (strict) or ``P(W ≥ t)`` of ``groups`` = ((σ², Δ, m), ...) for a rational t."""
    with mpmath.workdps(DPS):
        _, atoms, w_last, lo, hi, suffix = _big_lattice_tables(tuple(groups))
        tot = mpmath.mpf(0)
        for v, pv in atoms:
            y = (Fraction(t) - v) / w_last
            k = math.floor(y) + 1 if strict else math.ceil(y)  # {W_last/w ≥ k}
            if k <= lo:
                tot += pv * suffix[0]
            elif k <= hi:
                tot += pv * suffix[k - lo]
        return tot


def big_lattice_delta_brute(groups, eps) -> mpmath.mpf:
    """δ(ε) of ``groups`` = ((σ², Δ, m), ...) (Fractions/ints), ε a Fraction, at 60 digits."""
    with mpmath.workdps(DPS):
        c = _big_lattice_tables(tuple(groups))[0]
        e = Fraction(eps)
        return (big_lattice_tail_brute(groups, e - c)
                - mpmath.exp(mpmath.mpf(e.numerator) / e.denominator) * big_lattice_tail_brute(groups, e + c))
