"""β = f(α) at many α at once: the convex dual of :mod:`~exactdp.accounting.dual_tradeoff`,
batched, with exact chord bounds.

The bound is the dual's (``f(α) = sup_x G(x)``, ``G(x) = 1 − H_x − x·α`` concave in
``x = e^ε``; a point's certified ``G_lo`` is a lower bound, the chord envelope of the
evaluated points an upper bound).  What differs is how it is spent:

* **Exact points.**  Each α's stencil is ``x_k = c + k·h``, each x taken as the binary64
  number it is (exactly); the oracle is asked for δ over an outward enclosure of
  ``ε = log x``.  G's brackets and the chord envelope are computed in exact rational
  arithmetic (``gmpy2.mpq``) from the oracle's float log brackets rounded outward
  (``e^v·(1 ± 32u)``): the only roundings are those two, and both are outward.
* **All α together.**  The maximiser proposals are vectorised over α (a grid then golden
  section on the Gaussian model's ``log G`` with the measured discrepancy ``d = log δ_mid
  − log δ_G`` at the last point, binary64: proposals only); each round is one oracle call
  for every open α.  The model rounds evaluate the proposal (a second time where the refit
  moved it by more than h/4), then the 5-point stencil ``c + h·(−2…2)`` with
  ``h = √(W/|G''|)`` (W the width aimed at) centred on the last model point (reused) is
  evaluated, re-centred by a least-squares parabola and re-spaced from the measured gap
  when it does not certify.
* **The oracle's precision.**  ``β = x(C(|ε|) − α)`` for ε < 0 cancels: the δ oracle's
  relative noise is amplified by ``C/(C − α)``, up to ≈ 8 on the 2020 release, so
  the batch asks a smoothed-inversion rest (:func:`oracle_width`) for brackets of
  ``W/5`` over twice the amplification its model predicts at the first proposals, between
  ``W/40`` and ``W/5`` (:func:`_oracle_width`: ``W/40`` on the release, ~``W/13`` for ten
  σ² near 5, whose finest smoothing level it then does not sieve); the per-α search after
  it asks for ``W/40``.

It is meant for a smooth profile (a smoothed-inversion rest: the caller sends nothing else).
An α that this does not certify within :data:`ROUNDS` rounds (or whose points leave
binary64's range, or whose β the model puts within 1e-6 of 1) is returned as ``None``: the
caller continues with the per-α search of :mod:`~exactdp.accounting.dual_tradeoff`.
"""

from __future__ import annotations

import contextlib
import math

import gmpy2
import mpmath
import numpy as np
from mpmath.libmp import from_rational

from exactdp.accounting.chord_envelope import chord_envelope
from exactdp.accounting.results import BracketedTradeoff
from exactdp.numerics.precision import DPS_RESULT, EPS64, to_mpf

__all__ = ["batch_brackets", "oracle_width", "point", "ORACLE_SHARE", "MODEL_ROUNDS", "ROUNDS"]

#: proposal rounds (one point per α each), then stencil rounds
MODEL_ROUNDS = 3
ROUNDS = 4
#: the oracle's relative width while the trade-off runs, as a share of the width aimed at
ORACLE_SHARE = 1 / 40
#: the share of the width the oracle's noise may take after its amplification (the 2020
#: release: ``C/(C − α)`` up to ≈ 8 at ORACLE_SHARE); the batch's oracle width
#: (:func:`_oracle_width`) is this over the amplification its model predicts
NOISE_SHARE = 8 * ORACLE_SHARE
#: the certifying stencil (multiples of h)
STENCIL = (-2, -1, 0, 1, 2)
#: |ε| beyond which points are left to the multiprecision search (binary64's exp range)
MAX_ABS_EPS = 600.0
_ERFC = np.frompyfunc(math.erfc, 1, 1)
_PREC = int(DPS_RESULT * 3.33) + 8


