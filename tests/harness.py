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
  is the absolute accuracy of the loss-distribution references;
* :func:`log_psi_direct`, :func:`log_psi_dual` — the recentred discrete-Gaussian factor
  ψ(f, b; s²) of the tilted rule's nodes, by direct and by dual (Poisson) series;
* :func:`dg_centred_moments`, :func:`log_theta_shift_ratio`, :func:`cgf_slope_brute`,
  :func:`wrapped_normal_log` — moments and theta ratios of N_Z(f, s²), the slope of a
  lattice sum's cumulant generating function, the wrapped normal sum of the sieve;
* :func:`decimal_text`, :func:`bound_text` — the sweep's decimal texts by definition
  (``mpmath.nstr``; a 3-digit upper bound in rational arithmetic).
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


# =====================================================================================
# References for any design (σ² from 1e-3 to 1e7, shifts incl. 0 and negative,
# counts to 50) and any query depth down to e^-1700 (δ, tails, complements near 1).
#
# The loss under P is ℓ = c + W, W = Σ_g w_g T_g (w_g = Δ_g/σ_g², T_g the sum of the m_g
# noises of group g; T_g is symmetric, so the sign of w_g does not matter).  Each group's
# T_g is obtained without any quadrature:
#
# * m_g = 1: the discrete Gaussian itself (pmf e^{−x²/(2σ²)}/Z, Z by its Poisson series);
# * σ² large enough that η ≤ 1e-30 below: N_Z(0, m σ²) with relative error ≤ 2η/(1−η)
#   per atom.  Proof: P(T = t) = e^{−t²/(2mσ²)} Σ_{y∈Λ+c_t} e^{−|y|²/(2σ²)}/Z^m with
#   Λ = A_{m−1} = {x ∈ ℤ^m: Σx = 0}; Poisson summation on the hyperplane gives
#   Σ_{Λ+c} = const·(1 + ε_t), |ε_t| ≤ η = Σ_{v∈A*\0} e^{−2π²σ²|v|²}, and with the minimal
#   norm (m−1)/m of A*_{m−1} and Θ_{A*}(b) = √m (π/b)^{(m−1)/2} Σ_{z∈A} e^{−π²|z|²/b}
#   ≤ √m (πσ²)^{−(m−1)/2} (1 + σ√π)^m at b = π²σ²:
#       η ≤ e^{−π²σ²(m−1)/m} √m (πσ²)^{−(m−1)/2} (1 + σ√π)^m;
#   both pmfs sum to one, so the ratio lies in [(1−η)/(1+η), (1+η)/(1−η)];
# * otherwise: exact convolution in integers (fixed point 2^-B, floor and ceil
#   brackets, one GMP multiplication per convolution by Kronecker substitution).
#
# All groups but the widest are enumerated (their joint atoms, exact rational loss
# values); the widest one is summed in closed form: a direct sum for variance ≤ 2000,
# else the Euler–Maclaurin formula with its rigorous remainder (the Gaussian's
# derivatives are Hermite functions).  Every value comes with an absolute error bound
# (dropped mass below e^{−REF_L}, the η brackets, the integer brackets, the EM
# remainder, and 1e-45 relative for mpmath's rounding at REF_DPS digits).
# =====================================================================================

import gmpy2  # noqa: E402

REF_L = 1750  # nats: atoms below e^{-REF_L} (relative to 1) are dropped, their mass bounded
REF_B = 2700  # bits of the fixed-point integer convolutions (2^-B ≈ e^{-1871})
REF_DPS = 110
_SLOP = mpmath.mpf(10) ** -45


def _mpq(x: Fraction):
    return mpmath.mpf(x.numerator) / x.denominator


def _eta_bound(s2: Fraction, m: int) -> mpmath.mpf:
    """The dual-lattice bound η of the m-fold sum against N_Z(0, m σ²) (see above)."""
    if m == 1:
        return mpmath.mpf(0)
    S2 = _mpq(s2)
    sig = mpmath.sqrt(S2)
    return (mpmath.exp(-mpmath.pi**2 * S2 * (m - 1) / m) * mpmath.sqrt(m)
            * (mpmath.pi * S2) ** (-(m - 1) / mpmath.mpf(2)) * (1 + sig * mpmath.sqrt(mpmath.pi)) ** m)


