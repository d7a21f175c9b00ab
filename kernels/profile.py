"""Kernels of the smoothed privacy profile (:mod:`exactdp.engine.smoothed_profile`).

Nodes are ``u_n = 2πn/P`` (n ≥ 0 an integer, P a positive integer period).  Group g (weight
``w_g = Δ_g/σ_g²``, ``m_g`` mechanisms) has the phase ``frac(n·τ_g)`` at node n, with
``τ_g = w_g/P`` given in double-double (``|τ − hi − lo| ≤ 2^-104·|τ|``).

* :func:`sieve_nodes` — branch and bound over node-index intervals: an interval is dropped
  when a certified lower bound of ``Σ_g pen_g + s²u²/2`` over it exceeds the sieve level;
  every kept node passed the per-node test.
* the normalised integrand at the kept nodes for a tilt λ: :mod:`exactdp.kernels.theta_factors`.
* :func:`profile_sums` — for each threshold x the three sums of the profile, the density
  and the tail kernels (``1``, ``λ/(λ+iu)``, ``λ(λ+1)/((λ+iu)(λ+1+iu))``), Neumaier
  compensated, with the sum of moduli and of node errors.
* :func:`log_mgf` — ``log M_g(λ)`` of one discrete Gaussian, with an absolute error bound.
"""

from __future__ import annotations

import math

import numpy as np
from exactdp.kernels.dectext import two_prod as _two_prod  # Dekker's error-free product
from exactdp.kernels.dgauss import (
    MOMENT_CONSTS,
    POISSON_MIN_S2,
    direct_half_width,
    moment_consts,
    tilted_moments_at,
)
from exactdp.kernels.jit import kernel
from exactdp.kernels.summation import neumaier_add
from exactdp.kernels.units import EPS64

__all__ = ["dd_frac2", "interval_penalty", "penalty_tables", "sieve_nodes", "profile_sums",
           "log_mgf", "log_mgf_sum", "cumulants", "cumulants_at", "moment_table", "saddles", "saddles_strip",
           "PHASE_CYCLE_ERR"]

TWO_PI = 2.0 * math.pi
#: bound (cycles) on the error of a phase ``frac(k·frac(n·τ))`` formed here, per unit of
#: ``1 + k·(1 + n|τ|)·2^-50`` (see :func:`dd_frac2`)
PHASE_CYCLE_ERR = 2.0**-100


@kernel("UniTuple(float64, 2)(float64, float64, float64)")
def dd_frac2(x, hi, lo):
    """``frac(x·(hi + lo))`` reduced to [−1/2, 1/2) as a double-double ``(h, l)``, for x an
    integer-valued float with ``|x| < 2^53``.  ``x·hi = p + e`` exactly (Dekker), ``p −
    ⌊p⌋`` is exact, and the rest ``e + x·lo`` is rounded twice: the error is at most
    ``2^-52·(|e| + |x·lo|) ≤ 2^-104·(1 + 2|x·hi|)`` cycles (plus the representation error
    of τ itself, ``|x|·2^-104·|τ|``, charged by the caller)."""
    p, e = _two_prod(x, hi)
    f = p - math.floor(p)
    t = e + x * lo
    s = f + t
    bb = s - f
    r = (f - (s - bb)) + (t - bb)
    k = math.floor(s + 0.5)
    h = s - k
    hh = h + r
    return hh, r - (hh - h)


@kernel("float64(float64, float64[:], float64)")
def _pen_lookup(d, tab, scale):
    """Lower bound of a group's penalty at phase distance d ≥ 0 from its table of lower
    bounds at ``d_k = k/scale``, k = 0..K (the penalty is non-decreasing in d; beyond
    ``d_K`` the table's last entry holds)."""
    K = tab.shape[0] - 1
    if d <= 0.0:
        return 0.0
    x = d * scale
    if x >= K:
        return tab[K]
    return tab[int(x)]


