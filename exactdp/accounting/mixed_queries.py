"""ε(δ) and β = f(α) of a :class:`~exactdp.kinds.Mixture`, on certified balls of δ.

Without a discrete-Gaussian part the loss is finite and both queries are exact in closed
form on the right piece:

* ε(δ): the grid atom ``v_j`` with ``δ(v_j) ≤ target < δ(v_{j−1})`` is found by bisection on
  certified balls; inside ``(v_{j−1}, v_j]`` ``δ(ε) = p_∞ + P[L ≥ v_j] − e^ε P[L ≤ −v_j]``, so
  ``ε = log((p_∞ + P[L ≥ v_j] − δ)/P[L ≤ −v_j])`` in ball arithmetic;
* β(α): the Neyman–Pearson test rejects the atoms in increasing order of the loss (first
  the Q-only atom of mass p_∞, free), so on the piece ``P[L < v_k] ≤ α ≤ P[L ≤ v_k]``,
  ``β = P[L ≤ −v_{k+1}] + (P[L ≤ v_k] − α)·e^{−v_k}`` (``Q[L = v] = P[L = −v]``).

With a Gaussian part: ε(δ) by a safeguarded (Illinois) secant search on log δ that moves an
end only on a certified decision (``δ_lo(a) > target ≥ δ_hi(b)``); β(α) by the convex dual
``f(α) = sup_x 1 − δ(log x) − xα`` (Dong, Roth & Su 2022, Prop. 2.12): a golden-section
search of the maximiser on estimates, then a stencil of exact points x whose certified
values give the lower end and whose chords (concavity) the upper end
(:func:`exactdp.accounting.chord_envelope.chord_envelope`).  With a continuous part (Gaussian
or Laplace) β may be far below float64's range and G a small difference of terms near 1: the
search runs on log G, G's balls are raised in precision to 2^−70 of β's scale
(:func:`_g`; ``1 − δ`` is summed as positive terms where the ball of δ leaves G wide,
:mod:`~exactdp.accounting.mixed_complement`: where δ ≈ 1 − 1e-12 it leaves G no digits), and the
chords are computed at a precision chosen from the points' scale with their rounding
bounded relative to it (:func:`_smooth_envelope`).  Beside randomized
responses by noise parameter the kinks ``v + Σ b log R`` are irrational: the stencils include
rational points within 1e-55 of the kinks nearest the estimate and beside them
(:func:`exactdp.accounting.rr_kinks.kink_stencils`), so that G at the best kink and the chords
of its two linear pieces bracket sup G — unless the loss is finite (no continuous part, no
oracle: discrete Gaussians as windows), where β is the Neyman–Pearson split on the joint atoms
``v + log Π R^b`` itself (:mod:`~exactdp.accounting.rr_neyman_pearson`; beside a discrete-Gaussian
oracle, on the windowed twin :func:`~exactdp.accounting.mixed_windows.rr_twin`; the dual only where
that refuses).  Without a continuous part or randomized responses by noise, β beside discrete
Gaussians is the Neyman–Pearson split over the finite part's and the discrete Gaussians' windowed
atoms as two factors (:mod:`~exactdp.accounting.mixed_np_split`), exact rational losses; where that
declines, beside a near-deterministic discrete-Gaussian oracle
(δ_G(0) > 1 − 10⁻², where ``1 − δ_G`` has few digits) β is asked of the design's windowed twin
(:mod:`~exactdp.accounting.mixed_windows`), and of the oracle's route only where the twin refuses.
"""

from __future__ import annotations

import math
from fractions import Fraction

import flint
import mpmath
from mpmath.libmp import from_rational

from exactdp.accounting.base import sequence_values
from exactdp.accounting.chord_envelope import chord_envelope
from exactdp.accounting.finite_tradeoff import BETA_WIDTH
from exactdp.accounting.finite_tradeoff import beta_finite as _beta_finite
from exactdp.accounting.finite_tradeoff import exact_ball as _q
from exactdp.accounting.mixed_balls import FLOOR, PRECS, to_mpf
from exactdp.accounting.mixed_complement import complement_ball, smooth_complement
from exactdp.accounting.mixed_extremes import beta_at_ends, check_float_range
from exactdp.accounting.mixed_np_split import beta_np_split
from exactdp.accounting.mixed_windows import rr_twin, windowed_twin
from exactdp.accounting.results import BracketedEpsilon, BracketedTradeoff, centred
from exactdp.accounting.rr_kinks import kink_stencils
from exactdp.accounting.rr_neyman_pearson import beta_rr_atoms
from exactdp.engine.finite_loss import prec_ctx
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import InputError, alpha_display, to_fraction
from exactdp.numerics.search import brent_max