def _log_z(V):
    """log Σ_t e^{−t²/(2V)} (V an mpf; Poisson series for V ≥ 1, else direct)."""
    if V >= 1:
        K = int(mpmath.ceil(mpmath.sqrt((REF_DPS * 2.31 + 10) / (2 * mpmath.pi**2 * V)))) + 2
        z = 1 + 2 * mpmath.fsum(mpmath.exp(-2 * mpmath.pi**2 * V * k * k) for k in range(1, K + 1))
        return 0.5 * mpmath.log(2 * mpmath.pi * V) + mpmath.log(z)
    half = int(mpmath.ceil(mpmath.sqrt(2 * V * (REF_DPS * 2.31 + 10)))) + 2
    return mpmath.log(mpmath.fsum(mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * V)) for x in range(-half, half + 1)))


def _dg_fixed(V, w: int, B: int):
    """floor/ceil of 2^B·p(x), x = −w..w, p the N_Z(0, V) pmf (mpmath at B+80 bits)."""
    lo, hi = [], []
    with mpmath.workprec(B + 80):
        lz = _log_z(V)
        for x in range(-w, w + 1):
            v = mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * V) - lz) * mpmath.mpf(2) ** B
            f = int(mpmath.floor(v))
            lo.append(max(f - 1, 0))
            hi.append(f + 2)
    return lo, hi


def _kron(a, b, B: int):
    """Exact convolution of two lists of non-negative integers (scale 2^B each) by one
    GMP multiplication; returned at scale 2^B as (floor, ceil)."""
    n = len(a) + len(b) - 1
    slot = 2 * B + max(len(a), len(b)).bit_length() + 2
    nbytes = (slot + 7) // 8

    def pack(xs):
        return gmpy2.mpz(int.from_bytes(b"".join(int(x).to_bytes(nbytes, "little") for x in xs), "little"))

    prod = int(pack(a) * pack(b))
    raw = prod.to_bytes(n * nbytes + 8, "little")
    fl, ce = [], []
    for i in range(n):
        c = int.from_bytes(raw[i * nbytes:(i + 1) * nbytes], "little")
        fl.append(c >> B)
        ce.append(-((-c) >> B))
    return fl, ce


def _trim(lo_off, lo, hi, B, cut_bits):
    """Drop both ends while the entries' upper brackets stay below 2^{B − cut_bits};
    returns the new offset, lists and the dropped mass (upper bound, probability units)."""
    cut = 1 << max(B - cut_bits, 0)
    i, j = 0, len(hi)
    while i < j and hi[i] < cut:
        i += 1
    while j > i and hi[j - 1] < cut:
        j -= 1
    dropped = sum(hi[:i]) + sum(hi[j:])
    return lo_off + i, lo[i:j], hi[i:j], mpmath.mpf(dropped) / mpmath.mpf(2) ** B