@kernel("float64(float64, float64, float64, float64, float64[:], float64)")
def interval_pen(af, span, th, tl, tab, scale):
    """A lower bound of a group's penalty at every node of ``[a, a + span]`` (``af = a``; the
    group's phase step ``th + tl`` in double-double): 0 when the phases of the interval may
    cross an integer, else the table's bound at their least distance to one (rounding bounded)."""
    h, l = dd_frac2(af, th, tl)
    length = span * (abs(th) + abs(tl)) * (1.0 + 4.0 * EPS64)
    if length >= 1.0:
        return 0.0
    slack = EPS64 + 2.0**-100 * (1.0 + af * abs(th))
    x0 = h + l - slack
    x1 = h + l + length + slack
    if math.floor(x1) >= math.ceil(x0):
        return 0.0
    d0 = abs(x0 - math.floor(x0 + 0.5))
    d1 = abs(x1 - math.floor(x1 + 0.5))
    return _pen_lookup(min(d0, d1) - 4.0 * EPS64, tab, scale)


@kernel("float64(float64, float64, float64, float64[:], float64)")
def node_pen(nf, th, tl, tab, scale):
    """A lower bound of a group's penalty at node ``nf`` (its phase's distance to the integers,
    rounding bounded)."""
    h, l = dd_frac2(nf, th, tl)
    return _pen_lookup(abs(h + l) - EPS64 - 2.0**-100 * (1.0 + nf * abs(th)), tab, scale)


@kernel("Tuple((int64[:], int64))(float64[:], float64[:], float64[:, :], float64[:], int64, float64, float64, "
        "float64, float64, int64, int64, int64)")
def sieve_nodes(tau_hi, tau_lo, pen_tab, pen_scale, n_max, P, sk2, T0, slope, leaf, budget, node_cap):
    """Node indices n ∈ [0, n_max] the sieve keeps, in increasing order, and the number of
    intervals visited (``budget`` intervals visited or more than ``node_cap`` nodes kept:
    the count is returned negated, with the nodes so far).

    A node n is dropped only when a certified lower bound of ``Σ_g pen_g(dist(n·τ_g, ℤ)) +
    s²u_n²/2`` exceeds ``T(n) = T0 + slope·log(1 + n)``; an index interval [a, b] is dropped
    when the lower bound over it (every group's phase interval ``[a·τ, a·τ + (b−a)·τ]``,
    padded by its rounding, at its distance to ℤ; the Gaussian part at a) exceeds T(a) ≤
    T(n).  Groups are taken in the given order (most selective first) and the sum stops as
    soon as it exceeds the level."""
    G = tau_hi.shape[0]
    cap = 1024
    out = np.empty(cap, dtype=np.int64)
    n_out = 0
    stack_a = np.empty(256, dtype=np.int64)
    stack_b = np.empty(256, dtype=np.int64)
    top = 0
    stack_a[0] = 0
    stack_b[0] = n_max
    top = 1
    visited = 0
    c_u = TWO_PI / P
    while top > 0:
        top -= 1
        a = stack_a[top]
        b = stack_b[top]
        visited += 1
        if visited > budget:
            return out[:n_out], -visited
        af = float(a)
        ua = c_u * af
        level = T0 + slope * math.log1p(af)
        lb = 0.5 * sk2 * ua * ua * (1.0 - 4.0 * EPS64)
        if lb > level:
            continue
        span = float(b - a)
        for g in range(G):
            lb += interval_pen(af, span, tau_hi[g], tau_lo[g], pen_tab[g], pen_scale[g])
            if lb > level:
                break
        if lb > level:
            continue
        if b - a + 1 <= leaf:
            for n in range(a, b + 1):
                nf = float(n)
                un = c_u * nf
                lv = T0 + slope * math.log1p(nf)
                pen = 0.5 * sk2 * un * un * (1.0 - 4.0 * EPS64)
                for g in range(G):
                    pen += node_pen(nf, tau_hi[g], tau_lo[g], pen_tab[g], pen_scale[g])
                    if pen > lv:
                        break
                if pen <= lv:
                    if n_out == cap:
                        new = np.empty(2 * cap, dtype=np.int64)
                        new[:cap] = out
                        out = new
                        cap *= 2
                    out[n_out] = n
                    n_out += 1
                    if n_out > node_cap:
                        return out[:n_out], -visited
            continue
        mid = a + (b - a) // 2
        if top + 2 > stack_a.shape[0]:
            return out[:n_out], -visited
        stack_a[top] = mid + 1
        stack_b[top] = b
        stack_a[top + 1] = a
        stack_b[top + 1] = mid
        top += 2
    return out[:n_out], visited