__all__ = ["epsilon_points", "tradeoff_points", "EPS_WIDTH", "BETA_WIDTH", "MAX_BETA_WIDTH"]

#: relative widths aimed at for ε and β
EPS_WIDTH = 5e-11
_DPS = 60
#: the dual's refusal threshold for β (relative width; it was 1e-6, the bracketing routes' contract: the
#: fifth audit's mixed β answers 4.1e-8 and 1.27e-7 wide are now the Neyman–Pearson split's, ≤ 4e-16)
MAX_BETA_WIDTH = 1e-9
#: the golden section stops at this relative width (1e-5 left β of a continuous Gaussian beside
#: finite kinds 3.5e-9 wide: the stencils need the maximiser closer)
_GOLDEN_STOP = 1e-7


def _mpf(x: Fraction, up: bool | None = None) -> mpmath.mpf:
    """x at 200 bits, rounded up, down (``up``) or to nearest (None).

    ``make_mpf`` keeps the 200-bit value: ``mpmath.mpf(raw)`` would round it again to the
    context's precision, to nearest — an upper end 1/3 came out below 1/3 at 53 bits."""
    rnd = "n" if up is None else ("c" if up else "f")
    return mpmath.mp.make_mpf(from_rational(x.numerator, x.denominator, 200, rnd))


# ---------------------------------------------------------------------- ε(δ)
def epsilon_points(acc, deltas) -> tuple:
    """:class:`BracketedEpsilon` for each target (see the module docstring)."""
    targets = []
    for d in sequence_values(deltas, "delta"):
        t = to_fraction(d, "delta")
        if not 0 < t < 1:
            raise InputError("delta", d, "must lie in (0, 1)")
        exact = acc.finite.floor_exact()
        floor = acc.finite.tables(128)[3]
        below = t < exact if exact is not None else bool(floor.upper() > _q(t))
        if below or (exact is None and not floor.upper() <= _q(t)):
            if below or acc.finite.tables(1024)[3].lower() > _q(t):
                raise InputError("delta", d, f"below the design's floor 1 − Π(1 − δ_i)^n_i ≈ "
                                             f"{mpmath.nstr(to_mpf(floor, True), 8)} of its (ε, δ) blocks: "
                                             f"no finite ε reaches it")
            raise UncertifiedError(f"ε(δ={float(t):.6g}): the target cannot be told from the design's floor")
        targets.append(t)
    out = []
    for t in targets:
        lo, hi = _epsilon_finite(acc, t) if acc.gauss is None and not acc.smooth else _epsilon_search(acc, t)
        with mpmath.workdps(_DPS):
            est = (lo + hi) / 2
        out.append(BracketedEpsilon(_mpf(t), est, lo, hi, 0, "bracket"))
    return tuple(out)


def _decide(acc, e: Fraction, target: Fraction, kept: bool = False) -> int:
    """+1 when δ(e) > target is certified, −1 when δ(e) ≤ target, 0 when the balls cannot tell
    (``kept``: δ of the kept atoms, without the windows' deficit)."""
    tb = _q(target)
    if acc.gauss is not None and acc.zcdp_upper(e).upper() <= tb:  # (no oracle call on the deep tail)
        return -1
    for p in PRECS:
        b = acc.delta_ball(e, p, kept, once=True)
        if b.lower() > tb:
            return 1
        if b.upper() <= tb:
            return -1
        if (acc.gauss is not None or acc.smooth) and p >= 256:
            break
    return 0


def _epsilon_finite(acc, target: Fraction) -> tuple:
    """The bracket of ε(target): the kept atoms' ε at the target (lower end) and at the target
    less the windows' deficit D (upper end: there δ ≤ δ_kept + D ≤ target)."""
    d = acc.finite.deficit(128)
    if d.is_zero():
        return _epsilon_kept(acc, target)
    low = target - _fraction(to_mpf(d, True))
    if low <= 0 or (acc.finite.floor_exact() or 0) >= low:
        raise UncertifiedError(f"ε(δ={float(target):.6g}): the target is within the discrete Gaussians' window "
                               "deficit of the floor")
    return _epsilon_kept(acc, target)[0], _epsilon_kept(acc, low)[1]


def _fraction(x: mpmath.mpf) -> Fraction:
    return Fraction(*map(int, x.as_integer_ratio()))


