"""One neighbour pair of a sweep: a pure function of the pair's mechanisms and settings.

For pair ``(i, j)`` and every target δ the sweep reports

* the Bureau's ε: ``ε_BS(δ) = ρ + 2 sqrt(ρ ln(1/δ))`` (Bun & Steinke 2016, the DAS
  conversion), evaluated exactly (a certified real, not a float);
* the exact δ of the pair at that ε, with its certified error bound;
* the exact ε of the pair at that δ, as a certified bracket ``[lower, upper]``;

and the pair's f-DP trade-off curve at a fixed, symmetric set of lattice thresholds.

Everything returned is text formatted from certified numbers, so the files written
from it depend on nothing but the pair and the settings (no timings, no host data).
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

import mpmath
from mpmath.libmp import from_float, fzero, mpf_abs, mpf_add, mpf_div, mpf_mul, mpf_pos, mpf_sub, to_float

from exactdp.numerics.exact import InputError, fraction_str, to_fraction
from exactdp.numerics.precision import DPS_LOW, DPS_RESULT, DPS_TEXT_GUARD, to_mpf
from exactdp.runs.ddtext import all_floats, tradeoff_texts
from exactdp.runs.numtext import (
    RND,
    bound_text_float,
    bound_text_raw,
    bound_texts_float,
    fmt_mpf_raw,
    fmt_mpfr,
    fmt_raw,
    mpfr_context,
    mpfr_to_raw,
    prec_of,
    raw_to_mpfr,
    vertex_values,
)
from exactdp.sweep.compose import composition_from_rhos
from exactdp.sweep.float_offsets import offsets_by_float

__all__ = [
    "DEFAULT_DELTAS",
    "SweepSettings",
    "PairResult",
    "compute_pair",
    "canonical_delta",
    "tradeoff_thresholds",
    "PAIR_COLUMNS",
    "TRADEOFF_COLUMNS",
    "GRID_COLUMNS",
    "grid_alphas",
    "fmt",
    "fmt_bound",
]

#: The 42 target δ of the seed paper's ε–δ curves (``delta_zcdp`` column of
#: ``eps_delta_curve_path_13_to_13.csv``), exact decimal strings, largest first.
DEFAULT_DELTAS = (
    "5e-1", "1e-1", "5e-2", "1e-2", "5e-3", "1e-3", "5e-4", "1e-4", "5e-5", "1e-5",
    "5e-6", "1e-6", "5e-7", "1e-7", "5e-8", "1e-8", "5e-9", "1e-9", "5e-10", "1e-10",
    "5e-11", "1e-11", "5e-12", "1e-12", "5e-13", "1e-13", "5e-14", "1e-14", "5e-15", "1e-15",
    "5e-16", "1e-16", "5e-17", "1e-17", "5e-18", "1e-18", "5e-19", "1e-19", "5e-20", "1e-20",
    "5e-21", "1e-21",
)

PAIR_COLUMNS = (
    "path_i", "path_j", "delta_target", "eps_bureau",
    "delta_exact", "delta_error_bound", "delta_upper", "delta_first_term", "delta_second_term",
    "eps_exact", "eps_lower", "eps_upper",
)
TRADEOFF_COLUMNS = ("threshold", "alpha", "alpha_rel_error", "beta", "beta_rel_error")
GRID_COLUMNS = ("alpha", "beta", "beta_error_bound")

DIGITS = 20  # significant digits of every reported value


def canonical_delta(value) -> str:
    """Canonical text of an exact δ target: ``m e E`` when δ = m·10^E, else ``p/q``."""
    frac = to_fraction(value, "delta")
    if not 0 < frac < 1:
        raise InputError("delta", value, "must lie in (0, 1)")
    num, den = frac.numerator, frac.denominator
    e = 0
    while den % 10 == 0:
        den //= 10
        e -= 1
    while den != 1 and 10 % den == 0:  # den ∈ {2, 5}: make the mantissa an integer
        num *= 10 // den
        den = 1
        e -= 1
    if den != 1:
        return fraction_str(frac)
    while num % 10 == 0:
        num //= 10
        e += 1
    return f"{num}e{e}"


@dataclass(frozen=True)
class SweepSettings:
    """What every pair computes (part of the sweep's identity: resume checks it).

    Parameters
    ----------
    deltas : tuple of str
        Target δ as canonical exact strings, largest first (default: the seed's 42).
    tradeoff_half : int
        Trade-off thresholds per side of the symmetric set (≈ 2·half + 1 vertices).
    alpha_min : str
        Smallest type-I error the trade-off thresholds reach on each side (≈).
    rel_tol : float
        Certified relative accuracy of every tail (numerical tolerance, not a privacy
        parameter).
    envelope_points : int
        Size of the common α grid on which every pair's curve is evaluated (for the
        overall envelope).
    lam_step_sd : float
        Spacing of the contour tilts λ in units of 1/sd(S) (applied to the tail engine
        when it exposes ``lam_step``).  Tails whose thresholds fall on the same tilt share
        one evaluation of the integrand at the kept nodes, which dominates the cost of
        coarse pairs; a tilt at most ``lam_step_sd/2`` standard deviations from the saddle
        point enlarges the integrand by at most ``exp(lam_step_sd²/8)`` (1.13 at 1), and
        every tail's certified bound is computed for the tilt actually used.

    Notes
    -----
    Method: settings only.  The defaults reproduce the seed paper's grid of δ.
    """

    deltas: tuple = DEFAULT_DELTAS
    tradeoff_half: int = 400
    alpha_min: str = "1e-20"
    rel_tol: float = 1e-10
    lam_step_sd: float = 1.0
    envelope_points: int = 401

    def __post_init__(self):
        ds = sorted({canonical_delta(d) for d in self.deltas}, key=lambda s: to_fraction(s), reverse=True)
        if not ds:
            raise InputError("deltas", self.deltas, "at least one target δ is needed")
        object.__setattr__(self, "deltas", tuple(ds))
        canonical_delta(self.alpha_min)  # validates 0 < alpha_min < 1
        if not isinstance(self.tradeoff_half, int) or self.tradeoff_half < 2:
            raise InputError("tradeoff_half", self.tradeoff_half, "must be an integer >= 2")
        if not 0 < float(self.rel_tol) < 1e-3:
            raise InputError("rel_tol", self.rel_tol, "must lie in (0, 1e-3)")
        if not isinstance(self.envelope_points, int) or self.envelope_points < 3:
            raise InputError("envelope_points", self.envelope_points, "must be an integer >= 3")
        if not 0 < float(self.lam_step_sd) <= 2:
            raise InputError("lam_step_sd", self.lam_step_sd, "must lie in (0, 2]")

    def as_dict(self) -> dict:
        return {"deltas": list(self.deltas), "tradeoff_half": self.tradeoff_half,
                "alpha_min": self.alpha_min, "rel_tol": repr(float(self.rel_tol)),
                "lam_step_sd": repr(float(self.lam_step_sd)), "envelope_points": self.envelope_points}

    @classmethod
    def from_dict(cls, d: dict) -> SweepSettings:
        return cls(tuple(d["deltas"]), int(d["tradeoff_half"]), str(d["alpha_min"]), float(d["rel_tol"]),
                   float(d["lam_step_sd"]), int(d["envelope_points"]))


@dataclass(frozen=True)
class PairResult:
    """The text of one pair's files, deterministic diagnostics, and timings (manifest only)."""

    i: int
    j: int
    curve_csv: str
    tradeoff_csv: str
    grid_csv: str
    diagnostics: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)