class _Group:
    """T_g for one group: ``kind`` 'conv' (exact integer convolution) or 'dg' (closed form
    N_Z(0, V) with relative error ``rel``), tabulated above e^{−L} with the dropped mass."""

    def __init__(self, s2: Fraction, m: int, w: Fraction, L: float = REF_L):
        self.L = L
        self.w = abs(w)
        self.s2 = s2
        self.m = m
        self.V = _mpq(s2) * m
        self.dropped = mpmath.mpf(0)
        eta = _eta_bound(s2, m)
        self.eta = eta
        if m == 1 or eta <= mpmath.mpf(10) ** -30:
            self.kind = "dg"
            self.rel = 2 * eta / (1 - eta) if eta else mpmath.mpf(0)
        else:
            self.kind = "conv"
            self.rel = mpmath.mpf(0)

    def support(self) -> int:
        """Number of atoms above e^{−REF_L} (roughly)."""
        return 2 * int(mpmath.sqrt(2 * self.V * self.L)) + 1

    def table(self):
        """(t0, values, rel_err): the pmf on its support above e^{−REF_L}; dropped mass in
        ``self.dropped``."""
        B = REF_B
        s2 = _mpq(self.s2)
        if self.kind == "dg":
            w = int(mpmath.sqrt(2 * self.V * self.L)) + 1
            lo, hi = _dg_fixed(self.V, w, B)
            t0 = -w
            # the rest of the DG: P(|T| > w) ≤ 2 e^{−(w+1)²/(2V)} / (1 − e^{−(w+1)/V}) (Z ≥ 1)
            self.dropped += 2 * mpmath.exp(-mpmath.mpf(w + 1) ** 2 / (2 * self.V)) / (-mpmath.expm1(-(w + 1) / self.V))
        else:
            w1 = int(mpmath.sqrt(2 * s2 * self.L)) + 1
            lo1, hi1 = _dg_fixed(s2, w1, B)
            single_drop = 2 * mpmath.exp(-mpmath.mpf(w1 + 1) ** 2 / (2 * s2)) / (-mpmath.expm1(-(w1 + 1) / s2))
            self.dropped += self.m * single_drop
            res = None
            pw = (-w1, lo1, hi1)
            k = self.m
            cut_bits = int(self.L / math.log(2)) + 8
            while k:
                if k & 1:
                    if res is None:
                        res = pw
                    else:
                        a, b = _kron(res[1], pw[1], B), _kron(res[2], pw[2], B)
                        o, l, h, d = _trim(res[0] + pw[0], a[0], b[1], B, cut_bits)
                        res = (o, l, h)
                        self.dropped += d
                k >>= 1
                if k:
                    a, b = _kron(pw[1], pw[1], B), _kron(pw[2], pw[2], B)
                    o, l, h, d = _trim(2 * pw[0], a[0], b[1], B, cut_bits)
                    pw = (o, l, h)
                    self.dropped += d * k  # this power is used ≤ k more times
            t0, lo, hi = res
        scale = mpmath.mpf(2) ** B
        vals, rel = [], mpmath.mpf(0)
        for l, h in zip(lo, hi):
            mid = mpmath.mpf(l + h) / 2 / scale
            vals.append(mid)
            if l > 0:
                rel = max(rel, mpmath.mpf(h - l) / (l + h))
            else:
                self.dropped += mpmath.mpf(h) / scale
        return t0, vals, max(rel, self.rel)


def _em_sum(t0: int, mu, V):
    """``(Σ_{t≥t0} e^{−(t−μ)²/(2V)}, abs error)`` for V > 0 (mp): a direct sum when V ≤ 2000
    (with a geometric bound of the rest), else Euler–Maclaurin with 40 terms."""
    y0 = (t0 - mu) / mpmath.sqrt(2 * V)
    if y0 < 0:  # complement: Z(μ) − Σ_{t'≥1−t0} e^{−(t'+μ)²/(2V)}
        z = _z_shift(mu, V)
        v, e = _em_sum(1 - t0, -mu, V)
        return z - v, e + _SLOP * z
    if V <= 2000:
        terms = []
        t = t0
        first = None
        while True:
            x = -(t - mu) ** 2 / (2 * V)
            if first is None:
                first = x
            terms.append(mpmath.exp(x))
            if x < first - (REF_DPS * 2.31 + 20):
                break
            t += 1
        ratio = mpmath.exp(-(t + 1 - mu) / V)
        return mpmath.fsum(terms), terms[-1] * ratio / (1 - ratio)
    f0 = mpmath.exp(-y0 * y0)
    s2v = mpmath.sqrt(2 * V)
    total = mpmath.sqrt(mpmath.pi * V / 2) * mpmath.erfc(y0) + f0 / 2
    p = 40
    H = [mpmath.mpf(1), 2 * y0]  # physicists' Hermite polynomials by their recurrence
    for n in range(1, 2 * p):
        H.append(2 * y0 * H[n] - 2 * n * H[n - 1])
    inv = 1 / s2v
    for j in range(1, p + 1):
        n = 2 * j - 1
        deriv = -(inv ** n) * H[n] * f0  # f^{(n)}(t0) = (−1)^n (2V)^{−n/2} H_n(y0) e^{−y0²}
        total -= _BERN[j] * deriv
    # remainder: 2ζ(2p)/(2π)^{2p} ∫|f^{(2p)}|; beyond the zeros of H_{2p} (y0 ≥ √(4p+1))
    # the integral is |f^{(2p−1)}(t0)|, else Cauchy–Schwarz over the line
    c = 2 * mpmath.zeta(2 * p) / (2 * mpmath.pi) ** (2 * p)
    if y0 >= mpmath.sqrt(4 * p + 1):
        integ = inv ** (2 * p - 1) * abs(H[2 * p - 1]) * f0
    else:
        integ = s2v ** (-(2 * p) + 1) * mpmath.sqrt(mpmath.pi) * mpmath.sqrt(
            mpmath.mpf(2) ** (2 * p) * mpmath.factorial(2 * p))
    return total, c * integ + _SLOP * abs(total)