def _epsilon_kept(acc, target: Fraction) -> tuple:
    fin = acc.finite
    if _decide(acc, Fraction(0), target, True) < 0:
        return mpmath.mpf(0), mpmath.mpf(0)
    lo_i, hi_i = fin.first_above(Fraction(0)), fin.size - 1  # δ(v_hi) = p_∞ ≤ target
    while lo_i < hi_i:  # the first atom v_j > 0 with δ(v_j) ≤ target
        mid = (lo_i + hi_i) // 2
        s = _decide(acc, fin.value(mid), target, True)
        if s == 0:
            raise UncertifiedError(f"ε(δ={float(target):.6g}): δ at a loss atom cannot be told from the target")
        lo_i, hi_i = (mid + 1, hi_i) if s > 0 else (lo_i, mid)
    j = lo_i
    left = max(Fraction(0), fin.value(j - 1)) if j > 0 else Fraction(0)
    right = fin.value(j)
    for p in PRECS:
        _, prefix, suffix, p_inf = fin.tables(p)
        with prec_ctx(p):
            num = p_inf + suffix[j] - _q(target)
            den = prefix[fin.size - j]
            if num.lower() > 0 and den.lower() > 0:
                eb = (num / den).log()
                lo = max(to_mpf(eb, False), _mpf(left, False))
                hi = min(to_mpf(eb, True), _mpf(right, True))
                if hi - lo <= EPS_WIDTH * max(abs(hi), mpmath.mpf(10) ** -300):
                    return lo, hi
    raise UncertifiedError(f"ε(δ={float(target):.6g}) could not be bracketed to {EPS_WIDTH:g} relative")


def _epsilon_search(acc, target: Fraction) -> tuple:
    check_float_range(acc, f"ε(δ = {alpha_display(target)})")  # (σ² or a scale below ~1e-50: refused)
    if _decide(acc, Fraction(0), target) < 0:
        return mpmath.mpf(0), mpmath.mpf(0)
    lt = math.log(float(target)) if target > Fraction(1, 10**300) else float(mpmath.log(_mpf(target)))
    a, fa = Fraction(0), _logmid(acc, Fraction(0)) - lt
    b = Fraction(max(1.0, 2 * float(acc.rho) + float(acc.finite.value(acc.finite.size - 1) + acc.extent)))
    undecided = None  # (the first ε where δ could not be told from the target)
    while True:
        s = _decide(acc, b, target)
        if s < 0:
            break
        if s > 0:
            a, fa = b, _logmid(acc, b) - lt
        elif undecided is None:
            undecided = b
        b *= 2
        if b > 10**50:
            if undecided is not None:  # (not "beyond": δ ≤ target was not certified there)
                raise UncertifiedError(f"ε(δ={float(target):.6g}): δ at ε ≥ {float(undecided):.6g} cannot be told "
                                       "from the target at the balls' precision (δ(ε) > target is certified up to "
                                       f"ε = {float(a):.6g})")
            raise UncertifiedError(f"ε(δ={float(target):.6g}) lies beyond 1e50")
    if acc.gauss is not None or (acc.mu and acc.laplace is None and acc.rr is None):
        # the least b (to 1/256 of [a, b]) that the zCDP bound alone certifies,
        lo_z, tb = a, _q(target)  # so that the oracle is not asked deep in its tail at b
        for _ in range(8):
            m = (lo_z + b) / 2
            if acc.zcdp_upper(m).upper() <= tb:
                b = m
            else:
                lo_z = m
        fin = acc.finite  # (b up to the finite loss's grid, still certified by the bound: see _snapped)
        g = fin.offset - math.floor((fin.offset - b) / fin.step) * fin.step if fin.step > 0 else b
        if g > b and acc.zcdp_upper(g).upper() <= tb:
            b = g
    fb = _logmid(acc, b) - lt
    a_cert, b_cert = a, b  # (certified: δ(a) > target ≥ δ(b) decided on balls; the secant's ends are estimates)
    x, side = a, 0
    for _ in range(60):  # estimates only: a safeguarded secant on log δ (regula falsi, Illinois)
        if not (fa - fb > 0 and math.isfinite(fa - fb)):
            break
        x = b + Fraction(fb) * (b - a) / Fraction(fa - fb)
        x = Fraction(float(x))
        if not a < x < b or fb < -1e5:  # (bisection while δ(b) = 0: a bounded loss, e.g. continuous Laplaces)
            x = (a + b) / 2
        x = _snapped(acc, x, a, b)
        fx = _logmid(acc, x) - lt
        if abs(fx) < 1e-13 or b - a <= Fraction(EPS_WIDTH / 4) * b:
            break
        if fx > 0:  # (the far end's value halved only when the same end is kept twice running)
            a, fa, fb, side = x, fx, fb / 2 if side > 0 else fb, 1
        else:
            b, fb, fa, side = x, fx, fa / 2 if side < 0 else fa, -1
    a, b = _certify(acc, x, target, a_cert, b_cert)
    lo, hi = _mpf(a, False), _mpf(b, True)
    if hi - lo > 1e-6 * hi:
        raise UncertifiedError(f"ε(δ={float(target):.6g}) is bracketed only in [{mpmath.nstr(lo, 8)}, "
                               f"{mpmath.nstr(hi, 8)}]")
    return lo, hi