@kernel("UniTuple(float64, 2)(float64, float64, float64)")
def log_mgf(lam, delta, s2):
    """``(log M(λΔ/s²), absolute error)`` of one N_Z(0, s²) at the tilt of a mechanism with
    shift Δ (so ``a = λΔ/s²`` and ``μ = a·s² = λΔ = n₀ + f``, ``|f| ≤ 1/2``):

        log M = (n₀² + 2n₀f)/(2s²) + log θ̃(f) − log θ̃(0) + f²/(2s²)·[Poisson form]

    Poisson form (s² ≥ 1): ``Θ(a) = √(2πs²)·e^{μ²/(2s²)}·(1 + d(f))`` with
    ``d(f) = 2Σ_{k≥1} e^{−2π²s²k²}cos 2πkf``, so log M = μ²/(2s²) + log1p d(f) − log1p d(0).
    Direct form: ``Θ(a) = e^{μ²/(2s²)}·Σ_y e^{−(y − f)²/(2s²)}``, so log M = (μ² − f²)/(2s²)
    + log1p Σ_{y≠0} e^{−y(y−2f)/(2s²)} − log1p Σ_{y≠0} e^{−y²/(2s²)} with μ² − f² =
    n₀(n₀ + 2f) (no cancellation for small μ)."""
    mu = lam * delta
    n0 = math.floor(mu + 0.5)
    f = mu - n0
    if s2 >= POISSON_MIN_S2:
        main = mu * mu / (2.0 * s2)
        d = 0.0
        d0 = 0.0
        for k in range(1, 4):
            e0 = -0.5 * s2 * (TWO_PI * k) ** 2
            if e0 > -745.0:
                q = math.exp(e0)
                d += 2.0 * q * math.cos(TWO_PI * k * f)
                d0 += 2.0 * q
        corr = math.log1p(d) - math.log1p(d0)
        # rounding, and the float s² (relative u): main and corr move by ≤ u·|main|, u·4π²s²·d0
        err = 8.0 * EPS64 * (main + abs(corr)) + 16.0 * EPS64 * d0 * (1.0 + 40.0 * s2) + 1e-40
        return main + corr, err
    Y = direct_half_width(s2)
    s = 0.0
    s0 = 0.0
    w = 0.0
    for y in range(-Y, Y + 1):
        if y == 0:
            continue
        e = -y * (y - 2.0 * f) / (2.0 * s2)
        if e > -745.0:
            t = math.exp(e)
            s += t
            w += t * (1.0 - e)
        e0 = -y * y / (2.0 * s2)
        if e0 > -745.0:
            t = math.exp(e0)
            s0 += t
            w += t * (1.0 - e0)
    main = n0 * (n0 + 2.0 * f) / (2.0 * s2)
    corr = math.log1p(s) - math.log1p(s0)
    # rounding of the sums and logs, and the float s² (relative u): the exponent e of each
    # term e^e moves by ≤ 4u·|e|, the term by ≤ u·(4|e| + 2) relative, so the sums by
    # ≤ 8u·Σ t(1 + |e|) = 8u·w (each e ≤ 0 here, |e| ≤ Y²/s²), plus the summation's
    # (2Y + 2)u·(s + s0); the logs by no more (counted in EPS64 = 2u, as every kernel here)
    err = 8.0 * EPS64 * (abs(main) + abs(corr)) + 8.0 * EPS64 * (w + (2.0 * Y + 2.0) * (s + s0)) + 1e-40
    return main + corr, err