with mpmath.workdps(REF_DPS + 20):
    _BERN = [None] + [mpmath.bernoulli(2 * j) / mpmath.factorial(2 * j) for j in range(1, 41)]


def _z_shift(mu, V):
    """Σ_t e^{−(t−μ)²/(2V)} by the Poisson series (V > 0)."""
    if V >= 1:
        K = int(mpmath.ceil(mpmath.sqrt((REF_DPS * 2.31 + 10) / (2 * mpmath.pi**2 * V)))) + 2
        return mpmath.sqrt(2 * mpmath.pi * V) * (1 + 2 * mpmath.fsum(
            mpmath.exp(-2 * mpmath.pi**2 * V * k * k) * mpmath.cos(2 * mpmath.pi * k * mu) for k in range(1, K + 1)))
    c = int(mpmath.nint(mu))
    half = int(mpmath.ceil(mpmath.sqrt(2 * V * (REF_DPS * 2.31 + 10)))) + 2
    return mpmath.fsum(mpmath.exp(-(x - mu) ** 2 / (2 * V)) for x in range(c - half, c + half + 1))


class BruteDesign:
    """Exact reference of one design: mechs = [(σ² Fraction, shift int, count int), ...].

    Methods return ``(value, abs_err)`` (mpmath at REF_DPS digits): :meth:`delta`,
    :meth:`tail` (P_P[W ≥ x] or P[W > x]), :meth:`lower_tail` (P_P[W < x]).
    """

    #: the largest cost (outer atoms × inner work) accepted
    MAX_COST = 40_000

    def __init__(self, mechs, L: float = REF_L):
        with mpmath.workdps(REF_DPS):
            groups = {}
            for s2, d, m in mechs:
                s2 = Fraction(s2)
                if d == 0:
                    continue
                key = (s2, abs(int(d)))
                groups[key] = groups.get(key, 0) + int(m)
            self.c = sum((Fraction(d * d, 1) / (2 * s2) * m for (s2, d), m in groups.items()), Fraction(0))
            gs = [_Group(s2, m, Fraction(d) / s2, L) for (s2, d), m in groups.items()]
            self.identical = not gs
            if self.identical:
                return
            gs.sort(key=lambda g: g.support())
            self.inner = gs[-1]
            outer = gs[:-1]
            n = 1
            for g in outer:
                n *= g.support()
            n *= 1 if (self.inner.kind == "conv" or self.inner.V <= 2000) else 20
            if n > self.MAX_COST:
                raise ValueError(f"outer support × inner cost {n} too large for the brute-force reference")
            floor = mpmath.exp(-mpmath.mpf(L) - 20)
            atoms = {Fraction(0): mpmath.mpf(1)}
            rel = mpmath.mpf(0)
            dropped = mpmath.mpf(0)
            for g in outer:
                t0, vals, r = g.table()
                rel += r
                dropped += g.dropped
                new = {}
                for v, p in atoms.items():
                    for i, q in enumerate(vals):
                        pq = p * q
                        if pq < floor:  # joint atoms below e^{−L−20}: dropped, bounded
                            dropped += pq
                            continue
                        key = v + g.w * (t0 + i)
                        new[key] = new.get(key, 0) + pq
                atoms = new
            self.outer = sorted(atoms.items())
            self.outer_rel = rel
            self.dropped = dropped
            g = self.inner
            self.inner_table = None
            if g.kind == "conv" or g.V <= 2000:
                t0, vals, r = g.table()
                self.inner_table = (t0, vals)
                self.inner_rel = r
                self.dropped += g.dropped
                self._suffix(t0, vals)
            else:
                self.inner_rel = g.rel
                self.inner_logz = _log_z(g.V)

    # ---- inner sums: Σ_{t≥t0} p(t) and Σ_{t≥t0} p(t) e^{−w(t−t0)} ----------------------
    def _suffix(self, t0, vals):
        w = _mpq(self.inner.w)
        ew = mpmath.exp(-w)
        s0, s1 = [mpmath.mpf(0)] * (len(vals) + 1), [mpmath.mpf(0)] * (len(vals) + 1)
        for i in range(len(vals) - 1, -1, -1):
            s0[i] = s0[i + 1] + vals[i]
            s1[i] = vals[i] + ew * s1[i + 1]
        self._s = (t0, s0, s1)

    def _inner(self, t0: int, with_weight: bool):
        """``(Σ_{t≥t0} p(t), Σ_{t≥t0} p(t) e^{−w(t − t0)}, e0, e1)`` with e0, e1 bounds of the
        *computational* errors (Euler–Maclaurin remainders); the model error (η brackets,
        integer brackets: ``self.inner_rel`` relative per atom) is applied by the caller."""
        if self.inner_table is not None:
            base, s0, s1 = self._s
            i = t0 - base
            if i <= 0:  # below the table everything is dropped mass
                return s0[0], s1[0] * mpmath.exp(-_mpq(self.inner.w) * (base - t0)), 0, 0
            if i >= len(s0) - 1:
                return mpmath.mpf(0), mpmath.mpf(0), 0, 0
            return s0[i], s1[i], 0, 0
        g = self.inner
        V = g.V
        z = mpmath.exp(self.inner_logz)
        a, ea = _em_sum(t0, mpmath.mpf(0), V)
        if not with_weight:
            return a / z, None, ea / z, None
        w = _mpq(g.w)
        # Σ p(t) e^{−w(t−t0)} = e^{w t0 + w²V/2} Σ e^{−(t + wV)²/(2V)} / Z
        b, eb = _em_sum(t0, -w * V, V)
        f = mpmath.exp(w * t0 + w * w * V / 2) / z
        return a / z, b * f, ea / z, eb * f

    # ---- queries ------------------------------------------------------------------------
    def tail(self, x, strict: bool = False):
        """P_P[W ≥ x] (or > x when strict), x a Fraction: ``(value, abs_err)``."""
        with mpmath.workdps(REF_DPS):
            x = Fraction(x)
            tot, err = mpmath.mpf(0), self.dropped
            w = self.inner.w
            for v, p in self.outer:
                y = (x - v) / w  # need t ≥ y (or t > y)
                t0 = math.floor(y) + 1 if strict else math.ceil(y)
                a, _, ea, _ = self._inner(t0, False)
                tot += p * a
                err += p * ea
            err += tot * (self.outer_rel + self.inner_rel + _SLOP)
            return tot, err

    def lower_tail(self, x):
        """P_P[W < x] = P_P[W > −x] (W symmetric)."""
        return self.tail(-Fraction(x), strict=True)

    def delta(self, eps):
        """δ(ε) = E_P[(1 − e^{ε−ℓ})_+], ℓ = c + W; eps a Fraction or an mpf:
        ``(value, abs_err)``."""
        with mpmath.workdps(REF_DPS):
            e = _mpq(eps) if isinstance(eps, Fraction) else mpmath.mpf(eps)
            if self.identical:
                return max(-mpmath.expm1(e), mpmath.mpf(0)), mpmath.mpf(0)
            wm = _mpq(self.inner.w)
            tot, err, gross = mpmath.mpf(0), self.dropped, mpmath.mpf(0)
            for v, p in self.outer:
                # terms with c + v + w t > ε: t > (ε − c − v)/w =: y
                a = e - _mpq(self.c + v)
                t0 = int(mpmath.floor(a / wm)) + 1
                while wm * t0 - a <= 0:  # guard against a/w within rounding of an integer
                    t0 += 1
                s0, s1, e0, e1 = self._inner(t0, True)
                cfac = mpmath.exp(a - wm * t0)  # ∈ (e^{−w}, 1]
                tot += p * (s0 - cfac * s1)
                err += p * (e0 + cfac * e1)
                gross += p * (s0 + cfac * s1)
            err += abs(tot) * (self.outer_rel + self.inner_rel) + gross * _SLOP
            return tot, err