def _snapped(acc, x: Fraction, a: Fraction, b: Fraction) -> Fraction:
    """x moved to the finite loss's grid while [a, b] is wider than two of its steps and the grid
    point lies inside: the thresholds ε − v_i of δ_G then repeat between evaluations (the
    accountant caches δ_G by threshold), so an estimate there costs few oracle calls."""
    fin = acc.finite
    if acc.gauss is None or fin.step <= 0 or b - a <= 2 * fin.step:
        return x
    g = fin.offset + round((x - fin.offset) / fin.step) * fin.step
    return g if a < g < b else x


def _certify(acc, x: Fraction, target: Fraction, a: Fraction, b: Fraction) -> tuple:
    """Certified ends around the estimate x: ``δ_lo(a) > target ≥ δ_hi(b)``, as close as the
    balls allow (the bracket found so far, [a, b], is kept as the fallback)."""
    w = Fraction(EPS_WIDTH) / 4
    for _ in range(12):
        lo, hi = Fraction(float(x * (1 - w))), Fraction(float(x * (1 + w)))
        if lo > a and _decide(acc, lo, target) > 0:
            a = lo
        if hi < b and _decide(acc, hi, target) < 0:
            b = hi
        if b - a <= Fraction(EPS_WIDTH) * b:
            return a, b
        w *= 8
    for _ in range(200):  # (x far off: a certified bisection of [a, b], one decision a step)
        m = Fraction(float((a + b) / 2))
        if not a < m < b:
            m = (a + b) / 2
        s = _decide(acc, m, target)
        if s == 0:
            break
        a, b = (m, b) if s > 0 else (a, m)
        if b - a <= Fraction(EPS_WIDTH) * b:
            break
    return a, b


def _logmid(acc, e: Fraction) -> float:
    # (an estimate: beside continuous parts the 128-bit ball, however wide — a deep δ below the
    # windows' deficit never narrows, and each precision rebuilds the finite part's tables)
    b = acc.delta_ball(e, 128, once=acc.gauss is None and acc.smooth)
    m = to_mpf(b, True)
    return float(mpmath.log(m)) if m > 0 else -1e6


# ---------------------------------------------------------------------- β(α)
def tradeoff_points(acc, alphas) -> tuple:
    """:class:`BracketedTradeoff` for each α ∈ [0, 1] (see the module docstring)."""
    afs = []
    for a in sequence_values(alphas, "alpha"):
        af = to_fraction(a, "alpha")
        if not 0 <= af <= 1:
            raise InputError("alpha", a, "must lie in [0, 1]")
        afs.append(af)
    out = []
    floor = acc.finite.floor_exact() if acc.finite.has_infinite_mass else Fraction(0)
    for af in afs:
        if floor and 1 - af <= floor:  # (the test accepts within L = +∞ only, where Q has no mass)
            lo = hi = mpmath.mpf(0)
        elif af in (0, 1):  # (β(1) = 0, β(0) = 1 − p_∞ exactly: :mod:`mixed_extremes`)
            lo, hi = beta_at_ends(acc, af) or _beta_finite(acc, af)
        elif (got := _np_split(acc, af)) is not None:  # (finite part beside discrete Gaussians:
            lo, hi = got  # the Neyman–Pearson split over the two factors' exact atoms, :mod:`mixed_np_split`)
        else:  # (beside an oracle whose δ_G(0) is near 1, its windowed twin first: :mod:`mixed_windows`)
            twin = windowed_twin(acc) if acc.gauss is not None else None
            try:
                lo, hi = _beta_of(twin or acc, af)
            except UncertifiedError:
                if twin is None:
                    raise
                lo, hi = _beta_of(acc, af)
        est, err = centred(lo, hi)
        out.append(BracketedTradeoff(_mpf(af), est, err, 0, "bracket"))
    return tuple(out)