@contextlib.contextmanager
def oracle_width(acc, width: float):
    """Within the block, a smoothed-inversion rest of ``acc``'s profile aims at relative
    brackets of ``width`` (its documented ``target``), if it aimed wider; restored after.
    A rest without a target (enumerated atoms, the int64 lattice) is exact to its rounding
    already."""
    rest = getattr(getattr(acc, "profile", None), "rest", None)
    old = getattr(rest, "target", None)
    if rest is None or not isinstance(old, float) or old <= width:
        yield
        return
    rest.target = float(width)
    try:
        yield
    finally:
        rest.target = old


# ---------------------------------------------------------------- the model (binary64)
def _log_ncdf(z: np.ndarray) -> np.ndarray:
    """log Φ(z), vectorised (erfc form; asymptotic series below −30)."""
    z = np.asarray(z, dtype=float)
    out = np.empty(z.size)
    far = z <= -30.0
    if (~far).any():
        out[~far] = np.log(0.5 * np.asarray(_ERFC(-z[~far] / math.sqrt(2.0)), dtype=float))
    if far.any():
        zf = z[far]
        r = 1.0 / (zf * zf)
        out[far] = -0.5 * zf * zf - np.log(-zf) - 0.5 * math.log(2 * math.pi) + np.log1p(-r + 3 * r * r - 15 * r**3)
    return out


def _gauss_log_delta(u: np.ndarray, mu: float) -> np.ndarray:
    """log δ_G(u) of the Gaussian mechanism with ``μ = √(2ρ)`` (−inf where it underflows)."""
    la = _log_ncdf(mu / 2 - u / mu)
    lb = u + _log_ncdf(-mu / 2 - u / mu)
    r = lb - la
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(r < 0, la + np.log(-np.expm1(np.minimum(r, -1e-300))), -np.inf)


