"""Discrete Gaussian kernels: the complex log-theta function in both regimes.

``Θ(z; s²) = Σ_{x∈ℤ} exp(z·x − x²/(2s²))`` so that the moment generating function of
N_Z(0, s²) is ``M(z) = Θ(z)/Θ(0)``.  With ``z = a + i·b``:

* Poisson (dual) form, used for s² ≥ POISSON_MIN_S2:
  ``Θ = sqrt(2π s²)·e^{s²a²/2}·Σ_k exp(−s²(b − 2πk)²/2 + i·s²·a·(b − 2πk))``.
  ``b`` is reduced to [−π, π] by the caller's exact integer arithmetic; the terms
  ``|k| ≤ 3`` are summed.  The neglected terms are below ``exp(−12π² s²)`` relative to
  the largest one (< 1e-50 for s² ≥ 1).
* Direct form, used for s² < POISSON_MIN_S2: the terms ``|x − round(a s²)| ≤ X`` with
  ``X = ceil(sqrt(100 s²)) + 2``; the neglected terms are below ``e^{−50}`` relative to
  the largest one, and their sum below 1e-21 of it.

Both return ``log Θ`` as a complex number (log-modulus, phase) so nothing over- or
underflows for any a.
"""

from __future__ import annotations

import math

import numpy as np
from exactdp.kernels.jit import kernel
from exactdp.kernels.units import EPS64

__all__ = ["POISSON_MIN_S2", "log_theta", "log_theta_ratio", "log_poisson_numerator", "log_theta_real", "psi_consts",
           "psi_terms", "psi_terms_rows", "psi_terms_len", "log_psi_rows", "log_psi_terms", "log_psi_at", "log_psi"]

POISSON_MIN_S2 = 1.0
TWO_PI = 2.0 * math.pi


@kernel("Tuple((float64, complex128, float64))(float64, float64, float64)")
def _direct_sums(a, b, s2):
    """Direct form around the maximum: ``tmax`` and the scaled sums
    ``Σ_x exp(a x − x²/(2s²) − tmax)·e^{ibx}`` and the same at b = 0, over
    ``|x − round(a s²)| ≤ ceil(sqrt(100 s²)) + 2``."""
    x0 = float(round(a * s2))
    half = int(math.ceil(math.sqrt(100.0 * s2))) + 2
    tmax = -np.inf
    for dx in range(-1, 2):
        x = x0 + dx
        t = a * x - x * x / (2.0 * s2)
        if t > tmax:
            tmax = t
    acc = 0.0 + 0.0j
    acc0 = 0.0
    for xi in range(int(x0) - half, int(x0) + half + 1):
        x = float(xi)
        t = a * x - x * x / (2.0 * s2) - tmax
        if t < -745.0:
            continue
        w = math.exp(t)
        acc += w * (math.cos(b * x) + 1j * math.sin(b * x))
        acc0 += w
    return tmax, acc, acc0


@kernel("complex128(float64, float64, float64)")
def log_theta(a, b, s2):
    """Complex ``log Θ(a + i b; s2)`` (b must lie in [−π, π] for the Poisson form)."""
    if s2 >= POISSON_MIN_S2:
        # terms t_k = exp(-s2 (b-2πk)^2/2 + i s2 a (b-2πk)), k = -3..3; the k=0 term
        # has the largest modulus since |b| <= π.
        acc = 0.0 + 0.0j
        for k in range(-3, 4):
            d = b - TWO_PI * k
            e = -0.5 * s2 * (d * d - b * b)
            if e < -745.0:
                continue
            ph = s2 * a * d
            acc += math.exp(e) * (math.cos(ph) + 1j * math.sin(ph))
        re0 = 0.5 * math.log(TWO_PI * s2) + 0.5 * s2 * a * a - 0.5 * s2 * b * b
        mod = abs(acc)
        if mod == 0.0:
            return complex(-np.inf, 0.0)
        return complex(re0 + math.log(mod), math.atan2(acc.imag, acc.real))
    tmax, acc, _ = _direct_sums(a, b, s2)
    mod = abs(acc)
    if mod == 0.0:
        return complex(-np.inf, 0.0)
    return complex(tmax + math.log(mod), math.atan2(acc.imag, acc.real))