def fmt(x, digits: int = DIGITS) -> str:
    """Decimal text of an mpf/float with ``digits`` significant digits (deterministic).

    ``nstr(mpf(x), digits, min_fixed=-4, max_fixed=6, strip_zeros=False)`` under
    ``workdps(digits + DPS_TEXT_GUARD)`` ("0" for zero), computed on the raw value for an mpf or a
    float (:mod:`exactdp.runs.numtext`; the same rounding steps).
    """
    if type(x) is mpmath.mpf:
        return fmt_mpf_raw(x._mpf_, digits)
    if type(x) is float:
        return fmt_raw(mpf_pos(from_float(x), prec_of(digits + DPS_TEXT_GUARD), RND), digits)
    with mpmath.workdps(digits + DPS_TEXT_GUARD):
        x = mpmath.mpf(x)
        if x == 0:
            return "0"
        return mpmath.nstr(x, digits, min_fixed=-4, max_fixed=6, strip_zeros=False)


def fmt_bound(x) -> str:
    """A non-negative error bound as 3-digit text, rounded *up* (stays a valid bound)."""
    if isinstance(x, (int, float)):
        return bound_text_float(float(x))
    if type(x) is mpmath.mpf:
        t = bound_text_raw(x._mpf_)
        if t is not None:
            return t
    with mpmath.workdps(DPS_LOW):
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