def single_delta(sigma2, shift, eps, dps: int = 60):
    """δ(ε) of one mechanism N_Z(0, σ²) vs N_Z(Δ, σ²) for any ε ≥ 0, at any depth:
    ``Σ_{x ≤ x0} p(x)(1 − e^{ε − ℓ(x)})`` with ℓ(x) = (Δ² − 2Δx)/(2σ²), summed from the
    threshold outwards (the terms decay geometrically beyond it; the rest is bounded by
    the last term's ratio) at a precision covering the exponents' size."""
    s2, d, eps = Fraction(sigma2), abs(int(shift)), Fraction(eps)
    # by symmetry use x ↦ −x: loss c + w x, w = Δ/σ², c = Δ²/(2σ²); terms with c + w x > ε
    c, w = Fraction(d * d) / (2 * s2), Fraction(d) / s2
    x0 = math.floor((eps - c) / w) + 1
    mag = abs(float(x0)) ** 2 / float(s2) + 10
    with mpmath.workdps(dps + int(math.log10(mag)) + 10):
        S2 = _mpq(s2)
        lz = _log_z(S2) if float(s2) < 1e6 else 0.5 * mpmath.log(2 * mpmath.pi * S2)
        # below −W (W the bulk's half-width at this precision) the mass is negligible
        W = int(mpmath.sqrt(2 * S2 * (dps + 10) * 2.31)) + 2
        terms = []
        x = max(x0, -W)
        while True:
            lp = -mpmath.mpf(x) ** 2 / (2 * S2) - lz
            f = -mpmath.expm1(_mpq(eps - c) - _mpq(w) * x)
            terms.append(mpmath.exp(lp) * f)
            if len(terms) > 3 and x > 0 and terms[-1] < max(terms) * mpmath.mpf(10) ** (-dps - 5):
                break
            x += 1
        return +mpmath.fsum(terms)

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