@kernel("complex128(float64, float64, float64)")
def log_theta_ratio(a, b, s2):
    """Complex ``log[Θ(a + i b)/Θ(a)]`` computed without forming the large common
    factor ``s²a²/2`` (b in [−π, π]); its real part is ≤ 0."""
    if s2 >= POISSON_MIN_S2:
        acc = 0.0 + 0.0j
        acc0 = 0.0 + 0.0j
        for k in range(-3, 4):
            d = b - TWO_PI * k
            e = -0.5 * s2 * (d * d - b * b)
            if e > -745.0:
                ph = s2 * a * d
                acc += math.exp(e) * (math.cos(ph) + 1j * math.sin(ph))
            d0 = -TWO_PI * k
            e0 = -0.5 * s2 * d0 * d0
            if e0 > -745.0:
                ph0 = s2 * a * d0
                acc0 += math.exp(e0) * (math.cos(ph0) + 1j * math.sin(ph0))
        mod = abs(acc)
        if mod == 0.0:
            return complex(-np.inf, 0.0)
        return complex(-0.5 * s2 * b * b + math.log(mod) - math.log(abs(acc0)),
                       math.atan2(acc.imag, acc.real) - math.atan2(acc0.imag, acc0.real))
    _, acc, acc0 = _direct_sums(a, b, s2)
    mod = abs(acc)
    if mod == 0.0:
        return complex(-np.inf, 0.0)
    return complex(math.log(mod / acc0), math.atan2(acc.imag, acc.real))


#: Poisson terms whose weight relative to the k = 0 term is below e^{−SKIP} are skipped
#: (at most 6 of them: a relative truncation ≤ 6e^{−50} < 1e-21).
SKIP = 50.0


@kernel("complex128(float64, float64, float64)")
def log_poisson_numerator(a, b, s2):
    """``log Σ_k exp(−s²((b−2πk)² − b²)/2 + i s² a (b − 2πk))`` (b in [−π, π]); with the
    per-λ constant ``log Σ_k(…)|_{b=0}`` subtracted and ``−s²b²/2`` added this is
    ``log[Θ(a+ib)/Θ(a)]`` in the Poisson regime."""
    acc = 0.0 + 0.0j
    for k in range(-3, 4):
        d = b - TWO_PI * k
        e = -0.5 * s2 * (d * d - b * b)
        if e > -SKIP:
            ph = s2 * a * d
            acc += math.exp(e) * (math.cos(ph) + 1j * math.sin(ph))
    mod = abs(acc)
    if mod == 0.0:
        return complex(-np.inf, 0.0)
    return complex(math.log(mod), math.atan2(acc.imag, acc.real))


@kernel("float64(float64, float64)")
def log_theta_real(a, s2):
    """``log Θ(a; s2)`` for real a (the log of the untilted normaliser at a = 0)."""
    return log_theta(a, 0.0, s2).real


# ------------------------------------------------------------------ recentred tilts
# For the tilt a (real) put μ = a·s² = n0 + f with n0 = round(μ) ∈ ℤ and |f| ≤ 1/2.  Then
#   Θ(a + ib)/Θ(a) = e^{i b n0} · ψ(f, b),   ψ(f, b) = Σ_y e^{−(y−f)²/(2s²) + iby} / Σ_y e^{−(y−f)²/(2s²)},
# so the huge phase b·n0 is an exact integer phase (handled by the caller) and ψ depends on
# O(1) quantities only.  log ψ is formed as log1p of a small quantity where possible, so
# its absolute error is ~u·|log ψ| (not ~u): m·log ψ stays accurate for m up to 10⁶.