def tradeoff_thresholds(lattice, half: int, alpha_min) -> list[int]:
    """A symmetric set of thresholds k (under ``k ↦ K + 1 − k``), ascending.

    Offsets ``u_m = round(m·U/half)``, m = 0..half, from the centre ``(K+1)/2``, with
    ``U = z·sd + K/2`` where ``z = Φ̄⁻¹(alpha_min)`` and ``sd² = Σ m_g A_g² σ_g²``: the
    vertices then span α from about ``alpha_min`` to about ``1 − alpha_min`` uniformly
    on the probit scale, and the set (so the sampled curve) is symmetric about the
    diagonal, as the exact curve of a symmetric design is.

    Every step is mpmath's at ``DPS_LOW`` (the former code: ``nint(U * m / half)``);
    ``z`` depends on ``alpha_min`` only and is computed once, the offsets by
    :func:`threshold_offsets`.
    """
    K = int(lattice.shift)
    # Σ m a² σ² over one common denominator (the Fraction the term-by-term sum gives)
    s2 = [Fraction(s) for s in lattice.sigma2]
    den = math.lcm(*(s.denominator for s in s2))
    v = Fraction(sum(int(m) * int(a) ** 2 * s.numerator * (den // s.denominator)
                     for a, m, s in zip(lattice.weights, lattice.counts, s2)), den)
    with mpmath.workdps(DPS_LOW):
        sd = mpmath.sqrt(to_mpf(v))
        U = _probit_z_of(alpha_min) * sd + mpmath.mpf(K) / 2
    offs = threshold_offsets(U, half)
    if K % 2:
        c = (K + 1) // 2
        ks = {c - u for u in offs} | {c + u for u in offs}
    else:
        ks = {K // 2 - u for u in offs} | {K // 2 + 1 + u for u in offs}
    return sorted(ks)


@functools.lru_cache(maxsize=8)
def _probit_z_of(alpha_min):
    """:func:`_probit_z` of ``to_fraction(alpha_min)`` (memoised on the setting itself)."""
    return _probit_z(to_fraction(alpha_min, "alpha_min"))


@functools.lru_cache(maxsize=8)
def _probit_z(a: Fraction):
    """``z = −sqrt(2)·erfinv(2a − 1)`` under ``workdps(DPS_LOW)`` (an mpf, memoised)."""
    with mpmath.workdps(DPS_LOW):
        return -mpmath.sqrt(2) * mpmath.erfinv(2 * (to_mpf(a)) - 1)


_P_LOW = prec_of(DPS_LOW)
_C_LOW = mpfr_context(_P_LOW)


def threshold_offsets(U, half: int) -> list[int]:
    """``sorted({int(nint(U * m / half)) for m in range(half + 1)})`` under
    ``workdps(DPS_LOW)``, for an mpf ``U`` (rounded to that precision first, as mpmath's
    operators do) — the same integers, computed with MPFR.

    mpmath's ``U * m`` (``mpf_mul`` by the exact ``from_int(m)``) and ``/ half``
    (``mpf_div``) are correctly rounded to nearest-even at the context precision, as
    MPFR's ``mul``/``div`` by an integer are: the same numbers.  ``nint`` is
    ``mpf_round_int(·, round_nearest)``: the nearest integer, ties to even (0 for
    ``|x| ≤ 1/2``), which is MPFR's ``rint`` under round-to-nearest.
    """
    ctx = _C_LOW
    u = raw_to_mpfr(mpf_pos(U._mpf_, _P_LOW, RND), ctx)
    mul, div, rint = ctx.mul, ctx.div, ctx.rint
    return offsets_by_float(float(u), half, lambda m: int(rint(div(mul(u, m), half))))


def grid_alphas(settings: SweepSettings) -> tuple:
    """The common α grid: (texts, mpf values), the values exactly the 25-digit texts."""
    return _grid_alphas(settings.alpha_min, settings.envelope_points)


@functools.lru_cache(maxsize=4)
def _grid_alphas(alpha_min: str, n: int) -> tuple:
    from exactdp.sweep.envelope import alpha_grid

    with mpmath.workdps(DPS_RESULT):
        texts = tuple(fmt(a, 25) for a in alpha_grid(mpmath.mpf(alpha_min), n))
        return texts, tuple(mpmath.mpf(t) for t in texts)


def _csv(rows) -> str:
    return "".join(",".join(str(v) for v in r) + "\n" for r in rows)


_C_RESULT = mpfr_context(prec_of(DPS_RESULT))


@functools.lru_cache(maxsize=4)
def _grid_mpfr(alpha_min: str, n: int) -> tuple:
    return tuple(raw_to_mpfr(a._mpf_, _C_RESULT) for a in _grid_alphas(alpha_min, n)[1])


def grid_rows(pts, settings, keys=None) -> list:
    """The pair's sampled curve on the common α grid (interpolated between vertices).

    ``pts``: ``(α, β, abs err α, abs err β)`` as mpfr at ``DPS_RESULT``; ``keys``: exact
    sort keys ``(key α, key β)`` of the texts (see :func:`~exactdp.runs.numtext.vertex_value`), or ``None``.  The
    vertices are sorted by ``(α, −β)`` as the former code sorted its mpf tuples.  Returns
    the CSV lines (GRID_COLUMNS first), each ending in a newline.
    """
    from exactdp.sweep.envelope import interpolate_grid, mpfr_arithmetic

    n = len(pts)
    if keys is not None and all(ka is not None and kb is not None for ka, kb in keys):
        # the stable sort by (α, −β): by key β descending (ties in index order: ``reverse``
        # keeps sort stability), then by key α ascending; the comparisons in C
        order = sorted(range(n), key=[kb for _, kb in keys].__getitem__, reverse=True)
        order.sort(key=[ka for ka, _ in keys].__getitem__)
    else:
        neg = _C_RESULT.minus
        order = sorted(range(n), key=lambda m: (pts[m][0], neg(pts[m][1])))
    curve = tuple([pts[m][c] for m in order] for c in range(4))
    texts = grid_alphas(settings)[0]
    betas_errs = list(interpolate_grid(curve, _grid_mpfr(settings.alpha_min, settings.envelope_points),
                                       mpfr_arithmetic(_C_RESULT)))
    # the bound of err: fmt_bound of the next float up from float(err) (≥ err: float()
    # rounds to nearest), or of err itself at or below 1e-300
    big = [err > 1e-300 for _, err in betas_errs]
    nextafter, inf = math.nextafter, math.inf
    ebs = iter(bound_texts_float([nextafter(float(err), inf) for (_, err), g in zip(betas_errs, big) if g]))
    fmt20 = _fmt_mpfr_20
    lines = [_GRID_HEAD]
    lines += [f"{t},{fmt20(b)},{next(ebs) if g else _bound_text_mpfr(err)}\n"
              for t, (b, err), g in zip(texts, betas_errs, big)]
    return lines


def _bound_text_mpfr(err) -> str:
    return fmt_bound(mpmath.mp.make_mpf(mpfr_to_raw(err)))


_GRID_HEAD = ",".join(GRID_COLUMNS) + "\n"
_TRADEOFF_HEAD = ",".join(TRADEOFF_COLUMNS) + "\n"


def _fmt_mpfr_20(x) -> str:
    return fmt_mpfr(x, DIGITS)


def tradeoff_key_rows(ks, keys_u, ia, ib, settings) -> tuple:
    """The trade-off CSV text (TRADEOFF_COLUMNS), the grid CSV text and the worst vertex
    relative error, of vertices given as ``ExactAccountant.tradeoff_vertex_floats`` gives them:
    thresholds ``ks``, ``(log value, relative error)`` keys ``keys_u`` and each vertex's α and
    β position ``ia``, ``ib`` in them (the set is symmetric: a β tail is another vertex's α
    tail).  Each key's texts are a function of the key alone, so a key listed twice (two
    thresholds of equal values) prints as once.  The texts and the grid come from the
    double-double kernels (:func:`~exactdp.runs.ddtext.tradeoff_texts`: the same texts, decided
    by a rigorous bound) unless they leave a grid point undecided; then from MPFR
    (:func:`grid_rows`)."""
    rels = [rel for _, rel in keys_u]
    fast = tradeoff_texts(keys_u, ia, ib, grid_alphas(settings)[0], _GRID_HEAD)  # the double-double kernels
    if fast is None:
        vals = vertex_values(keys_u)
        texts = [v[0] for v in vals]
    else:
        texts, grid_lines = fast
    if all_floats(rels):
        btxt = bound_texts_float(rels)
    else:
        bound = {r: fmt_bound(r) for r in rels}
        btxt = [bound[r] for r in rels]
    cells = [f"{v},{t}" for v, t in zip(texts, btxt)]  # "text,bound" of each distinct key
    lines = [_TRADEOFF_HEAD]
    lines += [f"{k},{cells[a]},{cells[b]}\n" for k, a, b in zip(ks, ia, ib)]
    if fast is None:
        va, vb = [vals[m] for m in ia], [vals[m] for m in ib]
        pts = [(a[1], b[1], a[2], b[2]) for a, b in zip(va, vb)]
        keys = [(a[3], b[3]) for a, b in zip(va, vb)]
        grid_lines = grid_rows(pts, settings, keys)
    worst_t = 0.0
    for r in rels:  # every vertex's α and β errors (NaN never counts)
        r = float(r)
        if r > worst_t:
            worst_t = r
    return "".join(lines), "".join(grid_lines), worst_t


def _rel(width, value) -> float:
    """A width relative to |value|: 0 for a point, inf for a width around 0.

    ``not x`` is ``x == 0`` for the mpf, float and rational values met here (an mpf is
    false exactly when its raw value is mpmath's zero; NaN is true) and skips mpmath's
    conversion of the 0."""
    if not width:
        return 0.0
    return float(width / abs(value)) if value else math.inf


def _curve_rows(i: int, j: int, deltas, dpts, epts) -> tuple:
    """The ε–δ rows of a pair (PAIR_COLUMNS) and its worst relative δ bound and ε width.

    Rows whose values are all mpf are computed on their raw values with the functions
    mpmath's operators call under ``workdps(DPS_RESULT)`` (``mpf_add``, ``mpf_mul``,
    ``mpf_sub``, ``mpf_abs``, ``mpf_div``, ``to_float`` at that precision, round to
    nearest: the same numbers), other rows by those operators themselves.
    """
    worst_d = 0.0
    worst_e = 0.0
    rows: list[tuple] = [PAIR_COLUMNS]
    mpf, prec, f = mpmath.mpf, _P_RESULT, _fmt_raw_20
    up = _UP_RAW  # 1 + 10^-15 at DPS_RESULT: the same number in every row
    for d, dp, ep in zip(deltas, dpts, epts):
        vals = (dp.epsilon, dp.estimate, dp.error_bound, dp.first_term, dp.second_term, ep.estimate, ep.lower,
                ep.upper)
        if not all(type(v) is mpf for v in vals):
            rows.append(_curve_row_mpf(i, j, d, dp, ep))
            rel_d = _rel_mpf(dp.error_bound, dp.estimate)
            rel_e = _rel_mpf(ep.upper - ep.lower, ep.estimate)
        else:
            eps, est, eb, t1, t2, e_est, e_lo, e_hi = [v._mpf_ for v in vals]
            rel_d = _rel_raw(eb, est)
            rel_e = _rel_raw(mpf_sub(e_hi, e_lo, prec, RND), e_est)  # ε may be negative (δ(0) < target)
            upper = mpf_add(est, mpf_mul(eb, up, prec, RND), prec, RND)
            rows.append((i, j, d, f(eps), f(est), fmt_bound(dp.error_bound), f(upper), f(t1), f(t2),
                         f(e_est), f(e_lo), f(e_hi)))
        worst_d, worst_e = max(worst_d, rel_d), max(worst_e, rel_e)
    return rows, worst_d, worst_e


_P_RESULT = prec_of(DPS_RESULT)
with mpmath.workdps(DPS_RESULT):
    _UP_RAW = (1 + mpmath.mpf(10) ** -15)._mpf_


def _fmt_raw_20(s) -> str:
    return fmt_mpf_raw(s, DIGITS)


def _rel_raw(width, value) -> float:
    """:func:`_rel` of raw mpf values under ``workdps(DPS_RESULT)``."""
    if width == fzero:
        return 0.0
    if value == fzero:
        return math.inf
    return to_float(mpf_div(width, mpf_abs(value, _P_RESULT, RND), _P_RESULT, RND), rnd=RND)


def _rel_mpf(width, value) -> float:
    with mpmath.workdps(DPS_RESULT):
        return _rel(width, value)


def _curve_row_mpf(i: int, j: int, d, dp, ep) -> tuple:
    """One ε–δ row by mpmath's operators under ``workdps(DPS_RESULT)`` (the former code)."""
    with mpmath.workdps(DPS_RESULT):
        up = 1 + mpmath.mpf(10) ** -15
        return (i, j, d, fmt(dp.epsilon), fmt(dp.estimate), fmt_bound(dp.error_bound),
                fmt(dp.estimate + dp.error_bound * up),
                fmt(dp.first_term), fmt(dp.second_term),
                fmt(ep.estimate), fmt(ep.lower), fmt(ep.upper))


def compute_pair(i: int, j: int, rhos, settings: SweepSettings) -> PairResult:
    """Everything the sweep reports for neighbour pair ``(i, j)``.

    Parameters
    ----------
    i, j : int
        Path numbers (only written into the rows).
    rhos : sequence of Fraction
        ``Allocation.pair_rhos(i, j)``: one unit-shift discrete Gaussian per entry.
    settings : SweepSettings

    Returns
    -------
    PairResult
        CSV text of the ε–δ rows (one per target δ), of the trade-off vertices, and of
        the curve on the common α grid (``settings.envelope_points`` points).

    Notes
    -----
    Method: :class:`exactdp.accounting.accountant.ExactAccountant` (sieved tilted trapezoid rule /
    lattice convolution).  Error bound: every δ row carries ``delta_error_bound``
    (``|δ_exact − δ| ≤`` it, rounded up) and ``delta_upper``; ε is bracketed by
    ``[eps_lower, eps_upper]``; every vertex carries the certified relative error of α
    and of β.  Reference: Su, Su & Wang, exact privacy accounting for the 2020 U.S.
    Census (the quantities); Bun & Steinke (2016) for the Bureau's ε.
    """
    from exactdp.accounting.accountant import ExactAccountant

    t0 = time.perf_counter()
    comp = composition_from_rhos(tuple(rhos))
    acc = ExactAccountant(comp, rel_tol=settings.rel_tol)
    eng, lattice = acc.engine, acc.lattice
    if eng is None or lattice is None:  # off the int64 lattice route (P.L. 94-171, whole release)
        return _bracketed_pair(i, j, acc, settings, t0)
    if hasattr(eng, "lam_step") and getattr(eng, "var", 0) > 0:
        eng.lam_step = float(settings.lam_step_sd) / math.sqrt(eng.var)
    rho = acc.rho
    deltas = list(settings.deltas)
    dfrac = _delta_fractions(settings.deltas)  # the same exact values, parsed once per worker
    dpts = acc.delta(_bureau_epsilons(rho, settings.deltas))
    t1 = time.perf_counter()
    epts = acc.epsilon(dfrac)
    t2 = time.perf_counter()
    ks = tradeoff_thresholds(acc.lattice, settings.tradeoff_half, settings.alpha_min)
    ks, keys_u, ia, ib = acc.tradeoff_vertex_floats(ks)
    t3 = time.perf_counter()

    rows, worst_d, worst_e = _curve_rows(i, j, deltas, dpts, epts)
    tradeoff_csv, grid_csv, worst_t = tradeoff_key_rows(ks, keys_u, ia, ib, settings)
    diag = acc.diagnostics()
    return PairResult(
        i, j, _csv(rows), tradeoff_csv, grid_csv,
        {"method": diag.method, "nodes_kept": diag.nodes_kept, "nodes_total": diag.nodes_total,
         "n_groups": diag.n_groups, "lattice_scale": diag.lattice_scale, "shift": lattice.shift,
         "worst_delta_rel_error": worst_d, "worst_eps_rel_width": worst_e, "worst_tradeoff_rel_error": worst_t},
        {"delta": t1 - t0, "epsilon": t2 - t1, "tradeoff": t3 - t2},
    )


@functools.lru_cache(maxsize=8)
def _delta_fractions(deltas: tuple) -> tuple:
    """``to_fraction`` of each target δ text (the values ``bun_steinke_epsilon`` and
    ``epsilon`` parse from the texts themselves)."""
    return tuple(to_fraction(d, "delta") for d in deltas)


@functools.lru_cache(maxsize=8)
def _bureau_epsilons(rho: Fraction, deltas: tuple) -> tuple:
    """``bun_steinke_epsilon(rho, d)`` for each target δ text (keyed by the texts: a tuple of
    strings hashes in ~2 µs, one of 42 Fractions in ~80 µs), one callable per worker: its values are
    memoised per precision (a pure function of the digits asked), and every pair of an allocation
    has the same total ρ (the DHC persons pairs: one ρ), so each precision is computed once per
    worker.  (The accountant wraps each in a fresh :class:`~exactdp.numerics.exact.MemoReal` per
    call, whose own choice of cached precision depends on the call's history: not shared.)"""
    from exactdp.accounting.accountant import bun_steinke_epsilon

    return tuple(bun_steinke_epsilon(rho, d) for d in _delta_fractions(deltas))


def _bracketed_pair(i: int, j: int, acc, settings: SweepSettings, t0: float) -> PairResult:
    """:func:`compute_pair` for a design on the lattice-free route (same files and columns).

    The accountant is :class:`exactdp.accounting.lattice_free.LatticeFreeAccountant`: every
    δ and ε is a certified bracket (``delta_exact`` its midpoint, ``delta_error_bound`` its
    half-width).  The trade-off is computed by convex duality at the common α grid
    (``settings.envelope_points`` values, exact): each row of the trade-off file is one
    grid point (``threshold`` its index, α exact with relative error 0, β the bracket's
    midpoint with its relative half-width), and the grid file holds the certified lower
    end of each bracket with the bracket's width as its error bound.
    """
    from exactdp.accounting.accountant import bun_steinke_epsilon

    rho = acc.rho
    deltas = list(settings.deltas)
    dpts = acc.delta([bun_steinke_epsilon(rho, d) for d in deltas])
    t1 = time.perf_counter()
    epts = acc.epsilon(deltas)
    t2 = time.perf_counter()
    texts, _ = grid_alphas(settings)
    tpts = acc.tradeoff([Fraction(t) for t in texts])
    t3 = time.perf_counter()
    rows, worst_d, worst_e = _curve_rows(i, j, deltas, dpts, epts)
    trows: list[tuple] = [TRADEOFF_COLUMNS]
    grows: list[tuple] = [GRID_COLUMNS]
    worst_t = 0.0
    with mpmath.workdps(DPS_RESULT):
        for m, (text, p) in enumerate(zip(texts, tpts)):
            rel = float(p.error_bound / p.estimate) if p.estimate > 0 else 0.0
            worst_t = max(worst_t, rel)
            trows.append((m, text, "0", fmt(p.estimate), bound_text_float(rel * (1 + 1e-12) + 1e-300)))
            grows.append((text, fmt(p.lower), fmt_bound(2 * p.error_bound)))
    diag = acc.diagnostics()
    return PairResult(
        i, j, _csv(rows), _csv(trows), _csv(grows),
        {"method": diag.method, "certification": acc.certification, "nodes_kept": diag.nodes_kept,
         "nodes_total": diag.nodes_total, "n_groups": diag.n_groups, "lattice_scale": diag.lattice_scale,
         "shift": 0, "worst_delta_rel_error": worst_d, "worst_eps_rel_width": worst_e,
         "worst_tradeoff_rel_error": worst_t},
        {"delta": t1 - t0, "epsilon": t2 - t1, "tradeoff": t3 - t2},
    )