def _np_split(acc, alpha: Fraction) -> tuple | None:
    """:func:`beta_np_split` once the design is within the float steering's range (refused otherwise)."""
    check_float_range(acc, f"β(α = {alpha_display(alpha)})")
    return beta_np_split(acc, alpha)


def _beta_of(acc, alpha: Fraction) -> tuple:
    """β(α) for 0 < α < 1: exact on the finite loss (beside randomized responses by noise too:
    :mod:`~exactdp.accounting.rr_neyman_pearson`, beside discrete Gaussians on the windowed twin,
    :func:`~exactdp.accounting.mixed_windows.rr_twin`), else by the dual."""
    if acc.gauss is None and not acc.smooth:
        return _beta_finite(acc, alpha)
    got = beta_rr_atoms(acc, alpha)
    if got is None and (twin := rr_twin(acc)) is not None:  # (beside an oracle: its windowed twin's atoms)
        got = beta_rr_atoms(twin, alpha)
    return got if got is not None else _beta_dual(acc, alpha)


def _g(acc, e: Fraction, alpha: Fraction, rel: float | None = None, floor=0, strict: bool = True) -> tuple:
    """``(x, lo, hi)``: x = e^ε (60 digits) and certified ends of ``G = 1 − δ(ε) − e^ε α`` (for
    ε < 0 as ``e^ε(1 − α − δ(−ε))``, by symmetry, without cancellation).

    ``rel`` (smooth designs): the precision of δ's ball is raised until G's radius is at most
    ``rel·floor`` (``rel·|G|`` without a floor, ``rel·max(floor, |G|)`` when not ``strict``; or
    stops shrinking): where β is tiny, G is a small difference of
    terms near 1 (``1 − δ(ε)`` for α → 0), and a 128-bit δ leaves it only ~1e-38 absolute; the
    tuple then has a fourth entry, ε itself (:func:`_smooth_envelope` recomputes x as precisely
    as the chords need)."""
    if rel is None:
        with prec_ctx(512):
            g = _narrower(acc, e, alpha, _g_ball(e, alpha, acc.delta_ball(abs(e))), 128)
        with mpmath.workdps(_DPS):
            x = mpmath.exp(_mpf(e))
        return x, to_mpf(g, False), to_mpf(g, True)
    last = flint.arb(0)
    for p in PRECS:
        c = smooth_complement(acc, abs(e), p) if acc.rr is None else None  # (1 − δ as positive terms beside
        g = _narrower(acc, e, alpha, _g_ball(e, alpha, acc.delta_ball(abs(e), p, once=True), p), p) if c is None \
            else _g_of_complement(e, alpha, c, p)  # continuous Gaussians alone, always)
        with prec_ctx(max(p, 512)):  # (the ends at the ball's precision, not rounded to 53 bits)
            lo, hi = to_mpf(g, False), to_mpf(g, True)
        r = g.rad()
        if r <= rel * (floor if floor and strict else max(floor, abs(lo), abs(hi))) or (p > 512 and r > last / 4):
            break  # (or a width that higher precision does not shrink: a window deficit)
        last = r
    with mpmath.workdps(_DPS):
        x = mpmath.exp(_mpf(e))
    return x, lo, hi, e


def _g_ball(e: Fraction, alpha: Fraction, delta: flint.arb, prec: int = 512) -> flint.arb:
    with prec_ctx(max(prec, 512)):
        if e >= 0:
            return 1 - delta - _q(e).exp() * _q(alpha)
        return _q(e).exp() * (_q(1 - alpha) - delta)  # (1 − α exact: α = 1 − 1e-300)


#: G's ball from δ's is replaced by G's from ``1 − δ`` as positive terms (:mod:`mixed_complement`) where it is wider
#: than this relative to |G| and that one is narrower
_COMPLEMENT_REL = 2.0**-40


def _narrower(acc, e: Fraction, alpha: Fraction, g: flint.arb, prec: int) -> flint.arb:
    """``g`` (G's ball from δ's), or G from ``1 − δ(|ε|)`` summed as positive terms
    (:func:`~exactdp.accounting.mixed_complement.complement_ball`) where g is wider than
    :data:`_COMPLEMENT_REL` of |G| and that ball is narrower (both are certified)."""
    with prec_ctx(max(prec, 512)):
        if g.rad() <= _COMPLEMENT_REL * abs(g).upper():
            return g
    c = complement_ball(acc, abs(e), prec)
    if c is None:
        return g
    g2 = _g_of_complement(e, alpha, c, prec)
    return g2 if g2.rad() < g.rad() else g