#: relative truncation of either theta series in the recentred kernels (per factor)
TRUNC_REL = 1e-25
#: absolute truncation of the Poisson series z, d of :func:`log_psi` (s² ≥ 1): the terms
#: |k| ≥ 4 sum to ≤ 2.1·e^{−24π²s²} < 2e-103, the skipped ones (exponent ≤ −745) to
#: ≤ 6e^{−745}; their effect on log(1 + z) is ≤ TRUNC_Z/|1 + z|, within TRUNC_REL
#: unless |1 + z| < TRUNC_Z/TRUNC_REL (then added to the bound)
TRUNC_Z = 1e-100
#: 2^{−56}: a term below this fraction of a sum (with margin 2) leaves its rounding unchanged
NEGLIGIBLE = 2.0**-56


@kernel("int64(float64)")
def direct_half_width(s2):
    """Terms |y| ≤ Y of the direct sum: the rest is below e^{−60} of the y = 0 term."""
    return int(math.ceil(math.sqrt(120.0 * s2))) + 2


@kernel("Tuple((complex128, float64))(complex128)")
def _clog1p(z):
    """``log(1 + z)`` for complex z with an absolute error bound (before input errors)."""
    az = abs(z)
    if az < 0.5:
        x = 2.0 * z.real + z.real * z.real + z.imag * z.imag
        re = 0.5 * math.log1p(x)
        im = math.atan2(z.imag, 1.0 + z.real)
        return complex(re, im), EPS64 * (40.0 * az + 2.0 * (abs(re) + abs(im)))
    w = 1.0 + z
    aw = abs(w)
    if aw == 0.0:
        return complex(-np.inf, 0.0), np.inf
    re = math.log(aw)
    im = math.atan2(w.imag, w.real)
    return complex(re, im), EPS64 * (4.0 * (1.0 + az) / aw + 2.0 * (abs(re) + abs(im)))


#: length of the per-(group, tilt) constants of :func:`log_psi_at` (:func:`psi_consts`)
PSI_CONSTS = 32


@kernel("void(float64, float64, complex128[:], float64[:])")
def psi_consts(f, s2, cc, cr):
    """The parts of :func:`log_psi` that depend on (f, s²) only, not on b (filled in place).

    Poisson form: ``cc[j] = e^{−2πikf}`` and ``cr[j] = −2πs²k`` for k = −3, −2, −1, 1, 2, 3
    (j = 0..5), ``cr[6 + j] = πk``, ``cr[12] = log(1 + d)``, ``cr[13] = Σ|d terms|``,
    ``cr[14 + j]`` the b-independent part of term k's rounding weight (:func:`log_psi_at`).
    Direct form: ``cr[y + Y] = ρ_y = e^{−y(y − 2f)/(2s²)}`` for 0 < |y| ≤ Y (−1 for a term
    below e^{−745}, which is skipped), ``cr[2Y + 1] = Σ ρ_y``.  The same operations in
    the same order as a direct evaluation, so :func:`log_psi_at` returns the same bits."""
    if s2 >= POISSON_MIN_S2:
        d = 0.0
        dabs = 0.0
        j = 0
        for k in range(-3, 4):
            if k == 0:
                continue
            ph = -TWO_PI * k * f
            cc[j] = math.cos(ph) + 1j * math.sin(ph)
            cr[j] = -TWO_PI * s2 * k
            cr[6 + j] = math.pi * k
            cr[14 + j] = abs(cr[j]) * (5.0 * abs(k) + 7.0) + 9.0 * abs(k) + 20.0
            j += 1
            if k > 0:
                e0 = -0.5 * s2 * (TWO_PI * k) ** 2
                if e0 > -745.0:
                    q = math.exp(e0)
                    d += 2.0 * q * math.cos(TWO_PI * k * f)
                    dabs += 2.0 * q
        cr[12] = math.log1p(d)
        cr[13] = dabs
        return
    Y = direct_half_width(s2)
    srho = 0.0
    for y in range(-Y, Y + 1):
        if y == 0:
            continue
        e = -y * (y - 2.0 * f) / (2.0 * s2)
        if e < -745.0:
            cr[y + Y] = -1.0
            continue
        rho = math.exp(e)
        cr[y + Y] = rho
        srho += rho
    cr[2 * Y + 1] = srho