@kernel("Tuple((float64[:, :], float64[:], float64[:]))(complex128[:], float64[:], int64[:], float64, float64, "
        "float64[:], float64[:])")
def profile_sums(Gn, err, nodes, lam, P, t_hi, t_lo):
    """For each threshold k (``x_k/P = t_hi[k] + t_lo[k]``): the sums ``S_j = Σ_n c_n
    Re[G_n·k_j(u_n)·e^{−2πi frac(n x_k/P)}]`` (c_0 = 1, else 2) for the kernels ``k_0 = 1``
    (density), ``k_1 = λ/(λ+iu)`` (tail), ``k_2 = λ(λ+1)/((λ+iu)(λ+1+iu))`` (profile), all
    of modulus ≤ 1; ``A = Σ c_n|G_n|`` and ``E = Σ c_n err_n`` (the same for every k).
    Rows of the first output: S_0, S_1, S_2 per threshold."""
    T = t_hi.shape[0]
    N = nodes.shape[0]
    S = np.empty((3, T))
    A = 0.0
    E = 0.0
    c_u = TWO_PI / P
    k1 = np.empty(N, dtype=np.complex128)
    k2 = np.empty(N, dtype=np.complex128)
    for i in range(N):
        c = 1.0 if nodes[i] == 0 else 2.0
        A += c * abs(Gn[i])
        E += c * err[i]
        u = c_u * float(nodes[i])
        z1 = lam / (lam + 1j * u)
        k1[i] = Gn[i] * z1
        k2[i] = k1[i] * ((lam + 1.0) / (lam + 1.0 + 1j * u))
    for k in range(T):
        a0 = 0.0
        c0 = 0.0
        a1 = 0.0
        c1 = 0.0
        a2 = 0.0
        c2 = 0.0
        for i in range(N):
            c = 1.0 if nodes[i] == 0 else 2.0
            h, l = dd_frac2(float(nodes[i]), t_hi[k], t_lo[k])
            ph = -TWO_PI * (h + l)
            cs = math.cos(ph)
            sn = math.sin(ph)
            g = Gn[i]
            a0, c0 = neumaier_add(a0, c0, c * (g.real * cs - g.imag * sn))
            g = k1[i]
            a1, c1 = neumaier_add(a1, c1, c * (g.real * cs - g.imag * sn))
            g = k2[i]
            a2, c2 = neumaier_add(a2, c2, c * (g.real * cs - g.imag * sn))
        S[0, k] = a0 + c0
        S[1, k] = a1 + c1
        S[2, k] = a2 + c2
    return S, np.array([A]), np.array([E])


@kernel("UniTuple(float64, 2)(float64, float64[:], float64[:], float64[:])")
def log_mgf_sum(lam, delta, s2, m):
    """``(Σ_g m_g log M_g(λ), absolute error bound)`` (:func:`log_mgf` per group), summed with
    Neumaier's compensation (:func:`exactdp.kernels.summation.neumaier_add`: error ≤ (2u +
    O(Gu²))·Σ|terms|, charged as 16·EPS64·Σ|terms| as the node sums are; a recursive sum of
    thousands of groups would need ~G·u·|sum|)."""
    acc = 0.0
    comp = 0.0
    err = 0.0
    tot = 0.0
    for g in range(delta.shape[0]):
        v, e = log_mgf(lam, delta[g], s2[g])
        t = m[g] * v
        acc, comp = neumaier_add(acc, comp, t)
        # each term's own bound and the product's rounding
        err += m[g] * e + 4.0 * EPS64 * abs(t)
        tot += abs(t)
    val = acc + comp
    # err and tot are recursive sums of positive terms: relative (G + 1)u each
    grow = 1.0 + (delta.shape[0] + 2.0) * EPS64
    return val, err * grow + 16.0 * EPS64 * tot * grow + 4.0 * EPS64 * abs(val)