@functools.lru_cache(maxsize=8)
def _sorted_vertices(mechs):
    return sorted(tradeoff_vertices_brute(mechs))


def tradeoff_brute(mechs, alpha):
    """β = f(α) by linear interpolation between the exact Neyman–Pearson vertices."""
    verts = _sorted_vertices(tuple(tuple(m) for m in mechs))
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


# --- big lattices: no lattice at all -----------------------------------------------------
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


# --- the recentred discrete-Gaussian factor ψ of the tilted rule by direct summation --------------


def log_psi_direct(f, b, s2, digits: int = 40):
    """``log ψ(f, b; s²)`` with ψ = Σ_y e^{−(y−f)²/(2s²) + iby} / Σ_y e^{−(y−f)²/(2s²)}, by
    direct summation over every y whose term is above 10^{−digits} of the largest, at a
    precision that absorbs the cancellation of ψ's numerator (|ψ| ≥ e^{−s²b²/2}·(…)).
    f, b, s2 are taken exactly (floats or Fractions); returns an mpmath mpc (principal log)."""
    f, b, s2 = (mpmath.mpf(Fraction(x)) if not isinstance(x, float) else mpmath.mpf(x) for x in (f, b, s2))
    cancel = float(s2 * b * b / 2) / math.log(10) + 10
    with mpmath.workdps(int(digits + cancel + 20)):
        s = mpmath.sqrt(s2)
        span = int(mpmath.ceil(s * mpmath.sqrt(2 * (digits + 30) * mpmath.log(10)))) + 2
        num = mpmath.mpc(0)
        den = mpmath.mpf(0)
        for y in range(-span, span + 1):
            w = mpmath.exp(-(y - f) ** 2 / (2 * s2))
            num += w * mpmath.expj(b * y)
            den += w
        return mpmath.log(num / den)