def _g_of_complement(e: Fraction, alpha: Fraction, c: flint.arb, prec: int) -> flint.arb:
    """G from a ball c of ``1 − δ(|ε|)``: ``c − e^ε α`` (ε ≥ 0), ``e^ε (c − α)`` (ε < 0)."""
    with prec_ctx(max(prec, 512)):
        return c - _q(e).exp() * _q(alpha) if e >= 0 else _q(e).exp() * (c - _q(alpha))


#: the relative radius of G asked of the search's estimates and of the stencils' points, in a first pass
#: and where that is wide (smooth designs: a 128-bit δ ball is ~1e-16 relative, enough in the tuned regime)
_EST_REL, _STENCIL_REL_FIRST, _STENCIL_REL = 2.0**-40, 2.0**-40, 2.0**-70
#: beyond α = 1 − this the search of a design without a continuous part runs on log G too (β may lie
#: below float64's range: 1 − α = 1e-40 beside discrete Gaussians gives β ≈ 1e-200 … 1e-400)
_NEAR_ONE = Fraction(1, 2**20)


def _log_scale(g: mpmath.mpf) -> float:
    """A nondecreasing map of G to floats that keeps β's scale: ``log G`` for G > 0 (at least
    −19000: β ≥ 1e-4000 is above ``e^−9211``), ``−40000 − log(−G)`` (at most −20000) for G < 0."""
    if g > 0:
        return max(float(mpmath.log(g)), -19000.0)
    return -40000.0 - max(float(mpmath.log(-g)), -20000.0) if g < 0 else -20000.0


def _smooth_envelope(pts: list, eps_max: float) -> mpmath.mpf:
    """The chord envelope's upper end of sup G for points ``(x, lo, hi, ε)`` (smooth designs; lo
    and hi exact), with x recomputed from ε at P bits and the chords' arithmetic at P bits, P
    chosen from the points' scale so that a tiny β keeps its relative width.  Rounding: each
    chord value is ``g + s·(x − p)`` (or a crossing of two), with ``|s| ≤ 2M/Δ`` (M the largest
    |G|, Δ the least spacing of the x) and ``|x − p| ≤`` the span S; every operation and each
    x (``e^ε``, ε up to ``eps_max``) is off by at most ``u = (2 + eps_max)·2^−P`` relative, a
    spacing by ``2u·x_max``: the bound is off by at most ``2^16·u·(|bound| + M·(1 + S/Δ)·(1 +
    x_max/Δ))``, which is added.  None where P would exceed 2^16 bits."""
    pts = sorted(pts)
    pts = [p for k, p in enumerate(pts) if k == 0 or p[0] > pts[k - 1][0]]
    xs = [p[0] for p in pts]
    gaps = [b - a for a, b in zip(xs, xs[1:])]
    if len(pts) < 3 or min(gaps) <= 0:
        return mpmath.inf
    m = max(max(abs(p[1]), abs(p[2])) for p in pts)
    with mpmath.workdps(_DPS):
        scale = (2 + abs(eps_max)) * (1 + m * (1 + (xs[-1] - xs[0]) / min(gaps)) * (1 + 2 * xs[-1] / min(gaps)))
        best = max(max(p[1] for p in pts), FLOOR)
        bits = 64 + int(mpmath.log(scale / best, 2)) + 1 if scale > best else 64
    bits = max(bits + 64, 256)
    if bits > 1 << 16:
        return mpmath.inf
    with mpmath.workprec(bits):
        pts = [(mpmath.exp(mpmath.mp.make_mpf(from_rational(p[3].numerator, p[3].denominator, bits, "n"))),
                p[1], p[2]) for p in pts]
        xs = [p[0] for p in pts]
        gaps = [b - a for a, b in zip(xs, xs[1:])]
        if min(gaps) <= 0:
            return mpmath.inf
        upper, _ = chord_envelope(pts)
        if not mpmath.isfinite(upper):
            return upper
        unit = mpmath.ldexp(mpmath.mpf(2 + abs(eps_max)), 16 - bits)
        d = min(gaps)
        return upper + unit * (abs(upper) + m * (1 + (xs[-1] - xs[0]) / d) * (1 + 2 * xs[-1] / d))