@kernel("UniTuple(float64, 2)(float64, float64[:], float64[:], float64[:], float64[:])")
def cumulants(lam, delta, s2, m, w):
    """``(K'(λ), K''(λ))`` of the noise (float64 estimates, for the saddle point)."""
    k1 = 0.0
    k2 = 0.0
    mc = np.empty(MOMENT_CONSTS)
    for g in range(delta.shape[0]):
        mu = lam * delta[g]
        n0 = math.floor(mu + 0.5)
        moment_consts(s2[g], mc)
        mean, var = tilted_moments_at(mu - n0, s2[g], mc)
        k1 += m[g] * w[g] * (n0 + mean)
        k2 += m[g] * w[g] * w[g] * var
    return k1, k2


@kernel("float64[:, :](float64[:])")
def moment_table(s2):
    """:func:`moment_consts` of every group, one row each (a saddle search fills it once)."""
    mct = np.empty((s2.shape[0], MOMENT_CONSTS))
    for g in range(s2.shape[0]):
        moment_consts(s2[g], mct[g])
    return mct


@kernel("UniTuple(float64, 2)(float64, float64[:], float64[:], float64[:], float64[:], float64[:, :])")
def cumulants_at(lam, delta, s2, m, w, mct):
    """:func:`cumulants` from the groups' :func:`moment_table` (the same operations, the same
    bits; only the s²-constants are not recomputed at every step)."""
    k1 = 0.0
    k2 = 0.0
    for g in range(delta.shape[0]):
        mu = lam * delta[g]
        n0 = math.floor(mu + 0.5)
        mean, var = tilted_moments_at(mu - n0, s2[g], mct[g])
        k1 += m[g] * w[g] * (n0 + mean)
        k2 += m[g] * w[g] * w[g] * var
    return k1, k2


@kernel("float64[:](float64[:], float64[:], float64[:], float64[:], float64[:], float64, float64, float64, "
        "float64[:, :])")
def saddles(x, delta, s2, m, w, sk2, lam_floor, var, mct):
    """For each threshold x the tilt λ ≥ lam_floor solving ``K'(λ) + s²λ − 1/λ − 1/(λ+1) =
    x`` by Newton steps (a float64 estimate: any λ > 0 is valid, the saddle keeps the
    integrand one-signed); ``mct`` the groups' :func:`moment_table`."""
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        lam = max(lam_floor, x[i] / max(var + sk2, 1e-300))
        for _ in range(60):
            k1, k2 = cumulants_at(lam, delta, s2, m, w, mct)
            g = k1 + sk2 * lam - 1.0 / lam - 1.0 / (lam + 1.0) - x[i]
            dg = k2 + sk2 + 1.0 / (lam * lam) + 1.0 / ((lam + 1.0) * (lam + 1.0))
            new = lam - g / dg
            if not new > 0.0:
                new = lam / 4.0
            if abs(new - lam) <= 1e-10 * lam:
                lam = new
                break
            lam = new
        out[i] = max(lam_floor, lam)
    return out


@kernel("float64[:](float64[:], float64[:], float64[:], float64[:], float64[:], float64, float64, float64, "
        "float64[:, :])")
def saddles_strip(x, delta, s2, m, w, sk2, lam_lo, lam_hi, mct):
    """For each threshold x the tilt λ ∈ [lam_lo, lam_hi] ⊂ (−1, 0) solving ``K'(λ) + s²λ −
    1/λ − 1/(λ+1) = x`` (the left side increases from −∞ to +∞ on (−1, 0)), by bisection
    (a float64 estimate for the complement's inversion; any λ in the strip is valid);
    ``mct`` the groups' :func:`moment_table`."""
    out = np.empty(x.shape[0])
    for i in range(x.shape[0]):
        a, b = lam_lo, lam_hi
        for _ in range(80):
            mid = 0.5 * (a + b)
            k1, _ = cumulants_at(mid, delta, s2, m, w, mct)
            g = k1 + sk2 * mid - 1.0 / mid - 1.0 / (mid + 1.0) - x[i]
            if g > 0.0:
                b = mid
            else:
                a = mid
            if b - a <= 1e-12:
                break
        out[i] = 0.5 * (a + b)
    return out