# =====================================================================================
# log ψ by its Poisson (dual) series, for large s² where the
# direct sum over y (log_psi_direct) needs ~13·s terms.  With g(y) = e^{−(y−f)²/(2s²) + iby},
# Σ_y g(y) = Σ_k ĝ(2πk) = √(2πs²) Σ_k e^{−s²(b − 2πk)²/2 + i(b − 2πk)f}, so
#   log ψ = −s²b²/2 + ibf + log Σ_k e^{−s²((b−2πk)² − b²)/2 − 2πikf} − log Σ_k e^{−2π²s²k² − 2πikf}.
# For |b| ≤ π the terms k ≠ 0 of either sum are ≤ e^{−π²s²(2|k|−1)·…}; every |k| ≤ K with
# 2π²s²(K − 1)² ≥ (digits + 30)·ln 10 is kept (the rest is below 10^{−digits−30}).
def log_psi_dual(f, b, s2, digits: int = 40):
    """``log ψ(f, b; s²)`` (as :func:`log_psi_direct`) by the dual series; |b| ≤ π.  The
    k = 0 term of either sum is 1 and every other is ≤ 1; those below 10^{−digits−40} are
    dropped."""
    with mpmath.workdps(digits + 20):
        f, b, s2 = (mpmath.mpf(Fraction(x)) if not isinstance(x, float) else mpmath.mpf(x) for x in (f, b, s2))
        K = int(mpmath.ceil(mpmath.sqrt((digits + 30) * mpmath.log(10) / (2 * mpmath.pi ** 2 * s2)))) + 2
        floor = -(digits + 40) * mpmath.log(10)
        two_pi = 2 * mpmath.pi

        def series(x):
            terms = []
            for k in range(-K, K + 1):
                ex = -s2 * ((x - two_pi * k) ** 2 - x * x) / 2
                if ex >= floor:
                    terms.append(mpmath.exp(ex) * mpmath.expj(-two_pi * k * f))
            return mpmath.fsum(terms)

        return mpmath.mpc(-s2 * b * b / 2, b * f) + mpmath.log(series(b)) - mpmath.log(series(mpmath.mpf(0)))


# =====================================================================================
# The discrete Gaussian centred at a real f (the tilted rule's factors): N_Z(f, s²) has
# weights e^{−(y − f)²/(2s²)} on y ∈ ℤ.  Direct sums over every y whose weight is above
# 10^{−digits−30} of the largest; for s² > 30 the Poisson (dual) series instead, whose
# k ≠ 0 terms are below e^{−2π²·30} < 10^{−257}: there the moments are f and s² to 250 digits.
def _dg_span(f, s2, digits: int):
    s = math.sqrt(float(s2))
    half = int(math.ceil(s * math.sqrt(2 * (digits + 30) * math.log(10)))) + 2
    c = int(round(float(f)))
    return range(c - half, c + half + 1)


def dg_centred_moments(f, s2, digits: int = 40):
    """Mean and variance of N_Z(f, s²) (f, s2 floats or Fractions, taken exactly), mpf."""
    with mpmath.workdps(digits + 20):
        fm, sm = (mpmath.mpf(Fraction(x)) for x in (f, s2))
        if s2 > 30:
            return fm, sm
        ys = _dg_span(f, s2, digits)
        w = [mpmath.exp(-(y - fm) ** 2 / (2 * sm)) for y in ys]
        tot = mpmath.fsum(w)
        mean = mpmath.fsum(a * y for a, y in zip(w, ys)) / tot
        var = mpmath.fsum(a * (y - mean) ** 2 for a, y in zip(w, ys)) / tot
        return mean, var


def log_theta_shift_ratio(f, s2, digits: int = 40):
    """``log Σ_y e^{−(y−f)²/(2s²)} − log Σ_y e^{−y²/(2s²)}`` (real, ≤ 0 for |f| ≤ 1/2), mpf;
    direct sums for s² ≤ 30, the dual series Σ_k e^{−2π²s²k²} cos(2πkf) above."""
    with mpmath.workdps(digits + 20):
        fm, sm = (mpmath.mpf(Fraction(x)) for x in (f, s2))
        if s2 > 30:
            q = [mpmath.exp(-2 * mpmath.pi ** 2 * sm * k * k) for k in range(1, 4)]
            return mpmath.log1p(2 * mpmath.fsum(a * mpmath.cos(2 * mpmath.pi * k * fm) for k, a in enumerate(q, 1))) \
                - mpmath.log1p(2 * mpmath.fsum(q))
        num = mpmath.fsum(mpmath.exp(-(y - fm) ** 2 / (2 * sm)) for y in _dg_span(f, s2, digits))
        den = mpmath.fsum(mpmath.exp(-mpmath.mpf(y) ** 2 / (2 * sm)) for y in _dg_span(0, s2, digits))
        return mpmath.log(num) - mpmath.log(den)