def _beta_dual(acc, alpha: Fraction) -> tuple:
    """β(α) from the dual: the search snapped to the grids first (shared δ_G thresholds); where its
    stencils do not reach :data:`BETA_WIDTH`, the search on exact estimates too (both brackets are
    certified: their intersection is kept).  Smooth designs: both with G's points to 2^−40 of β's
    scale first, then to 2^−70 where that is wide (a tiny β's chords)."""
    lower, upper = mpmath.mpf(0), mpmath.mpf(1)
    for rel in ((_STENCIL_REL_FIRST, _STENCIL_REL) if acc.smooth else (None,)):
        for snapped in (True, False):
            if upper - lower > BETA_WIDTH / 2 * max(lower, FLOOR):
                lo2, hi2 = _beta_dual_once(acc, alpha, snapped, rel)
                lower, upper = max(lower, lo2), min(upper, hi2)
    if upper - lower > MAX_BETA_WIDTH * max(upper, FLOOR):
        raise UncertifiedError(f"β(α = {alpha_display(alpha)}) is bracketed only in [{mpmath.nstr(lower, 8)}, "
                               f"{mpmath.nstr(upper, 8)}]")
    return lower, upper


def _kink_max(pts: list) -> tuple | None:
    """``(lower, upper)`` of ``sup G`` from G at consecutive kinks (``(x, lo, hi)`` sorted by x), or
    None: where G certainly rises at the first and falls at the last kink, the maximum over all
    kinks is among these (a concave sequence), and G is linear in x between kinks, so ``sup G``
    is the largest value at a kink."""
    if not (pts[1][1] > pts[0][2] and pts[-2][1] > pts[-1][2]):
        return None
    return max(max(p[1] for p in pts), mpmath.mpf(0)), min(max(p[2] for p in pts), mpmath.mpf(1))


def _beta_dual_once(acc, alpha: Fraction, snapped: bool, rel: float | None) -> tuple:
    fin = acc.finite
    rho = float(acc.rho)
    m = min(alpha, 1 - alpha)  # (exact: α = 1 − 1e-300 is not 1)
    top = float(fin.value(fin.size - 1) + acc.extent)  # (the finite part's and the continuous Laplaces' largest loss)
    lg = math.log(2 * m.denominator) - math.log(m.numerator) if m > 0 else 691.0
    reach = top + rho + math.sqrt(4 * max(rho, 1e-300) * (lg + 1)) + 1
    lo_e, hi_e = -reach - 1, reach + 1

    grid = acc.kinks
    fine = grid[1] if snapped and grid is not None and grid[1] > 1e-9 * (1 + reach) else None
    memo: dict = {}
    seen_max = [mpmath.mpf(0)]
    near_one = 1 - alpha < _NEAR_ONE

    def est(e: float, width: float) -> float:
        # (snapped: to the finite loss's grid while the bracket is wide, so that the δ_G thresholds
        # ε − v_i repeat between evaluations (cached by the accountant), then to the kinks' grid)
        snap = fin.step if snapped and fin.step > 0 and width > 8 * fin.step else fine
        if snap is not None:
            base = fin.offset if snap == fin.step else grid[0]
            k = round((Fraction(abs(e)) - base) / snap)
            ef = (base + k * snap) * (1 if e >= 0 else -1)
        else:
            ef = Fraction(e)
        if ef not in memo:
            if acc.smooth:  # (log G: β may lie far below float64's range; the same maximiser; G relative
                # to the largest G seen so far, so that points where G is near 0 need not climb)
                _, lo, hi, _ = _g(acc, ef, alpha, _EST_REL, seen_max[0], strict=False)
                memo[ef] = _log_scale((lo + hi) / 2)
                seen_max[0] = max(seen_max[0], lo)
            else:  # (near α = 1 β may lie below float64's range too: log G there)
                _, lo, hi = _g(acc, ef, alpha)
                memo[ef] = _log_scale((lo + hi) / 2) if near_one else float((lo + hi) / 2)
        return memo[ef]

    def stop(x: float, width: float) -> bool:  # (G is linear between kinks: the kink stencil finds the best one;
        # smooth designs: to 1e-7 absolute, for the stencils of steps 1e-5 … 1e-8 wherever ε* lies, e.g. −1295)
        return width < _GOLDEN_STOP * (1.0 if acc.smooth or near_one else max(1.0, abs(x))) or \
            (fine is not None and width < 3 * float(fine))

    centre = brent_max(est, lo_e, hi_e, stop)
    floor = abs(_g(acc, Fraction(centre), alpha, _EST_REL)[1]) if acc.smooth else 0  # (smooth designs: G's radius
    # at every stencil point relative to the maximum's estimate)
    stencils = []
    rel_grid = 1e-12 if near_one and not acc.smooth else 1e-9  # (near α = 1 the centre is far out: −485 at
    # 1 − α = 1e-9 on audit design 20, its kinks 9e-8 apart)
    if grid is not None and grid[1] > rel_grid * (1 + abs(centre)):  # G is piecewise linear in x between kinks
        offset, step = grid  # (for ε < 0, G's kinks are at −ε on the grid)
        sign = 1 if centre >= 0 else -1
        k = round((Fraction(sign * centre) - offset) / step)
        stencils.append([sign * (offset + step * (k + j)) for j in range(-3, 4)])
    if acc.rr is not None:  # the irrational kinks v + Σ b log R nearest the estimate (:mod:`rr_kinks`)
        stencils.extend(kink_stencils(acc, centre))
    for h in (1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-3, 1e-2):
        stencils.append([Fraction(centre + j * h) for j in (-2, -1, 0, 1, 2)])
    return _stencils(acc, alpha, snapped, grid, centre, stencils, rel, floor)