@kernel("float64(float64, float64, float64, float64)")
def _pen_interval(a, b, s2, logD):
    """One group's penalty lower bound (without the factor m) over the phase interval [a, b]
    (cycles); see :func:`interval_penalty`."""
    if math.floor(b) >= math.ceil(a):
        return 0.0
    da = abs(a - math.floor(a + 0.5))
    db = abs(b - math.floor(b + 0.5))
    d = min(da, db) - (4e-16 * (abs(a) + abs(b)) + 2.0**-50 + 1e-15)
    if d <= 0.0:
        return 0.0
    if d > 0.5:
        d = 0.5
    bb = TWO_PI * d
    mx = -0.5 * s2 * bb * bb
    acc = 0.0
    for j in range(-3, 4):
        if j == 0:  # arg = mx − mx = 0 exactly and exp(0) = 1 (NaN only where mx = −inf: logp is −inf)
            acc += 1.0
            continue
        e = bb - TWO_PI * j
        arg = -0.5 * s2 * e * e - mx
        if arg > -750.0:  # below, exp is 0.0 exactly and adding it changes nothing: skipped
            acc += math.exp(arg)
    logp = mx if acc == 1.0 else mx + math.log(acc)  # log(1) = 0 exactly
    margin = 3e-11 + 8.0 * EPS64 * (abs(mx) + 1.0)
    pen = logD - logp - margin
    return pen if pen > 0.0 else 0.0


@kernel("float64[:](float64[:, :], float64[:, :], float64[:], int64[:], float64[:])")
def interval_penalty(x0, x1, s2, m, logD):
    """Σ_g of the sieve penalty's lower bound over the phase intervals [x0, x1] (cycles;
    one row per group, one column per interval): the distance to ℤ is 0 when the interval
    holds an integer, else the smaller endpoint distance, lowered by a rounding slack;
    ``pen_g(d) = m_g·max(0, log D_g − log Σ_{|k|≤3} e^{−σ²(2πd − 2πk)²/2})`` (the terms
    |k| ≥ 4 weigh < e^{−24π²σ²} ≤ 2e-11 of the k = 0 one where D_g > 1/2, covered by the
    margin).  Groups with ``logD = −inf`` (D ≤ 1/2) contribute 0."""
    G = x0.shape[0]
    K = x0.shape[1]
    out = np.zeros(K)
    for g in range(G):
        if logD[g] == -np.inf:
            continue
        for k in range(K):
            pen = _pen_interval(x0[g, k], x1[g, k], s2[g], logD[g])
            if pen > 0.0:
                out[k] += m[g] * pen
    return out


@kernel("float64[:, :](float64[:], int64[:], float64[:], float64[:], int64)")
def penalty_tables(s2, m, logD, d_cap, K):
    """Per group g (one row each) the penalty lower bounds of :func:`interval_penalty` at the
    distances ``d_k = k·(d_cap[g]/K)``, k = 0..K (the same operations, the same bits as one
    :func:`interval_penalty` call per group on the degenerate intervals [d_k, d_k])."""
    G = s2.shape[0]
    out = np.zeros((G, K + 1))
    for g in range(G):
        if logD[g] == -np.inf:
            continue
        step = d_cap[g] / K
        for k in range(K + 1):
            d = float(k) * step
            pen = _pen_interval(d, d, s2[g], logD[g])
            if pen > 0.0:
                out[g, k] = m[g] * pen
    return out