def cgf_slope_brute(A, m, s2, lam, digits: int = 40):
    """``(K'(λ), K''(λ))`` of S = Σ_g A_g Σ_{k ≤ m_g} X_{g,k}, X_g ~ N_Z(0, s_g²): the λ-tilted
    X_g is N_Z(A_g λ s_g², s_g²), so K' = Σ m_g A_g·mean and K'' = Σ m_g A_g²·var (mpf)."""
    k1 = k2 = mpmath.mpf(0)
    with mpmath.workdps(digits + 20):
        for a, mm, v in zip(A, m, s2):
            mu = Fraction(int(a)) * Fraction(float(lam)) * Fraction(float(v))
            n0 = math.floor(mu + Fraction(1, 2))
            mean, var = dg_centred_moments(mu - n0, float(v), digits)
            k1 += int(mm) * int(a) * (n0 + mean)
            k2 += int(mm) * int(a) ** 2 * var
    return k1, k2


def wrapped_normal_log(u, s2, digits: int = 30):
    """``log Σ_k e^{−s²(u − 2πk)²/2}`` for u ∈ [0, π] (every k whose term is above
    10^{−digits−30} of the k = 0 term), mpf."""
    with mpmath.workdps(digits + 20):
        um, sm = (mpmath.mpf(Fraction(x)) for x in (u, s2))
        K = int(math.ceil(math.sqrt(2 * (digits + 30) * math.log(10) / float(s2)) / (2 * math.pi))) + 2
        return mpmath.log(mpmath.fsum(mpmath.exp(-sm * (um - 2 * mpmath.pi * k) ** 2 / 2) for k in range(-K, K + 1)))


# =====================================================================================
# The sweep's decimal texts, by their definitions: a value's text is ``mpmath.nstr`` at
# ``digits`` significant digits under ``workdps(digits + 15)`` (fixed notation from 1e-4 to
# 1e6, trailing zeros kept); an error bound's text is the smallest 3-significant-digit
# decimal ≥ the bound (exact rational arithmetic), "0" for ≤ 0 and "inf" for ∞/NaN.
def decimal_text(x, digits: int = 20) -> str:
    """The sweep's text of a value (anything mpmath.mpf accepts)."""
    with mpmath.workdps(digits + 15):
        x = mpmath.mpf(x)
        if x == 0:
            return "0"
        return mpmath.nstr(x, digits, min_fixed=-4, max_fixed=6, strip_zeros=False)


def bound_text(x) -> str:
    """The sweep's text of an error bound: ⌈x⌉ to 3 significant digits, ``m.mme±k`` — for
    a float exactly (rational arithmetic), for any other value at 30 digits (so a value
    within 1e-30 relative above a 3-digit decimal prints as that decimal)."""
    if isinstance(x, (int, float)):
        xf = float(x)
        if not math.isfinite(xf):
            return "inf"
        if xf <= 0:
            return "0"
        q = Fraction(xf)
        e = math.floor(math.log10(xf)) - 2
        while q >= Fraction(10) ** (e + 3):
            e += 1
        while q < Fraction(10) ** (e + 2):
            e -= 1
        m = math.ceil(q / Fraction(10) ** e)
    else:
        with mpmath.workdps(30):
            x = mpmath.mpf(x)
            if not mpmath.isfinite(x):
                return "inf"
            if x <= 0:
                return "0"
            e = int(mpmath.floor(mpmath.log10(x))) - 2
            m = int(mpmath.ceil(x / mpmath.mpf(10) ** e))
    if m >= 1000:
        m, e = (m + 9) // 10, e + 1
    return f"{m // 100}.{m % 100:02d}e{e + 2}"


def pld_pair(comp, interval: float = 1e-4) -> tuple:
    """dp_accounting's (optimistic, pessimistic) PLDs of a composition of discrete Gaussians
    (a peer's numbers, nothing of exactdp).  The pessimistic side is an upper bound; the
    optimistic one is *not* a lower bound for every design — dp_accounting truncates the
    discrete Gaussian, so with a small σ² and a large shift its optimistic δ can exceed the
    exact one (seen this session: 6.0278e-13 against 6.02163e-13) — use it as a lower
    reference only on designs without near-deterministic groups."""
    import math

    import pytest

    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    out = []
    for pessimistic in (False, True):
        acc = None
        for m, c in comp.groups:
            one = pld.from_discrete_gaussian_mechanism(math.sqrt(float(m.sigma2)), sensitivity=abs(m.shift),
                                                       pessimistic_estimate=pessimistic,
                                                       value_discretization_interval=interval)
            block = one.self_compose(c) if c > 1 else one
            acc = block if acc is None else acc.compose(block)
        out.append(acc)
    return out[0], out[1]