class _Model:
    """log G of the Gaussian model plus a constant discrepancy, for arrays of (α, ε)."""

    def __init__(self, mu: float, a: np.ndarray, one_minus: np.ndarray):
        self.mu, self.a, self.om = mu, a, one_minus
        self.log_a = np.log(a)
        self.d0 = np.zeros(a.size)  # the discrepancy d(u) ≈ d0 + d1·(u − u0)
        self.d1 = np.zeros(a.size)
        self.u0 = np.zeros(a.size)
        self.noise = np.full(a.size, np.inf)

    def fit(self, rows: np.ndarray, u: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> None:
        """Take the oracle's log δ bracket ``[lo, hi]`` at ``u = |ε|`` for each row: the
        discrepancy there becomes d0; the slope d1 is the secant through the previous
        point where the model's own change across them is well above both brackets' noise."""
        mid = np.where(np.isfinite(lo), 0.5 * (lo + hi), hi)
        g = _gauss_log_delta(u, self.mu)
        with np.errstate(invalid="ignore"):
            d = mid - g
            noise = np.where(np.isfinite(lo), hi - lo, np.inf)
            g_prev = _gauss_log_delta(self.u0[rows], self.mu)
            resolved = (np.abs(g - g_prev) > 100 * (noise + self.noise[rows])) & (u != self.u0[rows])
            slope = (d - self.d0[rows]) / np.where(u != self.u0[rows], u - self.u0[rows], 1.0)
        ok = np.isfinite(d)
        self.d1[rows] = np.where(ok & resolved & np.isfinite(slope), slope, self.d1[rows])
        self.d0[rows] = np.where(ok, d, self.d0[rows])
        self.u0[rows] = np.where(ok, u, self.u0[rows])
        self.noise[rows] = np.where(ok, noise, self.noise[rows])

    def log_g(self, eps: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """log G_M at ``eps[i, :]`` for α number ``rows[i]`` (2-d arrays; −inf where G ≤ 0)."""
        shape = eps.shape
        e = eps.ravel()
        r = np.repeat(rows, shape[1])
        u = np.abs(e)
        lg = _gauss_log_delta(u, self.mu) + self.d0[r] + self.d1[r] * (u - self.u0[r])
        dl = np.exp(np.minimum(lg, 0.0))
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            t = e + self.log_a[r]
            pos = np.where(t < 0, 1.0 - dl - np.exp(np.minimum(t, 0.0)), -1.0)
            neg = self.om[r] - dl
            g = np.where(e >= 0, pos, neg)
            out = np.where(g > 0, np.log(np.where(g > 0, g, 1.0)) + np.where(e >= 0, 0.0, e), -np.inf)
        return out.reshape(shape)

    def argmax(self, lo: np.ndarray, hi: np.ndarray, rows: np.ndarray, width: float) -> tuple:
        """``(c, h)`` per row: the model's maximiser on ``[lo, hi]`` (a 33-point grid, then
        golden section between the best point's neighbours) and the stencil spacing
        ``h = √(W/|(log G)''|)`` in ε (at the maximum ``(log G)'' = G''/G``)."""
        grid = lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, 33)[None, :]
        v = self.log_g(grid, rows)
        k = np.argmax(v, axis=1)
        n = np.arange(rows.size)
        a = grid[n, np.maximum(k - 1, 0)]
        b = grid[n, np.minimum(k + 1, 32)]
        g = (math.sqrt(5) - 1) / 2
        x1, x2 = b - g * (b - a), a + g * (b - a)
        f1 = self.log_g(x1[:, None], rows)[:, 0]
        f2 = self.log_g(x2[:, None], rows)[:, 0]
        for _ in range(52):  # 0.618^52 of two grid steps: below 1e-9 of the range
            left = f1 >= f2  # the maximum is in [a, x2]: b := x2, x2 := x1, a new x1
            b = np.where(left, x2, b)
            a = np.where(left, a, x1)
            nx1 = np.where(left, b - g * (b - a), x2)
            nx2 = np.where(left, x1, a + g * (b - a))
            fn = self.log_g(np.where(left, nx1, nx2)[:, None], rows)[:, 0]
            f1, f2 = np.where(left, fn, f2), np.where(left, f1, fn)
            x1, x2 = nx1, nx2
        c = 0.5 * (a + b)
        s = 1e-4 * np.maximum(1.0, np.abs(c))
        three = self.log_g(np.stack([c - s, c, c + s], axis=1), rows)
        with np.errstate(invalid="ignore"):
            curv = np.abs(three[:, 0] - 2 * three[:, 1] + three[:, 2]) / s**2
            h = np.where((curv > 0) & np.isfinite(curv), np.sqrt(width / np.where(curv > 0, curv, 1.0)), s)
        return c, np.maximum(h, 1e-12 * np.maximum(1.0, np.abs(c)))


# ---------------------------------------------------------------- exact points and brackets
def _evaluate(acc, xs: np.ndarray) -> tuple:
    """The oracle at exact points x: ``(rows, lo, hi, u)`` with ``rows[k] = (x, C_lo, C_hi)``
    exact rationals bracketing ``C = 1 − δ(|ε|)`` at ``ε = log x`` (δ's bracket over an
    outward enclosure of ε, intersected with the complement's own where δ is above 1/2,
    each rounded outward), and the oracle's ``[lo, hi]`` of log δ at ``u ≈ |ε|`` (for
    the proposals)."""
    e = np.log(xs)
    pad = 4 * EPS64 * np.abs(e)
    e_dn = np.nextafter(e - pad, -np.inf)
    e_up = np.nextafter(e + pad, np.inf)
    pos = xs >= 1.0
    m_dn = np.where(pos, np.maximum(e_dn, 0.0), np.maximum(-e_up, 0.0))
    m_up = np.where(pos, np.maximum(e_up, 0.0), np.maximum(-e_dn, 0.0))
    lo, hi = acc.log_delta_at(m_dn, m_up)
    c_lo = np.full(xs.size, -np.inf)
    c_hi = np.zeros(xs.size)
    near_one = np.flatnonzero(hi > -math.log(2))
    if near_one.size:
        c_lo[near_one], c_hi[near_one] = acc.log_complement_at(m_dn[near_one], m_up[near_one])
    out_dn, out_up = 1 - 32 * EPS64, 1 + 32 * EPS64  # more than exp's rounding, outward
    with np.errstate(over="ignore", invalid="ignore"):
        d_lo = np.where(np.isfinite(lo), np.exp(lo) * out_dn, 0.0)
        d_hi = np.minimum(np.exp(np.minimum(hi, 0.0)) * out_up, 1.0)
        cc_lo = np.where(np.isfinite(c_lo), np.exp(c_lo) * out_dn, 0.0)
        cc_hi = np.minimum(np.exp(np.minimum(c_hi, 0.0)) * out_up, 1.0)
    one = gmpy2.mpq(1)
    rows = []
    for x, dl, dh, cl, ch in zip(xs.tolist(), d_lo.tolist(), d_hi.tolist(), cc_lo.tolist(), cc_hi.tolist()):
        rows.append((gmpy2.mpq(x), max(one - gmpy2.mpq(dh), gmpy2.mpq(cl)), min(one - gmpy2.mpq(dl), gmpy2.mpq(ch))))
    return rows, lo, hi, 0.5 * (m_dn + m_up)


def _g(row, a) -> tuple:
    """``(x, G_lo, G_hi)`` at α = a (mpq): ``C − x·α`` for x ≥ 1 (ε ≥ 0), ``x·(C − α)``
    below (``δ(ε) = 1 − e^ε + e^ε δ(−ε)``, a symmetric design)."""
    x, c_lo, c_hi = row
    if x >= 1:
        return x, c_lo - x * a, c_hi - x * a
    return x, x * (c_lo - a), x * (c_hi - a)


def _refit(st: list, stencil: list, upper, lower, width: float) -> None:
    """A stencil that did not certify: ``st = [c_x, h_x]`` re-centred by the least-squares
    parabola through its midpoints (or moved to its best end) and re-spaced from the gap."""
    mids = [(p[1] + p[2]) / 2 for p in stencil]
    best = max(range(len(mids)), key=mids.__getitem__)
    if upper is None:  # no certified decrease at an end, or slopes below the noise
        if best in (0, len(mids) - 1):
            st[0] = float(stencil[best][0])
        else:
            st[1] *= 4
        return
    y = [float(v - mids[2]) for v in mids]
    b = sum(k * v for k, v in zip(STENCIL, y)) / 10
    c2 = (sum(k * k * v for k, v in zip(STENCIL, y)) - 2 * sum(y)) / 14
    shift = -b / (2 * c2) if c2 < 0 else math.copysign(4.0, b)
    st[0] += min(max(shift, -16.0), 16.0) * st[1]
    if abs(shift) <= 2:  # the maximiser is inside: narrow from the measured gap
        gap = float((upper - lower) / (width * lower)) if lower > 0 else 4.0
        st[1] *= min(max(math.sqrt(0.25 / max(gap, 1e-300)), 0.125), 1.0)


def batch_brackets(acc, alphas: list, ranges: np.ndarray, width: float, hints: dict | None = None) -> list:
    """Certified ``(lower, upper)`` of f(α) (exact rationals) for each α in (0, 1), or None
    where :data:`ROUNDS` stencil rounds did not reach ``upper − lower ≤ width·lower``.

    Parameters
    ----------
    acc : LatticeFreeAccountant
        The oracle (``log_delta_at``, ``log_complement_at``, ``rho``).
    alphas : list of Fraction
        Each strictly between 0 and 1.
    ranges : ndarray, shape (n, 2)
        An ε interval containing each α's maximiser (for the proposals only).
    width : float
        Relative width aimed at.
    hints : dict, optional
        Filled with ``i: (ε, h)`` for each α left open after its stencil rounds: the centre
        and spacing (in ε) of its last stencil, where a per-α search may start (a proposal
        only: nothing certified depends on it).

    Returns
    -------
    list of (mpq, mpq) or None

    Notes
    -----
    Method: module docstring.  Error bound: ``lower`` is G's certified lower end at an
    evaluated point, ``upper`` the chord envelope of all of the α's points, both exact
    rationals from outward-rounded oracle brackets.  Reference: Dong, Roth & Su (2022),
    Prop. 2.12.
    """
    n = len(alphas)
    a_q = [gmpy2.mpq(a.numerator, a.denominator) for a in alphas]
    model = _Model(math.sqrt(2 * float(acc.rho)), np.array([float(a) for a in alphas]),
                   np.array([float(1 - a) for a in alphas]))
    everyone = np.arange(n)
    c, _ = model.argmax(ranges[:, 0], ranges[:, 1], everyone, width)
    with oracle_width(acc, _oracle_width(model, c, width)):
        return _brackets(acc, a_q, model, c, ranges, width, hints)


def _oracle_width(model: _Model, c: np.ndarray, width: float) -> float:
    """The oracle's relative width for the batch: ``NOISE_SHARE·W/(2A)``, between
    ``ORACLE_SHARE·W`` and ``NOISE_SHARE·W``, with ``A = max e^{min(ε,0)}·δ(|ε|)/G(ε)`` the
    model's amplification of δ's relative noise into G's at the proposals ``c`` (2× for the
    model's discrepancy, unknown before the first oracle call).  A choice of work only: the
    brackets are certified at any width, and an α they leave open goes to the per-α search
    at ``ORACLE_SHARE·W``."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        ld = _gauss_log_delta(np.abs(c), model.mu)
        lg = model.log_g(c[:, None], np.arange(c.size))[:, 0]
        log_amp = ld + np.minimum(c, 0.0) - lg
    amp = float(np.exp(np.max(log_amp))) if c.size and np.all(np.isfinite(lg)) else math.inf
    if not amp > 0:  # δ underflows everywhere: any width
        amp = 0.0
    w = NOISE_SHARE * width / (2 * amp) if amp > 0 else NOISE_SHARE * width
    return min(max(w, ORACLE_SHARE * width), NOISE_SHARE * width)


def _brackets(acc, a_q: list, model: _Model, c: np.ndarray, ranges: np.ndarray, width: float,
              hints: dict | None) -> list:
    """:func:`batch_brackets` from the model's first proposals ``c``."""
    n = len(a_q)
    everyone = np.arange(n)
    pts: list = [[] for _ in range(n)]
    result: list = [None] * n
    # model rounds: each proposal alone, for the discrepancy of the model there; an α whose
    # refitted proposal moved by more than a quarter of its stencil spacing gets another
    # β within 1e-6 of 1 varies below the chords' resolution at any useful spacing: left to
    # the per-α search (its zooming stencil)
    with np.errstate(over="ignore", invalid="ignore"):
        near_one = -np.expm1(model.log_g(c[:, None], everyone)[:, 0]) < 1e-6
    idx = np.flatnonzero((np.abs(c) <= MAX_ABS_EPS) & ~near_one)
    c, h = c[idx], np.zeros(idx.size)
    ask = np.arange(idx.size)
    last: dict = {}  # α -> (ε, G point) of its last model point
    for _ in range(MODEL_ROUNDS):
        if ask.size == 0:
            break
        x0 = np.exp(c[ask])
        rows, lo, hi, u = _evaluate(acc, x0)
        for k, i in enumerate(idx[ask].tolist()):
            pts[i].append(_g(rows[k], a_q[i]))
            last[i] = (math.log(x0[k]), pts[i][-1])
        model.fit(idx[ask], u, lo, hi)
        c_new, h[ask] = model.argmax(ranges[idx[ask], 0], ranges[idx[ask], 1], idx[ask], width)
        moved = np.abs(c_new - c[ask]) > 0.25 * h[ask]
        c[ask] = c_new
        ask = ask[moved & (np.abs(c_new) <= MAX_ABS_EPS)]
    keep = np.abs(c) <= MAX_ABS_EPS
    idx, c, h = idx[keep], c[keep], h[keep]
    # the stencil is centred on the last model point where the proposal stayed within h/4 of it
    # (that point is reused), else on the proposal
    state = {}
    for i, ce, he in zip(idx.tolist(), c.tolist(), h.tolist()):
        e0, p0 = last[i]
        state[i] = [math.exp(e0), math.exp(e0) * he, p0] if abs(ce - e0) <= 0.25 * he else \
            [math.exp(ce), math.exp(ce) * he, None]
    best_upper: dict = {}
    best_lower: dict = {}
    lower_floor = gmpy2.mpq(0)
    for _ in range(ROUNDS):
        asks = {i: [st[0] + k * st[1] for k in STENCIL if k or st[2] is None] for i, st in state.items()}
        state = {i: st for i, st in state.items() if asks[i][0] > 0}
        if not state:
            break
        xs = np.array([x for i in state for x in asks[i]])
        rows = _evaluate(acc, xs)[0]
        nxt = {}
        at = 0
        for i, st in state.items():
            new = [_g(r, a_q[i]) for r in rows[at:at + len(asks[i])]]
            at += len(asks[i])
            pts[i].extend(new)
            if st[2] is not None:  # the reused centre
                new.insert(len(new) // 2, st[2])
                st[2] = None
            lower = max(max(p[1] for p in pts[i]), best_lower.get(i, lower_floor))
            best_lower[i] = lower
            # every envelope is a valid bound: of this stencil alone, of all the α's points (far
            # ones may loosen it, near ones tighten it), and the best of earlier rounds
            bounds = [b for b in (chord_envelope(new)[0], best_upper.get(i, mpmath.inf)) if b != mpmath.inf]
            upper = min(bounds) if bounds else None
            if upper is None or not upper - lower <= width * lower:
                b = chord_envelope(sorted(pts[i], key=lambda p: p[0]))[0]
                if b != mpmath.inf:
                    upper = b if upper is None else min(upper, b)
            if upper is not None:
                best_upper[i] = upper
            if upper is not None and lower > 0 and upper - lower <= width * lower:
                result[i] = (lower, upper)
                continue
            _refit(st, new, upper, lower, width)
            nxt[i] = st
        state = nxt
    if hints is not None:
        for i, st in state.items():
            if st[0] > 0 and math.isfinite(st[0]) and st[1] > 0:
                hints[i] = (math.log(st[0]), st[1] / st[0])
    return result


def _mpf(q, rounding: str) -> mpmath.mpf:
    """An exact rational as an mpf of _PREC bits, rounded ``"n"``, ``"f"`` (down) or ``"c"`` (up)."""
    return mpmath.mpf(from_rational(int(q.numerator), int(q.denominator), _PREC, rounding), prec=_PREC,
                      rounding=rounding)


def _mpq(x: mpmath.mpf):
    """An mpf as the exact rational it holds."""
    sign, man, exp, _ = x._mpf_
    v = gmpy2.mpq(int(man)) * (gmpy2.mpq(2) ** exp)
    return -v if sign else v


def point(alpha, lower, upper) -> BracketedTradeoff:
    """The reported point of an exact bracket ``[lower, upper]`` of f(α) (mpq), clamped to
    ``[0, 1 − α]`` exactly: the estimate is the midpoint rounded to nearest, the error bound
    the larger distance from it to an end, rounded up (so ``estimate ± error_bound`` holds
    the bracket exactly)."""
    a = gmpy2.mpq(alpha.numerator, alpha.denominator)
    lo = max(lower, gmpy2.mpq(0))
    up = min(upper, 1 - a)
    est = _mpf((lo + up) / 2, "n")
    e = _mpq(est)
    err = _mpf(max(up - e, e - lo), "c")
    return BracketedTradeoff(to_mpf(alpha), est, err, 0, "bracket")