@kernel("int64(float64)")
def psi_terms_len(s2):
    """Length of the b-dependent row of :func:`psi_terms_rows` for s²."""
    if s2 >= POISSON_MIN_S2:
        return 9
    return 3 * direct_half_width(s2)


@kernel("void(float64[:], float64, float64[:], float64[:], int64, int64)")
def psi_terms_rows(bs, s2, cr, tab, base, width):
    """The parts of :func:`log_psi` that depend on (b, s²) only, not on f (filled in place,
    :func:`psi_terms_len` entries); ``cr`` from :func:`psi_consts` of any f (only its
    f-independent entries are read).  With :func:`log_psi_terms` this is :func:`log_psi_at`
    split in two, the same operations in the same order: a node loop evaluates the
    b-dependent half once per (node, group) for every tilt.

    Poisson form: ``row[j] = e^{e_j}`` with ``e_j = −2πs²k(πk − b)`` for k = −3, −2, −1, 1,
    2, 3 (j = 0..5; −1 for a term skipped, e_j ≤ −745), ``row[6] = Σ e^{e_j}``,
    ``row[7]`` the terms' rounding weight, ``row[8] = b``.  Direct form: for y = −Y..−1
    (p = y + Y = 0..Y−1) ``row[3p] + i·row[3p+1] = e^{iby} − 1`` and ``row[3p+2]`` its
    modulus; the term of −y is the conjugate (the same modulus), read from the same entry
    by :func:`log_psi_rows` (half the table of storing both).

    Here for each ``b = bs[u]``, into the row ``row = tab[base + u·width:]`` (:func:`one_row`
    compiled into the loop, so a row costs no call)."""

    # the direct form's sines sin(b·y), y = −Y..−1, at sb[−y] (one row at a time)
    sbs = np.empty(direct_half_width(s2) + 1 if s2 < POISSON_MIN_S2 else 1)

    def one_row(b, at):
        if s2 >= POISSON_MIN_S2:
            zabs = 0.0
            dz = 0.0
            for j in range(6):
                e = cr[j] * (cr[6 + j] - b)
                if e > -745.0:
                    t = math.exp(e)
                    tab[at + j] = t
                    zabs += t
                    dz += t * (4.0 * abs(e) + cr[14 + j])
                else:
                    tab[at + j] = -1.0
            tab[at + 6] = zabs
            tab[at + 7] = dz
            tab[at + 8] = b
            return
        Y = direct_half_width(s2)
        # e^{iby} − 1 = −2 sin²(by/2) + i sin(by): the sines of y > 0 are those of −y negated
        # (sin is odd in IEEE arithmetic and (0.5b)(−y) = −((0.5b)y) exactly), so the row keeps
        # y < 0 only and :func:`log_psi_rows` reads y > 0 as the conjugate (the modulus
        # |x + iy| = hypot(x, y) is even in y: libm's hypot works on |x|, |y|).  For even y = 2k,
        # (0.5b)·y = b·k exactly (0.5b is exact, the products have the same real value and one
        # rounding), so sin(0.5by) is the
        # sine sin(bk) of y = k: each such sine is evaluated once
        for y in range(-Y, 0):
            sbs[-y] = math.sin(b * y)
        for y in range(-Y, 0):
            sh = sbs[-y // 2] if y % 2 == 0 else math.sin(0.5 * b * y)
            sb = sbs[-y]
            c = -2.0 * sh * sh + 1j * sb  # e^{iby} − 1
            ac = abs(c)
            p = y + Y
            tab[at + 3 * p] = c.real
            tab[at + 3 * p + 1] = c.imag
            tab[at + 3 * p + 2] = ac

    for u in range(bs.shape[0]):
        one_row(bs[u], base + u * width)


@kernel("void(float64, float64, float64[:], float64[:])")
def psi_terms(b, s2, cr, row):
    """:func:`psi_terms_rows` of the one row ``row`` at b."""
    bs = np.empty(1)
    bs[0] = b
    psi_terms_rows(bs, s2, cr, row, 0, 0)


@kernel("void(float64, float64, complex128[:], float64[:], float64[:], int64, int64, int64, float64[:], float64[:], "
        "float64[:], int64)")
def log_psi_rows(f, s2, cc, cr, tab, base, width, count, out_re, out_im, out_err, k0):
    """:func:`log_psi` of ``count`` rows of one (f, s²): from the constants
    :func:`psi_consts` of (f, s²) and the rows :func:`psi_terms_rows` read from
    ``tab[base + u·width:]`` (no slice per row), into ``out_re``/``out_im``/``out_err``
    at ``k0 + u``, u = 0..count − 1 (real and imaginary part of log ψ, its error bound).
    One evaluation (:func:`one_row`) compiled into the loop, so a row costs no call."""

    def one_row(at):
        if s2 >= POISSON_MIN_S2:
            zabs = tab[at + 6]
            dz = tab[at + 7]
            b = tab[at + 8]
            l2 = cr[12]
            dabs = cr[13]
            gre = -0.5 * s2 * b * b
            gim = f * b
            if zabs == 0.0:
                # nothing above e^{−745}: 1 + z = 1 up to the truncation
                err = EPS64 * (8.0 * dabs + 4.0 * abs(gre) + 3.0 * abs(gim) + abs(l2))
                return complex(gre, gim) - l2, 2.0 * err + 2.0 * TRUNC_REL
            if zabs <= 1e-20 and dz <= 1e10 and abs(gre) >= 1e-250 and abs(gim) >= 1e-250:
                # z negligible: the branch below would return these bits.  |Re z|, |Im z| ≤ zabs
                # (each |t_j·cc_j| component ≤ t_j, the same sums rounded monotonically), so
                # _clog1p gives |Re l1|, |Im l1| ≤ 1.001·zabs and e1 ≤ 61u·zabs, aw_lo ≥ 0.99 and
                # the trunc term is 2·TRUNC_REL; a t with |t| ≤ 2^{−55}|x| leaves fl(x + t) = x
                # (round to nearest), so gre + Re l1, gim + Im l1 and e1 + u·dz/aw_lo + err0 are
                # gre, gim and err0 (margins ×2 over the rounding of these tests)
                err = EPS64 * (8.0 * dabs + 4.0 * abs(gre) + 3.0 * abs(gim) + abs(l2))
                if (1.1 * zabs <= NEGLIGIBLE * abs(gre) and 1.1 * zabs <= NEGLIGIBLE * abs(gim)
                        and EPS64 * (64.0 * zabs + 1.1 * dz) <= NEGLIGIBLE * err):
                    return complex(gre, gim) - l2, 2.0 * err + 2.0 * TRUNC_REL
            z = 0.0 + 0.0j
            for j in range(6):
                t = tab[at + j]
                if t >= 0.0:
                    z += t * cc[j]
            l1, e1 = _clog1p(z)
            # z's absolute input error ``EPS64·dz`` (u = EPS64 = 2ε, ε = 2⁻⁵³ the unit roundoff): each exponent
            # e_k = −2πs²k(πk − b) to u(4|e_k| + 2πs²|k|(5|k| + 7)) — πk − b to
            # ε(π|k| + [k = ±3]·3π + 3π + π(|k| + 1)), b = 2πr/N being rounded three times —,
            # exp, phase (f to ε, 2πkf to 2ε|2πkf|, cos/sin) and the sum to u(9|k| + 20); it
            # moves log(1 + z) by at most EPS64·dz/|1 + z|, as does the truncation (≤ TRUNC_Z)
            aw_lo = abs(1.0 + z) * (1.0 - 4.0 * EPS64) - EPS64 * dz - TRUNC_Z
            if aw_lo <= 0.0:
                return complex(gre, gim) + l1 - l2, np.inf
            err = e1 + EPS64 * dz / aw_lo + EPS64 * (8.0 * dabs + 4.0 * abs(gre) + 3.0 * abs(gim) + abs(l2))
            trunc = 2.0 * TRUNC_REL if aw_lo >= TRUNC_Z / TRUNC_REL else 2.0 * TRUNC_REL + 2.0 * TRUNC_Z / aw_lo
            return complex(gre, gim) + l1 - l2, 2.0 * err + trunc
        Y = direct_half_width(s2)
        num = 0.0 + 0.0j
        sabs = 0.0
        # the terms are summed in the order y = −Y..−1, 1..Y; the row holds y < 0 only, the
        # term of y > 0 is the conjugate of that of −y: e^{iby} − 1 = −2 sin²(by/2) + i sin(by)
        # with sin odd in IEEE arithmetic, so the same bits up to the sign of a zero (b = 0),
        # which a sum started at +0 never sees
        for p in range(2 * Y):
            y = p - Y if p < Y else p - Y + 1
            rho = cr[y + Y]
            if rho < 0.0:
                continue
            if y < 0:
                q = at + 3 * p
                c = complex(tab[q], tab[q + 1])
            else:
                q = at + 3 * (Y - y)
                c = complex(tab[q], -tab[q + 1])
            num += rho * c
            sabs += rho * tab[q + 2]
        srho = cr[2 * Y + 1]
        z = num / (1.0 + srho)
        zabs = sabs / (1.0 + srho)
        l1, e1 = _clog1p(z)
        # input error of z: each ρ_y to 3u·|exponent| ≤ 200u relative (kept terms have
        # exponent ≥ −745 but only those ≥ −60 matter), sums and the division ≤ (2Y+8)u
        dz = EPS64 * (200.0 + 2.0 * Y + 8.0) * zabs
        aw = abs(1.0 + z)
        if aw == 0.0:
            return l1, np.inf
        return l1, 2.0 * (e1 + dz / min(aw, 1.0)) + 2.0 * TRUNC_REL

    for u in range(count):
        lp, le = one_row(base + u * width)
        out_re[k0 + u] = lp.real
        out_im[k0 + u] = lp.imag
        out_err[k0 + u] = le


@kernel("Tuple((complex128, float64))(float64, float64, complex128[:], float64[:], float64[:], int64)")
def log_psi_terms(f, s2, cc, cr, tab, at):
    """:func:`log_psi` from the constants :func:`psi_consts` of (f, s²) and the row
    :func:`psi_terms_rows` of (b, s²), read from ``tab[at:]`` (:func:`log_psi_rows` of one row)."""
    out = np.empty(3)
    log_psi_rows(f, s2, cc, cr, tab, at, 0, 1, out[0:1], out[1:2], out[2:3], 0)
    return complex(out[0], out[1]), out[2]


@kernel("Tuple((complex128, float64))(float64, float64, float64, complex128[:], float64[:], float64[:])")
def log_psi_at(f, b, s2, cc, cr, sc):
    """:func:`log_psi` from the constants :func:`psi_consts` of (f, s²); ``sc`` is scratch
    space (used when it holds :func:`psi_terms_len` floats, else a row is allocated)."""
    k = psi_terms_len(s2)
    row = sc if sc.shape[0] >= k else np.empty(k)
    psi_terms(b, s2, cr, row)
    return log_psi_terms(f, s2, cc, cr, row, 0)


@kernel("Tuple((complex128, float64))(float64, float64, float64)")
def log_psi(f, b, s2):
    """``(log ψ(f, b; s²), absolute error bound)`` for |f| ≤ 1/2, b ∈ [−π, π].

    Poisson form (s² ≥ POISSON_MIN_S2): ψ = e^{−s²b²/2 + ifb}(1 + z)/(1 + d) with
    z = Σ_{k≠0} e^{−2πs²k(πk − b) − 2πikf}, d = 2Σ_{k≥1} e^{−2π²s²k²} cos 2πkf (|k| ≤ 3;
    the rest is below e^{−24π² s²}).  Direct form: ψ = 1 + z with
    z = Σ_{y≠0} ρ_y (e^{iby} − 1) / (1 + Σ_{y≠0} ρ_y), ρ_y = e^{−y(y − 2f)/(2s²)}.
    (:func:`psi_consts` + :func:`log_psi_at`, which a node loop calls with the constants
    hoisted out of it.)
    """
    cc = np.empty(6, dtype=np.complex128)
    cr = np.empty(PSI_CONSTS)
    psi_consts(f, s2, cc, cr)
    return log_psi_at(f, b, s2, cc, cr, np.empty(PSI_CONSTS))


#: 2^{−54}: a t with |t| ≤ 2^{−54}|x| (x ≠ 0) is below half an ulp of x, so fl(x + t) = x
HALF_ULP_REL = 2.0**-54
#: length of a row of the per-group constants of :func:`tilted_moments_at` and
#: :func:`log_theta_tilde_ratio_at` (:func:`moment_consts`)
MOMENT_CONSTS = 40


@kernel("void(float64, float64[:])")
def moment_consts(s2, mc):
    """The parts of :func:`tilted_moments` and :func:`log_theta_tilde_ratio` that depend on
    s² only, not on f (filled in place; ``MOMENT_CONSTS`` entries): a saddle-point search
    evaluates them once per group instead of once per step.

    Poisson form: ``mc[k − 1] = q_k = e^{−s²(2πk)²/2}`` for k = 1, 2, 3 (−1 for a term
    skipped, exponent ≤ −745), ``mc[3] = log1p(Σ 2q_k)``, ``mc[4]``, ``mc[5]`` bounds of the
    moments' corrections (:func:`tilted_moments_at`), ``mc[6]`` a bound of
    :func:`log_theta_tilde_ratio` (inf: none).  Direct form: ``mc[3] =
    log1p(Σ_{y≠0} e^{−y²/(2s²)})``, no bounds; ``mc[8:]`` is scratch space of
    :func:`tilted_moments_at` (its 2Y + 1 ≤ 27 weights).  The same operations in the same order as the direct
    evaluation, so both return the same bits."""
    if s2 >= POISSON_MIN_S2:
        d0 = 0.0
        q1 = 0.0  # Σ 2q_k·2πk and Σ 2q_k·(2πk)² (for the bounds below)
        q2 = 0.0
        for k in range(1, 4):
            e0 = -0.5 * s2 * (TWO_PI * k) ** 2
            mc[k - 1] = -1.0
            if e0 > -745.0:
                q = math.exp(e0)
                mc[k - 1] = q
                d0 += 2.0 * q
                q1 += 2.0 * q * (TWO_PI * k)
                q2 += 2.0 * q * (TWO_PI * k) ** 2
        mc[3] = math.log1p(d0)
        # bounds of the corrections of tilted_moments_at, |s²·g1| ≤ mc[4] and
        # |s⁴(d2/d0 − g1²)| ≤ mc[5]·s², valid when Σ 2q_k ≤ 1/4 (else inf: no bound)
        mc[4] = 1.5 * s2 * q1 if d0 <= 0.25 else np.inf
        mc[5] = s2 * (1.5 * q2 + 2.0 * q1 * q1) if d0 <= 0.25 else np.inf
        # |log_theta_tilde_ratio| ≤ 2·1.34·Σ 2q_k (|log1p(x)| ≤ |x|/(1 − |x|), |d|, d0 ≤ 1/4)
        mc[6] = 3.0 * d0 if d0 <= 0.25 else np.inf
        return
    Y = direct_half_width(s2)
    s0 = 0.0
    for y in range(-Y, Y + 1):
        if y == 0:
            continue
        e0 = -y * y / (2.0 * s2)
        if e0 > -745.0:
            s0 += math.exp(e0)
    mc[3] = math.log1p(s0)
    mc[4] = np.inf
    mc[5] = np.inf
    mc[6] = np.inf


@kernel("float64(float64, float64, float64[:])")
def log_theta_tilde_ratio_at(f, s2, mc):
    """:func:`log_theta_tilde_ratio` from the constants :func:`moment_consts` of s²."""
    if s2 >= POISSON_MIN_S2:
        d = 0.0
        for k in range(1, 4):
            q = mc[k - 1]
            if q >= 0.0:
                d += 2.0 * q * math.cos(TWO_PI * k * f)
        return math.log1p(d) - mc[3]
    Y = direct_half_width(s2)
    s = 0.0
    for y in range(-Y, Y + 1):
        if y == 0:
            continue
        e = -y * (y - 2.0 * f) / (2.0 * s2)
        if e > -745.0:
            s += math.exp(e)
    return -f * f / (2.0 * s2) + math.log1p(s) - mc[3]


@kernel("float64(float64, float64)")
def log_theta_tilde_ratio(f, s2):
    """``log θ̃(f) − log θ̃(0) ≤ 0`` with θ̃(f) = Σ_y e^{−(y − f)²/(2s²)} (|f| ≤ 1/2)."""
    mc = np.empty(MOMENT_CONSTS)
    moment_consts(s2, mc)
    return log_theta_tilde_ratio_at(f, s2, mc)


@kernel("UniTuple(float64, 2)(float64, float64, float64[:])")
def tilted_moments_at(f, s2, mc):
    """:func:`tilted_moments` from the constants :func:`moment_consts` of s² (whose scratch
    entries it overwrites)."""
    if s2 >= POISSON_MIN_S2:
        if abs(f) >= 1e-250 and mc[4] <= abs(f) * HALF_ULP_REL and mc[5] <= HALF_ULP_REL:
            # the corrections below are under half an ulp of f and of s² (|d1| ≤ Σ 2q_k·2πk,
            # |d2| ≤ Σ 2q_k(2πk)², d0 ≥ 1 − Σ 2q_k ≥ 3/4; margins 1.5/1.36 and 2/1.84 for their
            # roundings; |f|·2^{−54} exact for |f| ≥ 1e-250): f + s²·g1 rounds to f and
            # s² + s⁴(d2/d0 − g1²) to s², the bits of the loop below without its sines
            return f, s2
        d0 = 1.0
        d1 = 0.0
        d2 = 0.0
        for k in range(1, 4):
            q = mc[k - 1]
            if q >= 0.0:
                w = TWO_PI * k
                d0 += 2.0 * q * math.cos(w * f)
                d1 -= 2.0 * q * w * math.sin(w * f)
                d2 -= 2.0 * q * w * w * math.cos(w * f)
        g1 = d1 / d0
        return f + s2 * g1, s2 + s2 * s2 * (d2 / d0 - g1 * g1)
    Y = direct_half_width(s2)
    em = 0.0  # weights e^{e − em}; em = the largest exponent when e^{e} itself underflows
    tot = 0.0
    mean = 0.0
    # the weight of y, kept for the variance (−1: skipped): the same e, so the same e^{e}
    ws = mc[8:]
    for _ in range(2):
        tot = 0.0
        mean = 0.0
        for y in range(-Y, Y + 1):
            e = -(y - f) * (y - f) / (2.0 * s2) - em
            ws[y + Y] = -1.0
            if e > -745.0:
                w = math.exp(e)
                ws[y + Y] = w
                tot += w
                mean += w * y
        if tot > 1e-290:
            break
        ys = math.floor(f + 0.5)  # tiny σ²: every e^{e} below 1e-290 (was 0/0 = NaN)
        em = -(ys - f) * (ys - f) / (2.0 * s2)
    mean /= tot
    var = 0.0
    for y in range(-Y, Y + 1):
        w = ws[y + Y]
        if w >= 0.0:
            var += w * (y - mean) * (y - mean)
    return mean, var / tot


@kernel("UniTuple(float64, 2)(float64, float64)")
def tilted_moments(f, s2):
    """Mean and variance of Y ~ N_Z(f, s²) (|f| ≤ 1/2), float64 (for the saddle point)."""
    mc = np.empty(MOMENT_CONSTS)
    moment_consts(s2, mc)
    return tilted_moments_at(f, s2, mc)