def _stencils(acc, alpha: Fraction, snapped: bool, grid, centre: float, stencils: list, rel, floor) -> tuple:
    """The narrowest ``(lower, upper)`` of sup G from the stencils around ``centre`` (the first
    within :data:`BETA_WIDTH`), G's points to ``rel`` (:func:`_g`)."""
    best = (mpmath.mpf(0), mpmath.mpf(1))
    seen: dict = {}

    def gm(e: Fraction) -> tuple:  # ((x, lo, hi, ε): ε for the scaled envelope)
        if e not in seen:
            got = _g(acc, e, alpha, rel, floor)
            seen[e] = got if len(got) == 4 else (*got, e)
        return seen[e]

    if snapped and grid is not None and stencils and len(stencils[0]) == 7:  # (the snapped search may end a few
        for _ in range(8):  # kinks off: the kink stencil follows its best kink until it is inside)
            es = sorted(stencils[0])
            vals = [gm(e)[1] for e in es]
            i = vals.index(max(vals))
            if 0 < i < 6:
                break
            stencils[0] = [es[i] + j * grid[1] for j in range(-3, 4)]
    for n, es in enumerate(stencils):
        pts = sorted(gm(e) for e in es)
        if n == 0 and grid is not None and len(es) == 7:  # the best kink and the linear pieces beside it
            got = None if acc.smooth else _kink_max(pts)  # (a continuous part curves G between kinks)
            if got is not None and got[1] - got[0] <= BETA_WIDTH / 2 * max(got[0], FLOOR):
                return got
            kink = max(zip(pts, sorted(es)), key=lambda pe: pe[0][1])[1]
            subs = (grid[1] / 16,) + ((grid[1] / 10**6, grid[1] / 10**9) if acc.smooth else ())  # (Laplaces: curved
            # between kinks; the finest for a kink at 1e-9 relative whatever the grid, e.g. 2000 at scale 1/1000)
            pts = sorted(pts + [gm(kink + j * sub) for sub in subs for j in (-2, -1, 1, 2)])
        lower = max(max(p[1] for p in pts), mpmath.mpf(0))
        eps_max = max(abs(centre) + 4 * float(grid[1] if grid else 0), max(abs(float(p[3])) for p in pts)) + 1
        if acc.smooth:
            upper = _smooth_envelope(pts, eps_max)
        else:
            with mpmath.workdps(_DPS):  # the chords' arithmetic, widened far beyond its rounding
                upper, _ = chord_envelope(pts)
                slack = mpmath.mpf(10) ** (-2 * _DPS)
                upper += abs(upper) * mpmath.mpf(10) ** (10 - _DPS) + slack
            if slack > BETA_WIDTH / 8 * max(lower, FLOOR):  # (a tiny β, α near 1: the absolute slack would
                upper = min(upper, _smooth_envelope(pts, eps_max))  # dominate; the chords at β's scale instead)
        upper = min(upper, mpmath.mpf(1))
        if upper - lower < best[1] - best[0]:
            best = (lower, upper)
        if upper - lower <= BETA_WIDTH / 2 * max(lower, FLOOR):
            return lower, upper
    return best
